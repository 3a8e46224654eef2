"""Fit the engine simulation's step costs to measured or published points, and predict any load from them.

A setup (one model, engine and dtype on one replica's GPUs) has four step-cost coefficients (``engine.FEATURES``):
milliseconds of overhead per step, and how many times slower than the roofline the engine moves bytes, does FLOPs
and handles each decode sequence. The simulation of a closed loop gives every measured figure as a linear function
of them (mean TTFT and TPOT directly; throughput through Little's law, ``1 / X = mean E2EL / c``), so the fit is
one non-negative least squares on relative errors. Roofline priors (an engine reaching 75% of bandwidth and 50% of
peak compute, 0.3 ms per step) enter as weak extra rows, so a term the points cannot separate (per-sequence cost
against KV-cache reads, when every point has the same context length) falls back to its prior instead of drifting.

Moving a fitted setup to other hardware keeps the coefficients and recomputes the features (bandwidth, compute,
KV-cache capacity) on the new GPUs: that is the whole of the GPU transfer.

Pure: plain data in, plain data out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import lsq_linear

from infercost.performance.engine import (
    FEATURES,
    WAIT,
    EngineConfig,
    Hardware,
    StepCost,
    Trace,
    kv_capacity_tokens,
    simulate_closed_loop,
    simulate_poisson,
    step_cost,
)
from infercost.performance.roofline import ModelShape

# ms per step, × roofline time of weight reads, of KV-cache reads, of FLOPs; ms per decode sequence
PRIOR = np.array([0.3, 1 / 0.8, 1 / 0.5, 1 / 0.5, 0.01, 1.0])  # the last, wait_ms, is time itself: always 1
FITTED = slice(0, WAIT)
PRIOR_WEIGHT = 0.05  # a prior row counts this much against one relative error of a measured figure
CLIENT_DELAY_MS = 2.0
ITERATIONS = 2  # with a client delay the schedule depends on the coefficients: refit on the refitted schedule


@dataclass(frozen=True)
class Setup:
    """One model, engine and dtype on one replica: what the simulation needs besides the coefficients."""

    shape: ModelShape
    hardware: Hardware
    dtype: str
    engine: EngineConfig
    kv_dtype: str | None = None

    @property
    def cost(self) -> StepCost:
        return step_cost(self.shape, self.hardware, dtype=self.dtype, kv_dtype=self.kv_dtype)

    @property
    def config(self) -> EngineConfig:
        capacity = kv_capacity_tokens(self.shape, self.hardware, dtype=self.dtype, kv_dtype=self.kv_dtype)
        return replace(self.engine, kv_capacity_tokens=min(capacity, self.engine.kv_capacity_tokens))

    def on(self, hardware: Hardware) -> Setup:
        return replace(self, hardware=hardware)


@dataclass(frozen=True)
class Observation:
    """One measured (or published) closed-loop point at one token shape."""

    concurrency: int
    input_len: int
    output_len: int
    request_throughput: float  # requests/s
    mean_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    p95_ttft_ms: float | None = None
    p95_tpot_ms: float | None = None


@dataclass(frozen=True)
class Prediction:
    """What the simulation expects of one load level."""

    load: str  # "concurrency" or "rate"
    level: float
    input_len: int
    output_len: int
    request_throughput: float
    output_throughput: float
    mean_ttft_ms: float
    p95_ttft_ms: float
    mean_tpot_ms: float
    p95_tpot_ms: float
    mean_e2el_ms: float
    p95_e2el_ms: float
    saturated: bool = False  # open loop above capacity: latencies grow without bound

    def as_dict(self) -> dict[str, float | bool]:
        return {self.load: self.level, "request_throughput": self.request_throughput,
                "output_throughput": self.output_throughput, "mean_ttft_ms": self.mean_ttft_ms,
                "p95_ttft_ms": self.p95_ttft_ms, "mean_tpot_ms": self.mean_tpot_ms, "p95_tpot_ms": self.p95_tpot_ms,
                "mean_e2el_ms": self.mean_e2el_ms, "p95_e2el_ms": self.p95_e2el_ms}  # fmt: skip


@dataclass(frozen=True)
class Calibration:
    """Fitted coefficients (one per ``engine.FEATURES``) and how the tails sit above the simulated ones."""

    coefficients: NDArray
    points: int
    p95_ttft_scale: float = 1.0  # measured (p95 - mean) over simulated, median over points; 1 where none measured
    p95_tpot_scale: float = 1.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(FEATURES, map(float, self.coefficients), strict=True))


def _closed_loop(setup: Setup, coefficients: NDArray, concurrency: int, input_len: int, output_len: int) -> Trace:
    return simulate_closed_loop(setup.cost, setup.config, coefficients, concurrency=concurrency,
                                input_len=input_len, output_len=output_len, client_delay_ms=CLIENT_DELAY_MS)  # fmt: skip


def _rows(trace: Trace, obs: Observation) -> list[tuple[NDArray, float]]:
    """(features, measured value) pairs, each to be matched in relative terms."""
    mean = trace.mean_features()
    cycle = mean["e2el"] + np.eye(len(FEATURES))[WAIT] * CLIENT_DELAY_MS  # a user's request, then its delay
    rows = [(cycle, 1000.0 * obs.concurrency / obs.request_throughput)]
    if obs.mean_ttft_ms:
        rows.append((mean["ttft"], obs.mean_ttft_ms))
    if obs.mean_tpot_ms and obs.output_len > 1:
        rows.append((mean["tpot"], obs.mean_tpot_ms))
    return rows


def fit(setup: Setup, observations: Sequence[Observation]) -> Calibration:
    """Coefficients that make the simulation reproduce the observations, in relative terms, near the priors."""
    if not observations:
        raise ValueError("need at least one observation to calibrate")
    coefficients = PRIOR
    for _ in range(ITERATIONS):
        traces = [_closed_loop(setup, coefficients, o.concurrency, o.input_len, o.output_len) for o in observations]
        coefficients = _solve(traces, observations)
    scales = _tail_scales(traces, observations, coefficients)
    return Calibration(coefficients, len(observations), *scales)


def _solve(traces: Sequence[Trace], observations: Sequence[Observation]) -> NDArray:
    """Non-negative least squares on relative errors, with the priors as weak extra rows."""
    design, target = [], []
    for trace, obs in zip(traces, observations, strict=True):
        for features, measured in _rows(trace, obs):
            design.append(features[FITTED] / measured)
            target.append(1.0 - features[WAIT] / measured)  # waiting is time already: its coefficient is 1
    prior = PRIOR[FITTED]
    weight = PRIOR_WEIGHT * math.sqrt(len(design))
    design.extend(weight * np.eye(len(prior)) / prior)
    target.extend([weight] * len(prior))
    fitted = lsq_linear(np.array(design), np.array(target), bounds=(0, np.inf)).x
    return np.append(fitted, 1.0)


def _tail_scales(traces: Sequence[Trace], observations: Sequence[Observation], coefficients: NDArray) -> tuple[float, float]:
    """How much wider measured tails are than simulated ones (the simulation has no noise of its own)."""

    def scale(metric: str) -> float:
        ratios = []
        for trace, obs in zip(traces, observations, strict=True):
            mean_ms, p95_ms = getattr(obs, f"mean_{metric}_ms"), getattr(obs, f"p95_{metric}_ms")
            values = getattr(trace, metric) @ coefficients
            spread = float(np.percentile(values, 95) - values.mean())
            if mean_ms and p95_ms and spread > 0.01 * mean_ms:
                ratios.append(max(p95_ms - mean_ms, 0.0) / spread)
        return statistics.median(ratios) if ratios else 1.0

    return scale("ttft"), scale("tpot")


def _summary(trace: Trace, calibration: Calibration, load: str, level: float, input_len: int, output_len: int,
             throughput: float, saturated: bool = False) -> Prediction:  # fmt: skip
    theta = calibration.coefficients

    def mean_p95(metric: str, scale: float) -> tuple[float, float]:
        values = getattr(trace, metric) @ theta
        mean = float(values.mean())
        return mean, mean + scale * float(np.percentile(values, 95) - mean)

    ttft = mean_p95("ttft", calibration.p95_ttft_scale)
    tpot = mean_p95("tpot", calibration.p95_tpot_scale)
    e2el = mean_p95("e2el", 1.0)
    return Prediction(load, level, input_len, output_len, throughput, throughput * output_len, ttft[0], ttft[1],
                      tpot[0], tpot[1], e2el[0], e2el[1], saturated)  # fmt: skip


def predict_concurrency(setup: Setup, calibration: Calibration, concurrency: int, input_len: int,
                        output_len: int) -> Prediction:  # fmt: skip
    """A closed loop of ``concurrency`` users; throughput by Little's law over the simulated latencies."""
    trace = _closed_loop(setup, calibration.coefficients, concurrency, input_len, output_len)
    e2el_ms = float(trace.e2el.mean(axis=0) @ calibration.coefficients)
    return _summary(trace, calibration, "concurrency", concurrency, input_len, output_len,
                    1000.0 * concurrency / (e2el_ms + CLIENT_DELAY_MS))  # fmt: skip


def predict_rate(setup: Setup, calibration: Calibration, rate_per_s: float, input_len: int,
                 output_len: int) -> Prediction:  # fmt: skip
    """Poisson arrivals at ``rate_per_s``; above capacity the engine saturates and says so."""
    trace = simulate_poisson(setup.cost, setup.config, calibration.coefficients, rate_per_s=rate_per_s,
                             input_len=input_len, output_len=output_len)  # fmt: skip
    duration_s = float(trace.duration @ calibration.coefficients) / 1000.0
    served = trace.completed / duration_s if duration_s > 0 else rate_per_s
    return _summary(trace, calibration, "rate", rate_per_s, input_len, output_len, min(served, rate_per_s),
                    saturated=served < 0.95 * rate_per_s)  # fmt: skip
