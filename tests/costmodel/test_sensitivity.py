"""Tornado bars, on numbers computed by hand."""

import pytest

from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.sensitivity import SPAN_RULES, default_spans, tornado
from infercost.costmodel.workload import WORKLOAD_FIELDS, Workload
from infercost.errors import InputError

PRICES = TokenPrices(input_per_mtok=1.0, output_per_mtok=4.0)
BASE = {"calls_per_day": 1000.0, "prompt_tokens": 1000.0, "output_tokens": 250.0, "retry_rate": 0.0}


def monthly_bill(inputs):
    return float(api_bill(Workload(**inputs), PRICES).cost_per_month)


def test_tornado_bars_are_the_costs_at_each_end_widest_first():
    # Base: 1000 calls x (1000 x $1 + 250 x $4) / 1e6 = $2/day = $60/month
    bars = tornado(monthly_bill, BASE, {"prompt_tokens": (500, 1500), "calls_per_day": (500, 2000)})
    assert [bar.name for bar in bars] == ["calls_per_day", "prompt_tokens"]
    assert (bars[0].cost_low, bars[0].cost_high, bars[0].swing) == pytest.approx((30, 120, 90))
    assert (bars[1].cost_low, bars[1].cost_high, bars[1].swing) == pytest.approx((45, 75, 30))


def test_tornado_refuses_an_input_the_estimate_does_not_have():
    with pytest.raises(InputError, match="^gpu_price_per_hour:"):
        tornado(monthly_bill, BASE, {"gpu_price_per_hour": (1, 2)})


def test_default_spans_cover_the_base_and_stay_in_range():
    spans = default_spans({**BASE, "retry_rate": 0.6, "cached_prompt_fraction": 0.9, "gpu_price_per_hour": 2.0})
    assert spans["calls_per_day"] == (500, 2000)
    assert spans["retry_rate"] == (0, 0.95)  # twice 0.6 would mean every call fails
    assert spans["cached_prompt_fraction"] == pytest.approx((0.7, 1.0))
    assert spans["gpu_price_per_hour"] == pytest.approx((1.4, 2.6))
    assert "request_throughput" not in spans


def test_default_spans_name_only_workload_fields_and_the_two_self_host_inputs():
    assert set(SPAN_RULES) <= set(WORKLOAD_FIELDS) | {"gpu_price_per_hour", "request_throughput"}


def test_default_spans_feed_tornado():
    bars = tornado(monthly_bill, BASE, default_spans(BASE))
    assert bars[0].name == "calls_per_day" and bars[-1].swing >= 0
