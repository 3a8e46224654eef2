"""Scaling modes (DESIGN.md, "Cost semantics") on numbers computed by hand; the arithmetic is in the comments.

Shared: the operating point serves q = 5 requests/s (the SLO rules out the 9 requests/s point), target utilization
0.8, so one replica carries 5 x 0.8 x 3600 = 14,400 attempts an hour when autoscaled. 864,000 attempts a day
(10 requests/s on average), 2 GPUs per replica at $2.50 per GPU-hour.
"""

import dataclasses

import numpy as np
import pytest

from infercost.costmodel import SelfHostSetup, ThroughputPoint, Workload, size_self_host, token_volumes
from infercost.costmodel.scaling import diurnal_shape

POINTS = [
    ThroughputPoint(8, 5.0, 1000, {"p95_ttft_ms": 200, "p95_tpot_ms": 20}),
    ThroughputPoint(32, 9.0, 1800, {"p95_ttft_ms": 1500, "p95_tpot_ms": 60}),
]
VOLUMES = token_volumes(Workload(calls_per_day=864_000, prompt_tokens=800, output_tokens=200))
# Twelve quiet hours then twelve busy ones, three times as busy: weights 0.5 and 1.5 once normalised to mean 1,
# so 864,000 / 24 x 0.5 = 18,000 and x 1.5 = 54,000 attempts an hour.
TWO_LEVEL_DAY = [1.0] * 12 + [3.0] * 12


def setup(**fields) -> SelfHostSetup:
    base = dict(name="gpu", gpu_price_per_hour=2.5, points=POINTS, gpus_per_replica=2,
                slo={"p95_ttft_ms": 1000}, peak_to_average=2.0, target_utilization=0.8)  # fmt: skip
    return SelfHostSetup(**(base | fields))


def test_autoscaled_bills_whole_replicas_each_hour_and_a_cold_start_per_new_replica():
    # quiet: ceil(18,000 / 14,400) = 2 replicas; busy: ceil(54,000 / 14,400) = ceil(3.75) = 4.
    # 2 replicas start at 12:00 (the day repeats, so none start at 0:00); each is billed its 10-minute head start
    # rounded to the 60-minute increment: 12 x 2 + 12 x 4 + 2 x 1 = 74 replica-hours = 148 GPU-hours = $370/day.
    estimate = size_self_host(setup(mode="autoscaled", load_shape=TWO_LEVEL_DAY, cold_start_minutes=10), VOLUMES)
    assert estimate.replicas_per_hour == (2,) * 12 + (4,) * 12
    assert estimate.replicas == 4
    assert estimate.gpu_hours_per_day == pytest.approx(148)
    assert estimate.cost_per_day == pytest.approx(370)
    assert estimate.cost_per_month == pytest.approx(370 * 30)


def test_autoscaled_per_minute_billing_charges_only_the_cold_minutes():
    # 72 replica-hours + 2 starts x 10 minutes = 72.3333 replica-hours x 2 GPUs = 144.6667 GPU-hours
    estimate = size_self_host(setup(mode="autoscaled", load_shape=TWO_LEVEL_DAY, billing_increment_minutes=1,
                                    cold_start_minutes=10), VOLUMES)  # fmt: skip
    assert estimate.gpu_hours_per_day == pytest.approx((72 + 2 * 10 / 60) * 2)


def test_autoscaled_long_increments_hold_the_busiest_hour_of_each_block():
    # 8-hour increments: blocks 0-7 (2), 8-15 (max of 2 and 4 = 4), 16-23 (4): (2 + 4 + 4) x 8 = 80 replica-hours;
    # 2 starts each billed ceil(10 / 480) = 1 increment = 8 h: 80 + 16 = 96 replica-hours = 192 GPU-hours.
    estimate = size_self_host(setup(mode="autoscaled", load_shape=TWO_LEVEL_DAY, billing_increment_minutes=480,
                                    cold_start_minutes=10), VOLUMES)  # fmt: skip
    assert estimate.gpu_hours_per_day == pytest.approx(192)


def test_autoscaled_min_and_max_replicas_and_unserved_demand():
    # min 3: quiet hours run 3; max 3: busy hours run 3 and leave 54,000 - 3 x 14,400 = 10,800 attempts an hour
    # unserved, 12 x 10,800 = 129,600 a day. Flat at 3 replicas: no starts, 72 replica-hours = 144 GPU-hours.
    estimate = size_self_host(setup(mode="autoscaled", load_shape=TWO_LEVEL_DAY, min_replicas=3, max_replicas=3),
                              VOLUMES)  # fmt: skip
    assert estimate.replicas_per_hour == (3,) * 24
    assert estimate.unserved_attempts_per_day == pytest.approx(129_600)
    assert estimate.gpu_hours_per_day == pytest.approx(144)
    assert "unserved" in estimate.warnings[0]


def test_autoscaled_scales_to_zero_when_allowed():
    # All traffic in hour 0: 864,000 attempts there need ceil(864,000 / 14,400) = 60 replicas; with min_replicas 0
    # the other 23 hours run none. 60 replica-hours + 60 starts x 1 h (10 minutes rounded to the hour) = 120
    # replica-hours = 240 GPU-hours.
    estimate = size_self_host(setup(mode="autoscaled", load_shape=[1.0] + [0.0] * 23, min_replicas=0), VOLUMES)
    assert estimate.replicas_per_hour == (60,) + (0,) * 23
    assert estimate.gpu_hours_per_day == pytest.approx(240)


@pytest.mark.parametrize("peak", [1.0, 1.5, 2.0, 5.0, 20.0])
def test_the_default_load_shape_is_a_day_with_the_asked_peak_to_average(peak):
    weights = diurnal_shape(peak)
    assert weights.shape == (24,) and weights.mean() == pytest.approx(1)
    assert weights.max() / weights.mean() == pytest.approx(peak)
    assert int(np.argmax(weights)) == 14 or peak == 1.0


def test_offline_batch_runs_the_day_on_as_few_replicas_as_meet_the_deadline():
    # Full speed q = 5 requests/s (a batch has no peak to leave room for). 24 h deadline - 10 min cold start =
    # 1,430 working minutes: one replica finishes 5 x 60 x 1,430 = 429,000 attempts, so ceil(864,000 / 429,000) = 3
    # replicas, each busy 864,000 / (3 x 300) = 960 min + 10 cold = 970 -> 17 whole hours: 3 x 17 x 2 = 102 GPU-hours.
    estimate = size_self_host(setup(mode="offline_batch", cold_start_minutes=10), VOLUMES)
    assert estimate.replicas == 3
    assert estimate.gpu_hours_per_day == pytest.approx(102)
    assert estimate.cost_per_day == pytest.approx(255)
    assert estimate.replicas_per_hour == (3,) * 17 + (0,) * 7


def test_offline_batch_with_a_tight_deadline_needs_more_replicas():
    # 8 h: 470 working minutes, 141,000 attempts per replica, ceil(6.13) = 7 replicas, each 864,000 / 2,100 =
    # 411.4 min + 10 = 421.4 -> 8 whole hours: 7 x 8 x 2 = 112 GPU-hours.
    estimate = size_self_host(setup(mode="offline_batch", deadline_hours=8, cold_start_minutes=10), VOLUMES)
    assert (estimate.replicas, estimate.gpu_hours_per_day) == (7, pytest.approx(112))


def test_always_on_is_unchanged():
    # ceil(10 x 2 / (5 x 0.8)) = 5 replicas x 2 GPUs x 24 h = 240 GPU-hours
    estimate = size_self_host(setup(), VOLUMES)
    assert (estimate.replicas, estimate.gpu_hours_per_day) == (5, pytest.approx(240))
    assert estimate.replicas_per_hour == (5,) * 24


def test_a_load_shape_sets_the_always_on_peak():
    # the two-level day peaks at 1.5 x the mean: ceil(10 x 1.5 / 4) = 4 replicas
    estimate = size_self_host(dataclasses.replace(setup(), load_shape=TWO_LEVEL_DAY), VOLUMES)
    assert estimate.replicas == 4
