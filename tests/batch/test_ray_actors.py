"""``--backend transformers --executor ray``: Ray actors each hold a random-initialised model and serve whole shards;
the driver alone writes the job's state. On a local Ray instance, on CPU."""

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
import ray  # pinned in requirements-dev.txt

from infercost import batch
from infercost.errors import InputError
from tests.batch.conftest import read_outputs, write_batch_file

MODEL = "random:tiny-llama"
ROOT = Path(batch.__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"py_modules": [str(ROOT / "infercost")]})
    yield
    ray.shutdown()


def _config(tmp_path: Path, **overrides) -> batch.JobConfig:
    settings = dict(base_url=None, model=MODEL, out_dir=str(tmp_path / "out"), shard_size=8, concurrency=4,
                    executor="ray", backend="transformers", actors=2)
    return batch.JobConfig(**{**settings, **overrides})


def _check_outputs(out_dir: Path, n: int, source: Path) -> None:
    """Every record once, each an OpenAI body whose usage says it generated exactly ``max_tokens`` (EOS aside)."""
    ok, errors = read_outputs(out_dir)
    assert errors == []
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(n)}
    asked = {r["custom_id"]: r["body"]["max_tokens"] for r in map(json.loads, source.read_text().splitlines())}
    for line in ok:
        body = line["response"]["body"]
        assert line["response"]["status_code"] == 200 and body["model"] == MODEL
        choice = body["choices"][0]
        generated = body["usage"]["completion_tokens"]
        assert generated == asked[line["custom_id"]] or (choice["finish_reason"] == "stop"
                                                         and generated < asked[line["custom_id"]])
        assert body["usage"]["prompt_tokens"] > 0


@pytest.mark.slow
def test_actors_load_the_model_once_and_give_every_record_once(tmp_path, local_ray):
    source = write_batch_file(tmp_path / "in.jsonl", 40)
    db = tmp_path / "db.sqlite"
    status = batch.run_job(batch.create_job(source, _config(tmp_path), db_path=db)["job_id"], db_path=db)
    assert status["status"] == "done" and status["shards_written"] == 5
    _check_outputs(Path(status["out_dir"]), 40, source)
    workers = status["actual"]["workers"]
    assert len({w["pid"] for w in workers}) == 2 and all(w["pid"] != os.getpid() for w in workers)
    assert [w["loads"] for w in workers] == [1, 1]  # five shards, two models loaded
    assert sum(w["records"] for w in workers) == 40 and all(w["records"] >= 8 for w in workers)
    ok, _ = read_outputs(Path(status["out_dir"]))
    stored = sum(line["response"]["body"]["usage"]["completion_tokens"] for line in ok)
    assert status["actual"]["output_tokens"] == stored and status["actual"]["usage_reported"] == 40


@pytest.mark.slow
def test_a_bad_record_fails_alone_and_is_not_retried(tmp_path, local_ray):
    source = write_batch_file(tmp_path / "in.jsonl", 8)
    lines = source.read_text().splitlines()
    bad = json.loads(lines[3])
    bad["body"]["max_tokens"] = 10_000  # past the model's context of 4096
    source.write_text("\n".join([*lines[:3], json.dumps(bad), *lines[4:]]) + "\n")
    status = batch.run_job(batch.create_job(source, _config(tmp_path, actors=1), db_path=tmp_path / "db")["job_id"],
                           db_path=tmp_path / "db")
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert [e["custom_id"] for e in errors] == ["req-3"] and len(ok) == 7
    response = errors[0]["response"]  # as over HTTP: the server's status and error body
    assert response["status_code"] == 400 and response["body"]["error"]["param"] == "max_tokens"
    assert status["actual"]["attempts"] == 8  # a request's own fault is not sent again


@pytest.mark.slow
def test_kill_the_driver_then_resume_loses_nothing(tmp_path):
    """A CLI run killed with SIGKILL half-way (the Ray instance it started dies with it), then ``resume``: every
    record once."""
    source = write_batch_file(tmp_path / "in.jsonl", 48, max_tokens=(20, 40))
    db, env = tmp_path / "db.sqlite", {**os.environ, "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-m", "infercost", "batch", "run", str(source), "--backend", "transformers", "--model",
           MODEL, "--executor", "ray", "--actors", "2", "--shard-size", "4", "--concurrency", "2", "--out",
           str(tmp_path / "out"), "--db", str(db), "--json"]
    driver = subprocess.Popen(run, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    job_id = _wait_for_some_done(db, driver)
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and the Ray instance it started
    driver.wait(timeout=30)
    before = batch.job_status(job_id, db_path=db)
    assert before["status"] == "interrupted" and 0 < before["counts"]["ok"] < 48
    resumed = subprocess.run([sys.executable, "-m", "infercost", "batch", "resume", job_id, "--db", str(db), "--json"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    after = batch.job_status(job_id, db_path=db)
    assert after["status"] == "done" and after["counts"]["ok"] == 48
    _check_outputs(Path(after["out_dir"]), 48, source)


def _wait_for_some_done(db: Path, driver: subprocess.Popen, timeout_s: float = 90.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert driver.poll() is None, "the driver ended before it could be killed"
        jobs = batch.list_jobs(db_path=db) if db.exists() else []
        if jobs and jobs[0]["ok"] >= 8:
            return jobs[0]["job_id"]
        time.sleep(0.05)
    os.killpg(driver.pid, signal.SIGKILL)
    raise AssertionError("no record finished in time")


@pytest.mark.slow
def test_more_gpu_actors_than_gpus_is_refused_not_a_hang(tmp_path, local_ray):
    source = write_batch_file(tmp_path / "in.jsonl", 4)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    config = _config(tmp_path, actors=gpus + 1, gpus=True)
    with pytest.raises(InputError) as raised:
        batch.run_job(batch.create_job(source, config, db_path=tmp_path / "db")["job_id"], db_path=tmp_path / "db")
    assert raised.value.field == "actors"


@pytest.mark.slow
def test_a_model_the_actors_cannot_load_is_one_line_on_model(tmp_path):
    source = write_batch_file(tmp_path / "in.jsonl", 4)
    run = [sys.executable, "-m", "infercost", "batch", "run", str(source), "--backend", "transformers", "--model",
           "random:no-such-architecture", "--executor", "ray", "--out", str(tmp_path / "out"), "--db",
           str(tmp_path / "db")]
    done = subprocess.run(run, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error: model: unknown random architecture 'no-such-architecture'" in done.stderr


@pytest.mark.parametrize("overrides, field", [
    (dict(executor="local", actors=2), "actors"),
    (dict(actors=0), "actors"),
    (dict(base_url="http://127.0.0.1:8000/v1"), "base-url"),
])
def test_the_in_process_backend_refuses_what_it_cannot_do(tmp_path, overrides, field):
    with pytest.raises(InputError) as raised:
        _config(tmp_path, **overrides).check()
    assert raised.value.field == field


def test_without_ray_the_model_runs_in_this_process(tmp_path):
    source = write_batch_file(tmp_path / "in.jsonl", 12)
    config = _config(tmp_path, executor="local", actors=1)
    status = batch.run_job(batch.create_job(source, config, db_path=tmp_path / "db")["job_id"],
                           db_path=tmp_path / "db")
    assert status["status"] == "done" and status["actual"]["usage_reported"] == 12
    _check_outputs(Path(status["out_dir"]), 12, source)


def test_the_http_backend_still_needs_a_base_url(tmp_path):
    with pytest.raises(InputError) as raised:
        batch.JobConfig(base_url=None, model="m", out_dir=str(tmp_path)).check()
    assert raised.value.field == "base-url"
