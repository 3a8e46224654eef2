"""Every SQL statement about runs, levels and requests. Callers pass and get plain dicts."""

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

REQUEST_COLUMNS = (
    "run_id", "idx", "repeat", "seq", "phase", "session", "t0", "t_first", "t_last", "itl",
    "n_in", "n_in_source", "n_out", "n_out_source", "n_out_expected", "status", "error",
)
_INSERT_REQUEST = (
    f"INSERT OR IGNORE INTO requests ({', '.join(REQUEST_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in REQUEST_COLUMNS)})"
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
) -> str:
    run_id = run_id or new_run_id()
    with db:
        db.execute(
            "INSERT INTO runs (id, created_at, status, source, backend, model, config, hardware, engine) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, datetime.now(UTC).isoformat(timespec="seconds"), status, source, backend, model,
             json.dumps(config), json.dumps(hardware), json.dumps(engine)),
        )
    return run_id


def set_run_status(db: sqlite3.Connection, run_id: str, status: str) -> None:
    with db:
        db.execute("UPDATE runs SET status = ? WHERE id = ?", (status, run_id))


def set_run_engine(db: sqlite3.Connection, run_id: str, engine: dict) -> None:
    with db:
        db.execute("UPDATE runs SET engine = ? WHERE id = ?", (json.dumps(engine), run_id))


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    run = dict(row)
    for key in ("config", "hardware", "engine"):
        run[key] = json.loads(run[key])
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
        db.executemany(
            "INSERT OR IGNORE INTO levels (run_id, idx, repeat, pattern, load, status) "
            "VALUES (?, ?, ?, ?, ?, 'pending')",
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


def insert_requests(db: sqlite3.Connection, records: Iterable[dict[str, Any]]) -> None:
    """Commit records now. A measured request already stored (same run, level, repeat, seq) is ignored."""
    with db:
        db.executemany(_INSERT_REQUEST, [_request_row(record) for record in records])


def _request_row(record: dict[str, Any]) -> tuple:
    row = dict(record)
    itl = row.get("itl") or []
    row["itl"] = itl if isinstance(itl, bytes) else pack_floats(itl)
    return tuple(row.get(column) for column in REQUEST_COLUMNS)


def get_requests(
    db: sqlite3.Connection, run_id: str, idx: int | None = None, repeat: int | None = None, phase: str = "measure"
) -> list[dict[str, Any]]:
    """Stored request records (``itl`` decoded), in the order they completed."""
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
