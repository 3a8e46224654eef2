"""The Monte Carlo bill band: it collapses onto api_bill without randomness and agrees with it in expectation."""

import dataclasses

import numpy as np
import pytest

from infercost.costmodel import SelfHostSetup, ThroughputPoint
from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.montecarlo import DIRECT_CALLS_PER_DAY, bill_band, draw_calls_per_day, self_host_band
from infercost.costmodel.workload import Workload
from infercost.errors import InputError

PRICES = TokenPrices(input_per_mtok=2.5, output_per_mtok=10.0, cached_input_per_mtok=1.25, long_context_threshold=2_000,
                     long_context_input_per_mtok=5.0, long_context_output_per_mtok=15.0)  # fmt: skip
FIXED = Workload(calls_per_day=1_000, prompt_tokens=1_200, output_tokens=300, cached_prompt_fraction=0.25)
RANDOM = dataclasses.replace(FIXED, retry_rate=0.4, max_retries=3, truncation_rate=0.1)
PROMPTS = np.array([200, 800, 1_500, 3_000])  # one record over the long-context threshold


@pytest.mark.parametrize("calls", [999.5, DIRECT_CALLS_PER_DAY * 3])
def test_without_randomness_the_band_collapses_onto_api_bill(calls):
    workload = dataclasses.replace(FIXED, calls_per_day=calls)
    band, bill = bill_band(workload, PRICES, simulations=200), api_bill(workload, PRICES)
    for value in dataclasses.astuple(band.daily):
        assert value == pytest.approx(float(bill.cost_per_day), rel=1e-12)
    for value in dataclasses.astuple(band.monthly):
        assert value == pytest.approx(float(bill.cost_per_month), rel=1e-12)


@pytest.mark.parametrize("calls", [1_000, DIRECT_CALLS_PER_DAY * 20])
def test_with_retries_and_truncations_the_mean_is_the_analytic_expectation(calls):
    workload = dataclasses.replace(RANDOM, calls_per_day=calls)
    band, bill = bill_band(workload, PRICES, simulations=500), api_bill(workload, PRICES)
    assert band.daily.mean == pytest.approx(float(bill.cost_per_day), rel=0.003)  # one retry more or less: 1.6%
    assert band.monthly.mean == pytest.approx(float(bill.cost_per_month), rel=0.003)
    assert band.daily.p99 > band.daily.p50  # retries spread the bill


def test_sampled_lengths_pay_long_context_rates_per_request():
    band = bill_band(FIXED, PRICES, prompt_samples=PROMPTS, simulations=300)
    short = api_bill(dataclasses.replace(FIXED, prompt_tokens=PROMPTS[:3, None]), PRICES).cost_per_day.sum()
    long = api_bill(dataclasses.replace(FIXED, prompt_tokens=3_000), PRICES).cost_per_day
    assert band.daily.mean == pytest.approx((short + long) / 4, rel=0.01)  # each record a quarter of the calls
    mean_prompt = api_bill(dataclasses.replace(FIXED, prompt_tokens=PROMPTS.mean()), PRICES).cost_per_day
    assert band.daily.mean > mean_prompt * 1.1  # the mean length (1,375) alone would never pay long-context rates


@pytest.mark.parametrize("calls", [2_000, DIRECT_CALLS_PER_DAY * 4])
def test_percentiles_are_ordered(calls):
    band = bill_band(dataclasses.replace(RANDOM, calls_per_day=calls), PRICES, prompt_samples=PROMPTS,
                     output_samples=[50, 300, 900], simulations=400)  # fmt: skip
    for b in (band.daily, band.monthly):
        assert b.p99 >= b.p90 >= b.p50 > 0


def test_the_central_limit_theorem_agrees_with_drawing_every_call():
    def band(calls):
        return bill_band(dataclasses.replace(RANDOM, calls_per_day=calls), PRICES, prompt_samples=PROMPTS,
                         simulations=1_000).daily  # fmt: skip

    direct, clt = band(DIRECT_CALLS_PER_DAY - 1), band(DIRECT_CALLS_PER_DAY)
    assert bill_band(dataclasses.replace(RANDOM, calls_per_day=DIRECT_CALLS_PER_DAY), PRICES).method == "clt"
    assert clt.mean == pytest.approx(direct.mean, rel=0.005)
    assert clt.p90 - clt.p50 == pytest.approx(direct.p90 - direct.p50, rel=0.2)  # sampling noise is about 10%
    assert clt.p99 - clt.mean == pytest.approx(direct.p99 - direct.mean, rel=0.2)


def test_the_same_seed_gives_the_same_band_and_another_seed_another():
    def run(seed):
        return bill_band(RANDOM, PRICES, prompt_samples=PROMPTS, simulations=200, seed=seed)

    assert run(7).daily == run(7).daily and np.array_equal(run(7).monthly_bills, run(7).monthly_bills)
    assert run(7).daily != run(8).daily


@pytest.mark.parametrize("change, field", [
    ({"prompt_samples": []}, "prompt_samples"),
    ({"output_samples": [10, -1]}, "output_samples"),
    ({"simulations": 10}, "simulations"),
])  # fmt: skip
def test_bad_input_names_the_field(change, field):
    with pytest.raises(InputError, match=f"^{field}:"):
        bill_band(FIXED, PRICES, **change)


@pytest.mark.parametrize("change, field", [
    ({"retry_rate": 1.0}, "retry_rate"),
    ({"prompt_tokens": np.array([1, 2])}, "prompt_tokens"),
])  # fmt: skip
def test_a_bad_workload_names_its_field(change, field):
    with pytest.raises(InputError, match=f"^{field}:"):
        bill_band(dataclasses.replace(FIXED, **change), PRICES)


def test_daily_volume_is_negative_binomial_with_the_asked_spread():
    rng = np.random.default_rng(0)
    calls = draw_calls_per_day(100_000, 0.15, 20_000, rng)
    assert calls.mean() == pytest.approx(100_000, rel=0.005)
    assert calls.std() / calls.mean() == pytest.approx(0.15, rel=0.03)
    assert np.array_equal(draw_calls_per_day(10.5, 0.0, 3, rng), [10.5, 10.5, 10.5])


def test_volume_variation_widens_the_band_around_the_deterministic_bill():
    # Regression (issue 9): at 100,000 calls/day with only retries varying the monthly band was $853/$853/$854.
    # Each day's calls now vary (CV 15%): a month of 30 independent days spreads by about 15% / sqrt(30) = 2.7%.
    workload = dataclasses.replace(RANDOM, calls_per_day=100_000)
    bill = float(api_bill(workload, PRICES).cost_per_month)
    narrow = bill_band(workload, PRICES, simulations=1_000).monthly
    wide = bill_band(workload, PRICES, calls_cv=0.15, simulations=1_000)
    assert (narrow.p90 - narrow.p10) / bill < 0.005
    assert wide.monthly.p10 < bill < wide.monthly.p90
    assert (wide.monthly.p90 - wide.monthly.p10) / bill == pytest.approx(2 * 1.2816 * 0.15 / 30**0.5, rel=0.15)
    assert wide.sources[0].startswith("calls per day")


def test_volume_variation_when_every_call_is_drawn():
    band = bill_band(dataclasses.replace(FIXED, calls_per_day=400), PRICES, calls_cv=0.3, simulations=2_000)
    per_call = float(api_bill(FIXED, PRICES).cost_per_call)
    assert band.daily.mean == pytest.approx(400 * per_call, rel=0.02)
    assert np.std(band.daily_bills) / band.daily.mean == pytest.approx(0.3, rel=0.1)


def test_self_host_band_moves_with_throughput_error_and_volume():
    # 5 requests/s a replica at 80%: always on, 864,000 attempts a day at peak 2 need 5 replicas ($240/day at $2);
    # a throughput 20% lower than predicted (error +0.25 -> 5 / 1.25 = 4) needs ceil(20 / 3.2) = 7.
    setup = SelfHostSetup(name="x", gpu_price_per_hour=2.0, points=[ThroughputPoint(1, 5.0)])
    exact = self_host_band(setup, 864_000, days_per_month=30, calls_cv=0.15)
    # a fixed fleet: volume cannot move it
    assert exact.monthly.p10 == exact.monthly.p99 == pytest.approx(5 * 24 * 2 * 30)
    error = {"output_throughput": {"p10": 0.25, "p50": 0.25, "p90": 0.25}}
    slow = self_host_band(setup, 864_000, days_per_month=30, expected_error=error, simulations=100)
    assert slow.monthly.p50 == pytest.approx(7 * 24 * 2 * 30)
    auto = self_host_band(dataclasses.replace(setup, mode="autoscaled"), 864_000, days_per_month=30, calls_cv=0.15)
    assert auto.monthly.p10 < auto.monthly.p90


def test_a_latency_error_moves_the_band_as_it_moves_the_range_beside_the_cost():
    # Regression: the band scaled only the throughput of the operating point predicted, while the P10–P90 range
    # scales every point's latencies too and picks the point that still meets the SLO, so a setup read
    # "P10–P90 $1,937–3,874" in the table and "P10 = P90 = $1,937" in its band.
    from infercost.costmodel.selfhost import size_self_host
    from infercost.costmodel.workload import TokenVolumes
    from infercost.performance.operating_points import error_scaled

    points = [ThroughputPoint(1, 5.0, latency_ms={"p95_tpot_ms": 40.0}),
              ThroughputPoint(8, 20.0, latency_ms={"p95_tpot_ms": 90.0})]  # fmt: skip
    setup = SelfHostSetup(name="x", gpu_price_per_hour=2.0, points=points, slo={"p95_tpot_ms": 100.0})
    # TPOT predicted up to 20% too low: at its p10 the busy point really takes 112 ms and misses the SLO
    error = {"request_throughput": {"p10": -0.05, "p50": 0.0, "p90": 0.05},
             "mean_tpot_ms": {"p10": -0.2, "p50": 0.0, "p90": 0.1}}  # fmt: skip
    band = self_host_band(setup, 864_000, days_per_month=30, expected_error=error, simulations=400)
    volumes = TokenVolumes(864_000, 0, 0, 0, 0)
    ends = [size_self_host(dataclasses.replace(setup, points=error_scaled(points, error, optimistic=o)), volumes,
                           days_per_month=30).cost_per_month for o in (True, False)]  # fmt: skip
    assert ends[0] < ends[1]  # the pessimistic end runs the quiet point: more replicas
    assert band.monthly.p10 == pytest.approx(ends[0]) and band.monthly.p90 == pytest.approx(ends[1])
    assert "throughput and latency prediction error" in band.sources


def test_an_output_length_spread_moves_each_call_and_keeps_the_mean():
    # Issue 24: the band drew no output-length spread, so a few hundred calls a day of fixed-length answers gave a
    # band of zero width. A gamma spread with CV 1 keeps the mean and widens a day by about the output cost share.
    workload = dataclasses.replace(FIXED, calls_per_day=200)
    bill = float(api_bill(workload, PRICES).cost_per_day)
    fixed = bill_band(workload, PRICES, simulations=500).daily
    spread = bill_band(workload, PRICES, output_cv=1.0, simulations=2_000)
    assert fixed.p10 == pytest.approx(fixed.p90, rel=1e-12)
    assert spread.daily.mean == pytest.approx(bill, rel=0.01)
    output_share = 300 * 10.0 / (300 * 10.0 + 1_200 * (0.75 * 2.5 + 0.25 * 1.25))
    assert np.std(spread.daily_bills) / bill == pytest.approx(output_share / 200**0.5, rel=0.15)
    assert "output lengths (gamma, CV 100%)" in spread.sources


def test_a_proxy_tokenizers_error_is_one_draw_a_month_not_averaged_away():
    # A proxy tokenizer's count is off by the same factor for every call, so the band must not shrink it as
    # independent days shrink volume noise: at 100,000 calls a day the monthly P10-P90 is the error's P10-P90 times
    # the prompt's share of the bill.
    workload = dataclasses.replace(FIXED, calls_per_day=100_000)
    bill = float(api_bill(workload, PRICES).cost_per_month)
    error = {"p10": -0.1, "p50": 0.0, "p90": 0.2}
    band = bill_band(workload, PRICES, prompt_error=error, simulations=2_000)
    prompt_share = 1_200 * (0.75 * 2.5 + 0.25 * 1.25) / (300 * 10.0 + 1_200 * (0.75 * 2.5 + 0.25 * 1.25))
    assert band.monthly.p10 == pytest.approx(bill * (1 - 0.1 * prompt_share), rel=0.01)
    assert band.monthly.p90 == pytest.approx(bill * (1 + 0.2 * prompt_share), rel=0.01)
    assert band.monthly.p50 == pytest.approx(bill, rel=0.01)
    assert any("proxy tokenizer" in source for source in band.sources)
    unchanged = bill_band(workload, PRICES, prompt_error={"p10": 0, "p50": 0, "p90": 0}, simulations=200)
    assert unchanged.monthly.p10 == pytest.approx(unchanged.monthly.p90, rel=1e-12)


@pytest.mark.parametrize("change", [{"prompt_error": {"p10": 0.1, "p50": 0.0, "p90": 0.2}},
                                    {"prompt_error": {"p50": 0.0}}, {"output_cv": -0.5}])  # fmt: skip
def test_a_bad_spread_or_error_names_its_field(change):
    with pytest.raises(InputError, match=f"^{next(iter(change))}:"):
        bill_band(FIXED, PRICES, **change)
