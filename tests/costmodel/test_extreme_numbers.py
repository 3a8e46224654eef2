"""Every number a profile, a price entry or a throughput point may hold, from denormals to 1e308: ``estimate``
returns finite figures or refuses the input with the project's validation error, never another exception
(``calls_per_day: 5e-324`` with a self-host setup raised ZeroDivisionError in ``costmodel/selfhost.py``)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infercost.errors import InputError
from infercost.estimate import estimate
from infercost.profile import parse_profile

EDGES = [0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-12, 1e-6, 0.5, 1.0, 7.0, 1e6, 1e12, 1e100, 1e308,
         1.7976931348623157e308]
numbers = st.sampled_from(EDGES) | st.floats(0, 1e308) | st.floats(5e-324, 1e-300) | st.floats(0, 1) | \
    st.floats(1, 100) | st.integers(0, 10**6)

PROFILE = ("calls_per_day", "prompt_tokens", "output_tokens", "reasoning_tokens", "retry_rate", "max_retries",
           "truncation_rate", "cached_prompt_fraction", "cache_write_fraction", "days_per_month", "calls_per_day_cv")
SELF_HOST = ("gpu_price_per_hour", "gpus_per_replica", "peak_to_average", "target_utilization", "min_replicas",
             "max_replicas", "cold_start_minutes", "billing_increment_minutes", "deadline_hours")
POINT = ("concurrency", "request_throughput", "output_throughput", "p95_ttft_ms", "p95_tpot_ms")
PRICE = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok", "batch_input_per_mtok",
         "batch_output_per_mtok", "long_context_threshold", "long_context_input_per_mtok",
         "long_context_output_per_mtok")
BASE = {"calls_per_day": 1000, "prompt_tokens": 500, "output_tokens": 100, "api_models": [],
        "prices": [{"id": "m", "provider": "x", "input_per_mtok": 1, "output_per_mtok": 2,
                    "source": "https://example.com", "as_of": "2026-01-01"}],
        "self_host": [{"name": "s", "gpu_price_per_hour": 2, "slo": {"p95_ttft_ms": 1000},
                       "throughput": {"points": [{"concurrency": 1, "request_throughput": 1, "output_throughput": 50,
                                                  "p95_ttft_ms": 100, "p95_tpot_ms": 10}]}}]}


FIELDS = [("profile", name) for name in PROFILE] + [("self_host", name) for name in SELF_HOST] + \
    [("point", name) for name in POINT] + [("price", name) for name in PRICE]


def document_with(changes: list[tuple[tuple[str, str], Any]], mode: str = "always_on", batch: bool = False) -> dict:
    """``BASE`` with each (place, field) set to its value."""
    groups: dict[str, dict[str, Any]] = {"profile": {}, "self_host": {}, "point": {}, "price": {}}
    for (place, name), value in changes:
        groups[place][name] = value
    [setup], [entry] = BASE["self_host"], BASE["prices"]
    point = {**setup["throughput"]["points"][0], **groups["point"]}
    return {**BASE, **groups["profile"], "batch": batch, "prices": [{**entry, **groups["price"]}],
            "self_host": [{**setup, **groups["self_host"], "mode": mode, "throughput": {"points": [point]}}]}


def finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(finite(item) for item in value)
    return True


def finite_or_refused(document: dict) -> None:
    try:
        result = estimate(parse_profile(document), catalog=[])
    except InputError as error:  # the CLI prints it as one line and exits 2
        assert "\n" not in str(error)
        return
    assert finite(result), result


@pytest.mark.parametrize("field", FIELDS, ids="-".join)
@pytest.mark.parametrize("value", EDGES)
def test_each_field_at_each_edge(field: tuple[str, str], value: float) -> None:
    for mode in ("always_on", "autoscaled", "offline_batch"):
        finite_or_refused(document_with([(field, value)], mode))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FIELDS), numbers), min_size=1, max_size=3),
       st.sampled_from(["always_on", "autoscaled", "offline_batch"]), st.booleans())
def test_fields_together_anywhere_in_range(changes, mode, batch) -> None:
    finite_or_refused(document_with(changes, mode, batch))


def test_a_denormal_call_volume_with_a_self_host_setup() -> None:
    """The case the review found: ``total_tokens / 1e6`` underflowed to 0 and the division raised."""
    try:
        result = estimate(parse_profile({**BASE, "calls_per_day": 5e-324}), catalog=[])
    except InputError as error:
        assert error.field == "calls_per_day"
        return
    assert finite(result)


@pytest.mark.parametrize("deadline_hours", [5e-324, 2.2250738585072014e-308, 1 / 120])
def test_a_batch_deadline_with_under_a_minute_of_work_is_refused(deadline_hours: float) -> None:
    """Hypothesis's case: a subnormal deadline with no cold start left 3e-322 working minutes, and the replicas
    needed overflowed (``int(inf)``); under a minute of work is refused by name."""
    document = document_with([(("self_host", "cold_start_minutes"), 0.0),
                              (("self_host", "deadline_hours"), deadline_hours)], "offline_batch")  # fmt: skip
    with pytest.raises(InputError) as refused:
        estimate(parse_profile(document), catalog=[])
    assert refused.value.field == "deadline_hours" and "\n" not in str(refused.value)
