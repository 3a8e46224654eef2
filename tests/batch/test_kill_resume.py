"""``kill -9`` at random points, then ``resume``: every record's output exactly once, no finished record sent again."""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from infercost import batch
from infercost.runner.scripted_server import read_log
from tests.batch.conftest import read_outputs, write_batch_file

ROOT = Path(__file__).resolve().parents[2]
KILLS = 4
CONCURRENCY = 16
# The scripted server fails every 53rd request and drops every 61st, whoever sends it: a retry lands on another
# fault about one time in 28, so among the ~140 records a first fault hits, one is hit three times in a row in about
# one run of six (a CI run lost req-487 so: a drop, then two 500s). With six attempts it is about 1 in 130,000.
MAX_ATTEMPTS = 6


def cli(*args: str, db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "infercost", "batch", *args, "--db", str(db), "--json"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def wait_for_progress(job_id: str, db: Path, *, beyond: int, timeout_s: float = 120.0) -> None:
    """Wait until the job has finished more than ``beyond`` records: a kill before its process got going would test
    nothing, and how long that takes depends on how busy the machine is, not on a fixed sleep."""
    deadline = time.monotonic() + timeout_s
    while batch.job_status(job_id, db_path=db)["counts"]["ok"] <= beyond:
        assert time.monotonic() < deadline, f"no record finished within {timeout_s:.0f} s of resume"
        time.sleep(0.05)


def test_kill_9_at_random_points_then_resume_loses_nothing_and_sends_nothing_finished_twice(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 4000)
    db, rng = tmp_path / "jobs.db", random.Random(int(time.time()))
    with scripted(error_every=53, drop_every=61) as url:
        created = cli("run", str(source), "--base-url", url, "--model", "scripted", "--out", str(tmp_path / "out"),
                      "--shard-size", "250", "--concurrency", str(CONCURRENCY), "--timeout", "2", "--budget-only",
                      "--max-attempts", str(MAX_ATTEMPTS),
                      db=db)
        job_id = json.loads(created.communicate(timeout=120)[0])["job_id"]
        done_at_kills = []
        for _ in range(KILLS):
            before = batch.job_status(job_id, db_path=db)["counts"]["ok"]
            process = cli("resume", job_id, db=db)
            wait_for_progress(job_id, db, beyond=before)  # a start takes ~0.7 s idle, far longer on a busy machine
            time.sleep(rng.uniform(0.0, 0.5))  # then ~1000 records/s: somewhere in the middle of a shard
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            done_at_kills.append(batch.job_status(job_id, db_path=db)["counts"]["ok"])
        assert any(0 < done < 4000 for done in done_at_kills), done_at_kills  # killed half way, not before or after
        status = json.loads(cli("resume", job_id, db=db).communicate(timeout=300)[0])
    assert status["status"] == "done"
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(4000)}
    assert errors == []
    completed = collections.Counter(e["tag"] for e in read_log(tmp_path / "sent.jsonl") if e["fault"] is None)
    sent_twice = [tag for tag, n in completed.items() if n > 1]
    assert len(sent_twice) <= KILLS * CONCURRENCY  # only requests in flight at a kill were ever sent again
