"""Consistency: one prompt N times at temperature 0 per level; outputs that change under load are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost.runner.backends import BackendOptions
from infercost.runner.consistency import agreement
from infercost.runner.sweep import SweepConfig, run_summary, run_sweep
from tests.support.engines import infercost_server


def test_agreement_counts_identical_outputs_and_agreeing_tokens() -> None:
    same, other = ["a", "b", "c", "d"], ["a", "b", "x", "y"]
    result = agreement([same, same, same, other, None])
    assert (result["identical"], result["distinct_outputs"], result["failed"]) == (3, 2, 1)
    assert result["token_agreement"] == pytest.approx((1 + 1 + 1 + 0.5) / 4) and not result["all_identical"]


def test_outputs_that_vary_under_load_are_reported(scripted, sweep_config, tmp_path: Path) -> None:
    with scripted(ttft_ms=1, gap_us=2000, vary_when_busy=1) as url:  # a request joining a running one varies
        config = sweep_config(url, levels=[1, 4], requests=4, output_tokens=10, consistency=8)
        run_id = run_sweep(config, db_path=tmp_path / "r.db")
    alone, loaded = (level["consistency"] for level in run_summary(tmp_path / "r.db", run_id)["levels"])
    assert alone["all_identical"] and alone["identical"] == 8 and alone["token_agreement"] == 1.0
    assert not loaded["all_identical"] and loaded["distinct_outputs"] > 1
    assert 0.5 <= loaded["token_agreement"] < 1.0  # they agree up to half way


@pytest.mark.slow
def test_infercost_serve_is_deterministic_under_load(tmp_path: Path) -> None:
    with infercost_server("random:tiny-llama") as url:
        config = SweepConfig(backend="openai", options=BackendOptions(model="random:tiny-llama", base_url=url),
                             levels=[2], input_tokens=8, output_tokens=6, requests=2, warmup=0, consistency=4)
        [level] = run_summary(tmp_path / "r.db", run_sweep(config, db_path=tmp_path / "r.db"))["levels"]
    assert level["consistency"]["all_identical"] and level["consistency"]["token_agreement"] == 1.0
