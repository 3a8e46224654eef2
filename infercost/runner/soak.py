"""Does the speed hold? A level's stored requests cut into time windows, and a drift test over the windows.

Pure: request records (dicts or RequestRecords) in, plain data out; no I/O, no clocks.

The drift test is Mann-Kendall (Kendall's tau of the per-window median TPOT against time, ``scipy.stats.kendalltau``)
with a Theil-Sen slope (``scipy.stats.theilslopes``). Why these, and not a regression of every request's TPOT on time:
requests that overlap share the server's state, so per-request values are correlated and an ordinary least-squares
p-value over thousands of them claims far more certainty than the data holds. One median per window is close to
independent of the next, is robust to the odd slow request, and a rank test assumes no distribution of latency
(which is skewed). Theil-Sen's slope (the median of pairwise slopes) is the estimator that goes with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

ALPHA = 0.01  # a level is called drifting only past this significance: a soak run has many levels to test
MIN_EFFECT = 0.05  # and only when the fitted change over the run is at least 5% of the median: significance alone
# would call a 10 µs creep "degrading" once there are enough windows, which no one needs to act on
MIN_WINDOWS = 5  # with four points no ordering at all reaches p < 0.05 (2 of 24 orderings are as extreme)


def _get(record: Any, name: str) -> Any:
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def _timeline(records: Sequence[Any]) -> list[tuple[float, Any]]:
    """(seconds since the level started, record), sessions laid end to end: a resumed level's clock (a new process's
    ``perf_counter``) restarts, so each session is offset by the length of the ones before it."""
    by_session: dict[int, list[Any]] = {}
    for r in records:
        by_session.setdefault(int((r.get("session") if isinstance(r, Mapping) else 0) or 0), []).append(r)
    out: list[tuple[float, Any]] = []
    offset = 0.0
    for session in sorted(by_session):
        group = by_session[session]
        start = min(_get(r, "t0") for r in group)
        end = max(_get(r, "t_last") or _get(r, "t0") for r in group)
        out += [(offset + _get(r, "t0") - start, r) for r in group]
        offset += end - start
    return out


def _ms_percentiles(values_s: list[float]) -> tuple[float | None, float | None]:
    if not values_s:
        return None, None
    p50, p95 = np.percentile(np.asarray(values_s) * 1e3, [50, 95])
    return float(p50), float(p95)


def _tpot_s(record: Any) -> float | None:
    n_out = int(_get(record, "n_out") or 0)
    if n_out <= 1:
        return None
    return (_get(record, "t_last") - _get(record, "t_first")) / (n_out - 1)


def _window_tokens(records: list[tuple[float, Any]], lo: float, hi: float) -> float:
    """Output tokens that arrived in [lo, hi): each request's tokens spread evenly from its first to its last."""
    total = 0.0
    for start, r in records:
        first = start + _get(r, "t_first") - _get(r, "t0")
        last = start + _get(r, "t_last") - _get(r, "t0")
        n_out = int(_get(r, "n_out") or 0)
        if last <= first:
            total += n_out if lo <= first < hi else 0
            continue
        overlap = max(0.0, min(hi, last) - max(lo, first))
        total += n_out * overlap / (last - first)
    return total


def over_time(records: Sequence[Any], window_s: float) -> list[dict[str, Any]]:
    """One row per window of ``window_s`` seconds: P50/P95 TTFT and TPOT of the requests sent in it, the output
    tokens/s that arrived in it, and its failures. A window with no completed request has ``None`` latencies."""
    if window_s <= 0:
        raise ValueError("window_s must be positive")
    timeline = [(t, r) for t, r in _timeline(records) if _get(r, "status") != "in_flight"]
    if not timeline:
        return []
    done = [(t, r) for t, r in timeline if _get(r, "status") == "ok"]
    end = max(t + ((_get(r, "t_last") or _get(r, "t0")) - _get(r, "t0")) for t, r in timeline)
    rows = []
    for k in range(max(1, math.ceil(max(t for t, _ in timeline) / window_s + 1e-9))):
        lo, hi = k * window_s, (k + 1) * window_s
        sent = [r for t, r in done if lo <= t < hi]
        ttft = [_get(r, "t_first") - _get(r, "t0") for r in sent]
        tpot = [v for v in map(_tpot_s, sent) if v is not None]
        p50_ttft, p95_ttft = _ms_percentiles(ttft)
        p50_tpot, p95_tpot = _ms_percentiles(tpot)
        span = min(hi, end) - lo
        tokens = _window_tokens(done, lo, hi)
        rows.append({"t_start_s": lo, "t_end_s": hi, "requests": len(sent), "p50_ttft_ms": p50_ttft,
                     "p95_ttft_ms": p95_ttft, "p50_tpot_ms": p50_tpot, "p95_tpot_ms": p95_tpot,
                     "output_throughput": tokens / span if span > 0 else 0.0,
                     "failures": sum(1 for t, r in timeline if lo <= t < hi and _get(r, "status") != "ok")})
    return rows


def drift(windows: Sequence[Mapping[str, Any]], metric: str = "p50_tpot_ms") -> dict[str, Any]:
    """Mann-Kendall trend test of ``metric`` over the windows, with a Theil-Sen slope in the metric's unit per hour.

    ``verdict``: ``degrading`` / ``improving`` (p < ALPHA and a change over the run of at least MIN_EFFECT, by the
    slope's sign), ``steady``, or ``too few windows``."""
    points = [((w["t_start_s"] + w["t_end_s"]) / 2, w[metric]) for w in windows if w.get(metric) is not None]
    out: dict[str, Any] = {"metric": metric, "test": "Mann-Kendall (Kendall's tau vs time), Theil-Sen slope",
                           "windows": len(points), "slope_per_hour": None, "p_value": None}
    if len(points) < MIN_WINDOWS:
        return {**out, "verdict": "too few windows",
                "reason": f"{len(points)} windows with completed requests; the test needs at least {MIN_WINDOWS}"}
    t_s, values = np.array(points).T
    from scipy import stats  # 2.4 s to import: every CLI command (a batch job's own process too) paid it

    slope_per_s = stats.theilslopes(values, t_s).slope
    p_value = stats.kendalltau(t_s, values).pvalue
    p_value = 1.0 if math.isnan(p_value) else float(p_value)  # all windows equal: no trend at all
    median = float(np.median(values))
    change_over_run = slope_per_s * (t_s.max() - t_s.min()) / median if median else 0.0
    drifting = p_value < ALPHA and abs(change_over_run) >= MIN_EFFECT
    verdict = ("degrading" if slope_per_s > 0 else "improving") if drifting else "steady"
    return {**out, "slope_per_hour": float(slope_per_s * 3600),
            "relative_slope_per_hour": float(slope_per_s * 3600 / median) if median else None,
            "change_over_run": float(change_over_run), "p_value": p_value, "verdict": verdict}


def soak_summary(records: Sequence[Any], window_s: float) -> dict[str, Any]:
    """What a level adds to its summary in a soak run: ``over_time`` and ``drift`` (of the per-window median TPOT,
    or TTFT where requests have a single output token)."""
    windows = over_time(records, window_s)
    has_tpot = any(w["p50_tpot_ms"] is not None for w in windows)
    return {"window_s": window_s, "over_time": windows,
            "drift": drift(windows, "p50_tpot_ms" if has_tpot else "p50_ttft_ms")}
