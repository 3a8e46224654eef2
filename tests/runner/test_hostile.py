"""A hostile server, through ``python -m infercost bench ... --json``: each malformed response is one failed request
with a reason, the sweep goes on to the end, and nothing hangs past the request deadline or prints a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infercost import store
from infercost.cli import main

REQUESTS = 4  # every second one (the server's fault_every=2) gets the fault
REPO = Path(__file__).resolve().parents[2]

CASES = [  # (fault, failure kind, extra bench arguments)
    ("usage_list", "bad_response", []),
    ("usage_number", "bad_response", []),
    ("usage_text", "bad_response", []),
    ("bad_token", "bad_response", ["--tokenizer", "o200k_base", "--extra-body",
                                   '{"stream_options": {"include_usage": false}}']),
    ("token_shape", "bad_response", ["--tokenizer", "o200k_base", "--extra-body",
                                     '{"stream_options": {"include_usage": false}}']),
    ("bad_utf8", "bad_response", []),
    ("short", "truncated", []),
    ("close_drop", "dropped", []),
    ("no_terminator", "dropped", []),
    ("keepalive", "timeout", []),
    ("endless_head", "timeout", []),
    ("huge_line", "bad_response", ["--request-timeout", "20"]),  # a loaded machine takes a while to copy it
    ("not_sse", "bad_response", []),
    ("bad_chunk", "bad_response", []),
    ("bad_status", "bad_response", []),
    ("redirect", "http_error", []),
]


def bench(capsys: pytest.CaptureFixture, url: str, db: Path, *extra: str) -> tuple[int, dict, str]:
    code = main(["bench", "--backend", "openai", "--base-url", url, "--model", "scripted", "--concurrency", "2",
                 "--requests", str(REQUESTS), "--warmup", "0", "--output-tokens", "8", "--input-tokens", "4",
                 "--timeout", "1", "--db", str(db), "--json", *extra])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


@pytest.mark.parametrize(("fault", "kind", "extra"), CASES, ids=[case[0] for case in CASES])
def test_a_malformed_response_is_one_failure_and_the_sweep_goes_on(
        scripted, tmp_path: Path, capsys: pytest.CaptureFixture, fault: str, kind: str, extra: list[str]) -> None:
    with scripted(ttft_ms=1, gap_us=200, fault=fault, fault_every=2, keepalive_ms=100) as url:
        code, summary, err = bench(capsys, url, tmp_path / "h.db", "--request-timeout", "2", *extra)
    assert code == 0, err
    assert "Traceback" not in err and "Fatal error" not in err
    [level] = summary["levels"]
    assert summary["status"] == "done"
    assert (level["completed"], level["failed"], level["failures"]) == (2, 2, {kind: 2})
    rows = store.get_requests(store.connect(tmp_path / "h.db"), summary["run_id"])
    reasons = [row["error"] for row in rows if row["status"] != "ok"]
    assert len(reasons) == 2 and all(reason and len(reason) < 400 for reason in reasons)


def test_the_default_deadline_ends_a_response_that_never_completes(
        scripted, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """SSE comments keep the idle timeout from firing; the deadline (default: --timeout + 1 s per output token)
    still ends the request."""
    start = time.monotonic()
    with scripted(ttft_ms=1, gap_us=200, fault="keepalive", fault_every=2, keepalive_ms=50) as url:
        code, summary, err = bench(capsys, url, tmp_path / "d.db", "--output-tokens", "2")
    assert code == 0, err
    assert summary["levels"][0]["failures"] == {"timeout": 2}
    assert time.monotonic() - start < 30


def test_a_server_that_echoes_the_key_never_gets_it_stored_or_shown(
        scripted, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    db = tmp_path / "k.db"
    with scripted(ttft_ms=1, gap_us=200, fault="echo_auth", fault_every=2) as url:
        code, summary, err = bench(capsys, url, db)
    assert code == 0 and summary["levels"][0]["failures"] == {"http_error": 2}
    assert main(["runs", "show", summary["run_id"], "--db", str(db), "--json"]) == 0
    shown, _ = capsys.readouterr()
    assert secret not in shown and secret not in err and "[redacted]" in shown
    connection = store.connect(db)
    errors = [row["error"] for row in store.get_requests(connection, summary["run_id"]) if row["error"]]
    connection.close()
    assert errors and all("[redacted]" in error for error in errors)
    for path in tmp_path.glob("k.db*"):
        assert secret.encode() not in path.read_bytes()


def test_a_key_stored_before_scrubbing_existed_is_not_shown(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database written by an older version: the echoed key sits in runs.engine and requests.error as sent."""
    monkeypatch.setenv("MY_KEY", "plain-key-without-a-known-shape")
    db = store.connect(tmp_path / "old.db")
    run_id = store.create_run(db, backend="openai", model="m", config={"options": {"api_key_env": "MY_KEY"}},
                              hardware={}, engine={})
    with db:  # what an older version stored, bypassing today's scrubbing
        db.execute("UPDATE runs SET engine = ? WHERE id = ?",
                   (json.dumps({"server": "x (Bearer sk-old-0123456789abcdefgh) plain-key-without-a-known-shape"}),
                    run_id))
        db.execute("INSERT INTO requests (run_id, idx, repeat, seq, phase, session, itl, status, error) "
                   "VALUES (?, 0, 0, 0, 'measure', 0, x'', 'http_error', 'HTTP 401: Bearer sk-old-0123456789abcdefgh')",
                   (run_id,))
    assert "sk-old" not in store.get_requests(db, run_id)[0]["error"]
    db.close()
    assert main(["runs", "show", run_id, "--db", str(tmp_path / "old.db"), "--json"]) == 0
    shown = capsys.readouterr().out
    assert "sk-old" not in shown and "plain-key-without" not in shown and "[redacted]" in shown


@pytest.mark.slow
def test_broken_http_prints_no_traceback_from_the_event_loop(scripted, tmp_path: Path) -> None:
    """A real ``python -m infercost bench``: an exception in an asyncio protocol callback is logged by asyncio as
    "Fatal error ... Traceback" on stderr (pytest's log capture hides it in process), so run it as a user would."""
    with scripted(ttft_ms=1, gap_us=200, fault="bad_chunk", fault_every=2) as url:
        done = subprocess.run(
            [sys.executable, "-m", "infercost", "bench", "--base-url", url, "--model", "scripted", "--concurrency",
             "2", "--requests", str(REQUESTS), "--warmup", "0", "--output-tokens", "8", "--db", str(tmp_path / "t.db"),
             "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "Fatal error" not in done.stderr
    assert json.loads(done.stdout)["levels"][0]["failures"] == {"bad_response": 2}


def test_a_malformed_model_list_is_no_model_list(scripted, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with scripted(ttft_ms=1, gap_us=200, fault="bad_models") as url:
        code, summary, err = bench(capsys, url, tmp_path / "m.db")
    assert code == 0, err
    assert summary["levels"][0]["completed"] == REQUESTS
    run = store.get_run(store.connect(tmp_path / "m.db"), summary["run_id"])
    assert run["engine"]["served_models"] == []
