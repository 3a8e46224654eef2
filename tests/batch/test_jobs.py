"""Batch jobs against the scripted server (a real socket on 127.0.0.1 that injects 500s, dropped streams and hangs)."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from infercost import batch
from infercost.batch.progress import render_bar
from infercost.errors import InputError
from infercost.runner.scripted_server import read_log
from tests.batch.conftest import read_outputs, write_batch_file


def config(url: str, out: Path, **overrides) -> batch.JobConfig:
    settings = dict(base_url=url, model="scripted", out_dir=str(out), shard_size=1000, concurrency=32,
                    read_timeout_s=0.5)
    settings.update(overrides)
    return batch.JobConfig(**settings)


def test_a_10000_record_job_with_500s_drops_and_hangs_gets_every_record_once(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 10_000)
    with scripted(error_every=97, drop_every=89, hang_every=991) as url:
        # a 2 s idle timeout still catches the ~10 injected hangs, and a busy 2-core machine's slow replies are not
        # taken for hangs (at 0.5 s one record in 10,000 could time out on all its attempts); the faults come every
        # 97th, 89th and 991st request whoever sends it, so a retry meets another one time in 44, and with three
        # attempts one of the ~225 records a first fault hits would fail on all of them about one run in nine
        job = config(url, tmp_path / "out", read_timeout_s=2.0, max_attempts=6)
        created = batch.create_job(source, job, price="gpt-4o-mini")
        status = batch.run_job(created["job_id"])
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert status["status"] == "done" and status["counts"]["ok"] == 10_000
    assert sorted(line["custom_id"] for line in ok) == sorted(f"req-{i}" for i in range(10_000))
    assert errors == []
    assert status["actual"]["retries"] > 100  # the injected faults were met, and retried
    assert status["files"] == [f"shard-{shard:05d}.jsonl" for shard in range(10)]


def test_budget_matches_the_servers_usage_within_two_percent(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 500, tagged=False)
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out"), price="gpt-4o-mini")
        status = batch.run_job(created["job_id"])
    budget, actual = status["budget"], status["actual"]
    assert actual["usage_reported"] == 500
    assert actual["input_tokens"] == pytest.approx(budget["input_tokens"], rel=0.02)
    assert actual["output_tokens"] == pytest.approx(budget["output_tokens"], rel=0.02)
    assert actual["cost"] == pytest.approx(budget["cost"], rel=0.02)
    lines = {row["line"]: row for row in status["budget_vs_actual"]}
    assert set(lines) >= {"records", "input tokens", "output tokens", "retries", "cost (USD)", "duration (s)",
                          "throughput (records/s)"}
    assert all(row["why"] for row in lines.values())


def test_max_cost_stops_before_the_cap_and_resume_with_a_higher_cap_finishes(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 2000, max_tokens=(50, 200))
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out", shard_size=500, concurrency=8),
                                   price="gpt-4o")
        cap = created["budget"]["cost"] / 3
        stopped = batch.run_job(created["job_id"], max_cost=cap)
        assert stopped["status"] == "stopped_max_cost"
        spent = stopped["actual"]["cost"]
        worst_record = (40 * 1.1 + 32) * 2.5e-6 + 200 * 10e-6  # gpt-4o: $2.5/M in, $10/M out
        assert cap - 9 * worst_record <= spent <= cap  # stopped in time: no later than the cap, not much earlier
        done = batch.run_job(created["job_id"], max_cost=created["budget"]["cost"] * 2)
    assert done["status"] == "done"
    ok, _ = read_outputs(Path(done["out_dir"]))
    assert len(ok) == len({line["custom_id"] for line in ok}) == 2000


def test_failed_records_go_to_the_errors_file_and_retry_failed_writes_retry_files(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 200)
    with scripted(error_every=2) as url:
        created = batch.create_job(source, config(url, tmp_path / "out", shard_size=100, max_attempts=1))
        first = batch.run_job(created["job_id"])
        assert first["counts"]["failed"] > 50
        _, errors = read_outputs(Path(first["out_dir"]))
        assert errors[0]["response"]["status_code"] == 500 and errors[0]["error"]["code"] == "http_500"
        for _ in range(10):
            status = batch.retry_failed(created["job_id"])
            if not status["counts"]["failed"]:
                break
    assert "shard-00000.retry-1.jsonl" in status["files"]
    ok, _ = read_outputs(Path(status["out_dir"]))
    assert collections.Counter(line["custom_id"] for line in ok) == {f"req-{i}": 1 for i in range(200)}


def test_a_changed_input_is_refused_on_resume(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 20)
    created = batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"))
    source.write_text(source.read_text().replace("req-3", "req-x"))
    with pytest.raises(InputError, match="changed since the job was created"):
        batch.run_job(created["job_id"])


def test_a_hung_server_times_out_and_the_record_fails_with_its_reason(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 4)
    with scripted(hang_every=1) as url:
        created = batch.create_job(source, config(url, tmp_path / "out", max_attempts=1, read_timeout_s=0.3))
        status = batch.run_job(created["job_id"])
    _, errors = read_outputs(Path(status["out_dir"]))
    assert len(errors) == 4
    assert errors[0]["response"] is None and errors[0]["error"]["code"] == "timeout"


def test_sending_reaches_the_server_once_per_record_when_nothing_fails(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 300)
    with scripted() as url:
        batch.run_job(batch.create_job(source, config(url, tmp_path / "out"))["job_id"])
    tags = collections.Counter(entry["tag"] for entry in read_log(tmp_path / "sent.jsonl"))
    assert tags == {f"r{i}": 1 for i in range(300)}


def test_an_openai_batch_line_that_is_not_a_request_is_refused_naming_the_line(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"custom_id": "a", "url": "/v1/embeddings", "body": {}}) + "\n")
    with pytest.raises(InputError, match="line 1"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"))


def test_an_openai_batch_line_over_the_size_limit_is_refused_naming_it(tmp_path, monkeypatch):
    # Regression: a file whose only (or last) line was over the record size limit read "no requests in the file".
    from infercost.tokenizers import corpus

    monkeypatch.setattr(corpus, "MAX_RECORD_BYTES", 1000)
    body = {"messages": [{"role": "user", "content": "x" * 5000}]}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": body}))
    with pytest.raises(InputError, match=r"line 1: record of .* MiB is over the"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"))


def test_plain_records_none_of_which_can_be_read_say_why(tmp_path):
    # Regression: "no usable records (2 skipped)" said nothing of what was wrong with them.
    source = tmp_path / "in.txt"
    source.write_bytes(b"caf\xe9\nna\xefve\n")
    with pytest.raises(InputError, match=r"2 skipped; first on line 1: not valid UTF-8"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"))


def test_a_repeated_custom_id_is_refused(tmp_path):
    line = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}})
    source = tmp_path / "in.jsonl"
    source.write_text(line + "\n" + line + "\n")
    with pytest.raises(InputError, match="custom_id"):
        batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out"))


def test_plain_csv_records_become_chat_requests_through_the_template(tmp_path, scripted):
    source = tmp_path / "reviews.csv"
    source.write_text("id,text\n1,great phone\n2,\"bad, slow\"\n")
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out", field="text", max_tokens=3,
                                                  template="Classify: {text}"))
        status = batch.run_job(created["job_id"])
    ok, _ = read_outputs(Path(status["out_dir"]))
    assert [line["custom_id"] for line in ok] == ["line-2", "line-3"]
    assert ok[0]["response"]["body"]["usage"]["prompt_tokens"] == 3  # "Classify: great phone"


def test_a_sample_run_budgets_output_tokens_from_what_the_first_records_wrote(tmp_path, scripted):
    source = write_batch_file(tmp_path / "in.jsonl", 400, tagged=False)
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out"), price="gpt-4o-mini")
        sampled = batch.sample_budget(created["job_id"], 40)
        assert batch.job_status(created["job_id"])["counts"]["ok"] == 40  # the sample's outputs are kept
        status = batch.run_job(created["job_id"])
    assert sampled["output_basis"].startswith("sample of 40 records")
    assert status["counts"]["ok"] == 400
    # the scripted server writes max_tokens: the sample's mean lands near the whole job's
    assert status["actual"]["output_tokens"] == pytest.approx(sampled["output_tokens"], rel=0.25)


def test_gpu_pricing_takes_the_profiles_throughput_at_the_jobs_concurrency(tmp_path):
    from infercost.performance.profiles import bundled_profiles

    profile = next(p for p in bundled_profiles() if any(pt.get("request_throughput") for pt in p.points))
    point = min((pt for pt in profile.points if pt.get("request_throughput")),
                key=lambda pt: (abs(pt["concurrency"] - 16), -pt["concurrency"]))
    source = write_batch_file(tmp_path / "in.jsonl", 100)
    created = batch.create_job(source, config("http://127.0.0.1:9/v1", tmp_path / "out", concurrency=16),
                               throughput=profile.id, gpu_price=2.0)
    budget = created["budget"]
    assert budget["duration_s"] == pytest.approx(100 / point["request_throughput"])
    assert budget["cost"] == pytest.approx(budget["duration_s"] / 3600 * 2.0 * profile.gpus_per_replica)
    assert f"concurrency {point['concurrency']:g}" in budget["pricing"]["basis"]


def test_parquet_records_are_read_by_their_field(tmp_path, scripted):
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"text": ["great phone", "bad battery life"], "stars": [5, 1]}), source)
    with scripted() as url:
        created = batch.create_job(source, config(url, tmp_path / "out", field="text", max_tokens=2))
        status = batch.run_job(created["job_id"])
    ok, _ = read_outputs(Path(status["out_dir"]))
    assert [line["response"]["body"]["usage"]["prompt_tokens"] for line in ok] == [2, 3]


def test_a_job_running_in_a_live_process_is_not_resumed_twice(tmp_path):
    import subprocess
    import sys

    from infercost.store import connect
    from infercost.store import jobs as store_jobs

    created = batch.create_job(write_batch_file(tmp_path / "in.jsonl", 3), config("http://127.0.0.1:9/v1", tmp_path))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        db = connect()
        store_jobs.set_job(db, created["job_id"], status="running", pid=other.pid)
        db.close()
        with pytest.raises(InputError, match=f"running in process {other.pid}"):
            batch.run_job(created["job_id"])
    finally:
        other.kill()
        other.wait()
    assert batch.job_status(created["job_id"])["status"] == "interrupted"  # its process is gone: resumable


def test_the_last_progress_line_shows_what_the_job_spent(tmp_path, scripted):
    # Regression: the closing snapshot repeated the last heartbeat's spend ("$5.295e-05 of ~$5.295e-05" after a job
    # that cost $0.0006357), so the bar a person last sees disagreed with the bill printed under it.
    source = write_batch_file(tmp_path / "in.jsonl", 40, max_tokens=(20, 40))
    snapshots: list[dict] = []
    with scripted(ttft_ms=20.0) as url:
        created = batch.create_job(source, config(url, tmp_path / "out", concurrency=4), price="gpt-4o-mini")
        status = batch.run_job(created["job_id"], progress=snapshots.append)
    last = snapshots[-1]
    assert last["done"] == 40 and last["spent"] == pytest.approx(status["actual"]["cost"])
    assert "e-0" not in render_bar(last)  # dollars as a person writes them
