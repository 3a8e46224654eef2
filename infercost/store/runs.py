"""Every SQL statement about runs, levels and requests. Callers pass and get plain dicts.

A measured request is stored twice: as ``in_flight`` when it is sent, then replaced by its outcome when it ends, so
a sweep killed mid-level leaves a trace of what it had in flight (``settle_in_flight`` decides what that becomes).
Text a server sent (errors, the engine fingerprint) is scrubbed of secrets when stored, and by shape when read.
"""

from __future__ import annotations

import json
import sys
import uuid
from array import array
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import delete, func, select, update

from infercost.errors import InputError
from infercost.store.db import Row, Store, storable_text, upsert
from infercost.store.redact import scrub
from infercost.store.schema import MEASURED, MEASURED_KEY, levels, requests, runs

REQUEST_COLUMNS = (
    "run_id", "idx", "repeat", "seq", "phase", "session", "t0", "t_first", "t_last", "itl",
    "n_in", "n_in_source", "n_out", "n_out_source", "n_out_expected", "status", "error",
)
IN_FLIGHT = "in_flight"


@cache
def _request_statements(dialect: str) -> tuple[Any, Any]:
    """(in-flight insert, outcome upsert) for an engine, built once: building them costs more than running them.

    An in-flight row goes in unless the request is stored already (a resume, or its outcome came first). An outcome
    replaces its in-flight row; a finished measured row is never replaced (a resume cannot change it)."""
    insert = upsert(dialect, requests)
    finish = insert.on_conflict_do_update(
        index_elements=list(MEASURED_KEY), index_where=MEASURED,
        set_={column: insert.excluded[column] for column in REQUEST_COLUMNS[5:]},
        where=requests.c.status == IN_FLIGHT,
    )
    return insert.on_conflict_do_nothing(), finish


def pack_floats(values: Iterable[float]) -> bytes:
    floats = array("d", values)
    if sys.byteorder != "little":
        floats.byteswap()
    return floats.tobytes()


def unpack_floats(data: bytes) -> list[float]:
    floats = array("d")
    floats.frombytes(data)
    if sys.byteorder != "little":
        floats.byteswap()
    return floats.tolist()


def new_run_id() -> str:
    """Short, sortable by creation time, unique enough for one person's database."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def create_run(
    db: Store, *, backend: str, model: str, config: dict, hardware: dict, engine: dict,
    source: str = "infercost", run_id: str | None = None, status: str = "running",
    plan: Iterable[tuple[int, int, str, float]] = (), secrets: Iterable[str] = (),
) -> str:
    """The run and its plan of levels (``plan_levels`` rows) in one transaction: never a run without its plan.
    ``secrets`` (the API key in use) are scrubbed from what is stored, as is anything shaped like a credential."""
    run_id = run_id or new_run_id()
    secrets = list(secrets)
    with db:
        db.execute(runs.insert().values(
            id=run_id, created_at=datetime.now(UTC).isoformat(timespec="seconds"), status=status, source=source,
            backend=backend, model=model, config=json.dumps(scrub(config, secrets)),
            hardware=json.dumps(scrub(hardware, secrets)), engine=json.dumps(scrub(engine, secrets)),
        ))
        _plan(db, run_id, plan)
    return run_id


def set_run_status(db: Store, run_id: str, status: str) -> None:
    with db:
        db.execute(update(runs).where(runs.c.id == run_id).values(status=status))


def set_run_engine(db: Store, run_id: str, engine: dict, secrets: Iterable[str] = ()) -> None:
    with db:
        db.execute(update(runs).where(runs.c.id == run_id).values(engine=json.dumps(scrub(engine, list(secrets)))))


def _run_dict(row: Row) -> dict[str, Any]:
    run = dict(row)
    for key in ("config", "hardware", "engine"):
        run[key] = scrub(json.loads(run[key]))  # rows stored before scrubbing existed
    return run


def get_run(db: Store, run_id: str) -> dict[str, Any]:
    """The run with its levels; an unknown id is an InputError naming it."""
    row = db.execute(select(runs).where(runs.c.id == run_id)).fetchone()
    if row is None:
        raise InputError("run_id", f"no stored run {run_id!r}")
    run = _run_dict(row)
    run["levels"] = get_levels(db, run_id)
    return run


def list_runs(db: Store) -> list[dict[str, Any]]:
    """Newest first, with how many levels are done and how many measured requests are stored."""
    rows = db.execute(
        """SELECT r.*,
                  (SELECT COUNT(*) FROM levels l WHERE l.run_id = r.id AND l.status = 'done') AS levels_done,
                  (SELECT COUNT(*) FROM levels l WHERE l.run_id = r.id) AS levels_total,
                  (SELECT COUNT(*) FROM requests q WHERE q.run_id = r.id AND q.phase = 'measure') AS requests
           FROM runs r ORDER BY r.created_at DESC, r.id DESC"""
    ).fetchall()
    return [_run_dict(row) for row in rows]


def plan_levels(db: Store, run_id: str, plan: Iterable[tuple[int, int, str, float]]) -> None:
    """Insert (idx, repeat, pattern, load) rows as 'pending'; rows already there (a resume) are left alone."""
    with db:
        _plan(db, run_id, plan)


def _plan(db: Store, run_id: str, plan: Iterable[tuple[int, int, str, float]]) -> None:
    db.executemany(
        upsert(db.dialect, levels).on_conflict_do_nothing(),
        [{"run_id": run_id, "idx": idx, "repeat": repeat, "pattern": pattern, "load": load, "status": "pending"}
         for idx, repeat, pattern, load in plan],
    )


def finish_level(db: Store, run_id: str, idx: int, repeat: int, summary: dict) -> None:
    with db:
        db.execute(_level(update(levels), run_id, idx, repeat).values(status="done", summary=json.dumps(summary)))


def _level(statement, run_id: str, idx: int, repeat: int, table=levels):
    """``statement`` narrowed to one level and repeat of a run (of ``levels`` or of ``requests``)."""
    return statement.where(table.c.run_id == run_id, table.c.idx == idx, table.c.repeat == repeat)


def get_levels(db: Store, run_id: str) -> list[dict[str, Any]]:
    rows = db.execute(select(levels).where(levels.c.run_id == run_id).order_by(levels.c.idx, levels.c.repeat))
    found = []
    for row in rows:
        level = dict(row)
        level["summary"] = json.loads(level["summary"]) if level["summary"] else None
        found.append(level)
    return found


def insert_requests(db: Store, records: Iterable[dict[str, Any]], secrets: Iterable[str] = ()) -> None:
    """Commit records now, in order. An ``in_flight`` row marks a measured request as sent; its outcome replaces
    it. A finished measured request already stored (same run, level, repeat, seq) is never replaced."""
    secrets = list(secrets)
    insert, finish = _request_statements(db.dialect)
    with db:
        for record in records:
            db.execute(insert if record.get("status") == IN_FLIGHT else finish, _request_row(record, secrets))


def _request_row(record: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    row = dict(record)
    itl = row.get("itl") or []
    row["itl"] = itl if isinstance(itl, bytes) else pack_floats(itl)
    if row.get("error"):
        row["error"] = storable_text(scrub(row["error"], secrets))
    return {column: row.get(column) for column in REQUEST_COLUMNS}


def settle_in_flight(db: Store, run_id: str, idx: int, repeat: int, *, resend: bool) -> int:
    """Measured requests a killed session left in flight: deleted, to be sent again (``resend``: a level bounded by
    a request count, whose every request must have an outcome), or failed as ``interrupted`` (a level bounded by
    time, whose window is gone: these were mostly the slowest and hung requests, so dropping them would
    under-count failures). Returns how many there were."""
    def in_flight(statement):
        return _level(statement, run_id, idx, repeat, requests).where(
            requests.c.phase == "measure", requests.c.status == IN_FLIGHT)

    with db:
        if resend:
            return db.execute(in_flight(delete(requests))).rowcount
        return db.execute(in_flight(update(requests)).values(
            status="interrupted", error="interrupted: the sweep stopped while this request was in flight")).rowcount


def get_requests(
    db: Store, run_id: str, idx: int | None = None, repeat: int | None = None, phase: str = "measure"
) -> list[dict[str, Any]]:
    """Stored request records (``itl`` decoded), measured ones in the order they were sent."""
    query = select(requests).where(requests.c.run_id == run_id, requests.c.phase == phase)
    for column, value in (("idx", idx), ("repeat", repeat)):
        if value is not None:
            query = query.where(requests.c[column] == value)
    records = []
    for row in db.execute(query.order_by(requests.c.id)):
        record = dict(row)
        record["itl"] = unpack_floats(record["itl"])
        if record["error"]:
            record["error"] = scrub(record["error"])  # rows stored before scrubbing existed
        records.append(record)
    return records


def stored_seqs(db: Store, run_id: str, idx: int, repeat: int) -> set[int]:
    """Sequence numbers of the measured requests of one level already stored: what a resume must not redo."""
    query = _level(select(requests.c.seq), run_id, idx, repeat, requests).where(requests.c.phase == "measure")
    rows = db.execute(query)
    return {row[0] for row in rows}


def change_stamp(db: Store) -> tuple:
    """Changes whenever runs, levels, requests or scenarios change: what a cache of stored data is keyed on where
    there is no file to ``stat`` (a PostgreSQL store). Each part reads an index or a small table."""
    return tuple(db.execute(
        """SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM runs WHERE status = 'done'),
                  (SELECT COUNT(*) FROM levels WHERE status = 'done'), (SELECT COALESCE(MAX(id), 0) FROM requests),
                  (SELECT COUNT(*) FROM scenarios), (SELECT MAX(updated_at) FROM scenarios)"""
    ).fetchone())


def next_session(db: Store, run_id: str) -> int:
    """Each process that works on a run is a new session: durations are measured within one session only."""
    query = select(func.coalesce(func.max(requests.c.session), -1) + 1).where(requests.c.run_id == run_id)
    return int(db.execute(query).scalar())
