"""Result files of vLLM, GuideLLM and AIPerf become stored runs with vLLM's field names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError
from infercost.runner.importers import import_file
from infercost.runner.sweep import run_summary

VLLM = {  # the shape `vllm bench serve --save-result --save-detailed` writes
    "date": "20250101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 2, "request_rate": "inf", "burstiness": 1.0,
    "max_concurrency": 2, "duration": 1.5, "completed": 2, "failed": 0, "total_input_tokens": 200,
    "total_output_tokens": 8, "request_throughput": 1.33, "output_throughput": 5.33, "total_token_throughput": 138.6,
    "mean_ttft_ms": 110.0, "median_ttft_ms": 110.0, "p99_ttft_ms": 119.8, "mean_tpot_ms": 20.0,
    "input_lens": [100, 100], "output_lens": [4, 4], "ttfts": [0.1, 0.12], "itls": [[0.02, 0.02, 0.02], [0.02] * 3],
    "generated_texts": ["a", "b"], "errors": ["", ""],
}
GUIDELLM = {"metadata": {"guidellm_version": "0.3.0"}, "benchmarks": [{
    "config": {"strategy": {"type_": "concurrent", "streams": 4}, "model": "my-model"}, "start_time": 10.0,
    "end_time": 70.0,
    "metrics": {
        "request_totals": {"successful": 95, "errored": 3, "incomplete": 2, "total": 100},
        "time_to_first_token_ms": {"successful": {"mean": 40.0, "median": 30.0,
                                                  "percentiles": {"p95": 50.0, "p99": 70.0}}},
        "inter_token_latency_ms": {"successful": {"mean": 15.0, "median": 10.0}},
        "time_per_output_token_ms": {"successful": {"mean": 999.0}},
        "request_latency": {"successful": {"mean": 0.5, "median": 0.5}},
        "requests_per_second": {"successful": {"mean": 1.6}},
        "output_tokens_per_second": {"successful": {"mean": 150.5}},
    }}]}
AIPERF = {
    "request_throughput": {"unit": "requests/sec", "avg": 13.2},
    "time_to_first_token": {"unit": "ms", "avg": 1588.8, "p50": 787.5, "p95": 4051.4, "p99": 4119.3},
    "inter_token_latency": {"unit": "ms", "avg": 51.8, "p50": 52.0},
    "inter_chunk_latency": {"unit": "ms", "avg": 50.0},
    "request_latency": {"unit": "ms", "avg": 6550.4, "p50": 5799.9},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 1274.6},
    "benchmark_duration": {"unit": "sec", "avg": 15.2}, "request_count": {"unit": "requests", "avg": 200.0},
    "total_isl": {"unit": "tokens", "avg": 110000.0}, "total_osl": {"unit": "tokens", "avg": 19370.0},
    "error_request_count": None, "was_cancelled": False,
    "input_config": {"endpoint": {"model_names": ["openai/gpt-oss-20b"], "type": "chat", "streaming": True},
                     "loadgen": {"concurrency": 100}},
}


def imported(tmp_path: Path, data: dict, fmt: str) -> tuple[str, dict]:
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(data))
    run_id = import_file(path, fmt, db_path=tmp_path / "i.db")
    return run_id, run_summary(tmp_path / "i.db", run_id)


def test_vllm_summary_and_per_request_rows(tmp_path: Path) -> None:
    run_id, summary = imported(tmp_path, VLLM, "vllm")
    [level] = summary["levels"]
    assert (summary["model"], level["concurrency"], level["mean_ttft_ms"], level["completed"]) == (
        "meta-llama/Llama-3.1-8B-Instruct", 2, 110.0, 2)
    rows = store.get_requests(store.connect(tmp_path / "i.db"), run_id)
    assert [row["t_last"] for row in rows] == pytest.approx([0.16, 0.18])


def test_guidellm_maps_inter_token_latency_to_tpot(tmp_path: Path) -> None:
    _, summary = imported(tmp_path, GUIDELLM, "guidellm")
    [level] = summary["levels"]
    assert (level["concurrency"], level["completed"], level["failed"]) == (4, 95, 5)
    assert (level["mean_tpot_ms"], level["median_ttft_ms"], level["p95_ttft_ms"], level["mean_e2el_ms"]) == (
        15.0, 30.0, 50.0, 500.0)
    assert level["output_throughput"] == 150.5 and level["duration"] == 60.0 and summary["model"] == "my-model"


def test_aiperf_names(tmp_path: Path) -> None:
    _, summary = imported(tmp_path, AIPERF, "aiperf")
    [level] = summary["levels"]
    assert (level["concurrency"], level["mean_tpot_ms"], level["mean_itl_ms"], level["median_e2el_ms"]) == (
        100, 51.8, 50.0, 5799.9)
    assert (level["completed"], level["failed"], summary["model"]) == (200.0, 0, "openai/gpt-oss-20b")


@pytest.mark.parametrize("fmt", ["vllm", "guidellm", "aiperf"])
def test_a_file_of_another_kind_is_an_input_error(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(InputError):
        import_file(path, fmt, db_path=tmp_path / "i.db")


def test_binary_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "blob.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(InputError, match="file"):
        import_file(path, "vllm", db_path=tmp_path / "i.db")


def test_runs_import_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from infercost.cli import main

    path = tmp_path / "aiperf.json"
    path.write_text(json.dumps(AIPERF))
    assert main(["runs", "import", str(path), "--format", "aiperf", "--db", str(tmp_path / "c.db"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["levels"][0]["mean_ttft_ms"] == 1588.8 and summary["status"] == "done"


def test_a_guidellm_run_which_counts_no_tokens_can_be_diagnosed(tmp_path: Path) -> None:
    # Regression: diagnose (and the Benchmark page's diagnosis) read total_input_tokens from every level, which a
    # GuideLLM result does not give: KeyError, a traceback on the page.
    from infercost.runner.diagnose import diagnose_run

    run_id, _ = imported(tmp_path, GUIDELLM, "guidellm")
    report = diagnose_run(tmp_path / "i.db", run_id)
    inputs = next(step for step in report["steps"] if step["step"] == "inputs")
    assert "as asked: the run did not count every token" in inputs["found"][0]
    assert inputs["evidence"]["run"]["input_len"] is None  # GuideLLM's summary says neither length: none is made up
