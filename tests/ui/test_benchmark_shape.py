"""A benchmark whose server does not process the token shape asked for says so, in the run's summary and on the
Benchmark page: the project's own server counts a 128-word prompt with its tokenizer, about five times as many
tokens."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.commands.bench import render
from infercost.runner.backends import BackendOptions
from infercost.runner.sweep import SweepConfig, run_summary, run_sweep
from tests.support.engines import infercost_server

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/benchmark.py")


@pytest.fixture(scope="module")
def served():
    with infercost_server("random:tiny-llama", "--max-batch", "2") as base_url:
        yield base_url


def sweep(url: str, **shape: int) -> str:
    config = SweepConfig(backend="openai", options=BackendOptions(model="random:tiny-llama", base_url=url),
                         levels=[1], requests=2, warmup=0, **shape)  # fmt: skip
    return run_sweep(config)


def test_a_prompt_the_server_counts_otherwise_is_flagged_in_the_summary_and_on_the_page(served):
    run_id = sweep(served, input_tokens=128, output_tokens=4)
    summary = run_summary(None, run_id)
    counted = summary["levels"][0]["total_input_tokens"] / summary["levels"][0]["completed"]
    assert counted > 1.2 * 128  # the server's own count: the premise of the check
    assert any("asked for 128 input tokens" in warning for warning in summary["warnings"]), summary["warnings"]
    assert "warning: asked for 128 input tokens" in render(summary)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert any(run_id in w.value and "asked for 128 input tokens" in w.value for w in at.warning), at.warning


def test_a_shape_the_server_honours_is_not_flagged(served):
    run_id = sweep(served, input_tokens=128, output_tokens=4)
    honoured = run_summary(None, run_id)["levels"][0]
    assert not [w for w in run_summary(None, run_id)["warnings"] if "output" in w], honoured
