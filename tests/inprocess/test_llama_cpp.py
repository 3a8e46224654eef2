"""llama.cpp's server over the tiny GGUF the tests write: a third-party engine the HTTP runner must measure."""

import json

import httpx
import pytest

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] from requirements-dev.txt")

from tests.support.engines import TINY_GGUF_EOS_ID, llama_cpp_server, write_tiny_gguf  # noqa: E402


def test_the_tiny_gguf_is_small_and_loads(tmp_path):
    from llama_cpp import Llama

    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    assert path.stat().st_size < 2_000_000
    llm = Llama(model_path=str(path), n_ctx=256, verbose=False)
    assert llm.tokenize(b"hello")[0] == 1  # BOS, then whole pieces
    assert llm.create_completion("hi", max_tokens=9, logit_bias={TINY_GGUF_EOS_ID: -100})["usage"][
        "completion_tokens"] == 9


def test_llama_cpp_server_gives_exactly_max_tokens_streamed_and_whole(tmp_path):
    """llama-cpp-python 0.3.36's server ignores ``stream_options.include_usage``: a stream carries one token per
    chunk and ends with an empty chunk holding ``finish_reason``; ``usage`` comes only in whole responses."""
    body = {"prompt": "hello world", "max_tokens": 16, "stream": True, "logit_bias": {str(TINY_GGUF_EOS_ID): -100}}
    with llama_cpp_server(tmp_path) as base_url:
        with httpx.stream("POST", f"{base_url}/completions", json=body, timeout=60) as response:
            assert response.status_code == 200
            events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
        whole = httpx.post(f"{base_url}/completions", json={**body, "stream": False}, timeout=60).json()
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event)["choices"][0] for event in events[:-1]]
    assert sum(1 for chunk in chunks if chunk["text"]) == 16
    assert chunks[-1]["finish_reason"] == "length"
    assert whole["usage"]["completion_tokens"] == 16
