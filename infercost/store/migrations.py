"""Schema migrations with Alembic: the revisions in ``infercost/store/alembic/versions``, applied when a store opens.

To change the schema, add a revision with the next number (``m006_...``, ``down_revision`` the current head) and the
matching change in ``schema.py``; never edit one that has shipped, because databases out there recorded it.

Serialised and transactional: every pending revision runs in one transaction that first takes the engine's
migration lock (``BEGIN IMMEDIATE`` on SQLite, ``pg_advisory_xact_lock`` on PostgreSQL; DDL is transactional on
both), and what is applied is read again under that lock. Processes opening one new database at once wait for
each other, each revision runs once, and a process killed half way leaves the database as it was.

Databases made before Alembic recorded ``m001_runs``..``m005_batch_jobs`` in a ``_migrations`` table. The revision
ids are those names, so such a database is stamped at the last one it has and upgraded in place, its data untouched.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, inspect, text

from infercost.errors import InputError

if TYPE_CHECKING:
    from alembic.config import Config

ALEMBIC_DIR = Path(__file__).with_name("alembic")
# Where revisions live. Tests add a directory holding one extra revision to exercise a new migration.
VERSION_DIRS: list[Path] = [ALEMBIC_DIR / "versions"]
# The newest revision in ``versions/``, so that the usual open (nothing to migrate) need not import Alembic, a
# quarter of a second per command; a new revision updates it (tests/store/test_migrations.py checks it).
LATEST = "m006_batch_job_host"
_LOCK_KEY = 0x1F_C0_57  # pg_advisory_xact_lock key: one number that no other lock of this database uses


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.set_main_option("path_separator", "os")
    config.set_main_option("version_locations", os.pathsep.join(str(path) for path in VERSION_DIRS))
    config.attributes["connection"] = connection
    return config


@cache
def script_heads(dirs: tuple[Path, ...]) -> frozenset[str]:
    """The heads Alembic finds in ``dirs`` (what ``heads()`` answers without it)."""
    from alembic.script import ScriptDirectory

    return frozenset(ScriptDirectory.from_config(_config()).get_heads())


def heads() -> frozenset[str]:
    """The revisions a database is at once every migration is applied."""
    if VERSION_DIRS == [ALEMBIC_DIR / "versions"]:
        return frozenset({LATEST})
    return script_heads(tuple(VERSION_DIRS))


def current(connection: Connection) -> frozenset[str]:
    """The revisions the database records (empty for a new database)."""
    if not inspect(connection).has_table("alembic_version"):
        return frozenset()
    return frozenset(row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version")))


def pending(connection: Connection) -> bool:
    return current(connection) != heads()


def upgrade(connection: Connection) -> list[str]:
    """Apply every pending revision; ``connection`` is in a write transaction the caller commits. Returns the
    revisions applied now, oldest first."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    before = current(connection) or _adopt_legacy(connection)
    if before == heads():
        return []  # another process migrated while this one waited for the lock
    from alembic import command
    from alembic.script import ScriptDirectory

    config = _config(connection)
    script = ScriptDirectory.from_config(config)
    _refuse_newer(before, {rev.revision for rev in script.walk_revisions()})
    todo = [rev.revision for rev in script.iterate_revisions("heads", ",".join(before) or "base")][::-1]
    command.upgrade(config, "heads")
    return todo


def _refuse_newer(recorded: frozenset[str], known: set[str]) -> None:
    """A revision this version does not know was written by a newer infercost (a teammate migrated the shared
    store): upgrading or reading it could only go wrong, so say what to do instead of Alembic's traceback."""
    unknown = sorted(recorded - known)
    if unknown:
        raise InputError("db", f"written by a newer version of infercost (revision {', '.join(unknown)}); "
                               "upgrade infercost")


def _adopt_legacy(connection: Connection) -> frozenset[str]:
    """A database from before Alembic: stamp it at the last ``_migrations`` name it recorded."""
    if not inspect(connection).has_table("_migrations"):
        return frozenset()
    names = sorted(row[0] for row in connection.execute(text("SELECT name FROM _migrations")))
    if not names:
        return frozenset()
    from alembic import command

    command.stamp(_config(connection), names[-1])
    return frozenset(names[-1:])
