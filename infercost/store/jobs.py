"""Every SQL statement about batch jobs, their shards and their records. Callers pass and get plain dicts.

A record's row is its checkpoint: ``state`` is ``pending`` until an attempt ends it ``ok`` or ``failed`` (after its
last attempt), and each attempt's outcome is committed as it completes. ``pass`` is the pass that gave the record its
state (0: the job's run, k: its k-th ``retry-failed``), which names the output file the record goes to.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from infercost.errors import InputError

PENDING, OK, FAILED = "pending", "ok", "failed"
RECORD_COLUMNS = ("job_id", "idx", "shard", "custom_id", "state", "n_in_est", "max_out")
_DEFAULTS = {"usage_reported": 0, "cost": 0.0}
OUTCOME_COLUMNS = ("state", "attempts", "reason", "n_in", "n_out", "usage_reported", "cost", "latency_ms",
                   "status_code", "request_id", "body")


def new_job_id() -> str:
    """Short, sortable by creation time, unique enough for one person's database."""
    return "job-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def create_job(db: sqlite3.Connection, job: dict[str, Any], records: Iterable[tuple],
               finish: Callable[[], tuple[list[tuple[int, int, int]], dict[str, Any]]]) -> None:
    """Insert the job, its records (``RECORD_COLUMNS`` minus job_id and state, streamed) and then what ``finish()``
    returns once they are all read: the shards ``(shard, first_idx, records)`` and the budget. One transaction: a
    job is there whole or not at all, and an error in ``finish`` leaves nothing. A repeated ``custom_id`` is
    refused."""
    try:
        with db:
            db.execute(
                "INSERT INTO batch_jobs (id, created_at, status, input_path, input_sha256, out_dir, config, budget) "
                "VALUES (?, ?, 'created', ?, ?, ?, ?, '{}')",
                (job["id"], datetime.now(UTC).isoformat(timespec="seconds"), job["input_path"], job["input_sha256"],
                 job["out_dir"], json.dumps(job["config"])),
            )
            db.executemany(
                f"INSERT INTO batch_records ({', '.join(RECORD_COLUMNS)}) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                ((job["id"], *record) for record in records),
            )
            shards, budget = finish()
            db.executemany(
                "INSERT INTO batch_shards (job_id, shard, first_idx, records, status) VALUES (?, ?, ?, ?, 'pending')",
                [(job["id"], *shard) for shard in shards],
            )
            db.execute("UPDATE batch_jobs SET budget = ? WHERE id = ?", (json.dumps(budget), job["id"]))
    except sqlite3.IntegrityError as error:
        if "custom_id" in str(error):
            raise InputError("custom_id", "every custom_id must be unique in a batch file; one repeats") from None
        raise


def _job_dict(row: sqlite3.Row) -> dict[str, Any]:
    job = dict(row)
    for key in ("config", "budget", "actual"):
        job[key] = json.loads(job[key]) if job[key] else None
    return job


def get_job(db: sqlite3.Connection, job_id: str) -> dict[str, Any]:
    """The job; an unknown id is an InputError naming it."""
    row = db.execute("SELECT * FROM batch_jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise InputError("job_id", f"no batch job {job_id!r}; `python -m infercost batch list` shows them")
    return _job_dict(row)


def list_jobs(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Newest first, with record counts by state."""
    rows = db.execute("SELECT * FROM batch_jobs ORDER BY created_at DESC, id DESC").fetchall()
    return [{**_job_dict(row), **record_counts(db, row["id"])} for row in rows]


def record_counts(db: sqlite3.Connection, job_id: str) -> dict[str, int]:
    counts = {"records": 0, PENDING: 0, OK: 0, FAILED: 0, "attempts": 0}
    for state, n, attempts in db.execute(
        "SELECT state, COUNT(*), SUM(attempts) FROM batch_records WHERE job_id = ? GROUP BY state", (job_id,)
    ):
        counts[state] = n
        counts["records"] += n
        counts["attempts"] += attempts or 0
    return counts


def totals(db: sqlite3.Connection, job_id: str) -> dict[str, Any]:
    """What the job has done so far: tokens, cost, attempts and how many outcomes the server's usage covered."""
    row = db.execute(
        """SELECT COUNT(*) AS records, SUM(state = 'ok') AS ok, SUM(state = 'failed') AS failed,
                  SUM(attempts) AS attempts, COALESCE(SUM(n_in), 0) AS input_tokens,
                  COALESCE(SUM(n_out), 0) AS output_tokens, COALESCE(SUM(cost), 0) AS cost,
                  SUM(usage_reported) AS usage_reported, COALESCE(SUM(n_in_est), 0) AS input_tokens_est,
                  COALESCE(SUM(CASE WHEN state = 'ok' THEN n_in_est END), 0) AS ok_input_tokens_est,
                  COALESCE(SUM(CASE WHEN state = 'ok' THEN max_out END), 0) AS ok_max_out
           FROM batch_records WHERE job_id = ?""",
        (job_id,),
    ).fetchone()
    return {key: row[key] or 0 for key in row.keys()}


def set_job(db: sqlite3.Connection, job_id: str, **fields: Any) -> None:
    """Update columns of the job (``config``, ``budget``, ``actual`` as dicts)."""
    for key in ("config", "budget", "actual"):
        if key in fields and fields[key] is not None:
            fields[key] = json.dumps(fields[key])
    assignments = ", ".join(f"{name} = ?" for name in fields)
    with db:
        db.execute(f"UPDATE batch_jobs SET {assignments} WHERE id = ?", (*fields.values(), job_id))


def claim_job(db: sqlite3.Connection, job_id: str, pid: int, *, is_alive) -> None:
    """Mark the job running in process ``pid``; refused while another live process runs it (``is_alive(pid)``).

    ``BEGIN IMMEDIATE`` takes the write lock first, so two processes resuming at once cannot both claim it."""
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT status, pid FROM batch_jobs WHERE id = ?", (job_id,)).fetchone()
        if row["status"] == "running" and row["pid"] and row["pid"] != pid and is_alive(row["pid"]):
            raise InputError("job_id", f"{job_id} is running in process {row['pid']}; pause or cancel it first")
        db.execute("UPDATE batch_jobs SET status = 'running', control = NULL, pid = ?, heartbeat_at = ? "
                   "WHERE id = ?", (pid, time.time(), job_id))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def heartbeat(db: sqlite3.Connection, job_id: str, active_s: float) -> str | None:
    """Record that the job is alive and how long it has been sending; return the control asked for (pause/cancel)."""
    with db:
        db.execute("UPDATE batch_jobs SET heartbeat_at = ?, active_s = ? WHERE id = ?", (time.time(), active_s, job_id))
    row = db.execute("SELECT control FROM batch_jobs WHERE id = ?", (job_id,)).fetchone()
    return row["control"] if row else None


def request_control(db: sqlite3.Connection, job_id: str, control: str) -> None:
    """Ask the process running the job to pause or cancel; it acts at its next heartbeat."""
    get_job(db, job_id)
    with db:
        db.execute("UPDATE batch_jobs SET control = ? WHERE id = ?", (control, job_id))


def pending_records(db: sqlite3.Connection, job_id: str) -> Iterator[tuple[int, int, int, int, int]]:
    """(idx, shard, attempts, pass, n_in_est) of every pending record, in input order."""
    yield from db.execute(
        "SELECT idx, shard, attempts, pass, n_in_est FROM batch_records WHERE job_id = ? AND state = 'pending' "
        "ORDER BY idx",
        (job_id,),
    )


def record_plan(db: sqlite3.Connection, job_id: str, idx: int) -> sqlite3.Row:
    return db.execute("SELECT * FROM batch_records WHERE job_id = ? AND idx = ?", (job_id, idx)).fetchone()


def save_outcomes(db: sqlite3.Connection, job_id: str, outcomes: Iterable[dict[str, Any]]) -> None:
    """Commit attempts' outcomes now. Only a pending record changes: an outcome arriving for a record already
    finished (a duplicate from a retried shard task) is ignored, so nothing is counted twice."""
    assignments = ", ".join(f"{name} = ?" for name in OUTCOME_COLUMNS)
    with db:
        db.executemany(
            f"UPDATE batch_records SET {assignments} WHERE job_id = ? AND idx = ? AND state = 'pending'",
            [(*(o.get(name, _DEFAULTS.get(name)) for name in OUTCOME_COLUMNS), job_id, o["idx"]) for o in outcomes],
        )


def shards(db: sqlite3.Connection, job_id: str) -> list[dict[str, Any]]:
    rows = db.execute(
        """SELECT s.*, (SELECT COUNT(*) FROM batch_records r
                        WHERE r.job_id = s.job_id AND r.shard = s.shard AND r.state = 'pending') AS pending
           FROM batch_shards s WHERE s.job_id = ? ORDER BY s.shard""",
        (job_id,),
    ).fetchall()
    return [{**dict(row), "files": json.loads(row["files"])} for row in rows]


def set_shard(db: sqlite3.Connection, job_id: str, shard: int, status: str, files: list[str] | None = None) -> None:
    with db:
        if files is None:
            db.execute("UPDATE batch_shards SET status = ? WHERE job_id = ? AND shard = ?", (status, job_id, shard))
        else:
            db.execute("UPDATE batch_shards SET status = ?, files = ? WHERE job_id = ? AND shard = ?",
                       (status, json.dumps(files), job_id, shard))


def shard_outcomes(db: sqlite3.Connection, job_id: str, shard: int, pass_: int) -> Iterator[sqlite3.Row]:
    """The finished records of one shard from one pass, in input order: what its output files hold."""
    yield from db.execute(
        "SELECT idx, custom_id, state, reason, status_code, request_id, body FROM batch_records "
        "WHERE job_id = ? AND shard = ? AND pass = ? AND state != 'pending' ORDER BY idx",
        (job_id, shard, pass_),
    )


def shard_passes(db: sqlite3.Connection, job_id: str, shard: int) -> list[int]:
    rows = db.execute("SELECT DISTINCT pass FROM batch_records WHERE job_id = ? AND shard = ? ORDER BY pass",
                      (job_id, shard))
    return [row[0] for row in rows]


def last_pass(db: sqlite3.Connection, job_id: str) -> int:
    row = db.execute("SELECT COALESCE(MAX(pass), 0) FROM batch_records WHERE job_id = ?", (job_id,)).fetchone()
    return int(row[0])


def reopen_failed(db: sqlite3.Connection, job_id: str, pass_: int) -> int:
    """Put every failed record back to pending for retry pass ``pass_``; returns how many."""
    with db:
        count = db.execute(
            "UPDATE batch_records SET state = 'pending', pass = ? WHERE job_id = ? AND state = 'failed'",
            (pass_, job_id),
        ).rowcount
        db.execute(
            "UPDATE batch_shards SET status = 'pending' WHERE job_id = ? AND shard IN "
            "(SELECT DISTINCT shard FROM batch_records WHERE job_id = ? AND state = 'pending')",
            (job_id, job_id),
        )
    return count


def failures(db: sqlite3.Connection, job_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """The most common failure reasons with their counts."""
    rows = db.execute(
        "SELECT reason, COUNT(*) AS records FROM batch_records WHERE job_id = ? AND state = 'failed' "
        "GROUP BY reason ORDER BY records DESC LIMIT ?",
        (job_id, limit),
    ).fetchall()
    return [dict(row) for row in rows]
