"""Saved scenarios: save, load, duplicate, rename and delete on a real SQLite file; the migration on an old one."""

from __future__ import annotations

import sqlite3

import pytest

from infercost.errors import InputError
from infercost.store import (
    apply_migrations,
    connect,
    delete_scenario,
    duplicate_scenario,
    get_scenario,
    heads,
    list_scenarios,
    rename_scenario,
    save_scenario,
)
from tests.store.legacy import make_legacy_db


def test_save_then_get_returns_the_profile_and_notes(db, profile):
    save_scenario(db, "base", profile, notes="what we run today")
    loaded = get_scenario(db, "base")
    assert loaded["profile"] == profile and loaded["notes"] == "what we run today"


def test_saving_under_the_same_name_updates_and_keeps_notes_and_created_at(db, profile):
    first = save_scenario(db, "base", profile, notes="keep me")
    second = save_scenario(db, "base", {**profile, "calls_per_day": 5})
    assert second["profile"]["calls_per_day"] == 5
    assert second["notes"] == "keep me" and second["created_at"] == first["created_at"]
    assert len(list_scenarios(db)) == 1


def test_duplicate_rename_delete_round_trip(db, profile):
    save_scenario(db, "base", profile)
    duplicate_scenario(db, "base", "copy")
    rename_scenario(db, "copy", "double volume")
    assert [s["name"] for s in list_scenarios(db)] == ["base", "double volume"]
    assert get_scenario(db, "double volume")["profile"] == profile
    delete_scenario(db, "base")
    assert [s["name"] for s in list_scenarios(db)] == ["double volume"]


def test_saved_scenarios_survive_reopening_the_file(tmp_path, profile):
    path = tmp_path / "x.db"
    with connect(path) as first:
        save_scenario(first, "base", profile)
    first.close()
    again = connect(path)
    assert get_scenario(again, "base")["profile"] == profile
    again.close()


@pytest.mark.parametrize(
    ("action", "field"),
    [
        (lambda db: get_scenario(db, "missing"), "scenario"),
        (lambda db: delete_scenario(db, "missing"), "scenario"),
        (lambda db: duplicate_scenario(db, "base", "base"), "new name"),
        (lambda db: rename_scenario(db, "base", "  "), "new name"),
        (lambda db: save_scenario(db, "", {}), "name"),
        (
            lambda db: save_scenario(db, "bad", {"calls_per_day": -1, "prompt_tokens": 1, "output_tokens": 1}),
            "calls_per_day",
        ),
    ],
)
def test_bad_requests_name_the_field(db, profile, action, field):
    save_scenario(db, "base", profile)
    with pytest.raises(InputError) as error:
        action(db)
    assert error.value.field == field


def test_the_scenarios_migration_applies_to_a_database_made_before_it(tmp_path, profile):
    path = tmp_path / "old.db"
    make_legacy_db(path, upto="m003_requests")  # as the hand-written migrations left a file before scenarios
    old = sqlite3.connect(path)
    old.execute(
        "INSERT INTO runs (id, created_at, status, source, backend, model, config, hardware, engine) "
        "VALUES ('r1', 'now', 'done', 'infercost', 'openai', 'm', '{}', '{}', '{}')"
    )
    old.commit()
    old.close()
    db = connect(path)
    assert [row[0] for row in db.execute("SELECT version_num FROM alembic_version")] == sorted(heads())
    assert db.execute("SELECT id FROM runs").fetchone()[0] == "r1"
    save_scenario(db, "base", profile)
    assert apply_migrations(db) == []
    db.close()
