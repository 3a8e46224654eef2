"""Schema migrations: small numbered functions, recorded in ``_migrations`` and applied every time a database opens.

To change the schema, append a new ``@migration`` function with the next free number (``m005_...``); never edit one
that has shipped, because databases out there already recorded it as applied. A migration runs inside a transaction
that ``apply_migrations`` owns: it must not commit (no ``with db:``), so that it and its record land together or not
at all (SQLite's DDL is transactional), and a process killed half way leaves the database as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: dict[str, Migration] = {}


def migration(fn: Migration) -> Migration:
    """Register ``fn`` under its name; names sort in the order they are applied (``m001_`` before ``m002_``)."""
    if fn.__name__ in MIGRATIONS:
        raise ValueError(f"migration {fn.__name__} registered twice")
    MIGRATIONS[fn.__name__] = fn
    return fn


def apply_migrations(db: sqlite3.Connection) -> list[str]:
    """Apply every registered migration the database has not recorded yet; returns the names applied now.

    Each migration is one ``BEGIN IMMEDIATE`` transaction with its record: the write lock serialises processes
    opening the same new database, and the applied names are read again under the lock, so each migration runs
    once however many processes race. Python's sqlite3 would otherwise run DDL outside any transaction (it only
    opens one before INSERT/UPDATE/DELETE), so ``isolation_level`` is set to None and the transaction is explicit."""
    if not _pending(db):
        return []  # the usual open: one read, no write lock
    applied: list[str] = []
    isolation = db.isolation_level
    db.isolation_level = None
    try:
        while name := _apply_next(db):
            applied.append(name)
    finally:
        db.isolation_level = isolation
    return applied


def _apply_next(db: sqlite3.Connection) -> str | None:
    """Apply the first pending migration in its own transaction; None when nothing is pending (any more)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        pending = _pending(db)
        if pending:
            MIGRATIONS[pending[0]](db)
            db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, datetime('now'))", (pending[0],))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return pending[0] if pending else None


def _pending(db: sqlite3.Connection) -> list[str]:
    try:
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:  # no such table: a new database
        done = set()
    return [name for name in sorted(MIGRATIONS) if name not in done]


@migration
def m001_runs(db: sqlite3.Connection) -> None:
    """A run: one benchmark (or one imported result file) with its configuration and fingerprints as JSON."""
    db.execute(
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL,
            source TEXT NOT NULL,
            backend TEXT NOT NULL,
            model TEXT NOT NULL,
            config TEXT NOT NULL,
            hardware TEXT NOT NULL,
            engine TEXT NOT NULL
        )"""
    )


@migration
def m002_levels(db: sqlite3.Connection) -> None:
    """One load level (a concurrency, batch size or rate) and repeat of a run, with its summary once done."""
    db.execute(
        """CREATE TABLE levels (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            repeat INTEGER NOT NULL,
            pattern TEXT NOT NULL,
            load REAL NOT NULL,
            status TEXT NOT NULL,
            summary TEXT,
            PRIMARY KEY (run_id, idx, repeat)
        )"""
    )


@migration
def m003_requests(db: sqlite3.Connection) -> None:
    """One row per request, written as it completes. A measured (run, level, repeat, seq) exists once, so a
    resumed sweep cannot duplicate it; warm-up rows are kept but never enter a summary. ``itl`` holds the gaps
    between token-bearing chunks as little-endian float64 seconds: packing is microseconds, JSON a millisecond."""
    db.execute(
        """CREATE TABLE requests (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            repeat INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            phase TEXT NOT NULL,
            session INTEGER NOT NULL,
            t0 REAL,
            t_first REAL,
            t_last REAL,
            itl BLOB NOT NULL,
            n_in INTEGER,
            n_in_source TEXT,
            n_out INTEGER,
            n_out_source TEXT,
            n_out_expected INTEGER,
            status TEXT NOT NULL,
            error TEXT
        )"""
    )
    db.execute(
        "CREATE UNIQUE INDEX requests_measured ON requests (run_id, idx, repeat, seq) WHERE phase = 'measure'"
    )
    db.execute("CREATE INDEX requests_level ON requests (run_id, idx, repeat)")


@migration
def m004_scenarios(db: sqlite3.Connection) -> None:
    """A saved what-if scenario: a named workload profile (JSON, as the person wrote it) with notes."""
    db.execute(
        """CREATE TABLE scenarios (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            profile TEXT NOT NULL,
            notes TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )


@migration
def m005_batch_jobs(db: sqlite3.Connection) -> None:
    """Batch jobs (``infercost/batch``): a job, its shards and one row per input record, each record's outcome
    committed as it completes so a killed job resumes without losing or resending a finished record. ``body`` is the
    response body (JSON text) the shard's output file is written from; the input itself stays in the input file,
    whose SHA-256 (``input_sha256``) a resume checks."""
    db.execute(
        """CREATE TABLE batch_jobs (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL,
            control TEXT,
            input_path TEXT NOT NULL,
            input_sha256 TEXT NOT NULL,
            out_dir TEXT NOT NULL,
            config TEXT NOT NULL,
            budget TEXT NOT NULL,
            actual TEXT,
            pid INTEGER,
            heartbeat_at REAL,
            active_s REAL NOT NULL DEFAULT 0
        )"""
    )
    db.execute(
        """CREATE TABLE batch_shards (
            job_id TEXT NOT NULL REFERENCES batch_jobs(id) ON DELETE CASCADE,
            shard INTEGER NOT NULL,
            first_idx INTEGER NOT NULL,
            records INTEGER NOT NULL,
            status TEXT NOT NULL,
            files TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (job_id, shard)
        )"""
    )
    db.execute(
        """CREATE TABLE batch_records (
            job_id TEXT NOT NULL REFERENCES batch_jobs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            shard INTEGER NOT NULL,
            custom_id TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            reason TEXT,
            n_in_est INTEGER NOT NULL,
            max_out INTEGER,
            n_in INTEGER,
            n_out INTEGER,
            usage_reported INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0,
            latency_ms REAL,
            status_code INTEGER,
            request_id TEXT,
            body TEXT,
            pass INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (job_id, idx)
        )"""
    )
    db.execute("CREATE UNIQUE INDEX batch_records_custom_id ON batch_records (job_id, custom_id)")
    db.execute("CREATE INDEX batch_records_shard ON batch_records (job_id, shard, state)")
