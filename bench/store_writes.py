"""What committing one request record per transaction costs through the store, against plain sqlite3 doing the same
INSERT on the same kind of file in the same run (the runner's writer commits each request as it completes).

- ``baseline``: Python's sqlite3, WAL and ``synchronous=NORMAL``, one ``INSERT`` and ``COMMIT`` per record;
- ``store sqlite``: ``infercost.store.insert_requests`` per record on a SQLite file (SQLAlchemy Core, the upsert
  that replaces an in-flight row);
- ``store postgresql``: the same on PostgreSQL when ``--postgres URL`` is given (a server you started).

    python -m bench.store_writes
    python -m bench.store_writes --records 5000 --postgres postgresql://me@127.0.0.1:5432/scratch --json
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infercost import store  # noqa: E402
from infercost.store.runs import REQUEST_COLUMNS, pack_floats  # noqa: E402


def record(run_id: str, seq: int) -> dict:
    return {"run_id": run_id, "idx": 0, "repeat": 0, "seq": seq, "phase": "measure", "session": 0, "t0": 1.0,
            "t_first": 1.1, "t_last": 2.0, "itl": [0.01] * 50, "n_out": 51, "status": "ok"}


def baseline(path: Path, records: int) -> float:
    """Records committed per second by plain sqlite3 on a file with the store's schema."""
    store.connect(path).close()  # the schema
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("INSERT INTO runs VALUES ('r', 'now', 'running', 'infercost', 'openai', 'm', '{}', '{}', '{}')")
    insert = f"INSERT INTO requests ({', '.join(REQUEST_COLUMNS)}) VALUES ({', '.join('?' for _ in REQUEST_COLUMNS)})"
    rows = [{**record("r", seq), "itl": pack_floats(record("r", seq)["itl"])} for seq in range(records)]
    started = time.perf_counter()
    for row in rows:
        db.execute("BEGIN")
        db.execute(insert, tuple(row.get(column) for column in REQUEST_COLUMNS))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - started
    db.close()
    return records / elapsed


def through_store(target: str, records: int) -> float:
    db = store.connect(target)
    run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={})
    rows = [record(run_id, seq) for seq in range(records)]
    started = time.perf_counter()
    for row in rows:
        store.insert_requests(db, [row])
    elapsed = time.perf_counter() - started
    db.close()
    return records / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--postgres", help="a PostgreSQL URL to measure too (its database gets a run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = baseline(Path(folder) / "baseline.db", args.records)
        results = {"baseline sqlite3": base, "store sqlite": through_store(str(Path(folder) / "s.db"), args.records)}
    if args.postgres:
        results["store postgresql"] = through_store(args.postgres, args.records)
    rows = {name: {"commits_per_s": round(rate), "ratio_to_baseline": round(rate / base, 3)}
            for name, rate in results.items()}
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for name, row in rows.items():
        print(f"{name:18} {row['commits_per_s']:>8} commits/s  x{row['ratio_to_baseline']}")


if __name__ == "__main__":
    main()
