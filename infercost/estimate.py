"""From a workload profile to API bills and self-host estimates: the ``estimate`` command and the app's bill.

This is the one place that joins the pure cost engine with tokenizers, the price catalog and stored runs.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from infercost.costmodel import (
    SelfHostSetup,
    TokenVolumes,
    Workload,
    api_bill,
    size_self_host,
    token_volumes,
)
from infercost.costmodel.breakeven import break_even_regions, self_host_step_cost
from infercost.errors import InputError
from infercost.performance.models import find_bundled
from infercost.performance.operating_points import (
    PointsBasis,
    RunLoader,
    effective_slo,
    error_scaled,
    shape_warnings,
    throughput_points,
)
from infercost.performance.profiles import find_profile
from infercost.pricing import (
    ApiPrice,
    GpuPrice,
    age_days,
    bundled_api_prices,
    bundled_gpu_prices,
    catalog_gpu_name,
    find_price,
    lifecycle_note,
    load_api_overrides,
    merge,
)
from infercost.pricing.catalog import api_prices_with_home, apply_override, validate_entries
from infercost.pricing.open_weights import offers_of_weights
from infercost.profile import Profile, SelfHost, new_entry_defaults

STALE_PRICE_DAYS = 90  # a GPU price older than this is flagged on its row


@dataclass(frozen=True)
class PromptCount:
    tokens: float
    basis: str  # "given", "language calibration", "counted"


def prompt_tokens_for(profile: Profile, tokenizer_id: str) -> PromptCount:
    """The prompt length as this tokenizer counts it; tokens given in the profile are taken as they are."""
    counted = (profile.prompt_tokens_by_tokenizer or {}).get(tokenizer_id)
    if counted is not None:
        return PromptCount(counted, "counted (corpus mean)")
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
        apply_override(by_id[o.id].model_dump(mode="json"), o.model_dump())
        if o.id in by_id
        else {**new_entry_defaults(), **o.model_dump()}
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
    if retiring := lifecycle_note(price, today=dt.date.today()):  # a retired model stays priced, never unflagged
        warnings.insert(0, f"model {retiring}")
    if price.tokenizer_fidelity != "exact" and count.basis != "given":
        warnings.append(
            f"tokens counted with {price.tokenizer} as a {price.tokenizer_fidelity}: {price.tokenizer_note}".rstrip(
                ": "
            )
        )
    return {
        "model": price.id,
        "provider": price.provider,
        "open_weights": price.open_weights,
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


SCALING_FIELDS = {"load_shape", "min_replicas", "max_replicas", "cold_start_minutes", "billing_increment_minutes",
                  "deadline_hours"}  # fmt: skip
BREAK_EVEN_SEARCH = 1000  # break-even is searched up to this many times today's volume


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
    points, basis = throughput_points(spec, index, load_run, prompt_tokens=count.tokens, output_tokens=output_tokens,
                                      cached_prompt_fraction=profile.cached_prompt_fraction)  # fmt: skip
    given = "gpus_per_replica" in spec.model_fields_set
    gpus = spec.gpus_per_replica if given or not basis.gpus_per_replica else basis.gpus_per_replica
    slo, slo_notes = effective_slo(spec.slo, points)
    setup = SelfHostSetup(
        name=spec.name, gpu_price_per_hour=spec.gpu_price_per_hour, points=points, gpus_per_replica=gpus, slo=slo,
        peak_to_average=spec.peak_to_average, target_utilization=spec.target_utilization, mode=spec.mode,
        **spec.model_dump(include=SCALING_FIELDS),
    )  # fmt: skip
    return ResolvedSetup(setup, basis, volumes, slo_notes + shape_warnings(basis, count.tokens, output_tokens))


def cost_range(resolved: ResolvedSetup, days_per_month: float) -> list[float | None] | None:
    """Monthly cost if the predicted points erred as the p10 and p90 of their kind of transfer (None where the
    points are measured); an end is None where, so erring, no point would meet the SLO."""
    error = resolved.basis.expected_error
    if not error:
        return None
    ends = []
    for optimistic in (True, False):
        points = error_scaled(resolved.setup.points, error, optimistic=optimistic)
        sized = size_self_host(replace(resolved.setup, points=points), resolved.volumes, days_per_month=days_per_month)
        ends.append(sized.cost_per_month if sized.meets_slo else None)
    return ends


def break_even(profile: Profile, resolved: ResolvedSetup, api_rows: Sequence[dict[str, Any]]) -> dict[str, list]:
    """Per API model, the calls/day intervals where this setup costs no more: exact on its cost steps."""
    attempts_per_call = float(resolved.volumes.attempts_per_day) / profile.calls_per_day
    high = profile.calls_per_day * BREAK_EVEN_SEARCH
    step = self_host_step_cost(resolved.setup, attempts_per_call, profile.days_per_month, high)
    if step is None:
        return {}
    return {row["model"]: [list(interval) for interval in
                           break_even_regions(row["cost_per_month"] / profile.calls_per_day, step)]
            for row in api_rows}  # fmt: skip


def gpu_offer(spec: SelfHost, hardware: str, offers: Sequence[GpuPrice]) -> dict[str, Any] | None:
    """The catalog offer behind the setup's GPU price: the one it names, else the one of its GPU at its price."""
    named = [o for o in offers if o.id == spec.gpu_offer]
    wanted = catalog_gpu_name(spec.gpu or hardware)
    matching = named or [o for o in offers if catalog_gpu_name(o.gpu) == wanted
                         and abs(o.price_per_hour - spec.gpu_price_per_hour) < 1e-9]  # fmt: skip
    if not matching:
        return None
    offer, age = matching[0], age_days(matching[0].as_of)
    return {"id": offer.id, "gpu": offer.gpu, "provider": offer.provider, "kind": offer.kind,
            "price_per_hour": offer.price_per_hour, "source": offer.source, "as_of": offer.as_of.isoformat(),
            "age_days": age, "stale": age > STALE_PRICE_DAYS}  # fmt: skip


PREDICTED_BASES = ("fitted", "roofline")  # figures the engine model predicts (measured and published are tables)
NO_RANGE = "unknown: no error measured"
SLO_NOT_MET = "SLO not met"


def cost_range_text(row: Mapping[str, Any]) -> str:
    """"$1,520–1,850" where a self-host row carries ``cost_per_month_range`` ([p10, p90]), else empty; an end at which
    no point would meet the SLO says so. Ends that read the same are one value ("$1,937", not "$1,937–1,937": whole
    replicas often cost the same at either end). The page and the report show it beside the cost.

    A predicted cost whose kind of transfer has no measured error says its range is unknown (an empty cell read as
    "no uncertainty"), and a setup that meets no SLO says so where its range would be."""
    span = row.get("cost_per_month_range")
    if row.get("meets_slo") is False:
        return SLO_NOT_MET
    if not span or span[0] is None:  # the optimistic end fails only where the estimate itself does
        return NO_RANGE if row.get("basis") in PREDICTED_BASES else ""
    low, high = f"{span[0]:,.0f}", "SLO missed at p90" if span[1] is None else f"{span[1]:,.0f}"
    return f"${low}" if low == high else f"${low}–{high}"


def cost_range_phrase(spread: str) -> str:
    """A ``cost_range_text`` in a sentence: " (P10–P90 $1,520–1,850)", " (the same at P10 and P90)" where both ends
    cost the same ("P10–P90 $835" beside $835 read like a range left out), " (unknown: no error measured)", or ""."""
    if not spread.startswith("$"):
        return f" ({spread})" if spread else ""
    return f" (P10–P90 {spread})" if "–" in spread else " (the same at P10 and P90)"


def setup_weights(spec: SelfHost, basis: PointsBasis) -> str | None:
    """The weights a setup serves: the ones it names, else the model its points were measured or predicted on; a
    bundled name (``gpt-oss-120b``) as its checkpoint's Hugging Face id, the id catalog offers name."""
    name = spec.model or basis.model or None
    bundled = find_bundled(name) if name and "/" not in name else None
    return bundled.hf_id if bundled is not None else name


def check_weights(spec: SelfHost, prices: Sequence[ApiPrice]) -> None:
    """A setup that names its weights names ones infercost knows: a bundled architecture or a catalog offer's."""
    if spec.model is None or find_bundled(spec.model) is not None:
        return
    try:
        offers_of_weights(spec.model, prices)
    except InputError as error:
        close = error.reason.partition("; close: ")[2]
        raise InputError("model", f"self-host setup {spec.name!r} serves unknown weights {spec.model!r}: no bundled "
                                  "config and no catalog offer of that name (see `python -m infercost models list` "
                                  f"and `prices --json`'s open_weights){'; close: ' + close if close else ''}"
                         ) from None  # fmt: skip


def same_weights(profile: Profile, resolved: ResolvedSetup, model: str | None, prices: Sequence[ApiPrice],
                 api_rows: Sequence[dict[str, Any]], *, meets_slo: bool) -> list[dict[str, Any]]:  # fmt: skip
    """Every API offer of the setup's weights (and of checkpoints of their architecture, marked) at this workload,
    cheapest first: each priced as its API row is, with the volumes where the setup costs no more."""
    if not model:
        return []
    try:
        found = offers_of_weights(model, prices)
    except InputError:  # weights no catalog offer serves: nothing to set beside them
        return []
    rows_by_id = {row["model"]: row for row in api_rows}
    offers = [(match, rows_by_id.get(price.id) or api_row(profile, price)) for match, price in found.offers]
    crossings = break_even(profile, resolved, [row for _, row in offers]) if offers and meets_slo else {}
    shown = [{"model": row["model"], "provider": row["provider"], "match": match,
              "cost_per_month": row["cost_per_month"], "cost_per_million_tokens": row["cost_per_million_tokens"],
              "price_as_of": row["price_as_of"], "break_even": crossings.get(row["model"], [])}
             for match, row in offers]  # fmt: skip
    return sorted(shown, key=lambda row: (row["cost_per_month"], row["model"]))


def self_host_row(profile: Profile, spec: SelfHost, index: int, load_run: RunLoader | None,
                  api_rows: Sequence[dict[str, Any]] = (),
                  prices: Sequence[ApiPrice] = ()) -> dict[str, Any]:  # fmt: skip
    check_weights(spec, prices)
    resolved = resolve_setup(profile, spec, index, load_run)
    estimate = size_self_host(resolved.setup, resolved.volumes, days_per_month=profile.days_per_month)
    point, basis, met = estimate.operating_point, resolved.basis, estimate.meets_slo
    weights = setup_weights(spec, basis)
    return {
        "name": spec.name,
        "model": weights,
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
        "expected_error": basis.expected_error or None,
        "error_transfer": basis.transfer or None,
        "cost_per_month_range": cost_range(resolved, profile.days_per_month) if met else None,
        "replicas_per_hour": list(estimate.replicas_per_hour),
        "unserved_attempts_per_day": estimate.unserved_attempts_per_day,
        "gpu_offer": gpu_offer(spec, basis.hardware, bundled_gpu_prices()),
        "break_even": break_even(profile, resolved, api_rows) if met else {},
        "same_weights": same_weights(profile, resolved, weights, prices, api_rows, meets_slo=met),
        "warnings": estimate.warnings + resolved.notes,
    }  # fmt: skip


def estimate(
    profile: Profile, *, catalog: Sequence[ApiPrice] | None = None, load_run: RunLoader | None = None
) -> dict[str, Any]:
    """DESIGN.md's estimate document: the profile as understood, one row per API model and per self-host setup."""
    prices, wanted = price_list(profile, bundled_api_prices() if catalog is None else catalog)
    api = [api_row(profile, find_price(prices, model_id)) for model_id in wanted]
    return {
        "profile": profile.model_dump(mode="json"),
        "api": api,
        "self_host": [self_host_row(profile, spec, i, load_run, api, prices)
                      for i, spec in enumerate(profile.self_host)],
    }


def load_catalog(overrides_path: str | Path | None = None) -> list[ApiPrice]:
    """The bundled catalog with the person's saved overrides (``prices update``), and a price file on top."""
    catalog = api_prices_with_home()
    return merge(catalog, load_api_overrides(overrides_path)) if overrides_path else catalog


def run_loader(db_path: str | Path | None = None) -> RunLoader:
    """How ``{"run": id}`` throughput is found: bundled profiles by id, else stored runs in this database."""
    return lambda run_id: find_profile(run_id, db_path)
