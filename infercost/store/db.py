"""Opening the SQLite file: pragmas that make per-request commits cheap and safe against a killed process."""

from __future__ import annotations

import sqlite3
import time
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
    deadline = time.monotonic() + LOCKED_RETRY_S
    while True:
        try:
            return _open(path)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise InputError("db", f"{path}: {error}") from None
            time.sleep(0.02)  # another process is switching the new file to WAL or migrating it: try again
        except sqlite3.DatabaseError as error:
            raise InputError("db", f"{path}: {error}") from None


# SQLite answers "database is locked" at once, without waiting out the busy timeout, on some lock changes (switching
# a new file to WAL, WAL recovery) that processes opening one new database at the same moment run into.
LOCKED_RETRY_S = 30.0


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30)
    try:
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        apply_migrations(db)
    except BaseException:
        db.close()
        raise
    return db
