"""Background sweeps for the app: one per target, found again by its target (after a page reload), cancellable."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError
from infercost.runner.jobs import BenchJob, running_job, target_of, unfinished_runs
from infercost.runner.sweep import create_run


def test_one_sweep_per_target_found_again_and_cancelled(scripted, sweep_config, tmp_path: Path) -> None:
    with scripted(ttft_ms=50, gap_us=20_000) as url:  # slow: the sweep runs for seconds unless cancelled
        config = sweep_config(url, levels=[1], requests=50, warmup=0)
        job = BenchJob(config, db_path=tmp_path / "j.db").start()
        try:
            with pytest.raises(InputError, match="running already"):
                BenchJob(sweep_config(url, levels=[2]), db_path=tmp_path / "j.db").start()
            assert running_job(target_of(config)) is job
            deadline = time.monotonic() + 30
            while job.progress.run_id is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert job.progress.run_id is not None  # known while it runs, so a reloaded page can name it
        finally:
            job.cancel.set()
            assert job.wait(60)
    assert job.error is None and running_job(target_of(config)) is None
    assert store.get_run(store.connect(tmp_path / "j.db"), job.run_id)["status"] == "cancelled"


def test_unfinished_runs_of_a_target(sweep_config, tmp_path: Path) -> None:
    config = sweep_config("http://127.0.0.1:9/v1")
    run_id = create_run(config, tmp_path / "u.db")  # stored as running; no process runs it
    other = create_run(sweep_config("http://127.0.0.1:10/v1"), tmp_path / "u.db")
    found = [run["id"] for run in unfinished_runs(tmp_path / "u.db", target_of(config))]
    assert found == [run_id] and other not in found
