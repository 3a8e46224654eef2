"""Comparisons across models and volumes, as tables for the app's charts (no Streamlit here)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from infercost.band import band_prompt_samples  # noqa: F401  (the page imports it from here)
from infercost.costmodel import (
    ThroughputPoint,
    TokenVolumes,
    api_bill,
    operating_point,
    size_self_host,
    token_volumes,
    whatif_costs,
)
from infercost.costmodel.breakeven import describe_regions, self_host_step_cost
from infercost.costmodel.sensitivity import TornadoBar, default_spans, tornado
from infercost.costmodel.workload import MAX_CALLS_PER_DAY
from infercost.errors import InputError
from infercost.estimate import (
    ResolvedSetup,
    RunLoader,
    cost_range_phrase,
    cost_range_text,
    price_list,
    prompt_tokens_for,
    resolve_setup,
    workload_for,
)
from infercost.performance.operating_points import error_scaled
from infercost.performance.profiles import ThroughputProfile
from infercost.pricing import ApiPrice, find_price
from infercost.profile import Profile

CURVE_POINTS = 60
CURVE_COLUMNS = ["calls_per_day", "cost_per_month", "option"]


def calls_axis(calls_per_day: float, *, points: int = CURVE_POINTS) -> np.ndarray:
    """Log-spaced volumes from 1/100 to 100 times today's, so both cheaper and dearer futures show (no further than
    the most calls per day a workload may have)."""
    return np.geomspace(max(calls_per_day / 100, 1), min(calls_per_day * 100, MAX_CALLS_PER_DAY), points)


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
    """Cost per month against calls/day for each self-host setup, drawn exactly: both ends of every cost step (a
    replica or a billing increment added), so a narrow cheaper window shows as it is, not as a grid saw it."""
    axis = calls_axis(profile.calls_per_day, points=points)
    frames = []
    for index, spec in enumerate(profile.self_host):
        resolved = resolve_setup(profile, spec, index, load_run)
        attempts_per_call = float(resolved.volumes.attempts_per_day) / profile.calls_per_day
        step = self_host_step_cost(resolved.setup, attempts_per_call, profile.days_per_month, float(axis[-1]))
        if step is None:
            continue
        lows, highs = np.maximum(step.edges[:-1], axis[0]), np.minimum(step.edges[1:], axis[-1])
        kept = lows < highs
        calls = np.column_stack([lows[kept], highs[kept]]).ravel()
        monthly = np.repeat(step.costs[kept], 2)
        frames.append(pd.DataFrame({"calls_per_day": calls, "cost_per_month": monthly, "option": spec.name}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CURVE_COLUMNS)


def options_table(result: dict[str, Any]) -> pd.DataFrame:
    """API models and self-host setups as one table: money first, then what decides whether to trust it (flags on
    the row itself: a fit error, a missing batch tier, a context overflow, a stale price), the GPU offer and basis."""
    calls = float(result["profile"]["calls_per_day"])
    rows = [
        {"option": r["model"], "cost_per_month": r["cost_per_month"], "range": cost_range_text(r),
         "cost_per_call": r["cost_per_call"], "cost_per_million_tokens": r["cost_per_million_tokens"], "kind": "API",
         "replicas": math.nan, "flags": row_flags(r), "gpu_offer": "",  # no replicas: a blank, not "None"
         "basis": f"{r['fidelity']} tokens · price {r['price_as_of']}"}
        for r in result["api"]
    ] + [
        {"option": r["name"], "cost_per_month": r["cost_per_month"], "range": cost_range_text(r),
         "cost_per_call": None if r["cost_per_day"] is None else r["cost_per_day"] / calls,
         "cost_per_million_tokens": r["cost_per_million_tokens"], "kind": f"self-host · {r['mode']}",
         "replicas": r["replicas"], "flags": row_flags(r), "gpu_offer": offer_label(r), "basis": _self_host_basis(r)}
        for r in result["self_host"]
    ]  # fmt: skip
    return pd.DataFrame(rows).sort_values("cost_per_month", na_position="last", ignore_index=True)


def _self_host_basis(row: dict[str, Any]) -> str:
    return row["basis"] + (f" · {row['run_id']}" if row["run_id"] else "")


def offer_label(row: dict[str, Any]) -> str:
    """"CoreWeave on-demand $2.70/h · 303 d old" for the GPU offer behind a self-host price, or "custom price"."""
    offer = row.get("gpu_offer")
    if not offer:
        return f"custom price ${row['gpu_price_per_hour']:.2f}/h"
    stale = " ⚠" if offer["stale"] else ""
    return f"{offer['provider']} {offer['kind']} ${offer['price_per_hour']:.2f}/h · {offer['age_days']} d old{stale}"


FIT_ERROR = re.compile(r"median error of requests/s: (\d+%)")
FLAG_WORDS = (("no batch tier", "no batch tier"), ("context window", "context overflow"),
              ("long context", "long-context rates"), ("unserved", "unserved demand"),
              ("throughput may differ", "shape differs"), ("not reported", "SLO stand-in"),
              ("proxy", "proxy tokens"))  # fmt: skip


def row_flags(row: dict[str, Any]) -> str:
    """Short badges for what decides whether a row's figure holds, so nothing that matters hides in a note."""
    text = " ".join([*row.get("warnings", []), row.get("basis_note") or ""])
    flags = [badge for word, badge in FLAG_WORDS if word in text]
    if (fit := FIT_ERROR.search(text)) is not None:
        flags.insert(0, f"fit error {fit.group(1)}")
    if row.get("meets_slo") is False:
        flags.insert(0, "no point meets the SLO")
    if (row.get("gpu_offer") or {}).get("stale"):
        flags.append(f"price {row['gpu_offer']['age_days']} d old")
    return " · ".join(f"⚠ {flag}" for flag in flags)


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


@dataclasses.dataclass(frozen=True)
class Claim:
    """A vendor's speed claim and what it was said to be measured on; an empty or zero field: the vendor did not say."""

    tokens_per_s: float
    model: str = ""
    gpu: str = ""
    gpus: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


SHAPE_TOLERANCE = 0.25  # a token length within 25 % of the claim's is taken as the same shape


def claim_differences(claim: Claim, profile: ThroughputProfile) -> list[str]:
    """Where the profile was measured on something else than the claim names (model, GPUs, token lengths)."""
    found = []
    model = profile.model.split("/")[-1].lower()
    if claim.model.strip() and claim.model.strip().split("/")[-1].lower() not in model:
        found.append(f"the model ({profile.model}, not {claim.model.strip()})")
    if claim.gpu and claim.gpu.lower() != profile.hardware.lower():
        found.append(f"the GPU ({profile.hardware}, not {claim.gpu})")
    if claim.gpus and claim.gpus != profile.gpus_per_replica:
        found.append(f"the GPU count ({profile.gpus_per_replica}, not {claim.gpus})")
    for said, measured, what in ((claim.input_tokens, profile.input_len, "input"),
                                 (claim.output_tokens, profile.output_len, "output")):  # fmt: skip
        if said and measured and abs(measured - said) > SHAPE_TOLERANCE * said:
            found.append(f"the {what} length ({measured:,.0f} tokens, not {said:,})")
    return found


def claim_sentence(claim: Claim, check: pd.DataFrame, profile: ThroughputProfile) -> str:
    """One plain answer: which reading of the claim (per user or in aggregate) this profile supports, and whether the
    comparison is like for like. ``check`` is ``claim_check`` without the points that lack either speed."""
    if check.empty:
        return f"*{profile.name}* reports no per-user speed, so the claim cannot be placed against it."
    top_user = check.loc[check["per_user_tokens_per_s"].idxmax()]
    top_total = check.loc[check["aggregate_tokens_per_s"].idxmax()]
    fits_user = claim.tokens_per_s <= 1.1 * top_user["per_user_tokens_per_s"]
    fits_total = claim.tokens_per_s <= 1.1 * top_total["aggregate_tokens_per_s"]
    speed = f"{claim.tokens_per_s:,.0f} tokens/s"
    if fits_user:
        answer = f"Yes: {speed} is within what one user gets on this setup ({top_user['per_user_tokens_per_s']:,.0f})."
    elif fits_total:
        at = check[check["aggregate_tokens_per_s"] >= claim.tokens_per_s / 1.1].iloc[0]
        answer = (f"Only as a total over many users: this setup serves {speed} at concurrency {at['concurrency']:g}, "
                  f"where each user gets about {at['per_user_tokens_per_s']:,.0f} tokens/s; no single user sees "
                  f"more than {top_user['per_user_tokens_per_s']:,.0f}.")
    else:
        answer = (f"No: {speed} is {claim.tokens_per_s / top_total['aggregate_tokens_per_s']:,.1f}× the most this "
                  f"setup serves in total ({top_total['aggregate_tokens_per_s']:,.0f} tokens/s) and "
                  f"{claim.tokens_per_s / top_user['per_user_tokens_per_s']:,.0f}× its best per-user speed.")
    differences = claim_differences(claim, profile)
    if differences:
        answer += (f" Not like for like: *{profile.name}* differs from the claim in " + ", ".join(differences)
                   + "; pick a profile closer to what the vendor measured.")
    elif not (claim.model.strip() or claim.gpu or claim.input_tokens):
        answer += " Say which model, GPUs and token lengths the vendor meant to check it like for like."
    return answer


def _per_user_tokens_per_s(point: ThroughputPoint) -> float | None:
    latency = point.latency_ms
    names = ("mean_tpot_ms", "median_tpot_ms", "p95_tpot_ms", "mean_itl_ms")
    tpot = next((latency[name] for name in names if latency.get(name)), None)
    return 1000 / tpot if tpot else None


def claim_readings(profile: Profile, resolved: ResolvedSetup, claim_tokens_per_s: float) -> pd.DataFrame:
    """Replicas and monthly cost of this workload as the points say, and if the claim held, read both ways.

    As a per-user speed: every request at the operating point's concurrency decodes at the claimed tokens/s, so
    requests/s scale by claim / the point's own per-user speed. As aggregate throughput: one replica emits the
    claimed output tokens/s, so requests/s = claim / output tokens per request. Each row says its basis.
    """
    output_per_request = profile.output_tokens + profile.reasoning_tokens
    if output_per_request <= 0:
        raise InputError("output_tokens", "a throughput claim needs output tokens per call > 0")
    setup = resolved.setup
    point = operating_point(setup.points, setup.slo)
    measured_word = resolved.basis.basis
    rows = [_reading(f"as {measured_word}", setup, profile, resolved, point, f"{measured_word} operating point")]
    per_user = None if point is None else _per_user_tokens_per_s(point)
    if point is not None and per_user:
        scaled = dataclasses.replace(point, request_throughput=point.request_throughput * claim_tokens_per_s / per_user)
        basis = (f"claim as {claim_tokens_per_s:,.0f} tokens/s per user at concurrency {point.concurrency:g} "
                 f"(vs {per_user:,.0f})")
        rows.append(_reading("if the claim held, per user", setup, profile, resolved, scaled, basis))
    aggregate = ThroughputPoint(concurrency=0, request_throughput=claim_tokens_per_s / output_per_request)
    basis = f"claim as {claim_tokens_per_s:,.0f} output tokens/s per replica ÷ {output_per_request:,.0f} tokens/request"
    rows.append(_reading("if the claim held, aggregate", setup, profile, resolved, aggregate, basis))
    return pd.DataFrame(rows)


def _reading(name: str, setup: Any, profile: Profile, resolved: ResolvedSetup, point: ThroughputPoint | None,
             basis: str) -> dict[str, Any]:  # fmt: skip
    if point is None:
        return {"reading": name, "requests_per_s": None, "calls_per_day_per_replica": None, "replicas": None,
                "cost_per_month": None, "basis": "no point meets the SLO"}  # fmt: skip
    sized = size_self_host(dataclasses.replace(setup, points=[point], slo={}), resolved.volumes,
                           days_per_month=profile.days_per_month)  # fmt: skip
    attempts_per_call = float(resolved.volumes.attempts_per_day) / profile.calls_per_day
    peak_attempts = point.request_throughput * setup.target_utilization * 86_400 / setup.peak_to_average
    per_replica = peak_attempts / attempts_per_call
    return {"reading": name, "requests_per_s": point.request_throughput, "calls_per_day_per_replica": per_replica,
            "replicas": sized.replicas, "cost_per_month": sized.cost_per_month, "basis": basis}  # fmt: skip


def band_verdict(bill: float, band: Mapping[str, float], *, self_host: bool = False) -> str:
    """Whether the deterministic bill lies inside the band's P10–P90 (to rounding), and why not where it does not."""
    if band["p10"] * (1 - 1e-9) <= bill <= band["p90"] * (1 + 1e-9):
        return f"The deterministic bill (${bill:,.0f}) lies inside the P10–P90 band."
    side = "below" if bill < band["p10"] else "above"
    why = ("it sizes the fleet on the predicted throughput; the band draws the prediction's measured error and each "
           "day's volume" if self_host else "it prices the mean prompt length you entered, the band draws each "
           "call's own length (and long-context rates apply per call)")  # fmt: skip
    return f"The deterministic bill (${bill:,.0f}) lies {side} the P10–P90 band: {why}."


# --- the same weights: one open model's API offers beside its self-hosted setups ------------------------------------


def _step_costs(setup: Any, attempts_per_call: float, days_per_month: float, axis: np.ndarray) -> np.ndarray:
    """A setup's monthly cost at each volume of ``axis``, from its exact cost steps; NaN where no point serves it."""
    step = self_host_step_cost(setup, attempts_per_call, days_per_month, float(axis[-1]))
    if step is None:
        return np.full(len(axis), np.nan)
    piece = np.searchsorted(step.edges, axis, side="left") - 1  # piece i is (edges[i], edges[i + 1]]
    inside = (piece >= 0) & (piece < len(step.costs))
    return np.where(inside, step.costs[np.clip(piece, 0, len(step.costs) - 1)], np.nan)


def self_host_band_curves(profile: Profile, *, points: int = 3 * CURVE_POINTS,
                          load_run: RunLoader | None = None) -> pd.DataFrame:  # fmt: skip
    """Each predicted setup's P10 and P90 monthly cost against calls/day: its points erred as the p10 and p90 of
    their kind of transfer's measured error, as ``cost_per_month_range`` is at today's volume. Measured setups have no
    band; an end is NaN where, so erring, no point would meet the SLO."""
    axis = calls_axis(profile.calls_per_day, points=points)
    frames = []
    for index, spec in enumerate(profile.self_host):
        resolved = resolve_setup(profile, spec, index, load_run)
        error = resolved.basis.expected_error
        if not error:
            continue
        attempts_per_call = float(resolved.volumes.attempts_per_day) / profile.calls_per_day
        low, high = (_step_costs(dataclasses.replace(resolved.setup, points=error_scaled(resolved.setup.points, error,
                                                                                         optimistic=optimistic)),
                                 attempts_per_call, profile.days_per_month, axis)
                     for optimistic in (True, False))  # fmt: skip
        frames.append(pd.DataFrame({"calls_per_day": axis, "low": low, "high": high, "option": spec.name}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["calls_per_day", "low", "high",
                                                                                     "option"])  # fmt: skip


def same_weights_table(result: dict[str, Any], matches: Mapping[str, str]) -> pd.DataFrame:
    """The *Same weights* table: every option as ``options_table`` has it, with how each API offer's weights match
    the model's (``exact``, or ``same_architecture``: another checkpoint of its shapes), cheapest first."""
    table = options_table(result)
    table.insert(1, "weights", [matches.get(option, "self-hosted") for option in table["option"]])
    return table


def same_weights_sentence(result: dict[str, Any], model: str) -> str:
    """One answer at today's volume: the cheapest API offer of the weights against the cheapest self-host setup, with
    the setup's range and where self-hosting starts to pay, and what both figures rest on."""
    calls = float(result["profile"]["calls_per_day"])
    apis = sorted((r for r in result["api"] if r["cost_per_month"] is not None), key=lambda r: r["cost_per_month"])
    hosts = sorted((r for r in result["self_host"] if r["cost_per_month"] is not None),
                   key=lambda r: r["cost_per_month"])  # fmt: skip
    short = model.rsplit("/", 1)[-1]
    if not apis and not hosts:
        return f"Nothing prices {short} at this workload: no API serves it and no GPU setup meets the SLO."
    if not hosts:
        return (f"At {calls:,.0f} calls/day, {short} costs least from {apis[0]['provider']} "
                f"(${apis[0]['cost_per_month']:,.0f}/month); no self-host setup meets the SLO on the GPUs tried.")
    host = hosts[0]
    spread = cost_range_phrase(cost_range_text(host))
    offer = host.get("gpu_offer") or {}
    where = f" on {offer['provider']} at ${offer['price_per_hour']:.2f}/GPU-hour" if offer else ""
    setup = f"self-hosted on {host['gpus_per_replica']}× {host['gpu']}{where}"
    basis = f" Basis: {host['basis']} self-host figures ({host.get('error_transfer') or 'no'} transfer)"
    if not apis:
        return f"At {calls:,.0f} calls/day no API serves {short}; {setup} costs ${host['cost_per_month']:,.0f}/month" \
               f"{spread}.{basis}."
    api = apis[0]
    basis += f"; API prices as of {api['price_as_of']}."
    regions = next((o["break_even"] for o in host.get("same_weights", []) if o["model"] == api["model"]), [])
    if host["cost_per_month"] <= api["cost_per_month"]:
        answer = (f"At {calls:,.0f} calls/day, {short} {setup} costs ${host['cost_per_month']:,.0f}/month{spread}, "
                  f"less than its cheapest API offer ({api['provider']}, ${api['cost_per_month']:,.0f}/month): "
                  "self-hosting pays")
        range_ = host.get("cost_per_month_range") or [None, None]
        if range_[1] is None or range_[1] > api["cost_per_month"]:
            answer += ", though the prediction's P90 would cost more than the API: measure before you commit"
    else:
        times = host["cost_per_month"] / api["cost_per_month"] if api["cost_per_month"] else math.inf
        answer = (f"At {calls:,.0f} calls/day, {short} costs least from {api['provider']} "
                  f"(${api['cost_per_month']:,.0f}/month); {setup} costs ${host['cost_per_month']:,.0f}/month"
                  f"{spread}, {times:,.1f}× more")
        answer += f"; self-hosting is {describe_regions(regions)}" if regions else ""
    return answer + "." + basis


def prompt_caching_note(cached_prompt_fraction: float) -> str:
    """How the two sides treat the cached share of each prompt, said beside the table so neither looks free."""
    if not cached_prompt_fraction:
        return ""
    from infercost.performance.engine import ENGINE_PRESETS

    caching = [name for name, preset in ENGINE_PRESETS.items() if preset.prefix_caching]
    return (f"Prompt caching ({cached_prompt_fraction:.0%} of each prompt): API rows bill that share at each model's "
            f"cached-input rate; predicted self-host setups on an engine whose prefix cache is on by default "
            f"({', '.join(caching)}) do not prefill it again, so their TTFT and capacity follow; measured and "
            "published tables stand as they were measured.")
