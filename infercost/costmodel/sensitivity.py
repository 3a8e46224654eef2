"""What moves the answer: one-at-a-time swings of each input (a tornado).

It takes the cost as a function, so the same code serves an API bill, a self-host estimate or their difference;
the caller decides what "cost" means and maps input names to the engine's fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from infercost.errors import InputError

Evaluate = Callable[[Mapping[str, float]], float]
Span = tuple[float, float]  # (low, high) value of one input


@dataclass(frozen=True)
class TornadoBar:
    """The cost with one input at its low and at its high value, all others at base."""

    name: str
    low: float
    high: float
    cost_low: float
    cost_high: float
    swing: float  # |cost_high - cost_low|: how much this input alone can move the answer


def tornado(evaluate: Evaluate, base: Mapping[str, float], spans: Mapping[str, Span]) -> list[TornadoBar]:
    """One bar per input, widest swing first: the inputs worth pinning down before trusting the answer."""
    bars = []
    for name, (low, high) in spans.items():
        if name not in base:
            raise InputError(name, f"is not an input of this estimate (inputs: {', '.join(sorted(base))})")
        cost_low = float(evaluate({**base, name: low}))
        cost_high = float(evaluate({**base, name: high}))
        bars.append(TornadoBar(name, low, high, cost_low, cost_high, abs(cost_high - cost_low)))
    return sorted(bars, key=lambda bar: bar.swing, reverse=True)


def _scaled(low: float, high: float) -> Callable[[float, Mapping[str, float]], Span]:
    return lambda value, base: (value * low, value * high)


def _rate(value: float, base: Mapping[str, float]) -> Span:
    """None to twice as many failures; a zero rate still shows what 5% would cost; below 1, where every call fails."""
    return 0.0, min(max(2 * value, 0.05), max(value, 0.95))


def _cached_fraction(value: float, base: Mapping[str, float]) -> Span:
    """±0.2 of the prompt, within what the cache-write share leaves."""
    ceiling = 1.0 - float(base.get("cache_write_fraction", 0.0))
    return max(0.0, value - 0.2), min(ceiling, value + 0.2)


# Input name -> its span from the base value. Names are Workload fields, plus the two self-host inputs.
SPAN_RULES: dict[str, Callable[[float, Mapping[str, float]], Span]] = {
    "calls_per_day": _scaled(0.5, 2.0),  # volume forecasts are often off by twice
    "prompt_tokens": _scaled(0.5, 1.5),
    "output_tokens": _scaled(0.5, 1.5),
    "reasoning_tokens": _scaled(0.5, 1.5),
    "retry_rate": _rate,
    "truncation_rate": _rate,
    "cached_prompt_fraction": _cached_fraction,
    "gpu_price_per_hour": _scaled(0.7, 1.3),  # spot, reserved and on-demand differ about this much
    "request_throughput": _scaled(0.7, 1.3),  # engines, versions and settings move measured throughput about this much
}


def default_spans(base: Mapping[str, float]) -> dict[str, Span]:
    """Sensible low and high values for each input of ``base`` that has a rule; others are left alone."""
    return {name: rule(float(base[name]), base) for name, rule in SPAN_RULES.items() if name in base}
