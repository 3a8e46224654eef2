"""A performance model fitted to measured points, to estimate a workload of another token shape.

A measured point holds for the token shape it was measured at (DESIGN.md). To carry it to another shape, the
time of a request is split the way an inference engine spends it:

- TTFT (prefill): a fixed part, a part per input token, and a part per input token per other concurrent request
  (prefills queue behind each other's): ``a + b L + q (c - 1) L``.
- TPOT (one decode step of a batch of ``c`` sequences at mean context ``x = L + O / 2``): reading the weights once,
  a fixed part per sequence, and reading each sequence's KV cache: ``w + s c + k c x``.

Coefficients are fitted by least squares on relative errors (so fast and slow points count alike) and kept
non-negative (no time is negative). Where the points cannot separate a term (all at one input length, one
concurrency, one context), it is left out and a physically motivated assumption, listed in ``assumptions``, takes
its place. Throughput then follows from Little's law in a closed loop: ``c / (TTFT + (O - 1) TPOT)``.
"""

from __future__ import annotations

import itertools
import math
import numbers
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from infercost.costmodel.selfhost import ThroughputPoint
from infercost.errors import InputError


@dataclass(frozen=True)
class MeasuredPoint:
    """One measured (or published) point: a closed loop of ``concurrency`` users at one token shape."""

    concurrency: float
    input_len: float  # tokens per request
    output_len: float  # tokens per request
    request_throughput: float  # requests/s
    mean_ttft_ms: float | None
    mean_tpot_ms: float | None
    p95_ttft_ms: float | None = None
    p95_tpot_ms: float | None = None


@dataclass(frozen=True)
class Term:
    """One part of a time: its feature of (concurrency, input_len, output_len), and the assumption that replaces
    it where the points cannot identify it ("" for a term always fitted)."""

    name: str
    feature: Callable[[NDArray, NDArray, NDArray], NDArray]
    assumption: str = ""


def _context(input_len: NDArray, output_len: NDArray) -> NDArray:
    """Mean tokens in a sequence's KV cache over its decode steps."""
    return input_len + output_len / 2


# In the order they are given up: the first assumption is the least harmful one.
TTFT_TERMS = (
    Term("fixed_ms", lambda c, i, o: np.ones_like(c),
         "prefill time taken as proportional to input length (the points do not separate a fixed part)"),
    Term("queued_ms_per_input_token", lambda c, i, o: (c - 1) * i,
         "TTFT taken as independent of concurrency (the points do not show prefills queueing)"),
    Term("ms_per_input_token", lambda c, i, o: i),
)  # fmt: skip
TPOT_TERMS = (
    Term("ms_per_sequence", lambda c, i, o: c,
         "per-sequence step time taken as proportional to context, i.e. KV-cache reads (the points do not "
         "separate a fixed per-sequence part)"),
    Term("ms_per_sequence_token", lambda c, i, o: c * _context(i, o),
         "step time taken as independent of context (the points do not separate concurrency from context)"),
    Term("weights_ms", lambda c, i, o: np.ones_like(c)),
)  # fmt: skip


def _check_positive(name: str, value: float | None, *, minimum: float = 0.0, optional: bool = False) -> None:
    """A finite number above ``minimum`` (at or above where minimum is 1), else InputError naming the field."""
    if value is None and optional:
        return
    ok = isinstance(value, numbers.Real) and math.isfinite(value) and (value >= 1 if minimum == 1 else value > minimum)
    if not ok:
        raise InputError(name, f"must be a number {'>= 1' if minimum == 1 else '> 0'}, got {value!r}")


def validate_points(points: Sequence[MeasuredPoint]) -> None:
    """Every point must be a possible measurement; raise InputError naming ``points[i].field`` otherwise."""
    if not points:
        raise InputError("points", "need at least one measured point")
    for i, p in enumerate(points):
        _check_positive(f"points[{i}].concurrency", p.concurrency)
        _check_positive(f"points[{i}].input_len", p.input_len)
        _check_positive(f"points[{i}].output_len", p.output_len, minimum=1)
        _check_positive(f"points[{i}].request_throughput", p.request_throughput)
        for name in ("mean_ttft_ms", "mean_tpot_ms", "p95_ttft_ms", "p95_tpot_ms"):
            _check_positive(f"points[{i}].{name}", getattr(p, name), optional=True)
        if p.mean_ttft_ms is None and p.mean_tpot_ms is None:
            raise InputError(f"points[{i}].mean_tpot_ms", "give it or mean_ttft_ms: a request's time cannot be "
                             "split into prefill and decode from throughput alone")  # fmt: skip


def _latencies(p: MeasuredPoint, i: int) -> tuple[float, float]:
    """(TTFT, TPOT) in ms; one that was not measured follows from Little's law, ``c / X = TTFT + (O - 1) TPOT``."""
    e2e_ms = 1000 * p.concurrency / p.request_throughput
    steps = p.output_len - 1
    if p.mean_ttft_ms is not None and p.mean_tpot_ms is not None:
        return p.mean_ttft_ms, p.mean_tpot_ms
    if p.mean_ttft_ms is None:
        ttft, tpot = e2e_ms - steps * p.mean_tpot_ms, p.mean_tpot_ms
    else:
        ttft, tpot = p.mean_ttft_ms, (e2e_ms - p.mean_ttft_ms) / steps if steps else 0.0
    if ttft <= 0 or tpot < 0:
        raise InputError(f"points[{i}].request_throughput", "is too high for the latencies given (Little's law)")
    return ttft, tpot


def _full_rank(design: NDArray) -> bool:
    """Whether the points separate these terms: columns scaled to unit length, then no direction (nearly) lost."""
    norms = np.linalg.norm(design, axis=0)
    if design.shape[0] < design.shape[1] or np.any(norms == 0):
        return False
    return np.linalg.matrix_rank(design / norms, tol=1e-6) == design.shape[1]


def _identifiable(design: NDArray, terms: Sequence[Term]) -> list[int]:
    """Indices of the terms to fit: all if the points separate them, else give up as few as possible, in order."""
    optional = [i for i, term in enumerate(terms) if term.assumption]
    for count in range(len(optional) + 1):
        for dropped in itertools.combinations(optional, count):
            keep = [i for i in range(len(terms)) if i not in dropped]
            if _full_rank(design[:, keep]):
                return keep
    return [i for i, term in enumerate(terms) if not term.assumption]


def _nonnegative_lstsq(design: NDArray, target: NDArray) -> NDArray:
    """Least squares with coefficients >= 0 by a tiny active set: refit without the most negative until none is.
    (Exact NNLS would also re-admit terms; with three terms a dropped one is at zero, which is where it belongs.)"""
    active = list(range(design.shape[1]))
    while True:
        coefficients = np.zeros(design.shape[1])
        coefficients[active] = np.linalg.lstsq(design[:, active], target, rcond=None)[0]
        if coefficients.min() >= 0 or len(active) == 1:
            return np.clip(coefficients, 0, None)
        active.remove(int(np.argmin(coefficients)))


def _features(terms: Sequence[Term], c: NDArray, i: NDArray, o: NDArray) -> NDArray:
    return np.column_stack([term.feature(c, i, o) for term in terms]).astype(float)


def fit_time(terms: Sequence[Term], shapes: NDArray, times_ms: NDArray) -> tuple[dict[str, float], list[str]]:
    """Coefficients of one time (TTFT or TPOT) over shapes (rows: concurrency, input_len, output_len), fitted to
    relative error, and the assumptions made for terms the points cannot identify."""
    design = _features(terms, *shapes.T)
    keep = _identifiable(design, terms)
    weighted = design[:, keep] / times_ms[:, None]  # relative errors: each row divided by its own time
    fitted = np.zeros(len(terms))
    fitted[keep] = _nonnegative_lstsq(weighted, np.ones(len(times_ms)))
    coefficients = {term.name: float(b) for term, b in zip(terms, fitted, strict=True)}
    assumptions = [term.assumption for k, term in enumerate(terms) if k not in keep]
    return coefficients, assumptions


@dataclass(frozen=True)
class PredictedPoint:
    """What the model expects of a closed loop of ``concurrency`` users at one token shape."""

    concurrency: float
    input_len: float
    output_len: float
    request_throughput: float  # requests/s per replica
    output_throughput: float  # output tokens/s per replica
    mean_ttft_ms: float
    mean_tpot_ms: float
    p95_ttft_ms: float | None  # None where no point measured a p95
    p95_tpot_ms: float | None

    def as_throughput_point(self) -> ThroughputPoint:
        """The point as self-host sizing takes it, latencies keyed by their vLLM names."""
        names = ("mean_ttft_ms", "mean_tpot_ms", "p95_ttft_ms", "p95_tpot_ms")
        latency = {name: getattr(self, name) for name in names if getattr(self, name) is not None}
        return ThroughputPoint(self.concurrency, self.request_throughput, self.output_throughput, latency)


def _scaled(value: float, ratio: float | None) -> float | None:
    return None if ratio is None else value * ratio


@dataclass(frozen=True)
class PerformanceModel:
    """Fitted TTFT and TPOT coefficients (ms per unit of each term's feature) and what was assumed."""

    ttft_coefficients: dict[str, float]
    tpot_coefficients: dict[str, float]
    assumptions: list[str] = field(default_factory=list)
    p95_ttft_ratio: float | None = None  # median measured p95 / mean
    p95_tpot_ratio: float | None = None
    efficiency: float = 1.0  # median measured throughput over Little's law's from the measured latencies
    points: int = 0

    def _time_ms(self, terms: Sequence[Term], coefficients: dict[str, float], c: float, i: float, o: float) -> float:
        shape = (np.array([c], dtype=float), np.array([i], dtype=float), np.array([o], dtype=float))
        return float(sum(coefficients[t.name] * t.feature(*shape)[0] for t in terms))

    def predict(self, concurrency: float, input_len: float, output_len: float) -> PredictedPoint:
        """TTFT and TPOT from the fitted terms; throughput from Little's law, ``c / (TTFT + (O - 1) TPOT)``."""
        _check_positive("concurrency", concurrency)
        _check_positive("input_len", input_len)
        _check_positive("output_len", output_len, minimum=1)
        shape = (concurrency, input_len, output_len)
        ttft = self._time_ms(TTFT_TERMS, self.ttft_coefficients, *shape)
        tpot = self._time_ms(TPOT_TERMS, self.tpot_coefficients, *shape)
        requests_per_s = self.efficiency * concurrency * 1000 / (ttft + (output_len - 1) * tpot)
        return PredictedPoint(*shape, requests_per_s, requests_per_s * output_len, ttft, tpot,
                              _scaled(ttft, self.p95_ttft_ratio), _scaled(tpot, self.p95_tpot_ratio))  # fmt: skip


def _median_ratio(points: Sequence[MeasuredPoint], p95: str, mean: str) -> float | None:
    """How far the tail sits above the mean where both were measured; carried to predicted points as a ratio."""
    ratios = [getattr(p, p95) / getattr(p, mean) for p in points if getattr(p, p95) and getattr(p, mean)]
    return statistics.median(ratios) if ratios else None


def _efficiency(points: Sequence[MeasuredPoint], latencies: list[tuple[float, float]]) -> float:
    """Measured throughput over Little's law's: below 1 where users idle between requests or requests fail."""
    ratios = [p.request_throughput * (ttft + (p.output_len - 1) * tpot) / (1000 * p.concurrency)
              for p, (ttft, tpot) in zip(points, latencies, strict=True)]  # fmt: skip
    return statistics.median(ratios)


def fit_performance_model(points: Sequence[MeasuredPoint]) -> PerformanceModel:
    """Fit TTFT and TPOT to the points; say what had to be assumed where the points do not identify a term."""
    validate_points(points)
    latencies = [_latencies(p, i) for i, p in enumerate(points)]
    shapes = np.array([(p.concurrency, p.input_len, p.output_len) for p in points], dtype=float)
    ttft_ms, tpot_ms = np.array(latencies, dtype=float).T
    decoding = (shapes[:, 2] > 1) & (tpot_ms > 0)  # TPOT is undefined for a single output token
    if not decoding.any():
        raise InputError("points", "need a point with output_len > 1 and a TPOT to fit decode time")
    ttft_coefficients, ttft_assumed = fit_time(TTFT_TERMS, shapes, ttft_ms)
    tpot_coefficients, tpot_assumed = fit_time(TPOT_TERMS, shapes[decoding], tpot_ms[decoding])
    return PerformanceModel(
        ttft_coefficients=ttft_coefficients,
        tpot_coefficients=tpot_coefficients,
        assumptions=ttft_assumed + tpot_assumed,
        p95_ttft_ratio=_median_ratio(points, "p95_ttft_ms", "mean_ttft_ms"),
        p95_tpot_ratio=_median_ratio(points, "p95_tpot_ms", "mean_tpot_ms"),
        efficiency=_efficiency(points, latencies),
        points=len(points),
    )


@dataclass(frozen=True)
class HoldoutError:
    """One point predicted by a model fitted without it; errors are relative, ``(predicted - measured) / measured``."""

    index: int
    point: MeasuredPoint
    predicted: PredictedPoint
    request_throughput: float
    mean_ttft_ms: float | None  # None where the point did not measure it
    mean_tpot_ms: float | None


def _relative(predicted: float, measured: float | None) -> float | None:
    return None if measured is None else (predicted - measured) / measured


def holdout_errors(points: Sequence[MeasuredPoint]) -> list[HoldoutError]:
    """Leave one out: how well the model predicts each measured point it was not fitted to, which is how well it
    can be trusted at a shape nobody measured."""
    validate_points(points)
    if len(points) < 2:
        raise InputError("points", "need at least two measured points to hold one out")
    errors = []
    for i, held_out in enumerate(points):
        model = fit_performance_model([p for j, p in enumerate(points) if j != i])
        predicted = model.predict(held_out.concurrency, held_out.input_len, held_out.output_len)
        errors.append(HoldoutError(
            i, held_out, predicted,
            _relative(predicted.request_throughput, held_out.request_throughput),
            _relative(predicted.mean_ttft_ms, held_out.mean_ttft_ms),
            _relative(predicted.mean_tpot_ms, held_out.mean_tpot_ms if held_out.output_len > 1 else None),
        ))  # fmt: skip
    return errors


@dataclass(frozen=True)
class HoldoutSummary:
    """Median and largest |relative error| per metric over the held-out points."""

    points: int
    median_abs_error: dict[str, float]
    max_abs_error: dict[str, float]


def summarize_holdout(errors: Sequence[HoldoutError]) -> HoldoutSummary:
    """One line per metric for the comparison page; a metric no held-out point measured is left out."""
    median, largest = {}, {}
    for metric in ("request_throughput", "mean_ttft_ms", "mean_tpot_ms"):
        values = [abs(getattr(e, metric)) for e in errors if getattr(e, metric) is not None]
        if values:
            median[metric], largest[metric] = statistics.median(values), max(values)
    return HoldoutSummary(len(errors), median, largest)
