"""The budget's arithmetic on hand-computed numbers, and the comparison's lines."""

from __future__ import annotations

import pytest

from infercost.batch.budget import Pricing, compare, plan_budget, projected_cost

API = Pricing(kind="api", basis="test", input_per_mtok=2.0, output_per_mtok=8.0)
GPU = Pricing(kind="gpu", basis="test", gpu_price_per_hour=3.6, gpus=2, request_throughput=4.0)


def budget(pricing: Pricing, retry_rate: float = 0.0):
    return plan_budget(records=1000, input_tokens=500_000, output_tokens=100_000, output_basis="max_tokens",
                       retry_rate=retry_rate, pricing=pricing, tokenizer="o200k_base", fidelity="exact", warnings=[])


def test_api_cost_is_tokens_times_prices_and_every_retry_is_billed_in_full():
    assert budget(API).cost == pytest.approx(0.5 * 2.0 + 0.1 * 8.0)
    assert budget(API, retry_rate=0.1).cost == pytest.approx(1.8 * 1.1)
    assert budget(API, retry_rate=0.1).retries == pytest.approx(100)


def test_gpu_cost_is_attempts_over_throughput_in_gpu_hours():
    planned = budget(GPU)
    assert planned.duration_s == pytest.approx(250.0)  # 1000 requests / 4 per s
    assert planned.cost == pytest.approx(250.0 / 3600 * 3.6 * 2)


def test_an_attempts_gpu_share_adds_up_to_the_budget():
    assert GPU.attempt_cost(0, 0) * 1000 == pytest.approx(budget(GPU).cost)


def test_projection_uses_the_cost_per_record_seen_so_far():
    assert projected_cost(2.0, 100, 1000, 5.0) == pytest.approx(20.0)
    assert projected_cost(0.0, 0, 1000, 5.0) == 5.0


def test_every_comparison_line_has_a_difference_and_a_reason():
    planned = budget(API).as_dict()
    actual = {"status": "done", "records": 1000, "ok": 1000, "failed": 0, "attempts": 1010, "retries": 10,
              "input_tokens": 505_000, "output_tokens": 90_000, "usage_reported": 1000, "cost": 1.73,
              "duration_s": 100.0, "records_per_s": 10.0, "failure_reasons": []}
    rows = {row["line"]: row for row in compare({**planned, "records_per_s": None}, actual)}
    assert rows["input tokens"]["difference"] == 5000 and rows["input tokens"]["difference_pct"] == pytest.approx(1.0)
    assert "stop early" in rows["output tokens"]["why"]
    assert all(row["why"] for row in rows.values())
