"""Output files: one per shard and pass, in the OpenAI batch output format, written from the store when the shard ends.

A line is ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``: OpenAI's
``BatchRequestOutput`` (openai-python ``types/batch_request_output.py``; API reference "The request output object")
and vLLM's (``BatchRequestOutput`` / ``BatchResponseData`` in ``vllm/entrypoints/openai/run_batch.py``). As OpenAI
splits them, successes go to the output file and failures to the errors file. Every failed line carries
``error: {"code", "message"}`` (DESIGN, "Reliability rules"); an HTTP error also keeps the server's status and body in
``response``; a failure without a whole HTTP response (a timeout, a dropped or malformed stream, a refused
connection) has ``response: null``.

Why write from the store at the end of a shard rather than append as records finish: the store is the one truth
(each record is committed as it completes), so a file can always be rebuilt from it and no reconciliation is needed;
the file is written to a temporary name, fsynced, and hard-linked to its final name, which is atomic and fails if
the name exists, so a kill can never leave half a line under an output name. A kill between the link and the store
noting it is harmless: on resume the same rows give the same bytes, and the existing file is kept. A shard is
written only once the store holds every one of its outcomes; an existing file that lacks some of the lines the
store now gives (written by a version that named a shard before all of it was committed) is replaced, atomically.
A write that fails (a full disk) removes its temporary file and raises.

Names: ``shard-00003.jsonl`` / ``shard-00003.errors.jsonl`` for the job's run; ``shard-00003.retry-1.jsonl`` /
``shard-00003.retry-1.errors.jsonl`` for the records the first ``retry-failed`` sent again. A record is in exactly
one output file once it succeeds.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.store import Row, Store
from infercost.store import jobs as store_jobs


def shard_file_names(shard: int, pass_: int) -> tuple[str, str]:
    stem = f"shard-{shard:05d}" + (f".retry-{pass_}" if pass_ else "")
    return f"{stem}.jsonl", f"{stem}.errors.jsonl"


def output_line(job_id: str, row: Row | dict[str, Any]) -> dict[str, Any]:
    body = json.loads(row["body"]) if row["body"] else None
    line: dict[str, Any] = {"id": f"batch_req_{job_id}_{row['idx']}", "custom_id": row["custom_id"]}
    status = row["status_code"]
    http_error = row["state"] != store_jobs.OK and status not in (None, 0, 200)
    response = {"status_code": status or 200, "request_id": row["request_id"], "body": body}
    line["response"] = response if row["state"] == store_jobs.OK or http_error else None
    line["error"] = None if row["state"] == store_jobs.OK else {"code": _error_code(row, body, http_error),
                                                                "message": row["reason"] or "failed"}
    return line


def _error_code(row: Row | dict[str, Any], body: Any, http_error: bool) -> str:
    """The server's own code for an HTTP error (``error.code`` in its body), else ``http_<status>``; for other
    failures the code their reason starts with (``timeout``, ``dropped``, ``bad_response``, ...)."""
    if http_error:
        server = body.get("error") if isinstance(body, dict) else None
        code = server.get("code") if isinstance(server, dict) else None
        return code if isinstance(code, str) and code else f"http_{row['status_code']}"
    return (row["reason"] or "failed").split(":", 1)[0]


def check_writable(out_dir: Path | str) -> None:
    """Before anything is sent: the output directory exists (it is made) and takes a file, so no money is spent on
    records whose outputs could not be written. InputError("out") names why not."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".write-test-{os.getpid()}.tmp"
        with open(probe, "w", encoding="utf-8") as stream:
            stream.write("ok\n")
        probe.unlink()
    except OSError as error:
        raise InputError("out", f"{out_dir}: cannot write output files there ({error.strerror or error})") from None


def write_shard(db: Store, job_id: str, out_dir: Path, shard: int, pass_: int) -> list[str]:
    """Write the shard's output and errors files for this pass (an empty one is not written); returns their names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ok_name, errors_name = shard_file_names(shard, pass_)
    written = []
    with _Atomic(out_dir / ok_name) as ok_file, _Atomic(out_dir / errors_name) as errors_file:
        for row in store_jobs.shard_outcomes(db, job_id, shard, pass_):
            target = ok_file if row["state"] == store_jobs.OK else errors_file
            target.write(json.dumps(output_line(job_id, row), ensure_ascii=False) + "\n")
    for atomic in (ok_file, errors_file):
        if atomic.published:
            written.append(atomic.path.name)
    return written


class _Atomic:
    """A file written under a temporary name, fsynced, and linked to its final name only if anything was written.

    An existing final name is kept as it is (it was written from the same committed rows before a kill)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.lines = 0
        self.published = False

    def __enter__(self) -> _Atomic:
        self.stream = open(self.tmp, "w", encoding="utf-8")
        return self

    def write(self, text: str) -> None:
        self.stream.write(text)
        self.lines += 1

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        try:
            if kind is None:
                self.stream.flush()
                os.fsync(self.stream.fileno())
            self.stream.close()
            if kind is None and self.lines:
                self._publish()
                self.published = True
                _fsync_dir(self.path.parent)
        finally:
            if not self.stream.closed:  # a flush that failed (a full disk) fails again in close(): it is let go
                with contextlib.suppress(OSError):
                    self.stream.close()
            self.tmp.unlink(missing_ok=True)

    def _publish(self) -> None:
        try:
            os.link(self.tmp, self.path)
        except FileExistsError:
            if not _lines(self.tmp) <= _lines(self.path):
                os.replace(self.tmp, self.path)


def _lines(path: Path) -> set[bytes]:
    with open(path, "rb") as stream:
        return set(stream)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
