"""What can be checked before the first send is checked before it (an output directory that takes no file, more
connections than the process may open), and a disk that fills while a shard is written leaves no temporary file
behind: one line, exit status 2, nothing paid for in vain, and a resume that finishes the job."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from infercost.runner.scripted_server import read_log
from tests.batch.conftest import read_outputs, write_batch_file

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, db: Path, shell_prefix: str = "") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "infercost", "batch", *args, "--db", str(db), "--json"]
    if shell_prefix:  # e.g. "ulimit -n 1024": a limit of this command only, in a shell of its own
        command = ["bash", "-c", f"{shell_prefix} && exec \"$@\"", "bash", *command]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def batch_run(source: Path, url: str, out: Path, *options: str, db: Path, shell_prefix: str = ""):
    return cli("run", str(source), "--base-url", url, "--model", "scripted", "--out", str(out), *options, db=db,
               shell_prefix=shell_prefix)


def one_error_line(result: subprocess.CompletedProcess, field: str) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: "), result.stderr
    return lines[0]


def sent(tmp_path: Path) -> int:
    log = tmp_path / "sent.jsonl"
    return len(read_log(log)) if log.exists() else 0


@contextlib.contextmanager
def tmpfs(path: Path, size: str, *options: str) -> Iterator[Path]:
    """A small filesystem of its own at ``path`` (root only), unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join([f"size={size}", *options]), "tmpfs", str(path)],
                           capture_output=True, text=True)
    if mount.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def remount(path: Path, *options: str) -> None:
    subprocess.run(["mount", "-o", ",".join(["remount", *options]), str(path)], check=True, capture_output=True)


def test_an_output_directory_under_a_file_is_refused_before_anything_is_sent(tmp_path, scripted):
    (tmp_path / "a-file").write_text("not a directory")
    source = write_batch_file(tmp_path / "in.jsonl", 50)
    with scripted() as url:
        result = batch_run(source, url, tmp_path / "a-file" / "out", db=tmp_path / "jobs.db")
    assert "a-file/out: cannot write output files there" in one_error_line(result, "out")
    assert sent(tmp_path) == 0


def test_a_read_only_output_disk_is_refused_before_the_first_send_on_run_and_on_resume(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 50)
    with tmpfs(tmp_path / "disk", "1m") as disk, scripted() as url:
        created = batch_run(source, url, disk, "--budget-only", db=tmp_path / "jobs.db")
        job_id = json.loads(created.stdout)["job_id"]
        remount(disk, "ro")
        resumed = cli("resume", job_id, db=tmp_path / "jobs.db")
        run = batch_run(source, url, disk, db=tmp_path / "jobs.db")
    assert "Read-only file system" in one_error_line(resumed, "out")
    assert "Read-only file system" in one_error_line(run, "out")
    assert sent(tmp_path) == 0


def test_a_full_disk_leaves_no_temporary_shard_and_a_resume_with_room_finishes(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 1000)
    with tmpfs(tmp_path / "disk", "200k") as disk, scripted() as url:
        full = batch_run(source, url, disk, "--shard-size", "500", db=tmp_path / "jobs.db")  # ~250 KB a shard
        line = one_error_line(full, "out")
        assert "No space left on device" in line and "resume" in line
        [job_dir] = disk.iterdir()
        assert [path.name for path in job_dir.iterdir() if path.name.endswith(".tmp")] == []
        remount(disk, "size=10m")
        resumed = cli("resume", job_dir.name, db=tmp_path / "jobs.db")
        assert resumed.returncode == 0, resumed.stderr
        ok, errors = read_outputs(job_dir)
        assert [path.name for path in job_dir.iterdir() if path.name.endswith(".tmp")] == []
    assert json.loads(resumed.stdout)["status"] == "done"
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(1000)}
    assert errors == []


def test_more_connections_than_open_files_allow_is_refused_before_anything_is_sent(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 50)
    with scripted() as url:
        result = batch_run(source, url, tmp_path / "out", "--concurrency", "3000", db=tmp_path / "jobs.db",
                           shell_prefix="ulimit -n 1024")
    line = one_error_line(result, "concurrency")
    assert "3000 connections" in line and "1024" in line and "use 960 or fewer" in line
    assert sent(tmp_path) == 0


def test_a_soft_open_files_limit_below_the_concurrency_is_raised_to_fit_and_the_job_runs(tmp_path, scripted):
    # 600 connections at once: over the soft limit of 256, under the hard one, and under the 1,024 sockets the
    # scripted server's select() can serve
    source = write_batch_file(tmp_path / "in.jsonl", 600)
    with scripted(ttft_ms=300) as url:  # slow enough that all 600 are open at once
        result = batch_run(source, url, tmp_path / "out", "--concurrency", "600", db=tmp_path / "jobs.db",
                           shell_prefix="ulimit -Sn 256")
    assert result.returncode == 0, result.stderr[-2000:]
    status = json.loads(result.stdout)
    assert status["status"] == "done" and status["counts"]["ok"] == 600, status["actual"]["failure_reasons"]
    assert status["actual"]["attempts"] == 600  # no connection failed for want of a descriptor
