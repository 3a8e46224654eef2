"""A sweep killed with SIGKILL resumes: nothing committed is lost or changed, nothing is measured twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infercost import store

REPO = Path(__file__).resolve().parents[2]
REQUESTS = 30


def bench(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "infercost", "bench", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def measured_rows(db_path: Path) -> list[dict]:
    db = store.connect(db_path)
    try:
        return [dict(row) for row in db.execute("SELECT * FROM requests WHERE phase = 'measure' ORDER BY id")]
    finally:
        db.close()


def wait_for_rows(db_path: Path, count: int, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if db_path.exists() and len(measured_rows(db_path)) >= count:
            return
        time.sleep(0.02)
    pytest.fail("the sweep did not store requests in time")


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_duplicates_nothing(scripted, tmp_path: Path) -> None:
    db_path = tmp_path / "kill.db"
    with scripted(ttft_ms=5, gap_us=2000) as url:
        first = bench("--base-url", url, "--model", "scripted", "--concurrency", "2,3", "--requests", str(REQUESTS),
                      "--output-tokens", "10", "--warmup", "1", "--db", str(db_path), "--json")
        wait_for_rows(db_path, REQUESTS // 2, first)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        before = measured_rows(db_path)
        run_id = before[0]["run_id"]
        assert len(before) < 2 * REQUESTS  # it really was interrupted
        second = bench("--resume", run_id, "--db", str(db_path), "--json")
        out, _ = second.communicate(timeout=120)
    assert second.returncode == 0
    after = measured_rows(db_path)
    assert after[: len(before)] == before  # what was committed before the kill is untouched
    for idx in (0, 1):
        seqs = [row["seq"] for row in after if row["idx"] == idx]
        assert sorted(seqs) == list(range(REQUESTS))  # every request once: none lost, none twice
    summary = json.loads(out)
    assert summary["run_id"] == run_id and summary["status"] == "done"
    assert [level["completed"] + level["failed"] for level in summary["levels"]] == [REQUESTS, REQUESTS]
