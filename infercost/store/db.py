"""Opening the SQLite file: pragmas that make per-request commits cheap and safe against a killed process."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from infercost.errors import InputError
from infercost.home import default_db_path
from infercost.store.migrations import apply_migrations


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` (default: the home's ``infercost.db``) and migrate it.

    WAL with ``synchronous=NORMAL``: a commit survives SIGKILL of this process (not a power cut) without an fsync
    per request, so committing every request as it completes stays cheap.
    """
    path = Path(path) if path else default_db_path()
    if path.exists() and path.is_dir():
        raise InputError("db", f"{path} is a directory, not a database file")
    try:
        db = sqlite3.connect(path, timeout=30)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        apply_migrations(db)
    except sqlite3.DatabaseError as error:
        raise InputError("db", f"{path}: {error}") from None
    return db
