"""Break-even regions: exact on the self-host cost steps, checked by hand and against a brute-force scan."""

import math

import numpy as np
import pytest

from infercost.compare import api_cost_at, self_host_cost_at
from infercost.costmodel import SelfHostSetup, ThroughputPoint
from infercost.costmodel.breakeven import break_even_regions, describe_regions, self_host_step_cost
from infercost.estimate import BREAK_EVEN_SEARCH, estimate, resolve_setup
from infercost.performance.profiles import closed_loop_profiles
from infercost.pricing import bundled_api_prices, find_price
from infercost.profile import parse_profile
from infercost.ui.setups import DEFAULT_SLO, rented_price

# One replica serves 1 request/s at full utilization and no peak: 86,400 calls/day; $1/GPU-hour x 24 x 30 = $720 a
# month per replica. The API costs $0.01 a month per call/day, so piece j (86,400 (j - 1), 86,400 j], costing
# 720 j, is cheaper from 72,000 j: j = 1: [72,000, 86,400]; 2: [144,000, 172,800]; 3: [216,000, 259,200];
# 4: [288,000, 345,600]; 5: [360,000, 432,000]; from j = 6 on, 72,000 j <= 86,400 (j - 1), every piece wins whole.
FLAT = SelfHostSetup(name="one", gpu_price_per_hour=1.0, points=[ThroughputPoint(1, 1.0)], peak_to_average=1.0,
                     target_utilization=1.0)  # fmt: skip


def test_always_on_regions_by_hand():
    step = self_host_step_cost(FLAT, attempts_per_call=1.0, days_per_month=30, high_calls=1e6)
    regions = break_even_regions(0.01, step)
    expected = [(72_000, 86_400), (144_000, 172_800), (216_000, 259_200), (288_000, 345_600)]
    assert regions[:-1] == [pytest.approx(r) for r in expected]
    assert regions[-1][0] == pytest.approx(360_000) and regions[-1][1] is None
    assert describe_regions(regions[:1] + regions[-1:]) == "cheaper from 72k to 86.4k and above 360k calls/day"


def test_a_dear_setup_is_never_cheaper_and_a_cheap_one_always():
    step = self_host_step_cost(FLAT, attempts_per_call=1.0, days_per_month=30, high_calls=1e6)
    assert break_even_regions(1e-4, step) == [] and describe_regions([]) == "never cheaper"
    assert break_even_regions(1.0, step) == [(pytest.approx(720), None)]


def test_unserved_volumes_are_never_a_win():
    # autoscaled with at most 2 replicas of 86,400 calls/day on a flat day: past 172,800 demand goes unserved
    capped = SelfHostSetup(name="capped", gpu_price_per_hour=1.0, points=[ThroughputPoint(1, 1.0)],
                           mode="autoscaled", load_shape=[1.0] * 24, max_replicas=2, target_utilization=1.0,
                           cold_start_minutes=0)  # fmt: skip
    regions = break_even_regions(1.0, self_host_step_cost(capped, 1.0, 30, 1e6))
    assert regions[-1][1] == pytest.approx(172_800)


def bundled_case(profile, mode: str) -> dict:
    return {"calls_per_day": 100_000, "prompt_tokens": 1200, "output_tokens": 300, "retry_rate": 0.05,
            "api_models": [price.id for price in bundled_api_prices()],
            "self_host": [{"name": profile.id, "throughput": {"run": profile.id}, "slo": DEFAULT_SLO, "mode": mode,
                           "gpu_price_per_hour": rented_price(profile.hardware)[0]}]}  # fmt: skip


def contains(regions, calls: float) -> bool:
    return any(start <= calls <= (math.inf if end is None else end) for start, end in regions)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["always_on", "autoscaled", "offline_batch"])
@pytest.mark.parametrize("throughput", closed_loop_profiles(), ids=lambda p: p.id)
def test_regions_match_a_brute_force_scan_against_every_catalog_model(throughput, mode):
    profile = parse_profile(bundled_case(throughput, mode))
    row = estimate(profile)["self_host"][0]
    assert row["meets_slo"], row["warnings"]
    self_host = self_host_cost_at(profile, resolve_setup(profile, profile.self_host[0], 0, None))
    # regions are searched up to BREAK_EVEN_SEARCH times today's volume; past it they say nothing
    grid = np.geomspace(1, profile.calls_per_day * BREAK_EVEN_SEARCH, 2000)
    self_host_costs = np.array([self_host(float(n)) for n in grid])
    for model_id, regions in row["break_even"].items():
        api = api_cost_at(profile, find_price(bundled_api_prices(), model_id))
        per_call = api(1e6) / 1e6  # an API bill is linear in calls (checked at the ends of the grid)
        assert api(float(grid[0])) == pytest.approx(per_call * grid[0]) and api(float(grid[-1])) == pytest.approx(
            per_call * grid[-1])
        api_costs = per_call * grid
        edges = np.array([e for r in regions for e in r if e is not None])
        near_edge = np.zeros(grid.size, dtype=bool) if not edges.size else \
            np.min(np.abs(edges[None, :] - grid[:, None]), axis=1) <= 1e-6 * grid  # fmt: skip
        inside = np.zeros(grid.size, dtype=bool)
        for start, end in regions:
            inside |= (grid >= start) & (grid <= (math.inf if end is None else end))
        cheaper = self_host_costs <= api_costs * (1 + 1e-12)
        wrong = ~near_edge & (inside != cheaper)
        assert not wrong.any(), (model_id, grid[wrong][:3], regions)
        for start, end in regions:  # each boundary is where the answer changes
            # a region can be narrow
            just_in = start + min(1e-7 * start, math.inf if end is None else (end - start) / 2)
            assert self_host(just_in) <= api(just_in) * (1 + 1e-9)
            if start > 1 and not contains(regions, start * (1 - 1e-7)):
                assert self_host(start * (1 - 1e-7)) > api(start * (1 - 1e-7))
            if end is not None:
                assert self_host(end * (1 + 1e-7)) > api(end * (1 + 1e-7)) or contains(regions, end * (1 + 1e-7))


def test_a_replica_that_carries_little_at_a_huge_volume_stays_bounded():
    # 1e-4 requests/s a replica: 8.64 calls/day each, so 1e12 calls/day would list 1e11 steps; the list is capped
    # and the search ends where it is complete, instead of exhausting memory.
    slow = SelfHostSetup(name="slow", gpu_price_per_hour=1.0, points=[ThroughputPoint(1, 1e-4)], peak_to_average=1.0,
                         target_utilization=1.0)  # fmt: skip
    step = self_host_step_cost(slow, 1.0, 30, 1e12)
    assert step.edges.size <= 1_000_002 and step.edges[-1] < 1e12
    assert break_even_regions(1e-9, step) == []
