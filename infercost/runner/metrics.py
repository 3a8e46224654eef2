"""``calculate_metrics``: request records in, vLLM-named summary out. Pure: no I/O, no clocks.

Meanings follow vLLM's serving benchmark (DESIGN.md, "Runner metrics"): TTFT is the first token-bearing chunk
minus t0, E2EL the last one minus t0, TPOT ``(E2EL - TTFT) / (n_out - 1)`` per request, ITL the pooled gaps
between chunks, and throughputs divide by the wall time from the first send to the last completion.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

PERCENTILES = (50, 90, 95, 99)
LATENCIES = ("ttft", "tpot", "itl", "e2el")


def _get(record: Any, name: str) -> Any:
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def _stats(name: str, values_s: Sequence[float]) -> dict[str, float]:
    """mean, median, std and percentiles in ms; zeros when there is nothing to summarise (as vLLM does)."""
    ms = np.asarray(values_s, dtype=float) * 1e3 if len(values_s) else np.zeros(1)
    out = {f"mean_{name}_ms": float(ms.mean()), f"median_{name}_ms": float(np.median(ms)),
           f"std_{name}_ms": float(ms.std())}
    out.update({f"p{p}_{name}_ms": float(np.percentile(ms, p)) for p in PERCENTILES})
    return out


def _duration(records: Iterable[Any]) -> float:
    """First send to last completion, summed over sessions: a resumed level does not count the time it was down."""
    spans: dict[int, list[float]] = {}
    for r in records:
        end = _get(r, "t_last") or _get(r, "t0")
        span = spans.setdefault(_session(r), [_get(r, "t0"), end])
        span[0], span[1] = min(span[0], _get(r, "t0")), max(span[1], end)
    return sum(end - start for start, end in spans.values())


def _session(record: Any) -> int:
    try:
        return int(_get(record, "session") or 0)
    except (KeyError, AttributeError):
        return 0


def calculate_metrics(records: Sequence[Any], *, slo_ms: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Summarise one level's measured requests (dicts or RequestRecords).

    ``slo_ms`` (e.g. ``{"ttft": 200, "tpot": 50}``) adds ``request_goodput``: requests meeting every limit per s.
    """
    done = [r for r in records if _get(r, "status") == "ok"]
    failures = Counter(_get(r, "status") for r in records if _get(r, "status") != "ok")
    duration = _duration(records) if records else 0.0
    ttft = [_get(r, "t_first") - _get(r, "t0") for r in done]
    e2el = [_get(r, "t_last") - _get(r, "t0") for r in done]
    n_out = [int(_get(r, "n_out") or 0) for r in done]
    n_in = [int(_get(r, "n_in") or 0) for r in done]
    tpot = [(e - t) / (n - 1) for e, t, n in zip(e2el, ttft, n_out, strict=True) if n > 1]
    itl = [gap for r in done for gap in _get(r, "itl")]
    per = (lambda x: x / duration) if duration > 0 else (lambda x: 0.0)
    summary: dict[str, Any] = {
        "completed": len(done), "failed": sum(failures.values()), "failures": dict(failures),
        "duration": duration, "total_input_tokens": sum(n_in), "total_output_tokens": sum(n_out),
        "request_throughput": per(len(done)), "output_throughput": per(sum(n_out)),
        "total_token_throughput": per(sum(n_in) + sum(n_out)),
        # Little's law: how many requests were in flight on average, i.e. how many streams were kept busy
        "mean_concurrency": per(sum(_get(r, "t_last") - _get(r, "t0") for r in done)),
        "output_len_mismatch": sum(1 for r in done if _get(r, "n_out_expected") not in (None, _get(r, "n_out"))),
    }
    if slo_ms:
        good = sum(_meets(t, e, n, slo_ms) for t, e, n in zip(ttft, e2el, n_out, strict=True))
        summary["request_goodput"] = per(good)
    for name, values in zip(LATENCIES, (ttft, tpot, itl, e2el), strict=True):
        summary.update(_stats(name, values))
    speeds = [1 / t for t in tpot if t > 0]  # per-user tokens/s, always reported beside the aggregate
    summary["mean_user_tokens_per_s"] = float(np.mean(speeds)) if speeds else 0.0
    summary["median_user_tokens_per_s"] = float(np.median(speeds)) if speeds else 0.0
    summary["p5_user_tokens_per_s"] = float(np.percentile(speeds, 5)) if speeds else 0.0
    return summary


SHAPE_TOLERANCE = 0.2  # a mean token count this far from the one asked for is another shape, not noise


def counted_per_request(levels: Iterable[Mapping[str, Any]], what: str) -> list[float] | None:
    """The ``what`` ("input"/"output") tokens per request the server counted, one value per completed level (level
    summaries, as ``calculate_metrics`` gives them); None where a completed level did not count them (an imported
    run), so a caller falls back to the lengths asked for rather than mix the two."""
    done = [lv for lv in levels if lv.get("completed")]
    total = f"total_{what}_tokens"
    if any(lv.get(total) is None for lv in done):
        return None
    return [lv[total] / lv["completed"] for lv in done]


def shape_warnings(levels: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the server processed another token shape than the sweep asked for (its usage counts the prompt with its
    own tokenizer, or it stops early): the run then measures that shape, not the one it is labelled with.

    ``levels`` are level summaries (``calculate_metrics`` plus ``input_len`` / ``output_len``, the lengths asked for);
    an input-length sweep asks for several lengths on purpose and is not checked on input.
    """
    found = []
    for asked_key, total_key, what in (("input_len", "total_input_tokens", "input"),
                                       ("output_len", "total_output_tokens", "output")):  # fmt: skip
        checked = [lv for lv in levels if lv.get("completed") and lv.get(asked_key) and lv.get(total_key) is not None
                   and not (what == "input" and lv.get("input_lengths"))]  # an imported run may not count tokens
        if not checked:
            continue
        asked = float(checked[0][asked_key])
        if what == "input" and checked[0].get("mixed"):  # short and long prompts: their expected mean
            short, long, fraction = checked[0]["mixed"]
            asked = short * (1 - fraction) + long * fraction
        got = float(np.mean([lv[total_key] / lv["completed"] for lv in checked]))
        if abs(got - asked) > SHAPE_TOLERANCE * asked:
            found.append(f"asked for {asked:,.0f} {what} tokens per request, the server counted {got:,.0f} on "
                         f"average: the run measures {got:,.0f} {what} tokens, not the {asked:,.0f} it is labelled "
                         "with")
    return found


def _meets(ttft_s: float, e2el_s: float, n_out: int, slo_ms: Mapping[str, float]) -> bool:
    values = {"ttft": ttft_s * 1e3, "e2el": e2el_s * 1e3,
              "tpot": (e2el_s - ttft_s) / (n_out - 1) * 1e3 if n_out > 1 else 0.0}
    return all(values[name] <= limit for name, limit in slo_ms.items() if name in values)


def combine_repeats(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Several repeats of one level: the median of each number, and its spread (min, max) across repeats."""
    if len(summaries) == 1:
        return {**summaries[0], "repeats": 1}
    combined: dict[str, Any] = {"repeats": len(summaries), "spread": {}}
    for key, value in summaries[0].items():
        values = [s.get(key) for s in summaries]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and all(
                isinstance(v, (int, float)) for v in values):
            combined[key] = float(np.median(values))
            combined["spread"][key] = [float(min(values)), float(max(values))]
        else:
            combined[key] = value
    return combined


def ttft_by_input_length(records: Sequence[Any], input_lengths: Sequence[int]) -> dict[str, Any]:
    """TTFT against input length, and the least-squares line through it: ``ttft_ms = overhead_ms + n_in / rate``.

    A request's asked-for length is ``input_lengths[seq % len]`` (how the sweep builds them); x is the median of
    the counted ``n_in`` of that group (a real tokenizer does not give exactly the asked-for count), y its median
    TTFT (robust to the odd slow request). The slope is prefill time per token: ``prefill_tokens_per_s`` is its
    inverse, the intercept the fixed overhead (network, scheduling, the first decode step)."""
    groups: dict[int, list[Any]] = {}
    for r in records:
        if _get(r, "status") == "ok":
            groups.setdefault(input_lengths[int(_get(r, "seq")) % len(input_lengths)], []).append(r)
    points = [{"input_len": length, "n_in": float(np.median([int(_get(r, "n_in") or length) for r in group])),
               "requests": len(group),
               "p50_ttft_ms": float(np.median([(_get(r, "t_first") - _get(r, "t0")) * 1e3 for r in group])),
               "p95_ttft_ms": float(np.percentile([(_get(r, "t_first") - _get(r, "t0")) * 1e3 for r in group], 95))}
              for length, group in sorted(groups.items())]
    out: dict[str, Any] = {"points": points, "prefill_tokens_per_s": None, "overhead_ms": None, "r2": None}
    if len({p["n_in"] for p in points}) < 2:
        return {**out, "reason": "needs completed requests at two or more input lengths"}
    x = np.array([p["n_in"] for p in points])
    y = np.array([p["p50_ttft_ms"] for p in points])
    slope_ms, overhead_ms = np.polyfit(x, y, 1)
    residual = y - (slope_ms * x + overhead_ms)
    spread = float(((y - y.mean()) ** 2).sum())
    return {**out, "prefill_tokens_per_s": 1e3 / slope_ms if slope_ms > 0 else None,
            "ms_per_input_token": float(slope_ms), "overhead_ms": float(overhead_ms),
            "r2": 1 - float((residual ** 2).sum()) / spread if spread > 0 else None}
