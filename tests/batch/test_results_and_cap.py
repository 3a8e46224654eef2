"""What a batch job's results and bill are, against the scripted server on 127.0.0.1: an answer that stops early is a
success, a failure's line says why, the cost cap holds for every choice and every reported token, a broken or endless
stream fails its record instead of the job, and Retry-After is honoured."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infercost import batch
from infercost.errors import InputError
from infercost.runner.scripted_server import read_log
from tests.batch.conftest import read_outputs, write_batch_file

ROOT = Path(__file__).resolve().parents[2]


def config(url: str, out: Path, **overrides) -> batch.JobConfig:
    settings = dict(base_url=url, model="scripted", out_dir=str(out), shard_size=500, concurrency=32,
                    read_timeout_s=2.0)
    settings.update(overrides)
    return batch.JobConfig(**settings)


def billed(entries: list[dict], pricing: dict) -> float:
    """USD of what the server's usage reported for the streams it finished (the prompt's words are its tokens)."""
    return sum(e["n_in"] * pricing["input_per_mtok"] + e["usage_completion_tokens"] * pricing["output_per_mtok"]
               for e in entries if "usage_completion_tokens" in e) / 1e6


def test_answers_that_stop_early_succeed_once_and_retry_failed_pays_for_nothing(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 2000, max_tokens=(6, 12))
    with scripted(stop_every=4) as url:
        created = batch.create_job(source, config(url, tmp_path / "out"), price="gpt-4o-mini")
        status = batch.run_job(created["job_id"])
        with pytest.raises(InputError, match="no failed records"):
            batch.retry_failed(created["job_id"])
    sent = read_log(tmp_path / "sent.jsonl")
    assert 400 < sum(bool(e.get("stopped")) for e in sent) < 600  # about a quarter of the prompts stopped early
    assert collections.Counter(e["tag"] for e in sent) == {f"r{i}": 1 for i in range(2000)}  # none sent twice
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert errors == [] and status["counts"]["ok"] == 2000
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(2000)}
    early = {f"req-{e['tag'][1:]}": e["n_out"] for e in sent if e.get("stopped")}
    for line in ok:
        if line["custom_id"] in early:  # the text the server sent is kept, and why it ended
            choice = line["response"]["body"]["choices"][0]
            text = choice["message"]["content"] if "message" in choice else choice["text"]
            assert choice["finish_reason"] == "stop" and len(text.split()) == early[line["custom_id"]]
    assert status["actual"]["cost"] == pytest.approx(billed(sent, status["budget"]["pricing"]), rel=1e-9)


@pytest.mark.parametrize(("script", "code", "http_status"), [
    ({"error_every": 1}, "http_500", 500),
    ({"drop_every": 1}, "dropped", None),
    ({"fault": "no_terminator"}, "dropped", None),
    ({"fault": "usage_text"}, "bad_response", None),
])
def test_a_failed_records_line_carries_an_error_with_code_and_message(tmp_path, scripted, script, code,
                                                                      http_status):
    source = write_batch_file(tmp_path / "in.jsonl", 6, max_tokens=(8, 12))
    with scripted(**script) as url:
        status = batch.run_job(batch.create_job(source, config(url, tmp_path / "out", max_attempts=1))["job_id"])
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert ok == [] and len(errors) == 6
    for line in errors:
        assert line["error"]["code"] == code and line["error"]["message"].startswith(("HTTP 500", code))
        if http_status:  # the server's own answer is kept beside it
            assert line["response"]["status_code"] == http_status and line["response"]["body"]["error"]
        else:  # no whole response came: none is pretended
            assert line["response"] is None


def records_file(path: Path, bodies: list[dict]) -> Path:
    """A batch file of chat requests with these bodies (a prompt of their own each, tagged rN)."""
    with open(path, "w", encoding="utf-8") as out:
        for i, body in enumerate(bodies):
            body = {"messages": [{"role": "user", "content": f"r{i} the city by the river"}], **body}
            out.write(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": "/v1/chat/completions",
                                  "body": body}) + "\n")
    return path


def test_the_cap_holds_for_every_choice_a_record_asks_for(tmp_path, scripted):
    source = records_file(tmp_path / "in.jsonl", [{"max_tokens": 16, "n": 8}] * 400)
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out", concurrency=8), price="gpt-4o")
        assert created["budget"]["output_tokens"] == 400 * 16 * 8  # every choice is budgeted
        cap = created["budget"]["cost"] / 4
        status = batch.run_job(created["job_id"], max_cost=cap)
    assert status["status"] == "stopped_max_cost"
    sent = read_log(tmp_path / "sent.jsonl")
    assert {e["choices"] for e in sent} == {8} and status["actual"]["output_tokens"] == 16 * 8 * status["counts"]["ok"]
    assert status["actual"]["cost"] == pytest.approx(billed(sent, status["budget"]["pricing"]), rel=1e-9)
    assert cap * 0.9 <= status["actual"]["cost"] <= cap  # stopped at the cap, not past it


@pytest.mark.parametrize(("field", "value"), [
    ("max_tokens", -1_000_000), ("max_tokens", 0), ("max_tokens", 2**70), ("max_tokens", "16"),
    ("max_tokens", 1.5), ("max_completion_tokens", 10**9), ("n", 0), ("n", 1_000_000), ("n", True),
])
def test_a_negative_or_absurd_count_is_refused_at_planning_naming_the_record_and_field(tmp_path, field, value):
    source = records_file(tmp_path / "in.jsonl", [{"max_tokens": 8}, {"max_tokens": 8, field: value}])
    with pytest.raises(InputError, match=rf"^{field}: .* line 2 \(custom_id 'req-1'\): .* is not a whole number"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"), price="gpt-4o-mini")
    assert batch.list_jobs() == []  # nothing was planned


@pytest.mark.parametrize("value", [0, -5, 2**70])
def test_a_max_tokens_option_out_of_bounds_is_refused(tmp_path, value):
    source = records_file(tmp_path / "in.jsonl", [{}])  # the option caps records that set no max_tokens
    with pytest.raises(InputError, match=r"^max-tokens: must be a whole number from 1 to 10,000,000$"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out", max_tokens=value))


def test_the_cli_refuses_a_negative_max_tokens_in_one_line_with_status_2(tmp_path):
    source = records_file(tmp_path / "in.jsonl", [{"max_tokens": -1_000_000}])
    result = cli("run", str(source), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "out"), "--price", "gpt-4o-mini", "--budget-only", db=tmp_path / "jobs.db")
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "max_tokens" in line and "line 1" in line and "-1000000" in line


def test_a_stream_of_keep_alive_comments_meets_the_request_deadline_and_fails_its_record(tmp_path, scripted):
    db = tmp_path / "jobs.db"
    source = records_file(tmp_path / "in.jsonl", [{"max_tokens": 2}] * 2)
    with scripted(fault="keepalive") as url:  # a comment every 0.1 s, sooner than the 0.5 s idle timeout, forever
        job = config(url, tmp_path / "out", read_timeout_s=0.5, max_attempts=1)
        job_id = batch.create_job(source, job, db_path=db)["job_id"]
        result = cli("resume", job_id, "--json", db=db, timeout=45)  # before: no deadline, a hang
    status = json.loads(result.stdout)
    assert result.returncode == 0 and status["status"] == "done"
    _, errors = read_outputs(Path(status["out_dir"]))
    assert [line["error"]["code"] for line in errors] == ["timeout", "timeout"]
    assert "deadline of 2.5 s" in errors[0]["error"]["message"]  # 0.5 s idle timeout + 1 s per token asked for


@pytest.mark.parametrize("fault", ["bad_token", "token_shape", "token_array", "choices_text", "delta_text",
                                   "content_number"])
def test_a_malformed_event_fails_its_record_and_the_job_goes_on(tmp_path, scripted, fault):
    source = write_batch_file(tmp_path / "in.jsonl", 8, max_tokens=(8, 12))  # completions and chat alternating
    with scripted(fault=fault, fault_every=2) as url:
        status = batch.run_job(batch.create_job(source, config(url, tmp_path / "out", max_attempts=1))["job_id"])
    faulty = {f"req-{e['tag'][1:]}" for e in read_log(tmp_path / "sent.jsonl") if e["fault"]}
    if fault == "delta_text":  # a delta is chat's: a completion's text beside it is fine
        faulty = {custom_id for custom_id in faulty if int(custom_id[4:]) % 2}
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert status["status"] == "done" and status["counts"]["pending"] == 0 and faulty
    assert {line["custom_id"] for line in errors} == faulty and len(ok) == 8 - len(faulty)
    assert all(line["error"]["code"] == "bad_response" for line in errors)


def test_usage_over_a_64_bit_integer_fails_its_record_and_the_job_goes_on(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 9, max_tokens=(8, 12))
    with scripted(fault="usage_overflow", fault_every=3) as url:
        status = batch.run_job(batch.create_job(source, config(url, tmp_path / "out", max_attempts=1),
                                                price="gpt-4o-mini")["job_id"])
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert status["status"] == "done" and len(ok) == 6 and len(errors) == 3
    assert all("usage.completion_tokens" in line["error"]["message"] for line in errors)


def test_usage_beyond_what_was_asked_is_billed_as_reported_flagged_and_the_cap_stops_the_job(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 300, max_tokens=(8, 12))
    with scripted(fault="usage_huge", fault_every=50) as url:  # 10**12 completion tokens on every 50th request
        created = batch.create_job(source, config(url, tmp_path / "out", concurrency=4), price="gpt-4o-mini")
        status = batch.run_job(created["job_id"], max_cost=1.0)
    sent = read_log(tmp_path / "sent.jsonl")
    actual = status["actual"]
    faulty = next(e for e in sent if e["fault"])  # what the server saw from the huge answer on (a flake's record)
    seen = [(e["n"], e["tag"], e["fault"], e["t_recv"] - faulty["t_last"], e["t_last"]) for e in sent[faulty["n"] - 4:]]
    assert status["status"] == "stopped_max_cost" and len(sent) < 50 + 4, seen  # nothing sent after it ended
    assert actual["usage_over_asked"] == 1 and "reported 1,000,000,000,000 for at most" in actual["warnings"][0]
    assert actual["cost"] == pytest.approx(billed(sent, status["budget"]["pricing"]), rel=1e-9)  # as reported


@pytest.mark.parametrize("date", [0, 1])
def test_retry_after_is_waited_out_before_anything_is_sent_again(tmp_path, scripted, date):
    source = write_batch_file(tmp_path / "in.jsonl", 10, max_tokens=(4, 8))
    with scripted(rate_limit_every=10, retry_after_s=1.5, retry_after_date=date) as url:
        status = batch.run_job(batch.create_job(source, config(url, tmp_path / "out", concurrency=1))["job_id"])
    sent = read_log(tmp_path / "sent.jsonl")
    [limited] = [e for e in sent if e["fault"] == "rate_limit"]  # before: retried at 0.2 and 0.6 s, into the window
    assert status["counts"]["ok"] == 10 and status["counts"]["attempts"] == len(sent) == 11
    assert min(e["t_recv"] for e in sent if e["t_recv"] > limited["t_recv"]) - limited["t_recv"] >= 1.5


def test_retry_after_reads_seconds_and_http_dates_within_a_bound():
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from infercost.batch.send import RETRY_AFTER_MAX_S, retry_after_s

    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert retry_after_s("2") == 2.0 and retry_after_s(" 0.5 ") == 0.5 and 28 <= retry_after_s(soon) <= 30
    assert retry_after_s("86400") == RETRY_AFTER_MAX_S and retry_after_s("9" * 5000) == RETRY_AFTER_MAX_S
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date gone by: no wait
    assert retry_after_s(None) is None and retry_after_s("soon") is None and retry_after_s("-5") is None


def test_a_refused_retry_failed_on_a_running_job_changes_nothing(tmp_path, scripted):
    db, source = tmp_path / "jobs.db", write_batch_file(tmp_path / "in.jsonl", 60, max_tokens=(4, 8))
    with scripted(error_every=3, ttft_ms=150) as url:  # 20 records fail at once; the others take a while
        job = config(url, tmp_path / "out", concurrency=2, max_attempts=1)
        job_id = batch.create_job(source, job, db_path=db)["job_id"]
        running = subprocess.Popen([sys.executable, "-m", "infercost", "batch", "resume", job_id, "--db", str(db),
                                    "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            while batch.job_status(job_id, db_path=db)["counts"]["failed"] < 2:
                assert running.poll() is None, "the job ended before the test could ask for a retry"
                time.sleep(0.05)
            with pytest.raises(InputError, match="is running in process"):
                batch.retry_failed(job_id, db_path=db)
            final = json.loads(running.communicate(timeout=120)[0])
        finally:
            running.kill()
    assert final["status"] == "done" and final["counts"]["pending"] == 0 and final["counts"]["failed"] == 20
    assert not any(".retry-" in name for name in final["files"])


def test_a_job_against_a_server_that_stops_early_rate_limits_and_drops_gets_every_record_once_within_the_cap(
        tmp_path, scripted):
    bodies = [{"max_tokens": 6 + i % 7, **({"n": 3} if i % 5 == 0 else {})} for i in range(800)]
    source = records_file(tmp_path / "in.jsonl", bodies)
    with scripted(stop_every=4, rate_limit_every=97, retry_after_s=0.5, drop_every=89) as url:
        job = config(url, tmp_path / "out", concurrency=16, max_attempts=6)
        created = batch.create_job(source, job, price="gpt-4o-mini")
        cap = created["budget"]["cost"]  # what the job costs if every answer ran to max_tokens
        status = batch.run_job(created["job_id"], max_cost=cap)
    sent = read_log(tmp_path / "sent.jsonl")
    faults = collections.Counter(e["fault"] for e in sent)
    assert faults["rate_limit"] > 5 and faults["drop"] > 5 and sum(bool(e.get("stopped")) for e in sent) > 100
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert status["status"] == "done" and errors == []
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(800)}
    answered = collections.Counter(e["tag"] for e in sent if "usage_completion_tokens" in e)  # streams sent whole
    assert answered == {f"r{i}": 1 for i in range(800)}  # none answered twice
    assert status["counts"]["attempts"] == status["actual"]["attempts"] == len(sent)  # every send counted
    assert status["actual"]["cost"] == pytest.approx(billed(sent, status["budget"]["pricing"]), rel=1e-9)
    assert status["actual"]["cost"] <= cap


def cli(*args: str, db: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infercost", "batch", *args, "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
