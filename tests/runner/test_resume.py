"""A sweep killed with SIGKILL resumes: nothing committed is lost or changed, nothing is measured twice, what was in
flight is accounted for (sent again, or failed as interrupted where the level is bounded by time), and a level's
warm-up is not repeated."""

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


def finished(rows: list[dict]) -> list[dict]:
    return [row for row in rows if row["status"] != "in_flight"]


def wait_for_rows(db_path: Path, count: int, process: subprocess.Popen, timeout_s: float = 60) -> None:
    """Until ``count`` measured requests have ended (in-flight ones are not counted)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if db_path.exists() and len(finished(measured_rows(db_path))) >= count:
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
    by_id = {row["id"]: row for row in after}
    assert all(by_id[row["id"]] == row for row in finished(before))  # what had ended before the kill is untouched
    for idx in (0, 1):
        seqs = [row["seq"] for row in after if row["idx"] == idx]
        assert sorted(seqs) == list(range(REQUESTS))  # every request once: none lost, none twice
    summary = json.loads(out)
    assert summary["run_id"] == run_id and summary["status"] == "done"
    assert [level["completed"] + level["failed"] for level in summary["levels"]] == [REQUESTS, REQUESTS]


@pytest.mark.slow
def test_a_killed_duration_level_counts_its_in_flight_requests_and_warms_up_once(scripted, tmp_path: Path) -> None:
    """Every second request hangs, so both streams soon wait on a hung one; killed then, a resume must count those
    two as failed (interrupted), not lose them, and must not send the level's warm-up again."""
    db_path = tmp_path / "duration.db"
    with scripted(ttft_ms=1, gap_us=200, hang_every=2) as url:
        first = bench("--base-url", url, "--model", "scripted", "--concurrency", "2", "--duration", "2",
                      "--output-tokens", "4", "--warmup", "1", "--timeout", "3", "--request-timeout", "3",
                      "--db", str(db_path), "--json")
        wait_for_rows(db_path, 1, first)
        time.sleep(0.5)  # both streams are now on hung requests
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        run_id = measured_rows(db_path)[0]["run_id"]
        second = bench("--resume", run_id, "--db", str(db_path), "--json")
        out, _ = second.communicate(timeout=120)
    assert second.returncode == 0
    [level] = json.loads(out)["levels"]
    assert level["failures"].get("interrupted") == 2
    db = store.connect(db_path)
    try:
        assert len(store.get_requests(db, run_id, phase="warmup")) == 1
        assert all(row["status"] != "in_flight" for row in store.get_requests(db, run_id))
    finally:
        db.close()
