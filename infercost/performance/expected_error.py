"""The engine model's measured error per kind of transfer, as ``bench.prediction_accuracy --write`` stored it.

Every predicted figure carries the error of its kind of transfer: ``shape`` (the setup measured at other token
shapes), ``one_shape`` (a single sweep at one shape), ``gpu`` (the setup measured on other GPUs). The signed
quantiles (p10, p50, p90 of predicted / measured - 1) give the range a predicted cost is shown with.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

EXPECTED_ERROR_PATH = Path(__file__).with_name("data") / "expected_error.json"
CALIBRATIONS_PATH = Path(__file__).with_name("data") / "calibrations.json"
# The errors on the published tables kept out of calibration (vLLM, SGLang, TensorRT-LLM; MoE and dense), per model
# kind and engine: what a prediction calibrated on one of them carries (``bench.held_out_accuracy --write``).
HELD_OUT_ERROR_PATH = Path(__file__).with_name("data") / "held_out_error.json"
# Each held-out setup's calibration on its tables and whether it misses them (``validation.MISFIT``): a roofline
# calibrated on one, or ranking them, fitted 10 of them (8 s) before its first answer (``--write-calibrations``).
HELD_OUT_CALIBRATIONS_PATH = Path(__file__).with_name("data") / "held_out_calibrations.json"


@cache
def expected_errors() -> dict[str, Any]:
    """The stored summary; empty where the harness was never run (predictions then say so)."""
    if not EXPECTED_ERROR_PATH.exists():
        return {}
    return json.loads(EXPECTED_ERROR_PATH.read_text(encoding="utf-8"))


@cache
def stored_calibrations() -> dict[str, Any]:
    """Each bundled setup's calibration on all its tables, keyed by group, with a fingerprint of what it was fitted
    to (a changed table or engine model makes it stale, and it is fitted afresh)."""
    return _json_or_empty(CALIBRATIONS_PATH)


@cache
def stored_held_out_calibrations() -> dict[str, Any]:
    """The same for the held-out setups, each with whether its own calibration misses it."""
    return _json_or_empty(HELD_OUT_CALIBRATIONS_PATH)


def _json_or_empty(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def expected_error(transfer: str) -> dict[str, dict[str, float]]:
    """Per metric: n, median_abs, p90_abs, max_abs, p10, p50, p90 of that transfer; {} if not measured."""
    return expected_errors().get("transfers", {}).get(transfer, {})


@cache
def held_out_errors() -> dict[str, Any]:
    if not HELD_OUT_ERROR_PATH.exists():
        return {}
    return json.loads(HELD_OUT_ERROR_PATH.read_text(encoding="utf-8"))


def held_out_error(kind: str, engine: str, transfer: str) -> dict[str, dict[str, float]]:
    """Per metric, the error of a transfer measured on the held-out tables of one model kind (``dense``/``moe``)
    and engine (``vllm``, ``sglang``, ``tensorrt-llm``); {} if not measured."""
    return held_out_errors().get("slices", {}).get(f"{kind}/{engine}", {}).get(transfer, {})


def priors_beat_another_engine(kind: str, engine: str) -> bool:
    """Whether a model of this kind is better predicted under ``engine`` from that engine's priors alone (the
    held-out ``model`` transfer) than from another engine's calibration of the same weights and GPUs rescheduled as
    it (``engine``): every metric's median |error| smaller, though the move between engines is measured without
    the move between GPUs a roofline adds to it. A MoE model's step costs are its engine's own: held out, MoE
    throughput under SGLang from SGLang's priors 15.4% against 42.6% from another engine's calibration."""
    priors, moved = held_out_error(kind, engine, "model"), held_out_error(kind, engine, "engine")
    metrics = ("request_throughput", "mean_ttft_ms", "mean_tpot_ms")
    if not all(metric in priors and metric in moved for metric in metrics):
        return False
    return all(priors[metric]["median_abs"] < moved[metric]["median_abs"] for metric in metrics)


def compounded(first: dict[str, dict[str, float]], second: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The error of two moves made one after the other (another engine's calibration, from other GPUs), taken as
    independent: a prediction is ``measured × (1 + e1)(1 + e2)``, so their log medians add and the log distances
    from median to p10 and to p90 add in quadrature. Per metric both measured; {} if either was not."""
    out = {}
    for metric in first.keys() & second.keys():
        a, b = first[metric], second[metric]
        if not all(key in row for row in (a, b) for key in ("p10", "p50", "p90")):
            continue
        center = math.log1p(a["p50"]) + math.log1p(b["p50"])

        def spread(q: str, a: dict[str, float] = a, b: dict[str, float] = b) -> float:
            return math.hypot(math.log1p(a[q]) - math.log1p(a["p50"]), math.log1p(b[q]) - math.log1p(b["p50"]))

        out[metric] = {"p10": math.expm1(center - spread("p10")), "p50": math.expm1(center),
                       "p90": math.expm1(center + spread("p90"))}  # fmt: skip
    return out


def error_phrase(row: dict[str, float]) -> str:
    """How far off one metric's predictions were, in words: the median |error| where it was measured, and the
    p10..p90 of the signed error (a compounded error has only the quantiles: its median is the signed one)."""
    band = f"p10 {row['p10']:+.0%}, p90 {row['p90']:+.0%}"
    if "median_abs" in row:
        return f"off by a median {row['median_abs']:.0%} ({band})"
    return f"off by {row['p50']:+.0%} at the median ({band})"
