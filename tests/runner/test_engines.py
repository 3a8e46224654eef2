"""The backends against real engines: infercost's own server, llama.cpp's server, and the in-process engine."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from infercost import store
from infercost.runner.backends import BackendOptions
from infercost.runner.sweep import SweepConfig, run_summary, run_sweep
from tests.support.engines import TINY_GGUF_TEXT_ONLY, infercost_server, llama_cpp_server


def sweep(tmp_path: Path, backend: str, options: BackendOptions, levels: list[float]) -> dict:
    config = SweepConfig(backend=backend, options=options, levels=levels, input_tokens=16, output_tokens=8,
                         requests=4, warmup=1)
    return run_summary(tmp_path / "e.db", run_sweep(config, db_path=tmp_path / "e.db"))


def assert_forced_and_stored(summary: dict, tmp_path: Path, levels: int, n_out_source: str) -> None:
    assert len(summary["levels"]) == levels
    for level in summary["levels"]:
        assert (level["completed"], level["failed"], level["output_len_mismatch"]) == (4, 0, 0)
        assert level["total_output_tokens"] == 4 * 8 and level["mean_ttft_ms"] > 0
    rows = store.get_requests(store.connect(tmp_path / "e.db"), summary["run_id"])
    assert len(rows) == 4 * levels and {row["n_out_source"] for row in rows} == {n_out_source}


@pytest.mark.slow
@pytest.mark.parametrize("api", ["completions", "chat"])
def test_openai_backend_against_infercost_serve(tmp_path: Path, api: str) -> None:
    with infercost_server("random:tiny-llama") as url:
        summary = sweep(tmp_path, "openai", BackendOptions(model="random:tiny-llama", base_url=url, api=api), [1, 2])
    assert_forced_and_stored(summary, tmp_path, 2, "usage")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python[server] not installed")
def test_openai_backend_against_llama_cpp_server(tmp_path: Path) -> None:
    # llama.cpp's server ignores min_tokens/ignore_eos: banning the specials with logit_bias forces the length
    # instead. By default it cuts a running stream off when the next request arrives; queue them instead.
    options = BackendOptions(model="tiny", base_url="", force_output=False, extra_body=TINY_GGUF_TEXT_ONLY)
    with llama_cpp_server(tmp_path, "--interrupt_requests", "False") as url:
        options.base_url = url
        summary = sweep(tmp_path, "openai", options, [1, 2])
    assert_forced_and_stored(summary, tmp_path, 2, "chunks")  # it streams one token per chunk and no usage


def test_transformers_backend_in_process(tmp_path: Path) -> None:
    summary = sweep(tmp_path, "transformers", BackendOptions(model="random:tiny-llama", device="cpu"), [1, 2])
    assert_forced_and_stored(summary, tmp_path, 2, "engine")
    run = store.get_run(store.connect(tmp_path / "e.db"), summary["run_id"])
    assert run["engine"]["engine"] == "transformers" and run["engine"]["dtype"] == "float32"
    assert [level["batch_size"] for level in summary["levels"]] == [1, 2]
    assert json.dumps(summary)  # JSON-able, as `bench --json` prints it


def test_roofline_percentage_of_a_level() -> None:
    from infercost.performance.roofline import ModelShape
    from infercost.runner.backends.transformers import roofline_fields

    # 1e9 bf16 weights (2 GB) at 1000 GB/s: a decode step cannot beat 2 ms, so 500 tokens/s at batch 1
    shape = ModelShape(n_params=10**9, n_layers=1, n_heads=1, n_kv_heads=1, head_dim=1, hidden_size=1,
                       vocab_size=1, tie_word_embeddings=True)
    fields = roofline_fields(shape, "bfloat16", 1, 1, 2, {"median_tpot_ms": 4.0, "median_ttft_ms": 4.0},
                             bandwidth_gbps=1000, peak_tflops=1000)
    assert fields["decode_roofline_tokens_per_s"] == pytest.approx(500, rel=1e-3)
    assert fields["decode_roofline_pct"] == pytest.approx(50, rel=1e-3)
    assert fields["prefill_roofline_pct"] == pytest.approx(50, rel=1e-3)  # 2 ms bound against 4 ms measured
