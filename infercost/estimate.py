"""From a workload profile to API bills and self-host estimates: the ``estimate`` command and the app's bill.

This is the one place that joins the pure cost engine with tokenizers, the price catalog and stored runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from infercost.costmodel import (
    SelfHostSetup,
    ThroughputPoint,
    TokenVolumes,
    Workload,
    api_bill,
    size_self_host,
    token_volumes,
)
from infercost.costmodel.perfmodel import (
    MeasuredPoint,
    PerformanceModel,
    fit_performance_model,
    holdout_errors,
    summarize_holdout,
)
from infercost.pricing import ApiPrice, bundled_api_prices, find_price, load_api_overrides, merge
from infercost.pricing.catalog import validate_entries
from infercost.profile import Profile, SelfHost, new_entry_defaults
from infercost.throughput import ThroughputProfile, find_profile, roofline_profile

SHAPE_TOLERANCE = 0.2  # a measured point holds for token shapes within ±20% of the one it was measured at


@dataclass(frozen=True)
class PromptCount:
    tokens: float
    basis: str  # "given", "language calibration", "counted"


def prompt_tokens_for(profile: Profile, tokenizer_id: str) -> PromptCount:
    """The prompt length as this tokenizer counts it; tokens given in the profile are taken as they are."""
    if profile.prompt_tokens is not None:
        return PromptCount(profile.prompt_tokens, "given")
    if profile.prompt_chars is not None:
        return PromptCount(
            profile.prompt_chars * _tokens_per_char(tokenizer_id, profile.language or "en"),
            f"language calibration ({profile.language}, bundled samples)",
        )
    samples = tuple(profile.prompt_samples or ())
    return PromptCount(_mean_sample_tokens(tokenizer_id, samples), f"counted ({len(samples)} samples)")


@cache
def _tokens_per_char(tokenizer_id: str, language: str) -> float:
    from infercost.tokenizers import tokens_per_char  # heavy; only profiles that need it pay for it

    return tokens_per_char(tokenizer_id, language)


@cache
def _mean_sample_tokens(tokenizer_id: str, samples: tuple[str, ...]) -> float:
    from infercost.tokenizers import get_tokenizer

    return statistics.fmean(get_tokenizer(tokenizer_id).count_batch(list(samples)))


def workload_for(profile: Profile, prompt_tokens: float) -> Workload:
    """The cost engine's workload for one tokenizer's view of the prompt."""
    fields = profile.model_dump(include=set(Workload.__dataclass_fields__) - {"prompt_tokens"})
    return Workload(prompt_tokens=prompt_tokens, **fields).validate()


def price_list(profile: Profile, catalog: Sequence[ApiPrice]) -> tuple[list[ApiPrice], list[str]]:
    """The catalog with the profile's overrides applied, and the model ids to estimate."""
    by_id = {entry.id: entry for entry in catalog}
    merged_fields = [
        {**(by_id[o.id].model_dump(mode="json") if o.id in by_id else new_entry_defaults()), **o.model_dump()}
        for o in profile.prices
    ]
    overrides = validate_entries(merged_fields, ApiPrice, name="prices")
    prices = merge(catalog, overrides)
    named = [entry.id for entry in overrides]
    if profile.api_models is None:
        wanted = named if (named or profile.self_host) else [entry.id for entry in catalog]
    else:
        wanted = list(dict.fromkeys([*profile.api_models, *named]))
    return prices, wanted


def api_row(profile: Profile, price: ApiPrice) -> dict[str, Any]:
    count = prompt_tokens_for(profile, price.tokenizer)
    workload = workload_for(profile, count.tokens)
    bill = api_bill(workload, price.token_prices(), context_window=price.context_window)
    volumes = bill.volumes
    warnings = list(bill.warnings)
    if price.tokenizer_fidelity != "exact" and count.basis != "given":
        warnings.append(
            f"tokens counted with {price.tokenizer} as a {price.tokenizer_fidelity}: {price.tokenizer_note}".rstrip(
                ": "
            )
        )
    return {
        "model": price.id,
        "provider": price.provider,
        "tokenizer": price.tokenizer,
        "fidelity": price.tokenizer_fidelity,
        "prompt_tokens": float(count.tokens),
        "prompt_token_basis": count.basis,
        "input_tokens_per_day": float(volumes.input_tokens_per_day),
        "cached_input_tokens_per_day": float(volumes.cached_input_tokens_per_day),
        "cache_write_tokens_per_day": float(volumes.cache_write_tokens_per_day),
        "output_tokens_per_day": float(volumes.output_tokens_per_day),
        "cost_per_day": float(bill.cost_per_day),
        "cost_per_month": float(bill.cost_per_month),
        "cost_per_call": float(bill.cost_per_call),
        "cost_per_million_tokens": float(bill.cost_per_million_tokens),
        "price_source": price.source,
        "price_as_of": price.as_of.isoformat(),
        "warnings": warnings,
    }


RunLoader = Callable[[str], ThroughputProfile]


@dataclass(frozen=True)
class PointsBasis:
    """Where a setup's points came from: what every self-host figure must say about itself."""

    basis: str  # measured | published | fitted | roofline
    run_id: str | None = None
    input_len: float | None = None
    output_len: float | None = None
    gpus_per_replica: int | None = None
    source: str = ""
    hardware: str = ""
    note: str = ""


INLINE = "inline"


def inline_profile(spec: SelfHost) -> ThroughputProfile:
    """Points a person typed in, taken as measured by them, at the shape they say (else at the workload's)."""
    throughput = spec.throughput
    points = [{**p.latency_ms(), **p.model_dump(include={"concurrency", "request_throughput", "output_throughput"})}
              for p in throughput.points or ()]  # fmt: skip
    return ThroughputProfile(id=INLINE, name=spec.name, model="", hardware=spec.gpu, engine="", dtype="",
                             basis="measured", input_len=throughput.input_len, output_len=throughput.output_len,
                             points=sorted(points, key=lambda p: p["concurrency"]), gpus_per_replica=0)  # fmt: skip


def reference_id(profile: ThroughputProfile) -> str | None:
    """The id a person can look up again: a run or bundled profile; none for typed-in points or an estimate."""
    return profile.run_id or (None if profile.id == INLINE or profile.basis == "roofline" else profile.id)


def throughput_points(
    spec: SelfHost, index: int, load_run: RunLoader | None, *, prompt_tokens: float, output_tokens: float
) -> tuple[list[ThroughputPoint], PointsBasis]:
    """The setup's points: inline (taken as measured by whoever gives them), a stored or bundled run, or a roofline
    estimate at the workload's own token shape."""
    throughput = spec.throughput
    if throughput.points:
        profile = inline_profile(spec)
    elif throughput.roofline is not None:
        r = throughput.roofline
        profile = roofline_profile(r.model, r.gpu, dtype=r.dtype, gpus=r.gpus, input_len=prompt_tokens,
                                   output_len=output_tokens)  # fmt: skip
    else:
        profile = (load_run or run_loader())(str(throughput.run))
    points = [
        ThroughputPoint(p["concurrency"], p["request_throughput"], p.get("output_throughput"), profile.latency_ms(p))
        for p in profile.points
        if p.get("request_throughput")
    ]
    if profile.basis != "roofline" and shape_warnings_for(
        profile.input_len, profile.output_len, prompt_tokens, output_tokens
    ):
        return fitted_points(profile, prompt_tokens, output_tokens)
    estimated = profile.basis == "roofline"
    basis = PointsBasis(
        profile.basis, reference_id(profile), profile.input_len, profile.output_len,
        profile.gpus_per_replica, profile.source, profile.hardware, profile.notes if estimated else "",
    )  # fmt: skip
    return points, basis


def carried_point(
    model: PerformanceModel, point: MeasuredPoint, prompt_tokens: float, output_tokens: float
) -> ThroughputPoint:
    """A measured point carried to another token shape by the ratios the model predicts between the two shapes.

    Carrying ratios, not replacing the point with the model, keeps what the model cannot know: a queue that builds
    once an engine's batch is full shows in the measured point and stays in the carried one.
    """
    c = point.concurrency
    there = model.predict(c, point.input_len, point.output_len)
    here = model.predict(c, prompt_tokens, output_tokens)
    speedup = here.request_throughput / there.request_throughput
    latency = {"mean_ttft_ms": point.mean_ttft_ms, "mean_tpot_ms": point.mean_tpot_ms,
               "p95_ttft_ms": point.p95_ttft_ms, "p95_tpot_ms": point.p95_tpot_ms}  # fmt: skip
    ratios = {"ttft": here.mean_ttft_ms / there.mean_ttft_ms, "tpot": here.mean_tpot_ms / there.mean_tpot_ms}
    carried = {name: value * ratios[name.split("_")[1]] for name, value in latency.items() if value is not None}
    requests = point.request_throughput * speedup
    return ThroughputPoint(c, requests, requests * output_tokens, carried)


def fitted_points(
    profile: ThroughputProfile, prompt_tokens: float, output_tokens: float
) -> tuple[list[ThroughputPoint], PointsBasis]:
    """Measured points carried to the workload's token shape by a performance model fitted to them.

    The note gives the fit's leave-one-out error on the measured points and every assumption it had to make.
    """
    measured = [
        MeasuredPoint(
            p["concurrency"],
            profile.input_len,
            profile.output_len,
            p["request_throughput"],
            p.get("mean_ttft_ms"),
            p.get("mean_tpot_ms") or p.get("mean_itl_ms"),
            p.get("p95_ttft_ms"),
            p.get("p95_tpot_ms"),
        )  # fmt: skip
        for p in profile.points
        if p.get("request_throughput")
    ]
    model = fit_performance_model(measured)
    points = [carried_point(model, p, prompt_tokens, output_tokens) for p in measured]
    shape = f"{profile.input_len:,.0f} in / {profile.output_len:,.0f} out"
    note = f"{len(measured)} {profile.basis} points at {shape}, carried to this shape by a fitted performance model"
    if len(measured) >= 2:
        worst = summarize_holdout(holdout_errors(measured)).median_abs_error.get("request_throughput")
        if worst is not None:
            note += f" (leave-one-out median error of requests/s: {worst:.0%})"
    if model.assumptions:
        note += "; assumed: " + "; ".join(model.assumptions)
    basis = PointsBasis("fitted", reference_id(profile), prompt_tokens, output_tokens, profile.gpus_per_replica,
                        profile.source, profile.hardware, note)  # fmt: skip
    return points, basis


def shape_warnings_for(
    input_len: float | None, output_len: float | None, prompt_tokens: float, output_tokens: float
) -> list[str]:
    """Measured points hold for the token shape they were measured at; say so where the workload differs."""
    notes = []
    shapes = (("input", input_len, prompt_tokens), ("output", output_len, output_tokens))
    for label, measured, wanted in shapes:
        if measured and abs(wanted - measured) > SHAPE_TOLERANCE * measured:
            notes.append(
                f"measured at {label} length {measured:,.0f}, the workload has {wanted:,.0f}: throughput may differ"
            )
    return notes


def shape_warnings(basis: PointsBasis, prompt_tokens: float, output_tokens: float) -> list[str]:
    return shape_warnings_for(basis.input_len, basis.output_len, prompt_tokens, output_tokens)


# Where a table does not report an SLO's statistic, the nearest one it does report stands in, with a note.
SLO_STAND_INS = {"tpot": ("tpot", "itl"), "itl": ("itl", "tpot"), "ttft": ("ttft",), "e2el": ("e2el",)}


def effective_slo(slo: dict[str, float], points: Sequence[ThroughputPoint]) -> tuple[dict[str, float], list[str]]:
    """The SLO as these points can be checked: a missing metric is replaced by the closest reported one."""
    reported = set.intersection(*(set(p.latency_ms) for p in points)) if points else set()
    effective, notes = {}, []
    for metric, limit in slo.items():
        stat, name = metric.split("_")[0], metric.split("_")[1]
        candidates = [f"{s}_{n}_ms" for n in SLO_STAND_INS[name] for s in (stat, "median", "mean")]
        stand_in = next((c for c in candidates if c in reported), metric)
        effective[stand_in] = limit
        if stand_in != metric:
            notes.append(f"{metric} not reported; the SLO is checked against {stand_in}")
    return effective, notes


@dataclass(frozen=True)
class ResolvedSetup:
    """A self-host entry of a profile with its points found, its SLO made checkable, and its workload volumes."""

    setup: SelfHostSetup
    basis: PointsBasis
    volumes: TokenVolumes
    notes: list[str]


def resolve_setup(profile: Profile, spec: SelfHost, index: int, load_run: RunLoader | None) -> ResolvedSetup:
    count = prompt_tokens_for(profile, spec.tokenizer)
    volumes: TokenVolumes = token_volumes(workload_for(profile, count.tokens))
    output_tokens = profile.output_tokens + profile.reasoning_tokens
    points, basis = throughput_points(spec, index, load_run, prompt_tokens=count.tokens, output_tokens=output_tokens)
    given = "gpus_per_replica" in spec.model_fields_set
    gpus = spec.gpus_per_replica if given or not basis.gpus_per_replica else basis.gpus_per_replica
    slo, slo_notes = effective_slo(spec.slo, points)
    setup = SelfHostSetup(
        name=spec.name, gpu_price_per_hour=spec.gpu_price_per_hour, points=points, gpus_per_replica=gpus, slo=slo,
        peak_to_average=spec.peak_to_average, target_utilization=spec.target_utilization, mode=spec.mode,
    )  # fmt: skip
    return ResolvedSetup(setup, basis, volumes, slo_notes + shape_warnings(basis, count.tokens, output_tokens))


def self_host_row(profile: Profile, spec: SelfHost, index: int, load_run: RunLoader | None) -> dict[str, Any]:
    resolved = resolve_setup(profile, spec, index, load_run)
    estimate = size_self_host(resolved.setup, resolved.volumes, days_per_month=profile.days_per_month)
    point, basis, met = estimate.operating_point, resolved.basis, estimate.meets_slo
    return {
        "name": spec.name,
        "gpu": spec.gpu,
        "mode": spec.mode,
        "operating_point": None if point is None else {
            "concurrency": point.concurrency, "request_throughput": point.request_throughput,
            "output_throughput": point.output_throughput, **point.latency_ms,
        },
        "basis": basis.basis,
        "run_id": basis.run_id,
        "gpus_per_replica": resolved.setup.gpus_per_replica,
        "gpu_price_per_hour": spec.gpu_price_per_hour,
        "hardware": basis.hardware or spec.gpu,
        "throughput_source": basis.source,
        "basis_note": basis.note,
        "meets_slo": met,
        "replicas": estimate.replicas,
        "gpu_hours_per_day": estimate.gpu_hours_per_day,
        "cost_per_day": estimate.cost_per_day if met else None,
        "cost_per_month": estimate.cost_per_month if met else None,
        "cost_per_million_tokens": estimate.cost_per_million_tokens if met else None,
        "warnings": estimate.warnings + resolved.notes,
    }  # fmt: skip


def estimate(
    profile: Profile, *, catalog: Sequence[ApiPrice] | None = None, load_run: RunLoader | None = None
) -> dict[str, Any]:
    """DESIGN.md's estimate document: the profile as understood, one row per API model and per self-host setup."""
    prices, wanted = price_list(profile, bundled_api_prices() if catalog is None else catalog)
    return {
        "profile": profile.model_dump(mode="json"),
        "api": [api_row(profile, find_price(prices, model_id)) for model_id in wanted],
        "self_host": [self_host_row(profile, spec, i, load_run) for i, spec in enumerate(profile.self_host)],
    }


def estimate_file(path: str | Path, **kwargs: Any) -> dict[str, Any]:
    from infercost.profile import load_profile

    return estimate(load_profile(path), **kwargs)


def load_catalog(overrides_path: str | Path | None = None) -> list[ApiPrice]:
    """The bundled catalog, with a person's price file applied on top."""
    catalog = list(bundled_api_prices())
    return merge(catalog, load_api_overrides(overrides_path)) if overrides_path else catalog


def run_loader(db_path: str | Path | None = None) -> RunLoader:
    """How ``{"run": id}`` throughput is found: bundled profiles by id, else stored runs in this database."""
    return lambda run_id: find_profile(run_id, db_path)
