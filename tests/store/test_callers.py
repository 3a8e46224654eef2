"""What uses the store, end to end on both engines: a sweep killed with SIGKILL then resumed, ``runs import``, and a
batch job killed then resumed, each through the real CLI in its own process."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infercost import batch, store
from infercost.cli import main
from infercost.runner.scripted_server import Script, running
from tests.batch.conftest import read_outputs, write_batch_file
from tests.runner.test_importers import AIPERF

REPO = Path(__file__).resolve().parents[2]
REQUESTS = 30
RECORDS = 1500


def infercost(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "infercost", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)


def measured(target: str) -> list[dict]:
    db = store.connect(target)
    try:
        return [dict(row) for row in db.execute("SELECT * FROM requests WHERE phase = 'measure' ORDER BY id")]
    finally:
        db.close()


def wait_until(condition, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail("the process did not get far enough in time")


def test_a_sweep_killed_then_resumed_loses_and_repeats_nothing(store_target, tmp_path: Path) -> None:
    with running(Script(ttft_ms=5, gap_us=2000), log=tmp_path / "sent.jsonl") as url:
        first = infercost("bench", "--base-url", url, "--model", "scripted", "--concurrency", "2,3", "--requests",
                          str(REQUESTS), "--output-tokens", "10", "--warmup", "1", "--db", store_target, "--json")
        wait_until(lambda: len([r for r in measured(store_target) if r["status"] != "in_flight"]) >= REQUESTS // 2,
                   first)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        before = [row for row in measured(store_target) if row["status"] != "in_flight"]
        assert len(before) < 2 * REQUESTS  # it really was interrupted
        second = infercost("bench", "--resume", before[0]["run_id"], "--db", store_target, "--json")
        out, _ = second.communicate(timeout=120)
    assert second.returncode == 0
    after = {row["id"]: row for row in measured(store_target)}
    assert all(after[row["id"]] == row for row in before)  # what had ended before the kill is untouched
    for idx in (0, 1):
        assert sorted(row["seq"] for row in after.values() if row["idx"] == idx) == list(range(REQUESTS))
    assert json.loads(out)["status"] == "done"


def test_runs_import_stores_the_run(store_target, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "aiperf.json"
    path.write_text(json.dumps(AIPERF))
    assert main(["runs", "import", str(path), "--format", "aiperf", "--db", store_target, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["runs", "show", run_id, "--db", store_target, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["levels"][0]["mean_ttft_ms"] == 1588.8


def test_a_batch_job_killed_then_resumed_writes_every_record_once(store_target, tmp_path: Path) -> None:
    source = write_batch_file(tmp_path / "in.jsonl", RECORDS)
    script = Script(ttft_ms=0.5, gap_us=20.0, tokens_per_chunk=4)
    with running(script, log=tmp_path / "sent.jsonl") as url:
        created = infercost("batch", "run", str(source), "--base-url", url, "--model", "scripted", "--out",
                            str(tmp_path / "out"), "--shard-size", "250", "--concurrency", "8", "--budget-only",
                            "--db", store_target, "--json")
        job_id = json.loads(created.communicate(timeout=120)[0])["job_id"]
        first = infercost("batch", "resume", job_id, "--db", store_target, "--json")
        wait_until(lambda: batch.job_status(job_id, db_path=store_target)["counts"]["ok"] > 0, first)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        second = infercost("batch", "resume", job_id, "--db", store_target, "--json")
        status = json.loads(second.communicate(timeout=300)[0])
    assert status["status"] == "done"
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(RECORDS)}
    assert errors == []
