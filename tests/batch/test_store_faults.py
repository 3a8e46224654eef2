"""A store that refuses the job's writes half way (another process holding SQLite's write lock): no outcome is lost,
no shard file is named before all of its outcomes are stored, and a store that stays away stops the job cleanly,
resumable, with every record exactly once in the outputs after the resume."""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from infercost import batch
from infercost.errors import InputError
from infercost.runner.scripted_server import read_log
from infercost.store import connect
from infercost.store import db as store_db
from infercost.store import jobs as store_jobs
from tests.batch.conftest import read_outputs, write_batch_file

RECORDS = 300
CONCURRENCY = 4
HOLD_AT = 40  # records done when the other process takes the lock
HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")  # the write lock, until the test says so on stdin
print("locked", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


class LockHolder:
    """A second process holding the SQLite write lock of ``db`` from ``take()`` until ``release()``."""

    def __init__(self, db: Path) -> None:
        self.db, self.process = db, None

    def take(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(self.db)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            self.process.wait(timeout=30)


def make_job(tmp_path: Path, url: str) -> str:
    config = batch.JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"), shard_size=50,
                             concurrency=CONCURRENCY, read_timeout_s=5, max_attempts=6)
    return batch.create_job(write_batch_file(tmp_path / "in.jsonl", RECORDS), config, price="gpt-4o-mini",
                            db_path=tmp_path / "jobs.db")["job_id"]


def every_record_once(status: dict) -> None:
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(RECORDS)}
    assert errors == []
    assert status["counts"]["pending"] == 0 and status["counts"]["ok"] == RECORDS


@pytest.fixture
def short_waits(monkeypatch):
    """Every store connection waits 1 s for a lock instead of 30 (so the test need not hold one for 75 s)."""
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_S", 1)


def test_a_write_lock_held_elsewhere_for_a_while_loses_no_outcome_and_the_heartbeat_survives(
        tmp_path, scripted, short_waits):
    holder, seen = LockHolder(tmp_path / "jobs.db"), {}

    def progress(snapshot: dict) -> None:  # from the job's own heartbeat, in its event loop
        if snapshot["done"] >= HOLD_AT and holder.process is None:
            holder.take()
            threading.Timer(4.0, holder.release).start()  # 4 s: four times the store's wait, four beats
        if snapshot["done"] >= RECORDS - 40 and holder.process and holder.process.poll() is not None:
            seen.setdefault("age", _heartbeat_age(tmp_path / "jobs.db", job_id))

    with scripted(ttft_ms=30) as url:
        job_id = make_job(tmp_path, url)
        status = batch.run_job(job_id, db_path=tmp_path / "jobs.db", progress=progress)
    holder.release()
    assert holder.process is not None  # the lock was taken half way
    assert status["status"] == "done"
    every_record_once(status)
    assert status["shards_written"] == status["shards_total"] == RECORDS // 50
    assert seen["age"] < 3 * batch.job.HEARTBEAT_S  # still beating after the lock went


def _heartbeat_age(db_path: Path, job_id: str) -> float:
    db = connect(db_path)
    try:
        return store_jobs.get_job(db, job_id)["heartbeat_age_s"]
    finally:
        db.close()


def test_a_store_that_stays_away_stops_the_job_cleanly_and_resume_gives_every_record_once(
        tmp_path, scripted, short_waits):
    holder = LockHolder(tmp_path / "jobs.db")

    def progress(snapshot: dict) -> None:
        if snapshot["done"] >= HOLD_AT and holder.process is None:
            holder.take()  # and kept until the job has given up

    with scripted(ttft_ms=30) as url:
        job_id = make_job(tmp_path, url)
        try:
            with pytest.raises(InputError) as stopped:
                batch.run_job(job_id, db_path=tmp_path / "jobs.db", progress=progress, store_patience_s=2)
        finally:
            holder.release()
        assert stopped.value.field == "db" and "refused the job's writes for 2 s" in stopped.value.reason
        assert f"batch resume {job_id}" in stopped.value.reason
        status = batch.run_job(job_id, db_path=tmp_path / "jobs.db")
    assert status["status"] == "done"
    every_record_once(status)
    completed = collections.Counter(e["tag"] for e in read_log(tmp_path / "sent.jsonl") if e["fault"] is None)
    # sent again: what was in flight when the lock was taken, and what was sent before the first write it refused
    assert sum(n > 1 for n in completed.values()) <= 2 * CONCURRENCY


def test_a_shard_file_missing_lines_the_store_holds_is_replaced_on_resume(tmp_path, scripted):
    """A file named before all of its shard was stored (as a version without the fix did) is rebuilt from the
    store on resume, rather than kept because its name exists."""
    with scripted() as url:
        job_id = make_job(tmp_path, url)
        status = batch.run_job(job_id, db_path=tmp_path / "jobs.db")
        shard_file = Path(status["out_dir"]) / "shard-00001.jsonl"
        shard_file.write_text("".join(shard_file.read_text().splitlines(keepends=True)[:-8]))  # 8 lines short
        db = connect(tmp_path / "jobs.db")
        try:
            store_jobs.set_shard(db, job_id, 1, "pending")
        finally:
            db.close()
        status = batch.run_job(job_id, db_path=tmp_path / "jobs.db")
    every_record_once(status)
