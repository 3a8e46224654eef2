"""Every rule of DESIGN.md's API cost semantics, on numbers computed by hand."""

import pytest

from infercost.costmodel import TokenPrices, Workload, api_bill, attempts_per_call

PLAIN = TokenPrices(input_per_mtok=2.0, output_per_mtok=10.0)


def bill(prices: TokenPrices = PLAIN, **fields):
    base = {"calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 10, "retry_rate": 0.0}
    return api_bill(Workload(**(base | fields)).validate(), prices)


@pytest.mark.parametrize(
    ("rate", "cap", "attempts"), [(0.0, 3, 1.0), (0.5, 2, 1.75), (0.5, 0, 1.0), (0.1, 3, 1.111), (0.2, 1, 1.2)]
)
def test_attempts_are_a_capped_geometric_sum(rate, cap, attempts):
    assert attempts_per_call(rate, cap) == pytest.approx(attempts)


def test_retries_with_a_cap_bill_every_attempt_in_full():
    b = bill(retry_rate=0.5, max_retries=2)  # 1.75 attempts per call
    assert b.volumes.attempts_per_day == pytest.approx(1750)
    assert b.volumes.input_tokens_per_day == pytest.approx(175_000)
    assert b.volumes.output_tokens_per_day == pytest.approx(17_500)
    assert b.cost_per_day == pytest.approx(0.35 + 0.175)
    assert b.cost_per_month == pytest.approx(0.525 * 30)
    assert b.cost_per_call == pytest.approx(0.000525)
    assert b.cost_per_million_tokens == pytest.approx(0.525 / 0.1925)


def test_a_truncated_call_is_issued_once_more_in_full():
    b = bill(truncation_rate=0.1)
    assert b.volumes.attempts_per_day == pytest.approx(1100)
    assert b.cost_per_day == pytest.approx(1100 * (100 * 2 + 10 * 10) / 1e6)
    assert b.cost_per_call == pytest.approx(b.cost_per_day / 1000)  # per call divides by calls asked for


def test_cached_input_is_billed_at_the_cached_price():
    prices = TokenPrices(input_per_mtok=3.0, output_per_mtok=0.0, cached_input_per_mtok=0.3)
    b = bill(prices, calls_per_day=100, prompt_tokens=1000, cached_prompt_fraction=0.6)
    assert b.volumes.cached_input_tokens_per_day == pytest.approx(60_000)
    assert b.cost_per_day == pytest.approx(40_000 * 3.0 / 1e6 + 60_000 * 0.3 / 1e6)
    assert b.warnings == []


def test_cached_input_without_a_cached_price_is_regular_input_and_says_so():
    prices = TokenPrices(input_per_mtok=3.0, output_per_mtok=0.0)
    b = bill(prices, calls_per_day=100, prompt_tokens=1000, cached_prompt_fraction=0.6)
    assert b.cost_per_day == pytest.approx(100_000 * 3.0 / 1e6)
    assert any("no cached-input price" in w for w in b.warnings)


def test_cache_writes_are_billed_at_the_cache_write_price():
    prices = TokenPrices(input_per_mtok=3.0, output_per_mtok=15.0, cached_input_per_mtok=0.3, cache_write_per_mtok=3.75)
    b = bill(prices, calls_per_day=100, prompt_tokens=1000, output_tokens=0, cached_prompt_fraction=0.5,
             cache_write_fraction=0.1)  # fmt: skip
    # 100k input tokens: 50k cached reads, 10k cache writes, 40k regular
    assert b.volumes.cache_write_tokens_per_day == pytest.approx(10_000)
    assert b.cost_per_day == pytest.approx((40_000 * 3.0 + 50_000 * 0.3 + 10_000 * 3.75) / 1e6)


def test_batch_uses_the_batch_tier():
    prices = TokenPrices(2.0, 8.0, batch_input_per_mtok=1.0, batch_output_per_mtok=4.0)
    b = bill(prices, batch=True)
    assert b.cost_per_day == pytest.approx(1000 * (100 * 1.0 + 10 * 4.0) / 1e6)
    assert b.warnings == []


def test_batch_without_a_tier_is_regular_price_and_flagged():
    b = bill(PLAIN, batch=True)
    assert b.cost_per_day == pytest.approx(1000 * (100 * 2.0 + 10 * 10.0) / 1e6)
    assert b.warnings == ["no batch tier: priced at regular rates"]


LONG = TokenPrices(1.25, 10.0, cached_input_per_mtok=0.3125, long_context_threshold=200_000,
                   long_context_input_per_mtok=2.5, long_context_output_per_mtok=15.0)  # fmt: skip


def test_a_long_prompt_pays_long_context_prices_for_the_whole_request():
    b = bill(LONG, calls_per_day=10, prompt_tokens=250_000, output_tokens=1000)
    assert b.cost_per_day == pytest.approx((2_500_000 * 2.5 + 10_000 * 15.0) / 1e6)
    assert any("long context" in w for w in b.warnings)


def test_a_prompt_at_the_threshold_pays_regular_prices():
    b = bill(LONG, calls_per_day=10, prompt_tokens=200_000, output_tokens=1000)
    assert b.cost_per_day == pytest.approx((2_000_000 * 1.25 + 10_000 * 10.0) / 1e6)


def test_long_context_scales_the_cached_price_with_the_input_price():
    b = bill(LONG, calls_per_day=10, prompt_tokens=250_000, output_tokens=0, cached_prompt_fraction=1.0)
    assert b.cost_per_day == pytest.approx(2_500_000 * 0.3125 * 2 / 1e6)


def test_reasoning_tokens_are_billed_as_output():
    b = bill(output_tokens=100, reasoning_tokens=400)
    assert b.volumes.output_tokens_per_day == pytest.approx(500_000)
    assert b.cost_per_day == pytest.approx((100_000 * 2.0 + 500_000 * 10.0) / 1e6)


def test_a_call_beyond_the_context_window_is_flagged():
    w = Workload(calls_per_day=1, prompt_tokens=120_000, output_tokens=10_000).validate()
    assert any("context window" in note for note in api_bill(w, PLAIN, context_window=128_000).warnings)


@pytest.mark.parametrize(
    ("field", "value"),
    [("calls_per_day", 0), ("retry_rate", 1.0), ("retry_rate", -0.1), ("max_retries", 1.5), ("truncation_rate", 2),
     ("prompt_tokens", -1), ("days_per_month", 40), ("cached_prompt_fraction", 1.5)],
)  # fmt: skip
def test_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        Workload(**({"calls_per_day": 10, "prompt_tokens": 1, "output_tokens": 1} | {field: value})).validate()
