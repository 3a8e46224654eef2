"""Batch jobs against real engines on 127.0.0.1: infercost's own ``serve`` and llama.cpp's server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost import batch
from tests.batch.conftest import read_outputs
from tests.support.engines import TINY_GGUF_TEXT_ONLY, infercost_server, llama_cpp_server

RECORDS = 12
MAX_TOKENS = 5


def write_requests(path: Path, extra_body: dict | None = None) -> Path:
    lines = []
    for i in range(RECORDS):
        body = {"model": "any", "max_tokens": MAX_TOKENS, **(extra_body or {})}
        if i % 2:
            url, body["messages"] = "/v1/chat/completions", [{"role": "user", "content": f"hello number {i}"}]
        else:
            url, body["prompt"] = "/v1/completions", f"the answer {i} is"
        lines.append(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": url, "body": body}))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(source: Path, url: str, model: str, out: Path) -> dict:
    config = batch.JobConfig(base_url=url, model=model, out_dir=str(out), shard_size=5, concurrency=3,
                             read_timeout_s=60)
    return batch.run_job(batch.create_job(source, config, price="gpt-4o-mini")["job_id"])


def check(status: dict, *, usage: bool) -> list[dict]:
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert errors == [] and status["status"] == "done"
    assert sorted(line["custom_id"] for line in ok) == sorted(f"c{i}" for i in range(RECORDS))
    assert status["actual"]["usage_reported"] == (RECORDS if usage else 0)
    assert status["actual"]["output_tokens"] == status["budget"]["output_tokens"] == RECORDS * MAX_TOKENS
    return ok


@pytest.mark.slow
def test_a_batch_job_against_infercost_serve(tmp_path):
    with infercost_server("random:tiny-llama") as url:
        ok = check(run(write_requests(tmp_path / "in.jsonl", {"ignore_eos": True}), url, "random:tiny-llama",
                       tmp_path / "out"), usage=True)
    chat = next(line for line in ok if line["custom_id"] == "c1")["response"]["body"]
    assert chat["object"] == "chat.completion" and chat["choices"][0]["message"]["content"]


@pytest.mark.slow
def test_a_batch_job_against_llama_cpp_server(tmp_path):
    with llama_cpp_server(tmp_path, "--interrupt_requests", "False") as url:
        # llama-cpp-python's server sends no usage in a stream: output tokens are counted from the chunks
        ok = check(run(write_requests(tmp_path / "in.jsonl", TINY_GGUF_TEXT_ONLY), url, "tiny", tmp_path / "out"),
                   usage=False)
    assert ok[0]["response"]["body"]["object"] == "text_completion"
