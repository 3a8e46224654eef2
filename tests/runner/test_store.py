"""The SQLite store: migrations applied once and appendable; measured requests stored once."""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError
from infercost.store.migrations import MIGRATIONS


def test_migrations_are_recorded_and_applied_once(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    names = [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(MIGRATIONS)
    assert store.apply_migrations(db) == []


def test_a_new_migration_is_applied_on_the_next_open(tmp_path: Path) -> None:
    store.connect(tmp_path / "a.db").close()

    def m999_extra(db) -> None:
        db.execute("CREATE TABLE extra (x INTEGER)")

    store.migration(m999_extra)
    try:
        db = store.connect(tmp_path / "a.db")
        assert db.execute("SELECT COUNT(*) FROM extra").fetchone()[0] == 0
    finally:
        del MIGRATIONS["m999_extra"]


def test_a_measured_request_is_stored_once_and_itl_round_trips(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={})
    row = {"run_id": run_id, "idx": 0, "repeat": 0, "seq": 3, "phase": "measure", "session": 0, "t0": 1.0,
           "t_first": 1.5, "t_last": 2.0, "itl": [0.25, 0.25], "status": "ok"}
    store.insert_requests(db, [row])
    store.insert_requests(db, [{**row, "t0": 9.0}])  # the same request again, as a resume might try
    stored = store.get_requests(db, run_id)
    assert len(stored) == 1 and stored[0]["t0"] == 1.0 and stored[0]["itl"] == [0.25, 0.25]
    assert store.stored_seqs(db, run_id, 0, 0) == {3}


def test_unknown_run_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run_id"):
        store.get_run(store.connect(tmp_path / "a.db"), "nope")


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="db"):
        store.connect(tmp_path)
