"""``--executor ray`` on a local Ray instance: shards run as Ray tasks, the driver alone writes the job's state."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import ray  # pinned in requirements-dev.txt

from infercost import batch
from tests.batch.conftest import read_outputs, write_batch_file


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"py_modules": [str(Path(batch.__file__).resolve().parents[1])]})
    yield
    ray.shutdown()


@pytest.mark.slow
def test_shards_as_ray_tasks_give_every_record_once_despite_faults(tmp_path, scripted, local_ray):
    source = write_batch_file(tmp_path / "in.jsonl", 1000)
    with scripted(error_every=37, drop_every=41) as url:
        config = batch.JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"), shard_size=200,
                                 concurrency=8, read_timeout_s=2, max_attempts=6, executor="ray")
        status = batch.run_job(batch.create_job(source, config, price="gpt-4o-mini")["job_id"])
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert status["status"] == "done" and errors == []
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(1000)}
    assert status["actual"]["retries"] > 0 and status["shards_written"] == 5
    assert status["actual"]["input_tokens"] > 0  # usage came back through the driver


@pytest.mark.slow
def test_the_cost_cap_is_held_per_shard_on_ray(tmp_path, scripted, local_ray):
    source = write_batch_file(tmp_path / "in.jsonl", 1000, max_tokens=(50, 50))
    with scripted() as url:
        config = batch.JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"), shard_size=100,
                                 concurrency=4, executor="ray")
        created = batch.create_job(source, config, price="gpt-4o")
        cap = created["budget"]["cost"] / 2
        status = batch.run_job(created["job_id"], max_cost=cap)
    assert status["status"] == "stopped_max_cost"
    assert status["actual"]["cost"] <= cap
    assert 0 < status["counts"]["ok"] < 1000
