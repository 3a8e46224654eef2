"""Self-host sizing rules of DESIGN.md, on numbers computed by hand."""

import pytest

from infercost.costmodel import SelfHostSetup, ThroughputPoint, Workload, operating_point, size_self_host, token_volumes

POINTS = [
    ThroughputPoint(1, 1.0, 200, {"p95_ttft_ms": 40, "p95_tpot_ms": 5}),
    ThroughputPoint(8, 5.0, 1000, {"p95_ttft_ms": 200, "p95_tpot_ms": 20}),
    ThroughputPoint(32, 9.0, 1800, {"p95_ttft_ms": 1500, "p95_tpot_ms": 60}),
]
SLO = {"p95_ttft_ms": 1000, "p95_tpot_ms": 50}
# 864,000 attempts per day = 10 requests/s on average; 1,000 tokens per attempt
VOLUMES = token_volumes(Workload(calls_per_day=864_000, prompt_tokens=800, output_tokens=200))


def setup(**fields) -> SelfHostSetup:
    base = dict(name="gpu", gpu_price_per_hour=2.5, points=POINTS, gpus_per_replica=2, slo=SLO,
                peak_to_average=2.0, target_utilization=0.8)  # fmt: skip
    return SelfHostSetup(**(base | fields))


def test_operating_point_is_the_feasible_point_with_most_requests_per_second():
    assert operating_point(POINTS, SLO).concurrency == 8
    assert operating_point(POINTS, {}).concurrency == 32


def test_always_on_replicas_cover_the_peak_at_target_utilization():
    estimate = size_self_host(setup(), VOLUMES)
    assert estimate.replicas == 5  # ceil(10 * 2 / (5 * 0.8))
    assert estimate.gpu_hours_per_day == pytest.approx(5 * 2 * 24)
    assert estimate.cost_per_day == pytest.approx(240 * 2.5)
    assert estimate.cost_per_month == pytest.approx(600 * 30)
    assert estimate.cost_per_million_tokens == pytest.approx(600 / 864)


def test_always_on_keeps_at_least_one_replica():
    tiny = token_volumes(Workload(calls_per_day=10, prompt_tokens=10, output_tokens=10))
    assert size_self_host(setup(), tiny).replicas == 1
    assert size_self_host(setup(), tiny).gpu_hours_per_day == pytest.approx(48)


def test_an_infeasible_slo_has_no_cost_and_says_why():
    estimate = size_self_host(setup(slo={"p95_ttft_ms": 10}), VOLUMES)
    assert estimate.operating_point is None and not estimate.meets_slo
    assert estimate.cost_per_day == 0 and "SLO" in estimate.warnings[0]


def test_a_point_lacking_an_slo_metric_is_not_feasible():
    assert operating_point([ThroughputPoint(1, 3.0)], {"p95_ttft_ms": 1000}) is None
