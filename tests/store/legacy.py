"""The schema as infercost's hand-written SQLite migrations (m001..m005, before Alembic) created it, frozen here
so that tests can build a database exactly as an installed copy of that version left it and open it with today's
code. Copied from ``infercost/store/migrations.py`` at the last commit before Alembic; never change it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

LEGACY_MIGRATIONS: dict[str, list[str]] = {
    "m001_runs": [
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
        )""",
    ],
    "m002_levels": [
        """CREATE TABLE levels (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            repeat INTEGER NOT NULL,
            pattern TEXT NOT NULL,
            load REAL NOT NULL,
            status TEXT NOT NULL,
            summary TEXT,
            PRIMARY KEY (run_id, idx, repeat)
        )""",
    ],
    "m003_requests": [
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
        )""",
        "CREATE UNIQUE INDEX requests_measured ON requests (run_id, idx, repeat, seq) WHERE phase = 'measure'",
        'CREATE INDEX requests_level ON requests (run_id, idx, repeat)',
    ],
    "m004_scenarios": [
        """CREATE TABLE scenarios (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            profile TEXT NOT NULL,
            notes TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
    ],
    "m005_batch_jobs": [
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
        )""",
        """CREATE TABLE batch_shards (
            job_id TEXT NOT NULL REFERENCES batch_jobs(id) ON DELETE CASCADE,
            shard INTEGER NOT NULL,
            first_idx INTEGER NOT NULL,
            records INTEGER NOT NULL,
            status TEXT NOT NULL,
            files TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (job_id, shard)
        )""",
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
        )""",
        'CREATE UNIQUE INDEX batch_records_custom_id ON batch_records (job_id, custom_id)',
        'CREATE INDEX batch_records_shard ON batch_records (job_id, shard, state)',
    ],
}


def make_legacy_db(path: Path, upto: str = "m005_batch_jobs") -> None:
    """A SQLite file with the legacy migrations up to ``upto`` applied and recorded in ``_migrations``."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, statements in LEGACY_MIGRATIONS.items():
        if name > upto:
            break
        for statement in statements:
            db.execute(statement)
        db.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (name,))
    db.commit()
    db.close()
