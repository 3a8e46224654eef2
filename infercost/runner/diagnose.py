"""A diagnosis that follows the evidence, in the background article's troubleshooting order.

When numbers disappoint, check in order: (1) inputs: model size, precision, input and output length; (2) hardware:
GPU memory and utilisation, whether the CPU is the bottleneck; (3) concurrency settings and queueing; (4) logs:
errors, retries, timeouts, cache misses; (5) a baseline: the same model through plain inference. Each step says
what the stored run shows (``found``) and what it cannot show (``could_not_check``), never guessing the rest.

``diagnose`` is pure (plain dicts in, a report out); ``diagnose_run`` gathers them from the store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infercost.runner.metrics import counted_per_request

SHAPE_TOLERANCE = 0.2  # input or output length more than 20% off the claim's: not the same test
QUEUEING_TTFT_GROWTH = 2.0  # TTFT at the top level over the lowest one: requests wait for a slot past this


def _load(level: Mapping[str, Any]) -> float:
    return float(level.get("concurrency") or level.get("batch_size") or level.get("rate") or 0)


def _model_key(name: str | None) -> str:
    """``meta-llama/Llama-3.1-8B-Instruct`` and ``llama-3.1-8b-instruct`` are the same model to a person."""
    return re.sub(r"[^a-z0-9.]", "", (name or "").split("/")[-1].lower())


def _step(name: str, title: str, found: list[str], could_not: list[str], **evidence: Any) -> dict[str, Any]:
    return {"step": name, "title": title, "found": found, "could_not_check": could_not, "evidence": evidence}


def _inputs(run: Mapping[str, Any], levels: Sequence[Mapping[str, Any]], against: Mapping[str, Any] | None):
    engine, config = run.get("engine") or {}, run.get("config") or {}
    dtype = engine.get("dtype") or (config.get("options") or {}).get("dtype")
    dtype = None if dtype in (None, "", "auto") else dtype
    (input_len, counted_in), (output_len, counted_out) = (_mean_length(levels, "input"),
                                                          _mean_length(levels, "output"))  # fmt: skip
    shape = {"model": run.get("model"), "dtype": dtype, "input_len": input_len, "output_len": output_len}
    how = "counted" if counted_in and counted_out else "as asked: the run did not count every token"
    found = [f"model {shape['model']}, precision {dtype or 'not reported'}, mean input "
             f"{shape['input_len'] or 0:.0f} tokens, mean output {shape['output_len'] or 0:.0f} tokens ({how})"]
    could_not = [] if dtype else ["the precision the server runs (an OpenAI-compatible API does not report it)"]
    mismatched = sum(lv.get("output_len_mismatch", 0) for lv in levels)
    if mismatched:
        found.append(f"{mismatched} requests returned another output length than was forced")
    if against is None:
        could_not.append("a claim's shape: name a claim or run to compare against (the page's field; --against)")
        return _step("inputs", "Inputs: model, precision, input and output length", found, could_not, run=shape)
    found += _compare_shape(shape, against)
    return _step("inputs", "Inputs: model, precision, input and output length", found, could_not, run=shape,
                 against={k: against.get(k) for k in ("id", "model", "dtype", "input_len", "output_len")})


def _mean_length(levels: Sequence[Mapping[str, Any]], what: str) -> tuple[float | None, bool]:
    """The mean ``what`` ("input"/"output") tokens per request as the server counted them, and True; where a level
    did not count them (a run imported from elsewhere), the length it asked for, and False."""
    counted = counted_per_request(levels, what)
    if counted is not None:
        return (sum(counted) / len(counted) if counted else None), True
    asked = [float(lv[f"{what}_len"]) for lv in levels if lv.get("completed") and lv.get(f"{what}_len")]
    return (sum(asked) / len(asked) if asked else None), False


def _compare_shape(shape: Mapping[str, Any], against: Mapping[str, Any]) -> list[str]:
    notes = []
    if _model_key(shape["model"]) != _model_key(against.get("model")):
        notes.append(f"different model: this run {shape['model']}, the claim {against.get('model')}")
    if shape["dtype"] and against.get("dtype") and str(shape["dtype"]).lower() != str(against["dtype"]).lower():
        notes.append(f"different precision: this run {shape['dtype']}, the claim {against['dtype']}")
    for key in ("input_len", "output_len"):
        ours, theirs = shape[key], against.get(key)
        if ours and theirs and abs(ours / theirs - 1) > SHAPE_TOLERANCE:
            notes.append(f"{key.replace('_', ' ')} differs: {ours:.0f} here against {theirs:.0f} in the claim")
    return notes or ["model, precision and lengths match the claim's as far as both record them"]


def _hardware(run: Mapping[str, Any], levels: Sequence[Mapping[str, Any]], against: Mapping[str, Any] | None):
    fp = run.get("hardware") or {}
    gpus = [g.get("name") for g in fp.get("gpus") or []]
    found = [f"client machine: {fp.get('cpu') or 'unknown CPU'}, {fp.get('cpu_cores_logical') or '?'} logical "
             f"cores; GPUs: {', '.join(map(str, gpus)) or 'none'}"]
    could_not = []
    if against is not None:
        found.append(f"the claim ran on {against.get('hardware') or 'unrecorded hardware'}")
    bound = [_load(lv) for lv in levels if (lv.get("client") or {}).get("client_bound")]
    watched = [lv for lv in levels if lv.get("client")]
    if bound:
        found.append(f"the client set the pace at load {', '.join(f'{b:g}' for b in bound)}: those numbers "
                     "measure the client, not the server")
    elif watched:
        found.append("the client kept up at every level (CPU under a core, event loop on time)")
    else:
        could_not.append("whether the client was the bottleneck (this run predates the client watch)")
    telemetry = [(lv.get("client") or {}).get("gpu") or {} for lv in levels]
    sampled = [t for t in telemetry if t.get("status") == "sampled" and t.get("samples")]
    if sampled:
        found.append("GPU utilisation by level: " + ", ".join(f"{t['mean_util_pct']:.0f}%" for t in sampled)
                     + f"; memory up to {max(t['max_memory_used_gib'] for t in sampled):.1f} GiB")
    else:
        skipped = next((t.get("status") for t in telemetry if t.get("status")), None)
        could_not.append(f"GPU utilisation and memory: {skipped or 'not sampled'} (NVML sees local GPUs only)")
    return _step("hardware", "Hardware: GPU memory and utilisation, is the CPU the bottleneck", found, could_not,
                 fingerprint=fp, client_bound_levels=bound)


def _queueing(levels: Sequence[Mapping[str, Any]]):
    rows = [{"load": _load(lv), "median_ttft_ms": lv.get("median_ttft_ms"), "output_throughput":
             lv.get("output_throughput"), "mean_concurrency": lv.get("mean_concurrency")}
            for lv in sorted(levels, key=_load) if lv.get("completed")]
    if len(rows) < 2:
        return _step("concurrency", "Concurrency and queueing", [], ["TTFT against concurrency: fewer than two "
                                                                      "completed levels"], levels=rows)
    low, high = rows[0], rows[-1]
    growth = (high["median_ttft_ms"] or 0) / low["median_ttft_ms"] if low["median_ttft_ms"] else None
    scaling = (high["output_throughput"] or 0) / low["output_throughput"] if low["output_throughput"] else None
    found = [f"from load {low['load']:g} to {high['load']:g}: median TTFT x{growth or 0:.1f}, "
             f"output throughput x{scaling or 0:.1f}"]
    if growth and growth > QUEUEING_TTFT_GROWTH:
        found.append("TTFT grows with load: requests queue before the engine takes them (a batch or KV-cache "
                     "limit); per-user speed past that point is the queue's, not the engine's")
    short = [r for r in rows if r["mean_concurrency"] and r["mean_concurrency"] < 0.8 * r["load"]]
    if short:
        found.append("fewer streams were busy than asked at load " + ", ".join(f"{r['load']:g}" for r in short)
                     + " (Little's law): the client or the server's connection limit held requests back")
    return _step("concurrency", "Concurrency and queueing", found,
                 ["the server's own batch size and scheduler settings (not visible through its API)"],
                 levels=rows, ttft_growth=growth, throughput_scaling=scaling)


def _logs(levels: Sequence[Mapping[str, Any]]):
    failures: Counter[str] = Counter()
    for lv in levels:
        failures.update(lv.get("failures") or {})
    total = sum(lv.get("completed", 0) + lv.get("failed", 0) for lv in levels)
    found = [f"{sum(failures.values())} of {total} requests failed"
             + (": " + ", ".join(f"{n} {kind}" for kind, n in failures.most_common()) if failures else "")]
    drifting = [f"{_load(lv):g}" for lv in levels if (lv.get("drift") or {}).get("verdict") == "degrading"]
    soaked = [lv for lv in levels if lv.get("drift")]
    if drifting:
        found.append(f"latency degraded over time at load {', '.join(drifting)} (soak drift test)")
    elif soaked:
        found.append("no level degraded over its soak")
    varied = [f"{_load(lv):g}" for lv in levels if (lv.get("consistency") or {}).get("all_identical") is False]
    if varied:
        found.append(f"greedy outputs differed under load {', '.join(varied)}")
    found.append("retries: none (the runner never retries; each failure is one request)")
    could_not = ["prefix-cache hits and misses (not in the stored records)", "the server's own logs"]
    if not soaked:
        could_not.append("drift over time: run with --duration and --windows")
    return _step("logs", "Logs: errors, retries, timeouts, cache misses", found, could_not,
                 failures=dict(failures), timeouts=failures.get("timeout", 0))


def _baseline(run: Mapping[str, Any], levels: Sequence[Mapping[str, Any]], baselines: Sequence[Mapping[str, Any]]):
    if run.get("backend") == "transformers":
        return _step("baseline", "Baseline: the same model through plain inference",
                     ["this run is itself the in-process (plain transformers) baseline"], [])
    same = [b for b in baselines if _model_key(b.get("model")) == _model_key(run.get("model")) and b.get("levels")]
    if not same:
        return _step("baseline", "Baseline: the same model through plain inference", [],
                     [f"no stored in-process run of {run.get('model')}: run bench --backend transformers "
                      f"--model {run.get('model')}"])
    base = max((lv.get("output_throughput") or 0 for lv in same[0]["levels"]), default=0)
    ours = max((lv.get("output_throughput") or 0 for lv in levels), default=0)
    gain = ours / base if base else None
    return _step("baseline", "Baseline: the same model through plain inference",
                 [f"best output throughput {ours:.1f} tokens/s here against {base:.1f} in process (run "
                  f"{same[0]['run_id']}): the engine's gain is x{gain or 0:.1f}"],
                 ["whether the baseline ran on the same hardware (compare the fingerprints)"],
                 baseline_run=same[0]["run_id"], gain=gain)


def diagnose(run: Mapping[str, Any], levels: Sequence[Mapping[str, Any]], *, against: Mapping[str, Any] | None = None,
             baselines: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The five steps, in the article's order. ``run``: ``store.get_run``; ``levels``: ``run_summary``'s levels;
    ``against``: a claim or run as ``{"id", "model", "dtype", "hardware", "input_len", "output_len"}``;
    ``baselines``: in-process runs as ``{"run_id", "model", "levels"}``."""
    steps = [_inputs(run, levels, against), _hardware(run, levels, against), _queueing(levels), _logs(levels),
             _baseline(run, levels, baselines)]
    return {"run_id": run.get("id"), "model": run.get("model"), "backend": run.get("backend"),
            "against": against.get("id") if against else None, "steps": steps}


def diagnose_run(db_path: str | Path | None, run_id: str, against_id: str | None = None) -> dict[str, Any]:
    """Gathers what ``diagnose`` needs: the run, its level summaries, the claim and any in-process baseline."""
    from infercost import store
    from infercost.runner.sweep import run_summary

    db = store.connect(db_path)
    try:
        run = store.get_run(db, run_id)
        others = [r["id"] for r in store.list_runs(db) if r["backend"] == "transformers" and r["id"] != run_id]
    finally:
        db.close()
    baselines = [run_summary(db_path, other) for other in others]
    return diagnose(run, run_summary(db_path, run_id)["levels"], against=_claim(db_path, against_id),
                    baselines=baselines)


def _claim(db_path: str | Path | None, against_id: str | None) -> dict[str, Any] | None:
    if not against_id:
        return None
    from infercost.performance.profiles import find_profile

    profile = find_profile(against_id, db_path)
    return {"id": profile.id, "model": profile.model, "dtype": profile.dtype, "hardware": profile.hardware,
            "input_len": profile.input_len, "output_len": profile.output_len, "basis": profile.basis}
