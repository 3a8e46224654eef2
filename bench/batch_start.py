"""How long a batch job takes from *Start* to its first record and to done, against a local scripted server.

    python -m bench.batch_start [--records 50] [--repeats 3]

The Batch page's *Start* runs ``start_in_background`` (``python -m infercost batch resume JOB_ID`` in a process of its
own); this plans a job as the page does, starts it the same way and polls the store every 50 ms, so it times the job's
own process: its Python start and imports, claiming the job, and the sends. The page's own redraw after *Start* is
timed in Chromium by ``tests/batch/test_start_browser.py``. Prints the median of each mark over ``--repeats`` jobs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from infercost.batch import JobConfig, create_job, job_status
from infercost.batch.background import start_in_background
from infercost.runner.scripted_server import Script, running


def write_records(path: Path, n: int) -> Path:
    lines = [f'{{"custom_id": "r{i}", "method": "POST", "url": "/v1/completions", "body": {{"model": "scripted", '
             f'"max_tokens": 8, "prompt": "r{i} hello world"}}}}' for i in range(n)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def one_start(url: str, folder: Path, records: int) -> dict[str, float]:
    db = folder / "store.db"
    config = JobConfig(base_url=url, model="scripted", out_dir=str(folder / "out"))
    job_id = create_job(write_records(folder / "in.jsonl", records), config, db_path=db)["job_id"]
    started, marks = time.perf_counter(), {}
    start_in_background(job_id, db_path=db)
    while time.perf_counter() - started < 120:
        status = job_status(job_id, db_path=db)
        now = time.perf_counter() - started
        if status["status"] == "running":
            marks.setdefault("running", now)
        if status["counts"]["ok"]:
            marks.setdefault("first_record", now)
        if status["status"] == "done":
            marks["done"] = now
            return marks
        time.sleep(0.05)
    raise TimeoutError(f"{job_id} did not finish in 120 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, running(Script(ttft_ms=0.5, gap_us=20.0)) as url:
        os.environ["INFERCOST_HOME"] = home  # the job's log goes here, not to the person's home
        runs = []
        for repeat in range(args.repeats):
            folder = Path(home) / f"run-{repeat}"
            folder.mkdir()
            runs.append(one_start(url, folder, args.records))
    for mark in ("running", "first_record", "done"):
        values = [run[mark] for run in runs if mark in run]
        print(f"{mark:>13}: {statistics.median(values):.2f} s after Start (median of {len(values)})")


if __name__ == "__main__":
    main()
