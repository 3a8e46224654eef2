"""Result files of other benchmark tools, stored as infercost runs (``runs import FILE --format ...``).

Each importer maps a tool's own summary onto vLLM's field names (DESIGN, "Runner metrics"), keeping only what
means the same thing:

- ``vllm``: ``vllm bench serve --save-result`` JSON. Already vLLM's names; with ``--save-detailed`` the per-request
  ``ttfts``, ``itls``, ``input_lens``, ``output_lens`` and ``errors`` become request rows (times relative to t0 = 0).
- ``guidellm``: ``benchmarks.json`` (one entry per benchmark in ``benchmarks``). GuideLLM's
  ``inter_token_latency_ms`` is per request ``(e2e - ttft) / (n - 1)``, i.e. vLLM's TPOT; its
  ``time_per_output_token_ms`` includes the first token, so it is not imported as TPOT. ``request_latency`` is in s.
- ``aiperf``: ``profile_export_aiperf.json``. AIPerf's ``inter_token_latency`` is vLLM's TPOT, its
  ``inter_chunk_latency`` vLLM's ITL, ``request_latency`` the E2EL.

Nothing in a file is executed; a file that is not what ``--format`` says gets an error naming the missing field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infercost import store
from infercost.errors import InputError

MAX_BYTES = 256 * 1024 * 1024
STATS = ("mean", "median", "p90", "p95", "p99")


@dataclass
class Imported:
    model: str
    tool: str
    config: dict[str, Any]
    levels: list[dict[str, Any]]  # vLLM-named summaries, each with "concurrency" or "rate"
    requests: list[list[dict[str, Any]]] = field(default_factory=list)  # per level, where the file has them


def _latency(summary: dict[str, Any], name: str, stats: dict[str, Any] | None, scale: float = 1.0) -> None:
    """Copy mean/median/p90/p95/p99 of one latency (in ms after ``scale``) under vLLM's names."""
    if not isinstance(stats, dict):
        return
    percentiles = stats.get("percentiles") if isinstance(stats.get("percentiles"), dict) else {}
    for stat in STATS:
        value = stats.get(stat, percentiles.get(stat))
        if stat == "median" and value is None:
            value = stats.get("p50", percentiles.get("p50"))
        if stat == "mean" and value is None:
            value = stats.get("avg")
        if isinstance(value, (int, float)):
            summary[f"{stat}_{name}_ms"] = float(value) * scale


# ---- vLLM --------------------------------------------------------------------------------------------------------

VLLM_NUMBERS = ("completed", "failed", "duration", "total_input_tokens", "total_output_tokens", "request_throughput",
                "request_goodput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
                "max_concurrent_requests")


def from_vllm(data: dict[str, Any]) -> Imported:
    _require(data, "completed", "vllm")
    summary = {key: data[key] for key in VLLM_NUMBERS if isinstance(data.get(key), (int, float))}
    summary.update({key: value for key, value in data.items()
                    if key.endswith("_ms") and isinstance(value, (int, float))})
    summary["concurrency"] = data.get("max_concurrency")
    summary["rate"] = data.get("request_rate") if data.get("request_rate") not in (None, "inf", float("inf")) else None
    model = str(data.get("model_id") or data.get("model") or "unknown")
    summary.update(model=model, backend=f"vllm-bench:{data.get('backend', '')}")
    return Imported(model=model, tool="vllm", config={k: data.get(k) for k in ("date", "backend", "num_prompts",
                    "request_rate", "burstiness", "max_concurrency", "tokenizer_id")}, levels=[summary],
                    requests=[_vllm_requests(data)])


def _vllm_requests(data: dict[str, Any]) -> list[dict[str, Any]]:
    ttfts, itls = data.get("ttfts"), data.get("itls")
    if not isinstance(ttfts, list) or not isinstance(itls, list):
        return []
    inputs, outputs, errors = data.get("input_lens") or [], data.get("output_lens") or [], data.get("errors") or []
    rows = []
    for seq, (ttft, gaps) in enumerate(zip(ttfts, itls, strict=False)):
        error = errors[seq] if seq < len(errors) else ""
        gaps = [float(g) for g in gaps or []]
        ok = not error and ttft
        rows.append({"seq": seq, "t0": 0.0, "t_first": float(ttft) if ok else None,
                     "t_last": float(ttft) + sum(gaps) if ok else None, "itl": gaps,
                     "n_in": _at(inputs, seq), "n_in_source": "imported", "n_out": _at(outputs, seq),
                     "n_out_source": "imported", "status": "ok" if ok else "http_error", "error": error or None})
    return rows


def _at(values: list, index: int) -> Any:
    return values[index] if index < len(values) else None


# ---- GuideLLM ----------------------------------------------------------------------------------------------------

GUIDELLM_LATENCIES = {"ttft": ("time_to_first_token_ms", 1.0), "tpot": ("inter_token_latency_ms", 1.0),
                      "e2el": ("request_latency", 1e3)}


def from_guidellm(data: dict[str, Any]) -> Imported:
    benchmarks = _require(data, "benchmarks", "guidellm")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise InputError("benchmarks", "guidellm file has no benchmarks")
    levels = [_guidellm_level(bench) for bench in benchmarks]
    model = _guidellm_model(data, benchmarks[0])
    for level in levels:
        level.update(model=model, backend="guidellm")
    return Imported(model=model, tool="guidellm", config={"metadata": data.get("metadata")}, levels=levels)


def _successful(metrics: dict[str, Any], name: str) -> dict[str, Any] | None:
    entry = metrics.get(name)
    return entry.get("successful") if isinstance(entry, dict) else None


def _guidellm_level(bench: dict[str, Any]) -> dict[str, Any]:
    metrics = bench.get("metrics") or {}
    totals = metrics.get("request_totals") or bench.get("request_totals") or {}
    if not totals and isinstance(bench.get("run_stats"), dict):
        totals = bench["run_stats"].get("requests_made") or {}
    summary: dict[str, Any] = {"completed": totals.get("successful"),
                               "failed": (totals.get("errored") or 0) + (totals.get("incomplete") or 0)}
    for name, (key, scale) in GUIDELLM_LATENCIES.items():
        _latency(summary, name, _successful(metrics, key), scale)
    for ours, theirs in (("request_throughput", "requests_per_second"),
                         ("output_throughput", "output_tokens_per_second"),
                         ("total_token_throughput", "tokens_per_second")):
        stats = _successful(metrics, theirs) or {}
        if isinstance(stats.get("mean"), (int, float)):
            summary[ours] = float(stats["mean"])
    strategy = (bench.get("config") or bench.get("args") or {}).get("strategy") or {}
    summary["concurrency"] = strategy.get("streams") or strategy.get("max_concurrency")
    summary["rate"] = strategy.get("rate")
    duration = bench.get("duration")
    times = (bench.get("start_time"), bench.get("end_time"))
    if duration is None and all(isinstance(t, (int, float)) for t in times):
        duration = times[1] - times[0]
    summary["duration"] = duration
    return summary


def _guidellm_model(data: dict[str, Any], bench: dict[str, Any]) -> str:
    sources = (bench.get("config"), bench.get("args"), data.get("args"), data.get("config"))
    for source in (source or {} for source in sources):
        for key in ("model",):
            if isinstance(source.get(key), str):
                return source[key]
        backend = source.get("backend") or source.get("backend_args") or {}
        if isinstance(backend, dict) and isinstance(backend.get("model"), str):
            return backend["model"]
    return "unknown"


# ---- AIPerf ------------------------------------------------------------------------------------------------------

AIPERF_LATENCIES = {"ttft": "time_to_first_token", "tpot": "inter_token_latency", "itl": "inter_chunk_latency",
                    "e2el": "request_latency"}
AIPERF_SCALARS = {"request_throughput": "request_throughput", "output_throughput": "output_token_throughput",
                  "duration": "benchmark_duration", "completed": "request_count", "total_input_tokens": "total_isl",
                  "total_output_tokens": "total_osl", "failed": "error_request_count"}


def from_aiperf(data: dict[str, Any]) -> Imported:
    _require(data, "time_to_first_token", "aiperf")
    summary: dict[str, Any] = {}
    for name, key in AIPERF_LATENCIES.items():
        _latency(summary, name, data.get(key))
    for ours, theirs in AIPERF_SCALARS.items():
        entry = data.get(theirs)
        if isinstance(entry, dict) and isinstance(entry.get("avg"), (int, float)):
            summary[ours] = entry["avg"]
    summary["failed"] = summary.get("failed") or 0
    config = data.get("input_config") or {}
    loadgen, endpoint = config.get("loadgen") or {}, config.get("endpoint") or {}
    summary["concurrency"] = loadgen.get("concurrency")
    summary["rate"] = loadgen.get("request_rate")
    model = (endpoint.get("model_names") or ["unknown"])[0]
    summary.update(model=model, backend="aiperf")
    return Imported(model=model, tool="aiperf", config={"input_config": config}, levels=[summary])


# ---- storing -----------------------------------------------------------------------------------------------------

IMPORTERS: dict[str, Callable[[dict[str, Any]], Imported]] = {
    "vllm": from_vllm, "guidellm": from_guidellm, "aiperf": from_aiperf}


def _require(data: dict[str, Any], key: str, tool: str) -> Any:
    if key not in data:
        raise InputError(key, f"missing: this does not look like a {tool} result file")
    return data[key]


def read_json(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise InputError("file", f"{path} is not a file")
    if path.stat().st_size > MAX_BYTES:
        raise InputError("file", f"{path} is larger than {MAX_BYTES // 2**20} MiB")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError("file", f"{path} is not UTF-8 JSON: {error}") from None
    if not isinstance(data, dict):
        raise InputError("file", f"{path}: expected a JSON object at the top level")
    return data


def import_file(path: str | Path, fmt: str, *, db_path: str | Path | None = None) -> str:
    """Parse ``path`` as ``fmt`` and store it as a run with one level per benchmark; returns the run id."""
    if fmt not in IMPORTERS:
        raise InputError("format", f"{fmt!r} is not one of {', '.join(IMPORTERS)}")
    imported = IMPORTERS[fmt](read_json(path))
    db = store.connect(db_path)
    try:
        with db:  # one transaction: an import is there whole or not at all, for every reader
            first = imported.levels[0] if imported.levels else {}
            pattern = "rate" if first.get("rate") and not first.get("concurrency") else "concurrency"
            plan = [(idx, 0, pattern, float(level.get("concurrency") or level.get("rate") or 0))
                    for idx, level in enumerate(imported.levels)]
            run_id = store.create_run(db, backend=imported.tool, model=imported.model, source=imported.tool,
                                      config={**imported.config, "imported_from": Path(path).name},
                                      hardware={}, engine={"engine": imported.tool}, status="done", plan=plan)
            for idx, level in enumerate(imported.levels):
                level["pattern"] = pattern
                store.finish_level(db, run_id, idx, 0, level)
                rows = imported.requests[idx] if idx < len(imported.requests) else []
                store.insert_requests(db, [{**row, "run_id": run_id, "idx": idx, "repeat": 0, "phase": "measure",
                                            "session": 0, "n_out_expected": None} for row in rows])
    finally:
        db.close()
    return run_id
