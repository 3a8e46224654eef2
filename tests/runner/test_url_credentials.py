"""A base URL with ``user:password@``: sent as HTTP Basic credentials to a server that checks them, never in the
Host header, never stored, never printed (``bench``, ``runs show``); ``batch`` refuses them in one line."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from infercost.cli import main
from infercost.runner.credentials import split_userinfo
from tests.batch.conftest import write_batch_file

PASSWORD = "pa%40ss-w0rd-never-stored"  # percent-encoded "@": the server must get it decoded
BASIC = "Basic " + base64.b64encode(b"alice:pa@ss-w0rd-never-stored").decode()


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://alice:{PASSWORD}@")


def _nothing_leaked(tmp_path: Path, *texts: str) -> None:
    for text in texts:
        assert "w0rd" not in text and BASIC.split()[1] not in text
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "sent.jsonl":
            assert b"w0rd" not in path.read_bytes(), path


@pytest.mark.parametrize(("url", "expected"), [
    ("http://u:p@h:1/v1", ("http://h:1/v1", "Basic " + base64.b64encode(b"u:p").decode())),
    ("http://token@h/v1", ("http://h/v1", "Basic " + base64.b64encode(b"token:").decode())),
    ("http://h:1/v1", ("http://h:1/v1", None)),
    (None, (None, None)),
])
def test_split_userinfo(url: str | None, expected: tuple) -> None:
    assert split_userinfo(url) == expected


def test_bench_sends_basic_credentials_and_stores_none(scripted, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    db = str(tmp_path / "cred.db")
    with scripted(ttft_ms=1, gap_us=200, require_auth=BASIC) as url:
        code = main(["bench", "--base-url", _with_userinfo(url), "--model", "scripted", "--concurrency", "1",
                     "--requests", "3", "--output-tokens", "4", "--db", db, "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["levels"][0]["completed"] == 3 and summary["levels"][0]["failed"] == 0
    assert main(["runs", "show", summary["run_id"], "--db", db, "--json"]) == 0
    shown = capsys.readouterr().out
    assert json.loads(shown)["config"]["options"]["base_url"] == url
    _nothing_leaked(tmp_path, shown)


def test_batch_refuses_url_credentials_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A job is resumed from what is stored (the app resumes it in another process): it could never send them."""
    source = write_batch_file(tmp_path / "in.jsonl", 3)
    code = main(["batch", "run", str(source), "--base-url", f"http://alice:{PASSWORD}@127.0.0.1:9/v1", "--model",
                 "m", "--out", str(tmp_path / "out"), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: base-url: credentials in the URL") and err.count("\n") == 1
    _nothing_leaked(tmp_path, err)
