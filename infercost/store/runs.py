"""Every SQL statement about runs, levels and requests. Callers pass and get plain dicts.

A measured request is stored twice: as ``in_flight`` when it is sent, then replaced by its outcome when it ends, so
a sweep killed mid-level leaves a trace of what it had in flight (``settle_in_flight`` decides what that becomes).
Text a server sent (errors, the engine fingerprint) is scrubbed of secrets when stored, and by shape when read.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from array import array
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from infercost.errors import InputError
from infercost.store.redact import scrub

REQUEST_COLUMNS = (
    "run_id", "idx", "repeat", "seq", "phase", "session", "t0", "t_first", "t_last", "itl",
    "n_in", "n_in_source", "n_out", "n_out_source", "n_out_expected", "status", "error",
)
IN_FLIGHT = "in_flight"
_INSERT_REQUEST = (
    f"INSERT OR IGNORE INTO requests ({', '.join(REQUEST_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in REQUEST_COLUMNS)})"
)
# An outcome replaces its in-flight row; a finished measured row is never replaced (a resume cannot change it).
_FINISH_REQUEST = (
    f"INSERT INTO requests ({', '.join(REQUEST_COLUMNS)}) VALUES ({', '.join('?' for _ in REQUEST_COLUMNS)}) "
    "ON CONFLICT (run_id, idx, repeat, seq) WHERE phase = 'measure' DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in REQUEST_COLUMNS[5:])
    + f" WHERE requests.status = '{IN_FLIGHT}'"
)


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
    db: sqlite3.Connection, *, backend: str, model: str, config: dict, hardware: dict, engine: dict,
    source: str = "infercost", run_id: str | None = None, status: str = "running",
    plan: Iterable[tuple[int, int, str, float]] = (), secrets: Iterable[str] = (),
) -> str:
    """The run and its plan of levels (``plan_levels`` rows) in one transaction: never a run without its plan.
    ``secrets`` (the API key in use) are scrubbed from what is stored, as is anything shaped like a credential."""
    run_id = run_id or new_run_id()
    secrets = list(secrets)
    with db:
        db.execute(
            "INSERT INTO runs (id, created_at, status, source, backend, model, config, hardware, engine) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, datetime.now(UTC).isoformat(timespec="seconds"), status, source, backend, model,
             *(json.dumps(scrub(value, secrets)) for value in (config, hardware, engine))),
        )
        _plan(db, run_id, plan)
    return run_id


def set_run_status(db: sqlite3.Connection, run_id: str, status: str) -> None:
    with db:
        db.execute("UPDATE runs SET status = ? WHERE id = ?", (status, run_id))


def set_run_engine(db: sqlite3.Connection, run_id: str, engine: dict, secrets: Iterable[str] = ()) -> None:
    with db:
        db.execute("UPDATE runs SET engine = ? WHERE id = ?", (json.dumps(scrub(engine, list(secrets))), run_id))


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    run = dict(row)
    for key in ("config", "hardware", "engine"):
        run[key] = scrub(json.loads(run[key]))  # rows stored before scrubbing existed
    return run


def get_run(db: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """The run with its levels; an unknown id is an InputError naming it."""
    row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise InputError("run_id", f"no stored run {run_id!r}")
    run = _run_dict(row)
    run["levels"] = get_levels(db, run_id)
    return run


def list_runs(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Newest first, with how many levels are done and how many measured requests are stored."""
    rows = db.execute(
        """SELECT r.*,
                  (SELECT COUNT(*) FROM levels l WHERE l.run_id = r.id AND l.status = 'done') AS levels_done,
                  (SELECT COUNT(*) FROM levels l WHERE l.run_id = r.id) AS levels_total,
                  (SELECT COUNT(*) FROM requests q WHERE q.run_id = r.id AND q.phase = 'measure') AS requests
           FROM runs r ORDER BY r.created_at DESC, r.id DESC"""
    ).fetchall()
    return [_run_dict(row) for row in rows]


def plan_levels(db: sqlite3.Connection, run_id: str, plan: Iterable[tuple[int, int, str, float]]) -> None:
    """Insert (idx, repeat, pattern, load) rows as 'pending'; rows already there (a resume) are left alone."""
    with db:
        _plan(db, run_id, plan)


def _plan(db: sqlite3.Connection, run_id: str, plan: Iterable[tuple[int, int, str, float]]) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO levels (run_id, idx, repeat, pattern, load, status) VALUES (?, ?, ?, ?, ?, 'pending')",
        [(run_id, *row) for row in plan],
    )


def finish_level(db: sqlite3.Connection, run_id: str, idx: int, repeat: int, summary: dict) -> None:
    with db:
        db.execute(
            "UPDATE levels SET status = 'done', summary = ? WHERE run_id = ? AND idx = ? AND repeat = ?",
            (json.dumps(summary), run_id, idx, repeat),
        )


def get_levels(db: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    rows = db.execute("SELECT * FROM levels WHERE run_id = ? ORDER BY idx, repeat", (run_id,)).fetchall()
    levels = []
    for row in rows:
        level = dict(row)
        level["summary"] = json.loads(level["summary"]) if level["summary"] else None
        levels.append(level)
    return levels


def insert_requests(db: sqlite3.Connection, records: Iterable[dict[str, Any]], secrets: Iterable[str] = ()) -> None:
    """Commit records now, in order. An ``in_flight`` row marks a measured request as sent; its outcome replaces
    it. A finished measured request already stored (same run, level, repeat, seq) is never replaced."""
    secrets = list(secrets)
    with db:
        for record in records:
            statement = _INSERT_REQUEST if record.get("status") == IN_FLIGHT else _FINISH_REQUEST
            db.execute(statement, _request_row(record, secrets))


def _request_row(record: dict[str, Any], secrets: list[str]) -> tuple:
    row = dict(record)
    itl = row.get("itl") or []
    row["itl"] = itl if isinstance(itl, bytes) else pack_floats(itl)
    if row.get("error"):
        row["error"] = scrub(row["error"], secrets)
    return tuple(row.get(column) for column in REQUEST_COLUMNS)


def settle_in_flight(db: sqlite3.Connection, run_id: str, idx: int, repeat: int, *, resend: bool) -> int:
    """Measured requests a killed session left in flight: deleted, to be sent again (``resend``: a level bounded by
    a request count, whose every request must have an outcome), or failed as ``interrupted`` (a level bounded by
    time, whose window is gone: these were mostly the slowest and hung requests, so dropping them would
    under-count failures). Returns how many there were."""
    where = "WHERE run_id = ? AND idx = ? AND repeat = ? AND phase = 'measure' AND status = ?"
    params = (run_id, idx, repeat, IN_FLIGHT)
    with db:
        if resend:
            return db.execute(f"DELETE FROM requests {where}", params).rowcount
        return db.execute(
            f"UPDATE requests SET status = 'interrupted', error = 'interrupted: the sweep stopped while this "
            f"request was in flight' {where}", params).rowcount


def get_requests(
    db: sqlite3.Connection, run_id: str, idx: int | None = None, repeat: int | None = None, phase: str = "measure"
) -> list[dict[str, Any]]:
    """Stored request records (``itl`` decoded), measured ones in the order they were sent."""
    query = "SELECT * FROM requests WHERE run_id = ? AND phase = ?"
    params: list[Any] = [run_id, phase]
    for column, value in (("idx", idx), ("repeat", repeat)):
        if value is not None:
            query += f" AND {column} = ?"
            params.append(value)
    records = []
    for row in db.execute(query + " ORDER BY id", params):
        record = dict(row)
        record["itl"] = unpack_floats(record["itl"])
        if record["error"]:
            record["error"] = scrub(record["error"])  # rows stored before scrubbing existed
        records.append(record)
    return records


def stored_seqs(db: sqlite3.Connection, run_id: str, idx: int, repeat: int) -> set[int]:
    """Sequence numbers of the measured requests of one level already stored: what a resume must not redo."""
    rows = db.execute(
        "SELECT seq FROM requests WHERE run_id = ? AND idx = ? AND repeat = ? AND phase = 'measure'",
        (run_id, idx, repeat),
    )
    return {row[0] for row in rows}


def next_session(db: sqlite3.Connection, run_id: str) -> int:
    """Each process that works on a run is a new session: durations are measured within one session only."""
    row = db.execute("SELECT COALESCE(MAX(session), -1) + 1 FROM requests WHERE run_id = ?", (run_id,)).fetchone()
    return int(row[0])
