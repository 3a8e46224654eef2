"""Self-host sizing: from measured operating points to replicas, GPU-hours and cost (DESIGN.md, "Cost semantics").

A throughput point is what one replica of one engine on one hardware setup sustained at one concurrency.
The operating point is the feasible point (every SLO metric at or under its limit) with the most requests/s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from infercost.costmodel.scaling import scale_day
from infercost.costmodel.workload import TokenVolumes

Mode = Literal["always_on", "autoscaled", "offline_batch"]


@dataclass(frozen=True)
class ThroughputPoint:
    """One measured (or published, fitted, roofline) point of one replica."""

    concurrency: float
    request_throughput: float  # requests/s per replica
    output_throughput: float | None = None  # output tokens/s per replica
    latency_ms: Mapping[str, float] = field(default_factory=dict)  # e.g. {"p95_ttft_ms": 40, "p95_tpot_ms": 4.8}


@dataclass(frozen=True)
class SelfHostSetup:
    """One engine on one hardware setup, with its price, its SLO and how it is scaled."""

    name: str
    gpu_price_per_hour: float  # US dollars per GPU-hour
    points: Sequence[ThroughputPoint]
    gpus_per_replica: int = 1
    slo: Mapping[str, float] = field(default_factory=dict)  # metric name -> upper limit
    peak_to_average: float = 2.0
    target_utilization: float = 0.8
    mode: Mode = "always_on"
    load_shape: Sequence[float] | None = None  # 24 hourly weights (autoscaled); None: diurnal from peak_to_average
    min_replicas: int = 1
    max_replicas: int | None = None
    cold_start_minutes: float = 10.0  # billed, serving nothing, each time a replica starts
    billing_increment_minutes: int = 60  # the provider bills whole increments, at least one
    deadline_hours: float = 24.0  # offline_batch: the day's volume is done within this


@dataclass(frozen=True)
class SelfHostEstimate:
    """Replicas, GPU-hours and money; ``operating_point`` is None when no point meets the SLO."""

    operating_point: ThroughputPoint | None
    meets_slo: bool
    replicas: int
    gpu_hours_per_day: float
    cost_per_day: float
    cost_per_month: float
    cost_per_million_tokens: float
    warnings: list[str] = field(default_factory=list)
    replicas_per_hour: tuple[int, ...] = ()
    unserved_attempts_per_day: float = 0.0


def is_feasible(point: ThroughputPoint, slo: Mapping[str, float]) -> bool:
    """A point without a metric the SLO names cannot be shown to meet it."""
    return all(metric in point.latency_ms and point.latency_ms[metric] <= limit for metric, limit in slo.items())


def operating_point(points: Sequence[ThroughputPoint], slo: Mapping[str, float]) -> ThroughputPoint | None:
    """The feasible point with the highest request throughput, or None."""
    feasible = [p for p in points if is_feasible(p, slo) and p.request_throughput > 0]
    return max(feasible, key=lambda p: p.request_throughput, default=None)


def size_self_host(setup: SelfHostSetup, volumes: TokenVolumes, *, days_per_month: float = 30) -> SelfHostEstimate:
    """Size one setup for a workload's attempts per day in its scaling mode; no feasible point means no cost."""
    point = operating_point(setup.points, setup.slo)
    if point is None:
        reason = f"no measured point meets the SLO {dict(setup.slo)}" if setup.slo else "no point with throughput > 0"
        return SelfHostEstimate(None, False, 0, 0.0, 0.0, 0.0, 0.0, [reason])
    day = scale_day(setup, point.request_throughput, float(volumes.attempts_per_day))
    per_day = day.gpu_hours_per_day * setup.gpu_price_per_hour
    total_tokens = float(volumes.total_tokens_per_day)
    per_mtok = per_day * 1e6 / total_tokens if total_tokens > 0 else 0.0  # total / 1e6 can underflow to 0
    return SelfHostEstimate(point, True, max(day.replicas_per_hour), day.gpu_hours_per_day, per_day,
                            per_day * days_per_month, per_mtok, list(day.warnings), day.replicas_per_hour,
                            day.unserved_attempts_per_day)  # fmt: skip
