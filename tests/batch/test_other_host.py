"""A job running on another host (a container, a second machine on a shared store) is alive while its heartbeat is
fresh: a resume there is refused, and takes the job over only once the heartbeat is stale. Real processes on one
store: a second pid namespace (``unshare``) is another container as far as process ids go; ``INFERCOST_HOST``
names a host the way a second machine would be named."""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import exc, select

from infercost import batch
from infercost.runner.scripted_server import read_log
from infercost.store import connect
from infercost.store import jobs as store_jobs
from infercost.store.db import set_lock_wait
from infercost.store.schema import batch_jobs
from tests.batch.conftest import read_outputs, write_batch_file
from tests.store.conftest import postgres_server  # noqa: F401 - the fixture, for the PostgreSQL case

ROOT = Path(__file__).resolve().parents[2]
RECORDS = 600
CONCURRENCY = 4


def cli(*args: str, db: str, host: str | None = None, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("INFERCOST_HOST", None)
    if host:
        env["INFERCOST_HOST"] = host
    return subprocess.Popen([*prefix, sys.executable, "-m", "infercost", "batch", *args, "--db", db, "--json"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def job_row(db_path: str, job_id: str) -> dict:
    db = connect(db_path)
    try:
        return {**store_jobs.get_job(db, job_id), **store_jobs.record_counts(db, job_id)}
    finally:
        db.close()


def wait_for(condition, what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def job_lock_is_free(db_path: str, job_id: str) -> bool:
    """Whether the job's row can be locked at once: no other process is inside a write on it (SQLite: on the file)."""
    db = connect(db_path)
    try:
        set_lock_wait(db, 0.5)
        with db:
            db.execute(select(batch_jobs.c.id).where(batch_jobs.c.id == job_id).with_for_update())
        return True
    except exc.OperationalError:
        return False
    finally:
        db.close()


def freeze_between_writes(process: subprocess.Popen, db_path: str, job_id: str) -> None:
    """SIGSTOP ``process`` at a moment it holds no lock on the job: a host that froze inside a write would hold the
    store's lock (on SQLite, the whole file's) until it woke, which no takeover can get past (a resume then says the
    store is locked and keeps what was stored)."""
    for _ in range(200):
        os.kill(process.pid, signal.SIGSTOP)
        if job_lock_is_free(db_path, job_id):
            return
        os.kill(process.pid, signal.SIGCONT)
        # long enough to finish the write it was caught in, short enough that 200 tries cannot send the whole job
        # (at 50 ms a try, a busy PostgreSQL store let the process finish all 600 records before it was caught free)
        time.sleep(0.01)
    raise AssertionError("the job's process never left its lock long enough to freeze it between writes")


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def make_job(tmp_path: Path, url: str, db: str) -> str:
    config = batch.JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"), shard_size=100,
                             concurrency=CONCURRENCY, read_timeout_s=10, max_attempts=6)
    source = write_batch_file(tmp_path / "in.jsonl", RECORDS)
    return batch.create_job(source, config, price="gpt-4o-mini", db_path=db)["job_id"]


def every_record_once_and_few_sent_twice(tmp_path: Path, status: dict) -> None:
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(RECORDS)}
    assert errors == [] and status["counts"]["pending"] == 0
    completed = collections.Counter(e["tag"] for e in read_log(tmp_path / "sent.jsonl") if e["fault"] is None)
    assert sum(n > 1 for n in completed.values()) <= 2 * CONCURRENCY  # only what the first had in flight


def _unshare_works() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True).returncode == 0


UNSHARE = ("unshare", "--pid", "--fork", "--mount-proc")


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare --pid (root, or user namespaces)")
def test_a_resume_in_another_pid_namespace_is_refused_while_the_job_beats_and_takes_over_once_it_is_killed(
        tmp_path, scripted):
    db = str(tmp_path / "jobs.db")
    with scripted(ttft_ms=50) as url:
        job_id = make_job(tmp_path, url, db)
        first = cli("resume", job_id, db=db)
        wait_for(lambda: job_row(db, job_id)["ok"] >= 20, "the first process to send")
        other = cli("resume", job_id, db=db, prefix=UNSHARE)  # the first's pid means nothing there
        _, stderr = other.communicate(timeout=120)
        assert other.returncode == 2, stderr
        [line] = error_lines(stderr)
        assert f"is running in process {first.pid} on " in line and "Traceback" not in stderr
        assert first.poll() is None  # untouched by the refused resume
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        took_over = cli("resume", job_id, db=db, prefix=UNSHARE)  # stale within 3 beats: then it is taken over
        out, stderr = took_over.communicate(timeout=300)
        while took_over.returncode == 2 and "is running in process" in stderr:  # it started within the 3 beats
            time.sleep(1)
            out, stderr = (took_over := cli("resume", job_id, db=db, prefix=UNSHARE)).communicate(timeout=300)
    assert took_over.returncode == 0, stderr
    status = json.loads(out)
    assert status["status"] == "done"
    every_record_once_and_few_sent_twice(tmp_path, status)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_host_that_froze_is_taken_over_once_its_heartbeat_is_stale_and_stops_when_it_wakes(
        tmp_path, scripted, engine, request):
    if engine == "sqlite":
        db = str(tmp_path / "jobs.db")
    else:
        db = request.getfixturevalue("postgres_server").create_database(f"host{int(time.time() * 1000) % 10**8}")
    with scripted(ttft_ms=50) as url:
        job_id = make_job(tmp_path, url, db)
        frozen = cli("resume", job_id, db=db, host="alpha")
        wait_for(lambda: job_row(db, job_id)["ok"] >= 20, "alpha to send")
        freeze_between_writes(frozen, db, job_id)  # alpha stops beating, its process alive (a host that froze)
        try:
            stale_s = batch.job.STALE_BEATS * batch.job.HEARTBEAT_S
            wait_for(lambda: job_row(db, job_id)["heartbeat_age_s"] > stale_s, "alpha's heartbeat to go stale")
            assert batch.job_status(job_id, db_path=db)["status"] == "interrupted"  # seen from this host too
            beta = cli("resume", job_id, db=db, host="beta")
            wait_for(lambda: job_row(db, job_id)["host"] == "beta" or beta.poll() is not None, "beta to claim")
            assert beta.poll() is None, beta.communicate()
        finally:
            os.kill(frozen.pid, signal.SIGCONT)  # alpha wakes, finds the job taken, and stops
        _, alpha_err = frozen.communicate(timeout=120)
        out, beta_err = beta.communicate(timeout=300)
    assert frozen.returncode == 2, alpha_err
    [line] = error_lines(alpha_err)
    assert f"was taken over by process {beta.pid} on beta" in line and "Traceback" not in alpha_err
    assert beta.returncode == 0, beta_err
    status = json.loads(out)
    assert status["status"] == "done"
    every_record_once_and_few_sent_twice(tmp_path, status)
