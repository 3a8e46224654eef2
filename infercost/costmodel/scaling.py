"""How a self-host setup is scaled over a day: GPU-hours per day for a volume, and where that cost steps.

Three modes (DESIGN.md, "Cost semantics"):

- ``always_on``: enough replicas for the peak rate, all day.
- ``autoscaled``: a 24-hour load shape; in every billing increment the whole replicas that the busiest hour of that
  increment needs (at least ``min_replicas``, at most ``max_replicas``; demand above the maximum is reported as
  unserved). Policy: a replica is started ``cold_start_minutes`` *before* the increment that needs it, so it serves
  from the increment's first minute; that head start is billed (rounded up to whole increments) and serves nothing.
- ``offline_batch``: the day's volume run at the operating point's full throughput (no peak headroom: a batch has no
  peak) on as few whole replicas as finish within ``deadline_hours``, each billed whole increments for its cold start
  plus its share of the work.

Every function takes attempts per day as a numpy array, so a whole cost curve is one vectorized pass; each mode's
cost is constant between the volumes ``breakpoints`` returns, which is what makes break-even exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from infercost.errors import InputError

if TYPE_CHECKING:
    from infercost.costmodel.selfhost import SelfHostSetup

HOURS = 24
DEFAULT_PEAK_HOUR = 14  # the diurnal curve peaks mid-afternoon; only the shape, not the clock, moves the cost
MAX_STEPS = 500_000  # cost steps listed at most, per mode and hour: bounds memory where a replica carries little
EPS = 1e-9  # a demand of exactly k replicas' capacity needs k replicas, not k + 1, despite rounding


def diurnal_shape(peak_to_average: float, peak_hour: int = DEFAULT_PEAK_HOUR) -> NDArray[np.float64]:
    """24 hourly weights with mean 1 and max/mean = ``peak_to_average``: a von Mises curve ``exp(k cos(2πΔh/24))``.

    One smooth hump a day, like interactive traffic; ``k`` is found by bisection so the peak matches. Over 24 hourly
    samples max/mean can approach but never reach 24 (all traffic in one hour). Cached: sizing asks for the same
    curve at every volume it tries.
    """
    return _diurnal_shape(float(peak_to_average), int(peak_hour)).copy()


@cache
def _diurnal_shape(peak_to_average: float, peak_hour: int) -> NDArray[np.float64]:
    if not 1 <= peak_to_average < HOURS:
        raise InputError("peak_to_average", f"must be in [1, 24) for a daily load shape, got {peak_to_average!r}")
    cosines = np.cos(2 * np.pi * (np.arange(HOURS) - peak_hour) / HOURS)

    def ratio(kappa: float) -> float:
        weights = np.exp(kappa * (cosines - 1))  # shifted by the max for stability: max is exp(0) = 1
        return 1.0 / weights.mean()

    low, high = 0.0, 1.0
    while ratio(high) < peak_to_average:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if ratio(middle) < peak_to_average else (low, middle)
    weights = np.exp(high * (cosines - 1))
    return weights / weights.mean()


def hourly_weights(setup: SelfHostSetup) -> NDArray[np.float64]:
    """The setup's load shape normalised to mean 1, or the diurnal curve of its ``peak_to_average``."""
    if setup.load_shape is None:
        return diurnal_shape(setup.peak_to_average)
    weights = np.asarray(setup.load_shape, dtype=float)
    return weights / weights.mean()


def peak_factor(setup: SelfHostSetup) -> float:
    """Peak over mean rate: the load shape's own where one is given, else ``peak_to_average``."""
    return float(hourly_weights(setup).max()) if setup.load_shape is not None else setup.peak_to_average


@dataclass(frozen=True)
class Scaling:
    """One day of one setup: replicas running in each hour, what is billed, what could not be served."""

    replicas_per_hour: tuple[int, ...]
    gpu_hours_per_day: float
    unserved_attempts_per_day: float = 0.0
    warnings: list[str] = field(default_factory=list)


# ---- always on -------------------------------------------------------------------------------------------------


def _always_on_replicas(attempts: NDArray, setup: SelfHostSetup, q: float) -> NDArray:
    capacity_per_day = q * setup.target_utilization * 86_400  # attempts/day one replica carries at the peak
    return np.maximum(1, np.ceil(attempts * peak_factor(setup) / capacity_per_day - EPS))


def _always_on_hours(attempts: NDArray, setup: SelfHostSetup, q: float) -> tuple[NDArray, NDArray]:
    replicas = _always_on_replicas(attempts, setup, q)
    return replicas * setup.gpus_per_replica * HOURS, np.zeros_like(attempts)


def _always_on_breakpoints(setup: SelfHostSetup, q: float, high: float) -> NDArray:
    step = q * setup.target_utilization * 86_400 / peak_factor(setup)  # attempts/day per replica
    return step * np.arange(1, min(math.floor(high / step), MAX_STEPS) + 1)


def _always_on_day(attempts: float, setup: SelfHostSetup, q: float) -> Scaling:
    replicas = int(_always_on_replicas(np.array([attempts]), setup, q)[0])
    return Scaling((replicas,) * HOURS, replicas * setup.gpus_per_replica * 24.0)


# ---- autoscaled ------------------------------------------------------------------------------------------------


def _hourly_replicas(attempts: NDArray, setup: SelfHostSetup, q: float) -> tuple[NDArray, NDArray]:
    """(replicas per hour, unserved attempts per day), shape (volumes, 24) and (volumes,)."""
    capacity_per_hour = q * setup.target_utilization * 3600
    demand = np.asarray(attempts, dtype=float)[:, None] * hourly_weights(setup)[None, :] / HOURS  # attempts/hour
    needed = np.ceil(demand / capacity_per_hour - EPS)
    ceiling = math.inf if setup.max_replicas is None else setup.max_replicas
    replicas = np.clip(needed, setup.min_replicas, ceiling)
    unserved = np.maximum(demand - replicas * capacity_per_hour, 0).sum(axis=1)
    return replicas, unserved


def _increment_hours(setup: SelfHostSetup) -> int:
    """Hours per billed block: an increment of an hour or less bills each hour's replicas; a longer one holds the
    block's busiest hour for the whole block."""
    return max(1, setup.billing_increment_minutes // 60)


def _autoscaled_hours(attempts: NDArray, setup: SelfHostSetup, q: float) -> tuple[NDArray, NDArray]:
    replicas, unserved = _hourly_replicas(attempts, setup, q)
    block = _increment_hours(setup)
    per_block = replicas.reshape(len(replicas), HOURS // block, block).max(axis=2)
    starts = np.maximum(per_block - np.roll(per_block, 1, axis=1), 0).sum(axis=1)  # the day repeats: 23h -> 0h
    increment = setup.billing_increment_minutes
    cold_start_hours = math.ceil(setup.cold_start_minutes / increment - EPS) * increment / 60
    replica_hours = per_block.sum(axis=1) * block + starts * cold_start_hours
    return replica_hours * setup.gpus_per_replica, unserved


def _autoscaled_breakpoints(setup: SelfHostSetup, q: float, high: float) -> NDArray:
    """Hour h needs j replicas from attempts/day ``24 j c / w_h`` on (c: one replica's attempts per hour)."""
    capacity_per_hour = q * setup.target_utilization * 3600
    top = math.inf if setup.max_replicas is None else setup.max_replicas
    edges = []
    for weight in hourly_weights(setup):
        if weight > 0:
            step = HOURS * capacity_per_hour / weight
            edges.append(step * np.arange(1, min(math.floor(high / step), top, MAX_STEPS // HOURS) + 1))
    return np.unique(np.concatenate(edges)) if edges else np.array([])


def _autoscaled_day(attempts: float, setup: SelfHostSetup, q: float) -> Scaling:
    replicas, unserved = _hourly_replicas(np.array([attempts]), setup, q)
    hours, _ = _autoscaled_hours(np.array([attempts]), setup, q)
    warnings = []
    if unserved[0] > 0:
        warnings.append(f"{unserved[0]:,.0f} attempts/day exceed max_replicas={setup.max_replicas} and go unserved")
    return Scaling(tuple(int(r) for r in replicas[0]), float(hours[0]), float(unserved[0]), warnings)


# ---- offline batch ---------------------------------------------------------------------------------------------


def _working_minutes(setup: SelfHostSetup) -> float:
    """Minutes of the deadline a replica can work: the cold start comes out of it, and at least a minute (no
    provider bills less) must be left. A deadline of 5e-324 h left 3e-322 minutes, and the replicas needed to finish
    the day's volume in them overflowed to infinity."""
    minutes = setup.deadline_hours * 60 - setup.cold_start_minutes
    if minutes < 1:
        raise InputError("deadline_hours", f"{setup.deadline_hours} h leaves less than a minute of work after a "
                         f"{setup.cold_start_minutes}-minute cold start")  # fmt: skip
    return minutes


def _batch_replicas(attempts: NDArray, setup: SelfHostSetup, q: float) -> NDArray:
    per_replica = q * 60 * _working_minutes(setup)  # attempts one replica finishes within the deadline
    return np.maximum(1, np.ceil(attempts / per_replica - EPS))


def _batch_billed_minutes(attempts: NDArray, setup: SelfHostSetup, q: float) -> tuple[NDArray, NDArray]:
    """(replicas, billed minutes per replica): each works its share at full speed after a billed cold start."""
    replicas = _batch_replicas(attempts, setup, q)
    busy_minutes = attempts / (replicas * q * 60) + setup.cold_start_minutes
    increment = setup.billing_increment_minutes
    billed = np.maximum(1, np.ceil(busy_minutes / increment - EPS)) * increment
    return replicas, np.where(attempts > 0, billed, 0)


def _batch_hours(attempts: NDArray, setup: SelfHostSetup, q: float) -> tuple[NDArray, NDArray]:
    replicas, minutes = _batch_billed_minutes(attempts, setup, q)
    return replicas * minutes / 60 * setup.gpus_per_replica, np.zeros_like(attempts)


def _batch_breakpoints(setup: SelfHostSetup, q: float, high: float) -> NDArray:
    """Replica steps at ``r q W`` (W: working minutes x 60) and billing steps, for r replicas, where the busy minutes
    ``A / (r q 60) + cold start`` reach a whole number m of increments: ``A = r q 60 (m inc - cold start)``."""
    per_replica = q * 60 * _working_minutes(setup)
    increment, cold = setup.billing_increment_minutes, setup.cold_start_minutes
    m = np.arange(1, math.ceil((_working_minutes(setup) + cold) / increment) + 1)
    replica_steps = per_replica * np.arange(1, min(math.floor(high / per_replica), MAX_STEPS // m.size) + 1)
    billing = [(r * q * 60 * (m * increment - cold)) for r in range(1, len(replica_steps) + 2)]
    edges = np.concatenate([replica_steps, *billing])
    return np.unique(edges[(edges > 0) & (edges <= high)])


def _batch_day(attempts: float, setup: SelfHostSetup, q: float) -> Scaling:
    replicas, minutes = _batch_billed_minutes(np.array([attempts]), setup, q)
    r, billed = int(replicas[0]), float(minutes[0])
    running_hours = math.ceil(billed / 60)  # deadline_hours <= 24, so within the day
    per_hour = tuple(r if hour < running_hours else 0 for hour in range(HOURS))
    return Scaling(per_hour, r * billed / 60 * setup.gpus_per_replica)


# ---- registry --------------------------------------------------------------------------------------------------

HoursAt = Callable[[NDArray, "SelfHostSetup", float], tuple[NDArray, NDArray]]
Breakpoints = Callable[["SelfHostSetup", float, float], NDArray]
DayAt = Callable[[float, "SelfHostSetup", float], Scaling]


@dataclass(frozen=True)
class ScalingMode:
    """GPU-hours (and unserved attempts) per day for many volumes; the volumes where they step; one day in detail."""

    hours: HoursAt
    breakpoints: Breakpoints
    day: DayAt


SCALING_MODES: dict[str, ScalingMode] = {
    "always_on": ScalingMode(_always_on_hours, _always_on_breakpoints, _always_on_day),
    "autoscaled": ScalingMode(_autoscaled_hours, _autoscaled_breakpoints, _autoscaled_day),
    "offline_batch": ScalingMode(_batch_hours, _batch_breakpoints, _batch_day),
}


def gpu_hours_at(setup: SelfHostSetup, q: float, attempts_per_day: ArrayLike) -> tuple[NDArray, NDArray]:
    """(GPU-hours per day, unserved attempts per day) for each volume, at request throughput ``q`` per replica."""
    attempts = np.atleast_1d(np.asarray(attempts_per_day, dtype=float))
    return SCALING_MODES[setup.mode].hours(attempts, setup, q)


def step_volumes(setup: SelfHostSetup, q: float, high_attempts: float) -> NDArray:
    """Attempts/day in (0, high] where the setup's daily cost may step; constant strictly between them. Where there
    are more than ``MAX_STEPS``, the list ends early and the cost is known only up to its last entry."""
    return SCALING_MODES[setup.mode].breakpoints(setup, q, high_attempts)


def scale_day(setup: SelfHostSetup, q: float, attempts_per_day: float) -> Scaling:
    return SCALING_MODES[setup.mode].day(attempts_per_day, setup, q)
