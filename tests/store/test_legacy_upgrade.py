"""A SQLite file made by the hand-written migrations (m001..m005, before Alembic) opens with today's code: stamped
at the last migration it recorded, upgraded in place, every row kept, and its schema then equal to ``schema.py``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import inspect

from infercost import store
from infercost.store import jobs, migrations
from infercost.store.schema import metadata
from tests.store.legacy import LEGACY_MIGRATIONS, make_legacy_db

PROFILE = {"calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 10}


def fill_legacy(path: Path) -> None:
    """One row in every table, written with plain sqlite3 as the old code wrote them."""
    old = sqlite3.connect(path)
    old.execute("INSERT INTO runs VALUES ('r1', '2026-01-01T00:00:00+00:00', 'done', 'infercost', 'openai', 'm', "
                "'{}', '{}', '{}')")
    old.execute("INSERT INTO levels VALUES ('r1', 0, 0, 'concurrency', 1.0, 'done', '{\"completed\": 1}')")
    old.execute("INSERT INTO requests (run_id, idx, repeat, seq, phase, session, t0, itl, status) "
                "VALUES ('r1', 0, 0, 0, 'measure', 0, 1.5, X'000000000000E03F', 'ok')")
    if "m004_scenarios" in {row[0] for row in old.execute("SELECT name FROM _migrations")}:
        old.execute("INSERT INTO scenarios (name, profile, notes, created_at, updated_at) VALUES "
                    "('base', '{\"calls_per_day\": 1000, \"prompt_tokens\": 100, \"output_tokens\": 10}', 'n', "
                    "'2026-01-01', '2026-01-01')")
    old.commit()
    old.close()


@pytest.mark.parametrize("upto", ["m003_requests", "m005_batch_jobs"])
def test_a_pre_alembic_database_upgrades_in_place_keeping_its_rows(tmp_path: Path, upto: str) -> None:
    path = tmp_path / "old.db"
    make_legacy_db(path, upto)
    fill_legacy(path)
    db = store.connect(path)
    try:
        assert [row[0] for row in db.execute("SELECT version_num FROM alembic_version")] == [migrations.LATEST]
        run = store.get_run(db, "r1")
        assert run["levels"][0]["summary"] == {"completed": 1}
        assert [(r["seq"], r["t0"], r["itl"]) for r in store.get_requests(db, "r1")] == [(0, 1.5, [0.5])]
        if upto == "m005_batch_jobs":
            assert store.get_scenario(db, "base")["profile"] == PROFILE
        store.save_scenario(db, "new", PROFILE)  # the new code writes to it, on every table
        store.insert_requests(db, [{"run_id": "r1", "idx": 0, "repeat": 0, "seq": 1, "phase": "measure",
                                    "session": 1, "itl": [], "status": "ok"}])
        assert jobs.list_jobs(db) == []
        assert store.apply_migrations(db) == []
        assert shape(db) == {table.name: ({c.name for c in table.columns}, {i.name for i in table.indexes})
                             for table in metadata.sorted_tables}
    finally:
        db.connection.rollback()
        db.close()


def shape(db: store.Store) -> dict[str, tuple[set[str], set[str | None]]]:
    """Each table's columns and index names. Not ``compare_metadata``: on SQLite it reports what the old DDL could
    not say the same way (``id TEXT PRIMARY KEY`` allows NULL there; inline ``REFERENCES`` reflect without their
    ``ON DELETE``), which is how those files are and stays harmless."""
    inspector = inspect(db.connection)
    return {name: ({c["name"] for c in inspector.get_columns(name)}, {i["name"] for i in inspector.get_indexes(name)})
            for name in inspector.get_table_names() if name in metadata.tables}


def test_the_frozen_legacy_sql_is_what_the_revisions_replace() -> None:
    """One revision per legacy migration, under the same name: the names are how an old file is stamped (later
    revisions came after Alembic, and have no legacy twin)."""
    from alembic.script import ScriptDirectory

    revisions = [rev.revision for rev in ScriptDirectory.from_config(migrations._config()).walk_revisions()][::-1]
    assert revisions[: len(LEGACY_MIGRATIONS)] == sorted(LEGACY_MIGRATIONS)
