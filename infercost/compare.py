"""Comparisons across models and volumes, as tables for the app's charts (no Streamlit here)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from infercost.costmodel import (
    ThroughputPoint,
    TokenVolumes,
    api_bill,
    operating_point,
    size_self_host,
    token_volumes,
    whatif_costs,
)
from infercost.costmodel.breakeven import describe_regions
from infercost.costmodel.sensitivity import TornadoBar, default_spans, tornado
from infercost.errors import InputError
from infercost.estimate import (
    ResolvedSetup,
    RunLoader,
    price_list,
    prompt_tokens_for,
    resolve_setup,
    workload_for,
)
from infercost.pricing import ApiPrice, find_price
from infercost.profile import Profile
from infercost.performance.profiles import ThroughputProfile

CURVE_POINTS = 60
CURVE_COLUMNS = ["calls_per_day", "cost_per_month", "option"]


def calls_axis(calls_per_day: float, *, points: int = CURVE_POINTS) -> np.ndarray:
    """Log-spaced volumes from 1/100 to 100 times today's, so both cheaper and dearer futures show."""
    return np.geomspace(max(calls_per_day / 100, 1), calls_per_day * 100, points)


def api_cost_curves(profile: Profile, catalog: Sequence[ApiPrice], *, points: int = CURVE_POINTS) -> pd.DataFrame:
    """Cost per month against calls/day for every estimated API model: one vectorized grid per model."""
    prices, wanted = price_list(profile, catalog)
    axis = calls_axis(profile.calls_per_day, points=points)
    frames = []
    for model_id in wanted:
        price = find_price(prices, model_id)
        workload = workload_for(profile, prompt_tokens_for(profile, price.tokenizer).tokens)
        columns = whatif_costs(workload, {"calls_per_day": axis}, price.token_prices())
        frames.append(
            pd.DataFrame({"calls_per_day": axis, "cost_per_month": columns["cost_per_month"], "option": model_id})
        )
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["calls_per_day", "cost_per_month", "option"])
    )


def self_host_cost_curves(
    profile: Profile, *, points: int = CURVE_POINTS, load_run: RunLoader | None = None
) -> pd.DataFrame:
    """Cost per month against calls/day for each self-host setup: replicas step up with volume."""
    axis = calls_axis(profile.calls_per_day, points=points)
    frames = []
    for index, spec in enumerate(profile.self_host):
        cost = self_host_cost_at(profile, resolve_setup(profile, spec, index, load_run))
        monthly = [cost(float(calls)) for calls in axis]
        frames.append(pd.DataFrame({"calls_per_day": axis, "cost_per_month": monthly, "option": spec.name}))
    curves = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CURVE_COLUMNS)
    return curves[np.isfinite(curves["cost_per_month"].astype(float))]


def options_table(result: dict[str, Any]) -> pd.DataFrame:
    """API models and self-host setups as one table: the same money columns, and each row's basis."""
    calls = float(result["profile"]["calls_per_day"])
    rows = [
        {"option": r["model"], "kind": "API", "basis": f"{r['fidelity']} tokens · price {r['price_as_of']}",
         "cost_per_month": r["cost_per_month"], "cost_per_call": r["cost_per_call"],
         "cost_per_million_tokens": r["cost_per_million_tokens"], "gpu_hours_per_day": None, "replicas": None}
        for r in result["api"]
    ] + [
        {"option": r["name"], "kind": f"self-host · {r['mode']}", "basis": _self_host_basis(r),
         "cost_per_month": r["cost_per_month"],
         "cost_per_call": None if r["cost_per_day"] is None else r["cost_per_day"] / calls,
         "cost_per_million_tokens": r["cost_per_million_tokens"], "gpu_hours_per_day": r["gpu_hours_per_day"],
         "replicas": r["replicas"]}
        for r in result["self_host"]
    ]  # fmt: skip
    return pd.DataFrame(rows).sort_values("cost_per_month", na_position="last", ignore_index=True)


def _self_host_basis(row: dict[str, Any]) -> str:
    return row["basis"] + (f" · {row['run_id']}" if row["run_id"] else "")


def api_cost_at(profile: Profile, price: ApiPrice) -> Callable[[float], float]:
    """Monthly API cost as a function of calls/day: an API bill is exactly proportional to volume."""
    workload = workload_for(profile, prompt_tokens_for(profile, price.tokenizer).tokens)
    per_call_month = float(api_bill(workload, price.token_prices()).cost_per_month) / profile.calls_per_day
    return lambda calls: per_call_month * calls


def self_host_cost_at(profile: Profile, resolved: ResolvedSetup) -> Callable[[float], float]:
    """Monthly self-host cost as a function of calls/day (whole replicas step up); infinite where no point fits."""

    def cost(calls: float) -> float:
        scale = calls / profile.calls_per_day
        volumes = TokenVolumes(*(getattr(resolved.volumes, f.name) * scale for f in fields(TokenVolumes)))
        sized = size_self_host(resolved.setup, volumes, days_per_month=profile.days_per_month)
        return sized.cost_per_month if sized.meets_slo else math.inf

    return cost


def break_even_table(result: dict[str, Any]) -> pd.DataFrame:
    """For each self-host setup and API model of an estimate: the calls/day regions where self-hosting costs no more,
    as intervals and as words ("cheaper from 57.5k to 62k and above 300k calls/day")."""
    rows = [
        {"self_host": row["name"], "api_model": model, "regions": regions, "break_even": describe_regions(regions)}
        for row in result["self_host"]
        for model, regions in row.get("break_even", {}).items()
    ]
    return pd.DataFrame(rows, columns=["self_host", "api_model", "regions", "break_even"])


def break_even_spans(result: dict[str, Any], api_model: str, high: float) -> pd.DataFrame:
    """Shaded spans for a chart: one row per region where a setup beats ``api_model``, open ends cut at ``high``."""
    table = break_even_table(result)
    rows = [
        {"self_host": row.self_host, "from": max(start, 1.0), "to": high if end is None else end}
        for row in table[table["api_model"] == api_model].itertuples()
        for start, end in row.regions
    ]
    return pd.DataFrame(rows, columns=["self_host", "from", "to"])


WORKLOAD_INPUTS = ("calls_per_day", "prompt_tokens", "output_tokens", "retry_rate", "cached_prompt_fraction")


def api_tornado(profile: Profile, price: ApiPrice) -> list[TornadoBar]:
    """Which workload inputs move this model's monthly bill most."""
    base_workload = workload_for(profile, prompt_tokens_for(profile, price.tokenizer).tokens)
    base = {name: float(getattr(base_workload, name)) for name in WORKLOAD_INPUTS}

    def monthly(inputs: Mapping[str, float]) -> float:
        workload = dataclasses.replace(base_workload, **inputs)
        return float(api_bill(workload, price.token_prices()).cost_per_month)

    return tornado(monthly, base, default_spans(base))


def self_host_tornado(profile: Profile, resolved: ResolvedSetup) -> list[TornadoBar]:
    """Which inputs move a self-host setup's monthly cost most: volume, token shape, GPU price, throughput."""
    setup = resolved.setup
    point = operating_point(setup.points, setup.slo)
    if point is None:
        return []
    base_workload = workload_for(profile, resolved.volumes.input_tokens_per_day / resolved.volumes.attempts_per_day)
    base = {name: float(getattr(base_workload, name)) for name in ("calls_per_day", "retry_rate")}
    base |= {"gpu_price_per_hour": setup.gpu_price_per_hour, "request_throughput": point.request_throughput}

    def monthly(inputs: Mapping[str, float]) -> float:
        workload = dataclasses.replace(
            base_workload, calls_per_day=inputs["calls_per_day"], retry_rate=inputs["retry_rate"]
        )
        factor = inputs["request_throughput"] / point.request_throughput
        points = [dataclasses.replace(p, request_throughput=p.request_throughput * factor) for p in setup.points]
        varied = dataclasses.replace(setup, gpu_price_per_hour=inputs["gpu_price_per_hour"], points=points)
        return size_self_host(varied, token_volumes(workload), days_per_month=profile.days_per_month).cost_per_month

    return tornado(monthly, base, default_spans(base))


def claim_check(claim_tokens_per_s: float, profile: ThroughputProfile) -> pd.DataFrame:
    """A vendor's "N tokens/s" against what was measured at each concurrency: per user and in aggregate.

    Per-user speed is ``1000 / TPOT`` (or ITL where TPOT is not reported); aggregate is output tokens/s per replica.
    """
    if claim_tokens_per_s <= 0:
        raise InputError("claim", "must be a positive number of tokens/s")
    rows = []
    for point in profile.points:
        tpot = point.get("mean_tpot_ms") or point.get("median_tpot_ms") or point.get("mean_itl_ms")
        rows.append({
            "concurrency": point["concurrency"],
            "per_user_tokens_per_s": 1000 / tpot if tpot else None,
            "aggregate_tokens_per_s": point.get("output_throughput"),
        })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["claim_vs_per_user"] = claim_tokens_per_s / frame["per_user_tokens_per_s"]
    frame["claim_vs_aggregate"] = claim_tokens_per_s / frame["aggregate_tokens_per_s"]
    return frame


def claimed_cost_per_month(profile: Profile, resolved: ResolvedSetup, claim_tokens_per_s: float) -> float:
    """What the workload would cost if one replica really sustained the claimed aggregate output tokens/s."""
    output_per_request = profile.output_tokens + profile.reasoning_tokens
    if output_per_request <= 0:
        raise InputError("output_tokens", "a throughput claim needs output tokens per call > 0")
    claimed = ThroughputPoint(concurrency=0, request_throughput=claim_tokens_per_s / output_per_request)
    setup = dataclasses.replace(resolved.setup, points=[claimed], slo={})
    return size_self_host(setup, resolved.volumes, days_per_month=profile.days_per_month).cost_per_month
