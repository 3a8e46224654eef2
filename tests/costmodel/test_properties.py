"""Properties that hold for every workload and price (hypothesis)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from infercost.costmodel import TokenPrices, Workload, api_bill, attempts_per_call, whatif_costs

price = st.floats(0, 100, allow_nan=False)
workloads = st.builds(
    Workload,
    calls_per_day=st.floats(1, 1e8),
    prompt_tokens=st.floats(0, 300_000),
    output_tokens=st.floats(0, 10_000),
    reasoning_tokens=st.floats(0, 10_000),
    retry_rate=st.floats(0, 0.95),
    max_retries=st.integers(0, 10),
    truncation_rate=st.floats(0, 1),
    cached_prompt_fraction=st.floats(0, 0.5),
    cache_write_fraction=st.floats(0, 0.5),
)
prices = st.builds(
    TokenPrices,
    input_per_mtok=st.floats(0.01, 100),
    output_per_mtok=st.floats(0.01, 100),
    cached_input_per_mtok=st.none() | price,
    long_context_threshold=st.none(),
)


@given(workloads, prices, st.floats(1.0, 10.0))
def test_cost_is_monotone_in_calls(workload, token_prices, factor):
    more = Workload(**{**workload.__dict__, "calls_per_day": workload.calls_per_day * factor})
    assert api_bill(more, token_prices).cost_per_day >= api_bill(workload, token_prices).cost_per_day * (1 - 1e-12)


@given(workloads, prices, st.floats(1.0, 10.0))
def test_cost_is_monotone_in_prices(workload, token_prices, factor):
    cached = token_prices.cached_input_per_mtok
    dearer = TokenPrices(token_prices.input_per_mtok * factor, token_prices.output_per_mtok * factor,
                         None if cached is None else cached * factor)
    assert api_bill(workload, dearer).cost_per_day >= api_bill(workload, token_prices).cost_per_day * (1 - 1e-12)


@given(st.integers(0, 100))
def test_zero_retry_rate_means_one_attempt(cap):
    assert attempts_per_call(0.0, cap) == 1.0


@given(workloads, st.floats(0.01, 100), st.floats(0.01, 100), st.floats(0, 1), st.floats(0, 1))
def test_a_batch_tier_never_costs_more(workload, input_price, output_price, input_share, output_share):
    regular = TokenPrices(input_price, output_price)
    tiered = TokenPrices(input_price, output_price, batch_input_per_mtok=input_price * input_share,
                         batch_output_per_mtok=output_price * output_share)  # fmt: skip
    batch = Workload(**{**workload.__dict__, "batch": True})
    assert api_bill(batch, tiered).cost_per_day <= api_bill(workload, regular).cost_per_day * (1 + 1e-12)


@given(workloads, prices)
def test_the_grid_agrees_with_one_at_a_time(workload, token_prices):
    calls = np.array([1.0, 10.0, 1e4])
    grid = whatif_costs(workload, {"calls_per_day": calls}, token_prices)
    for value, cost in zip(calls, grid["cost_per_day"], strict=True):
        single = api_bill(Workload(**{**workload.__dict__, "calls_per_day": value}), token_prices).cost_per_day
        assert np.isclose(cost, single, rtol=1e-12)
