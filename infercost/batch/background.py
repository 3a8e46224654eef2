"""What the app needs beyond the CLI: keep an uploaded input, run a job in its own process, zip its outputs.

A job started from the app runs as ``python -m infercost batch resume JOB_ID`` in a process of its own session, exactly
as from a terminal: it outlives page reruns and browser tabs, pausing or cancelling goes through the store, and a job
started from the CLI looks the same to the page.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

from infercost.errors import InputError
from infercost.home import home_dir

MAX_UPLOAD_BYTES = 200 * 2**20
ROOT = Path(__file__).resolve().parents[2]
LOCAL_PATHS_ENV = "INFERCOST_APP_LOCAL_PATHS"  # "1": the app may read any path here (``app --allow-local-paths``)


def uploads_dir() -> Path:
    """Where the app keeps uploaded inputs: the only files a person using the app may name, unless the operator
    turned on ``LOCAL_PATHS_ENV``. Created on first use."""
    folder = home_dir(create=True) / "batch-inputs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def readable_input(path: Path) -> Path:
    """``path`` if the app may read it: anyone who reaches the app could otherwise have any file this process can
    read sent to a URL of their choice. Symlinks and ``..`` are resolved before the check."""
    if os.environ.get(LOCAL_PATHS_ENV) == "1":
        return path.expanduser()
    folder, resolved = uploads_dir().resolve(), path.expanduser().resolve()
    if not resolved.is_relative_to(folder):
        raise InputError("input_path", f"only files in the app's upload folder ({folder}) can be named; to read any "
                                       "path on this machine, start the app with --allow-local-paths")
    return resolved


def save_upload(name: str, data: bytes) -> Path:
    """Keep an uploaded input under the home (named by its content hash, so a re-upload is the same file). It is
    only ever read as data."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise InputError("file", f"{name}: larger than {MAX_UPLOAD_BYTES // 2**20} MiB; name a path instead")
    if not data:
        raise InputError("file", f"{name}: file is empty")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name)[-100:] or "input.jsonl"
    path = uploads_dir() / f"{hashlib.sha256(data).hexdigest()[:16]}-{safe}"
    if not path.exists():
        path.write_bytes(data)
    return path


def as_uploaded(error: InputError, saved: Path, name: str) -> InputError:
    """An error about a kept upload, naming the file the person uploaded ("in.jsonl line 3: ...") rather than where
    it was kept ("~/.infercost/batch-inputs/53e379f281c8f34a-in.jsonl line 3: ...")."""
    reason = error.reason
    for kept in sorted({str(saved), str(saved.resolve())}, key=len, reverse=True):
        reason = reason.replace(kept, name)
    return InputError(error.field, reason)


def default_out_dir() -> Path:
    return home_dir() / "batch-outputs"


def start_in_background(job_id: str, *, db_path: str | Path | None = None, retry_failed: bool = False) -> int:
    """Run (resume, or retry the failed records of) the job in a process of its own; returns its pid."""
    command = [sys.executable, "-m", "infercost", "batch", "retry-failed" if retry_failed else "resume", job_id]
    if db_path:
        command += ["--db", str(db_path)]
    log = home_dir(create=True) / "batch-logs"
    log.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with open(log / f"{job_id}.log", "ab") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    threading.Thread(target=process.wait, daemon=True).start()  # reaped when it ends: no zombie looks alive
    return process.pid


def zip_outputs(out_dir: str | Path) -> bytes:
    """Every output file of a job in one zip (in memory: for the app's download button)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(out_dir).glob("shard-*.jsonl")):
            archive.write(path, path.name)
    return buffer.getvalue()
