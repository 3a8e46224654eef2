"""Every SQL statement about batch jobs, their shards and their records. Callers pass and get plain dicts.

A record's row is its checkpoint: ``state`` is ``pending`` until an attempt ends it ``ok`` or ``failed`` (after its
last attempt), and each attempt's outcome is committed as it completes. ``pass`` is the pass that gave the record its
state (0: the job's run, k: its k-th ``retry-failed``), which names the output file the record goes to.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, bindparam, cast, exc, func, select, update

from infercost.errors import InputError
from infercost.store.db import Row, Store, storable_text
from infercost.store.schema import batch_jobs, batch_records, batch_shards

PENDING, OK, FAILED = "pending", "ok", "failed"
LOST = "lost"  # what ``heartbeat`` answers a process whose job another process has claimed since
RECORD_COLUMNS = ("job_id", "idx", "shard", "custom_id", "state", "n_in_est", "max_out")
_DEFAULTS = {"usage_reported": 0, "cost": 0.0}
OUTCOME_COLUMNS = ("state", "attempts", "reason", "n_in", "n_out", "usage_reported", "cost", "latency_ms",
                   "status_code", "request_id", "body")


def new_job_id() -> str:
    """Short, sortable by creation time, unique enough for one person's database."""
    return "job-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def create_job(db: Store, job: dict[str, Any], records: Iterable[tuple],
               finish: Callable[[], tuple[list[tuple[int, int, int]], dict[str, Any]]]) -> None:
    """Insert the job, its records (``RECORD_COLUMNS`` minus job_id and state, streamed) and then what ``finish()``
    returns once they are all read: the shards ``(shard, first_idx, records)`` and the budget. One transaction: a
    job is there whole or not at all, and an error in ``finish`` leaves nothing. A repeated ``custom_id`` is
    refused."""
    try:
        with db:
            db.execute(batch_jobs.insert().values(
                id=job["id"], created_at=datetime.now(UTC).isoformat(timespec="seconds"), status="created",
                input_path=job["input_path"], input_sha256=job["input_sha256"], out_dir=job["out_dir"],
                config=json.dumps(job["config"]), budget="{}",
            ))
            for chunk in _chunks(_record_rows(job["id"], records), RECORDS_PER_INSERT):
                db.executemany(batch_records.insert(), chunk)
            shards, budget = finish()
            db.executemany(batch_shards.insert(), [
                {"job_id": job["id"], "shard": shard, "first_idx": first_idx, "records": count, "status": PENDING}
                for shard, first_idx, count in shards
            ])
            db.execute(update(batch_jobs).where(batch_jobs.c.id == job["id"]).values(budget=json.dumps(budget)))
    except exc.IntegrityError as error:
        if "custom_id" in str(error):
            raise InputError("custom_id", "every custom_id must be unique in a batch file; one repeats") from None
        raise


RECORDS_PER_INSERT = 5000  # records streamed from the input file are inserted in batches of this many


def _record_rows(job_id: str, records: Iterable[tuple]) -> Iterator[dict[str, Any]]:
    names = [name for name in RECORD_COLUMNS if name not in ("job_id", "state")]
    for record in records:
        yield {"job_id": job_id, "state": PENDING, **dict(zip(names, record, strict=True))}


def _chunks(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _job_dict(row: Row) -> dict[str, Any]:
    job = dict(row)
    for key in ("config", "budget", "actual"):
        job[key] = json.loads(job[key]) if job[key] else None
    return job


def store_clock(db: Store) -> Any:
    """Now, in epoch seconds, by the store's clock: heartbeats are written and aged by one clock, so processes on
    hosts whose clocks differ agree on how old a beat is (SQLite's clock is its host's)."""
    if db.dialect == "postgresql":
        return cast(func.extract("epoch", func.clock_timestamp()), Float)
    return (func.julianday("now") - 2440587.5) * 86400.0


def _jobs_query(db: Store) -> Any:
    """Every column of the jobs, and ``heartbeat_age_s``: seconds since the last beat (None: never beat)."""
    return select(batch_jobs, (store_clock(db) - batch_jobs.c.heartbeat_at).label("heartbeat_age_s"))


def get_job(db: Store, job_id: str) -> dict[str, Any]:
    """The job; an unknown id is an InputError naming it."""
    row = db.execute(_jobs_query(db).where(batch_jobs.c.id == job_id)).fetchone()
    if row is None:
        raise InputError("job_id", f"no batch job {job_id!r}; `python -m infercost batch list` shows them")
    return _job_dict(row)


def list_jobs(db: Store) -> list[dict[str, Any]]:
    """Newest first, with record counts by state."""
    rows = db.execute(_jobs_query(db).order_by(batch_jobs.c.created_at.desc(), batch_jobs.c.id.desc()))
    return [{**_job_dict(row), **record_counts(db, row["id"])} for row in rows]


def record_counts(db: Store, job_id: str) -> dict[str, int]:
    counts = {"records": 0, PENDING: 0, OK: 0, FAILED: 0, "attempts": 0}
    query = (select(batch_records.c.state, func.count(), func.sum(batch_records.c.attempts))
             .where(batch_records.c.job_id == job_id).group_by(batch_records.c.state))
    for state, n, attempts in db.execute(query):
        counts[state] = n
        counts["records"] += n
        counts["attempts"] += attempts or 0
    return counts


def totals(db: Store, job_id: str) -> dict[str, Any]:
    """What the job has done so far: tokens, cost, attempts and how many outcomes the server's usage covered."""
    row = db.execute(
        """SELECT COUNT(*) AS records, SUM(CASE WHEN state = 'ok' THEN 1 ELSE 0 END) AS ok,
                  SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed,
                  SUM(attempts) AS attempts, COALESCE(SUM(n_in), 0) AS input_tokens,
                  COALESCE(SUM(n_out), 0) AS output_tokens, COALESCE(SUM(cost), 0) AS cost,
                  SUM(usage_reported) AS usage_reported, COALESCE(SUM(n_in_est), 0) AS input_tokens_est,
                  COALESCE(SUM(CASE WHEN state = 'ok' THEN n_in_est END), 0) AS ok_input_tokens_est,
                  COALESCE(SUM(CASE WHEN state = 'ok' THEN max_out END), 0) AS ok_max_out
           FROM batch_records WHERE job_id = :job_id""",
        {"job_id": job_id},
    ).fetchone()
    return {key: row[key] or 0 for key in row.keys()}


def set_job(db: Store, job_id: str, *, owner: tuple[int, str | None] | None = None, **fields: Any) -> bool:
    """Update columns of the job (``config``, ``budget``, ``actual`` as dicts). With ``owner`` (pid, host), only
    while that process still holds the job's claim; returns whether the job was updated."""
    for key in ("config", "budget", "actual"):
        if key in fields and fields[key] is not None:
            fields[key] = json.dumps(fields[key])
    with db:
        return db.execute(_owned(update(batch_jobs).where(batch_jobs.c.id == job_id), owner)
                          .values(**fields)).rowcount > 0


def _owned(statement: Any, owner: tuple[int, str | None] | None) -> Any:
    if owner is None:
        return statement
    pid, host = owner
    return statement.where(batch_jobs.c.pid == pid, batch_jobs.c.host.is_(None) if host is None
                           else batch_jobs.c.host == host)


def claim_job(db: Store, job_id: str, pid: int, *, is_alive: Callable[[dict[str, Any]], bool],
              host: str | None = None, heartbeat_s: float | None = None) -> None:
    """Mark the job running in process ``pid`` on ``host``, beating every ``heartbeat_s``; refused while another
    process that ``is_alive(job)`` runs it (the job as ``get_job`` gives it: ``pid``, ``host``,
    ``heartbeat_age_s``, ``heartbeat_s``).

    The job's row is locked before it is read (``BEGIN IMMEDIATE`` on SQLite, ``SELECT ... FOR UPDATE`` on
    PostgreSQL), so two processes resuming at once cannot both claim it."""
    with db:
        row = db.execute(_jobs_query(db).where(batch_jobs.c.id == job_id).with_for_update(of=batch_jobs)).fetchone()
        job = _job_dict(row)
        if job["status"] == "running" and job["pid"] and (job["pid"], job["host"]) != (pid, host) and is_alive(job):
            where = f" on {job['host']}" if job["host"] else ""
            raise InputError("job_id", f"{job_id} is running in process {job['pid']}{where}; pause or cancel it "
                                       "first")
        db.execute(update(batch_jobs).where(batch_jobs.c.id == job_id)
                   .values(status="running", control=None, pid=pid, host=host, heartbeat_s=heartbeat_s,
                           heartbeat_at=store_clock(db)))


def heartbeat(db: Store, job_id: str, active_s: float, *, owner: tuple[int, str | None] | None = None) -> str | None:
    """Record that the job is alive and how long it has been sending; return the control asked for (pause/cancel),
    or ``LOST`` when ``owner`` (pid, host) no longer holds the job: another process took it over."""
    with db:
        beat = _owned(update(batch_jobs).where(batch_jobs.c.id == job_id), owner)
        if not db.execute(beat.values(heartbeat_at=store_clock(db), active_s=active_s)).rowcount:
            return LOST
    row = db.execute(select(batch_jobs.c.control).where(batch_jobs.c.id == job_id)).fetchone()
    return row["control"] if row else None


def request_control(db: Store, job_id: str, control: str) -> None:
    """Ask the process running the job to pause or cancel; it acts at its next heartbeat."""
    get_job(db, job_id)
    with db:
        db.execute(update(batch_jobs).where(batch_jobs.c.id == job_id).values(control=control))


def pending_records(db: Store, job_id: str) -> Iterator[tuple[int, int, int, int, int]]:
    """(idx, shard, attempts, pass, n_in_est) of every pending record, in input order."""
    r = batch_records.c
    yield from db.execute(select(r.idx, r.shard, r.attempts, r["pass"], r.n_in_est)
                          .where(r.job_id == job_id, r.state == PENDING).order_by(r.idx))


def pending_attempts(db: Store, job_id: str) -> int:
    """Attempts already spent on records still pending (retries in progress)."""
    r = batch_records.c
    query = select(func.coalesce(func.sum(r.attempts), 0)).where(r.job_id == job_id, r.state == PENDING)
    return int(db.execute(query).scalar())


def record_plan(db: Store, job_id: str, idx: int) -> Row:
    r = batch_records.c
    return db.execute(select(batch_records).where(r.job_id == job_id, r.idx == idx)).fetchone()


def save_outcomes(db: Store, job_id: str, outcomes: Iterable[dict[str, Any]]) -> None:
    """Commit attempts' outcomes now. Only a pending record changes: an outcome arriving for a record already
    finished (a duplicate from a retried shard task) is ignored, so nothing is counted twice."""
    r = batch_records.c
    statement = (update(batch_records)
                 .where(r.job_id == bindparam("b_job_id"), r.idx == bindparam("b_idx"), r.state == PENDING)
                 .values({name: bindparam(f"v_{name}") for name in OUTCOME_COLUMNS}))
    with db:
        db.executemany(statement, [
            {"b_job_id": job_id, "b_idx": o["idx"],
             **{f"v_{name}": storable_text(o.get(name, _DEFAULTS.get(name))) for name in OUTCOME_COLUMNS}}
            for o in outcomes
        ])


def shard_pending(db: Store, job_id: str, shard: int) -> int:
    """How many records of the shard the store still holds as pending (a shard is written only at zero)."""
    r = batch_records.c
    query = select(func.count()).where(r.job_id == job_id, r.shard == shard, r.state == PENDING)
    return int(db.execute(query).scalar())


def shards(db: Store, job_id: str) -> list[dict[str, Any]]:
    rows = db.execute(
        """SELECT s.*, (SELECT COUNT(*) FROM batch_records r
                        WHERE r.job_id = s.job_id AND r.shard = s.shard AND r.state = 'pending') AS pending
           FROM batch_shards s WHERE s.job_id = :job_id ORDER BY s.shard""",
        {"job_id": job_id},
    ).fetchall()
    return [{**dict(row), "files": json.loads(row["files"])} for row in rows]


def set_shard(db: Store, job_id: str, shard: int, status: str, files: list[str] | None = None) -> None:
    values = {"status": status} if files is None else {"status": status, "files": json.dumps(files)}
    with db:
        db.execute(update(batch_shards).where(batch_shards.c.job_id == job_id, batch_shards.c.shard == shard)
                   .values(values))


def shard_outcomes(db: Store, job_id: str, shard: int, pass_: int) -> Iterator[Row]:
    """The finished records of one shard from one pass, in input order: what its output files hold."""
    r = batch_records.c
    yield from db.execute(
        select(r.idx, r.custom_id, r.state, r.reason, r.status_code, r.request_id, r.body)
        .where(r.job_id == job_id, r.shard == shard, r["pass"] == pass_, r.state != PENDING).order_by(r.idx)
    )


def shard_passes(db: Store, job_id: str, shard: int) -> list[int]:
    r = batch_records.c
    rows = db.execute(select(r["pass"]).distinct().where(r.job_id == job_id, r.shard == shard).order_by(r["pass"]))
    return [row[0] for row in rows]


def last_pass(db: Store, job_id: str) -> int:
    r = batch_records.c
    return int(db.execute(select(func.coalesce(func.max(r["pass"]), 0)).where(r.job_id == job_id)).scalar())


def reopen_failed(db: Store, job_id: str, pass_: int) -> int:
    """Put every failed record back to pending for retry pass ``pass_``; returns how many."""
    with db:
        r = batch_records.c
        count = db.execute(update(batch_records).where(r.job_id == job_id, r.state == FAILED)
                           .values({"state": PENDING, "pass": pass_})).rowcount
        reopened = select(r.shard).distinct().where(r.job_id == job_id, r.state == PENDING)
        db.execute(update(batch_shards).where(batch_shards.c.job_id == job_id, batch_shards.c.shard.in_(reopened))
                   .values(status=PENDING))
    return count


def over_asked(db: Store, job_id: str) -> dict[str, Any]:
    """Succeeded records whose server reported more completion tokens than the record could ask for (``max_out``:
    every choice's cap): how many, and the one furthest over."""
    where = "job_id = :job_id AND state = 'ok' AND max_out IS NOT NULL AND n_out > max_out"
    count = db.execute(f"SELECT COUNT(*) FROM batch_records WHERE {where}", {"job_id": job_id}).scalar()
    worst = db.execute(f"SELECT custom_id, n_out, max_out FROM batch_records WHERE {where} "
                       "ORDER BY n_out - max_out DESC LIMIT 1", {"job_id": job_id}).fetchone()
    return {"records": int(count or 0), "worst": dict(worst) if worst else None}


def failures(db: Store, job_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """The most common failure reasons with their counts."""
    rows = db.execute(
        "SELECT reason, COUNT(*) AS records FROM batch_records WHERE job_id = :job_id AND state = 'failed' "
        "GROUP BY reason ORDER BY records DESC LIMIT :limit",
        {"job_id": job_id, "limit": limit},
    ).fetchall()
    return [dict(row) for row in rows]
