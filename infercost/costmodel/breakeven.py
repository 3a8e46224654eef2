"""Break-even as regions: every call volume where self-hosting costs no more than an API, found exactly.

An API bill is proportional to volume (``c`` dollars a month per call/day). A self-host setup's monthly cost is
constant between the volumes where a replica (or a billing increment) is added, which its scaling mode knows
(``scaling.step_volumes``). On a piece (lo, hi] of constant cost C, self-hosting costs no more exactly where
``C <= c N``, i.e. on [max(lo, C / c), hi]: no grid, so no window is missed however narrow. Adjacent winning pieces
merge into one interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from infercost.costmodel.scaling import MAX_STEPS, gpu_hours_at, step_volumes
from infercost.costmodel.selfhost import SelfHostSetup, operating_point

Interval = tuple[float, float | None]  # calls/day, [from, to]; to None: self-hosting stays cheaper beyond the search


@dataclass(frozen=True)
class StepCost:
    """A self-host monthly cost as pieces of calls/day: piece i is (edges[i], edges[i + 1]], costing costs[i].

    ``open_end``: the last piece ends where the search ended (a whole step past it when one is known), not where the
    setup stops serving; ``max_replicas`` ends the pieces where demand first goes unserved.
    """

    edges: NDArray[np.float64]
    costs: NDArray[np.float64]
    open_end: bool


def self_host_step_cost(setup: SelfHostSetup, attempts_per_call: float, days_per_month: float,
                        high_calls: float) -> StepCost | None:  # fmt: skip
    """The setup's monthly cost as exact pieces up to ``high_calls`` calls/day; None when no point meets the SLO.

    Each piece's cost is evaluated inside it (at its midpoint) by the scaling mode itself, so pieces and the cost
    curve cannot disagree; pieces where any demand goes unserved are dropped (self-hosting does not do the job).
    """
    point = operating_point(setup.points, setup.slo)
    if point is None:
        return None
    q = point.request_throughput
    steps = step_volumes(setup, q, 2 * high_calls * attempts_per_call) / attempts_per_call
    beyond = steps[steps >= high_calls]
    end = float(beyond[0]) if beyond.size else high_calls  # end on a whole step, so the last piece is complete
    truncated = steps.size >= MAX_STEPS // 2  # the list may have ended early: search only as far as it is complete
    if truncated:
        end = min(end, float(steps[-1]))
    edges = np.unique(np.concatenate([[0.0], steps[steps < end], [end]]))
    middles = (edges[:-1] + edges[1:]) / 2
    hours, unserved = gpu_hours_at(setup, q, middles * attempts_per_call)
    served = unserved <= 0
    last = len(served) if served.all() else int(np.argmin(served))  # pieces past the first unserved one are dropped
    costs = hours[:last] * setup.gpu_price_per_hour * days_per_month
    return StepCost(edges[: last + 1], costs, open_end=bool(served.all()) and not truncated)


def break_even_regions(api_cost_per_call_month: float, step: StepCost) -> list[Interval]:
    """Calls/day intervals where the self-host cost is at most the API's ``c N`` (c: US$/month per call/day)."""
    lows, highs, costs = step.edges[:-1], step.edges[1:], step.costs
    if api_cost_per_call_month <= 0:
        starts = np.where(costs <= 0, lows, np.inf)
    else:
        starts = np.maximum(lows, costs / api_cost_per_call_month)
    wins = starts <= highs
    intervals: list[list[float]] = []
    for start, end in zip(starts[wins], highs[wins], strict=True):
        if intervals and start <= intervals[-1][1]:
            intervals[-1][1] = float(end)
        else:
            intervals.append([float(start), float(end)])
    end_of_search = float(step.edges[-1])
    return [(start, None if step.open_end and end >= end_of_search else end) for start, end in intervals]


NARROW = 0.05  # a window narrower than 5 % of its volume is a sliver before a step, not a range to plan on


def describe_regions(intervals: list[Interval], unit: str = "calls/day", *, most: int = 3) -> str:
    """One plain sentence: "cheaper from 57.5k to 62k and above 300k calls/day", or "never cheaper" within the search.

    A setup's cost is flat between replicas while the API's grows, so self-hosting often wins only just before each
    step: hundreds of slivers ("from 273k to 273k"). Those are counted as one phrase, with the span they cover; past
    ``most`` wider windows the middle ones are counted, not listed.
    """
    if not intervals:
        return "never cheaper"
    wide = [(a, b) for a, b in intervals if b is None or b - a >= NARROW * max(a, 1.0)]
    narrow = [(a, b) for a, b in intervals if (a, b) not in wide]
    shown = wide if len(wide) <= most + 1 else [*wide[:most], wide[-1]]
    parts = [_window(start, end) for start, end in shown]
    if len(shown) < len(wide):
        hidden = len(wide) - len(shown)
        parts.insert(most, f"{hidden} more window{'s' if hidden > 1 else ''}")
    ranges = " and ".join(parts) + ("" if parts == ["at every volume"] else f" {unit}")
    if not narrow:
        return f"cheaper {ranges}"
    slivers = (f"in one narrow window just below {_short(narrow[0][1])} {unit}" if len(narrow) == 1 else
               f"in {len(narrow):,} narrow windows between {_short(narrow[0][0])} and {_short(narrow[-1][1])} "
               f"{unit}, each just before another replica is needed")  # fmt: skip
    return f"cheaper {ranges}, otherwise only {slivers}" if wide else f"cheaper only {slivers}"


def _window(start: float, end: float | None) -> str:
    if end is None:
        return f"above {_short(start)}" if start > 0 else "at every volume"
    return f"from {_short(start)} to {_short(end)}" if start > 0 else f"up to {_short(end)}"


def _short(calls: float) -> str:
    """57,543 -> 57.5k, 300,000 -> 300k, 1,250,000 -> 1.25M: three significant figures are enough to decide."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if calls >= scale:
            return f"{calls / scale:.3g}{suffix}"
    return f"{calls:.3g}"
