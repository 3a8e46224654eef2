"""The SQLite store: migrations applied once, a directory refused. (Requests, runs, scenarios and jobs on both
SQLite and PostgreSQL, and a new revision applied on the next open: tests/store.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError


def test_migrations_are_recorded_and_applied_once(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    names = [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]
    assert names == sorted(store.heads())
    assert store.apply_migrations(db) == []


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="db"):
        store.connect(tmp_path)
