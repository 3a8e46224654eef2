"""The openai backend against the scripted server: what it records agrees with what the server says it sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from infercost.errors import InputError
from infercost.runner.backends import BACKENDS, BackendOptions
from infercost.runner.records import RequestRecord, RequestSpec
from infercost.runner.scripted_server import read_log


def send(url: str, spec: RequestSpec, *, start: bool = True, **options: object) -> RequestRecord:
    async def go() -> RequestRecord:
        backend = BACKENDS["openai"](BackendOptions(model="scripted", base_url=url, **options))  # type: ignore[arg-type]
        if start:
            await backend.start()
        try:
            return await backend.send(spec)
        finally:
            await backend.close()

    return asyncio.run(go())


SPEC = RequestSpec(seq=0, prompt="tag one two three", input_len=4, output_len=12)


@pytest.mark.parametrize("api", ["completions", "chat"])
@pytest.mark.parametrize("per_chunk", [1, 5])
def test_record_matches_the_server_log(scripted, tmp_path: Path, api: str, per_chunk: int) -> None:
    with scripted(ttft_ms=5, gap_us=500, tokens_per_chunk=per_chunk) as url:
        record = send(url, SPEC, api=api)
    [sent] = read_log(tmp_path / "sent.jsonl")
    assert record.ok, record.error
    assert (record.n_out, record.n_out_source, record.n_in, record.n_in_source) == (12, "usage", 4, "usage")
    assert len(record.itl) == len(sent["chunks"]) - 1  # one gap per token-bearing chunk; chat's role delta is none
    # one clock on one machine: nothing arrives before it was sent, nothing is sent before the request
    assert record.t0 <= sent["t_recv"] and record.t_first >= sent["t_first"] and record.t_last >= sent["t_last"]


def test_without_usage_tokens_are_counted_from_chunks(scripted) -> None:
    with scripted(ttft_ms=1, gap_us=100) as url:
        record = send(url, SPEC, extra_body={"stream_options": {"include_usage": False}})
    assert (record.n_out, record.n_out_source, record.n_in_source) == (12, "chunks", "prompt")


def test_without_usage_a_tokenizer_counts(scripted) -> None:
    with scripted(ttft_ms=1, gap_us=100) as url:
        record = send(url, SPEC, extra_body={"stream_options": {"include_usage": False}}, tokenizer="o200k_base")
    assert record.n_out_source == "tokenizer" and record.n_out == 24  # " t0", " t1", ...: two tokens each in o200k
    assert record.n_in_source == "tokenizer"


@pytest.mark.parametrize(("fault", "status"), [("error", "http_error"), ("drop", "dropped"), ("hang", "timeout"),
                                               ("stall", "timeout")])
def test_faults_become_failed_records(scripted, fault: str, status: str) -> None:
    with scripted(ttft_ms=1, gap_us=100, fault=fault) as url:
        record = send(url, SPEC, read_timeout_s=0.5)
    assert record.status == status and record.error


def test_unreachable_server_is_an_input_error_at_start_and_a_failure_later() -> None:
    with pytest.raises(InputError, match="base_url"):
        send("http://127.0.0.1:9/v1", SPEC)
    assert send("http://127.0.0.1:9/v1", SPEC, start=False).status == "connect"


def test_api_key_comes_from_the_environment(scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test-123")
    with scripted(ttft_ms=1, gap_us=100) as url:
        send(url, SPEC, api_key_env="MY_KEY")
        send(url, SPEC, api_key_env="UNSET_VARIABLE")
    assert [entry["auth"] for entry in read_log(tmp_path / "sent.jsonl")] == [True, False]
