"""The same weights, side by side: one open model self-hosted on each GPU people rent, against every API that serves it.

A person picks an open model; this finds, without any JSON, the setups worth setting beside its API offers: on every
GPU type the catalog rents on demand, its cheapest dated offer, the model at its checkpoint's own dtype on the fewest
GPUs (1, 2, 4 or 8) that the engine model says hold it with room for a KV cache, scheduled by the engine of the
nearest published table. What cannot run (FP4 weights on a GPU without FP4, a model too big for eight) is said, not
dropped silently. No Streamlit here: the Compare page and tests call it alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from infercost.errors import InputError
from infercost.estimate import price_list, prompt_tokens_for
from infercost.performance.models import FIT_GPU_COUNTS, Resolved, find_bundled, resolve
from infercost.performance.predict import Load, predict_roofline
from infercost.pricing import ApiPrice, GpuPrice, bundled_gpu_prices, bundled_gpu_specs, cheapest_offer
from infercost.pricing.open_weights import architecture_key, offers_of_weights
from infercost.profile import parse_profile

PROFILE_ENGINES = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm"}  # the simulation's name -> a setup's
DOES_NOT_FIT = ("gpus", "tensor_parallel", "expert_parallel")  # refusals that more GPUs may cure
# What every ready-made setup takes from a person's own: the SLO and how the fleet scales, not what it runs on.
SETUP_FIELDS = ("slo", "mode", "peak_to_average", "target_utilization", "load_shape", "min_replicas", "max_replicas",
                "cold_start_minutes", "billing_increment_minutes", "deadline_hours")  # fmt: skip


@dataclass(frozen=True)
class OpenModel:
    """An open model the catalog serves and a bundled config describes: what the *Same weights* view offers."""

    hf_id: str
    architecture: str  # the bundled config it resolves to
    offers: int  # API offers of these weights or of checkpoints with their architecture


@dataclass(frozen=True)
class ReadyMade:
    """A self-host setup found for a model on one GPU type, as a profile's ``self_host`` entry."""

    gpu: str
    gpus: int
    dtype: str
    engine: str
    offer: GpuPrice
    spec: dict[str, Any]


@dataclass(frozen=True)
class Skipped:
    gpu: str
    reason: str


def open_models(prices: Sequence[ApiPrice]) -> list[OpenModel]:
    """Every checkpoint a catalog offer serves whose architecture is bundled, most offered first."""
    offers = Counter(architecture_key(p.open_weights) for p in prices if p.open_weights)
    found = [OpenModel(hf_id, architecture_key(hf_id), offers[architecture_key(hf_id)])
             for hf_id in {p.open_weights for p in prices if p.open_weights} if _bundled(hf_id) is not None]
    return sorted(found, key=lambda m: (-m.offers, m.hf_id.lower()))


@cache
def _bundled(hf_id: str) -> Resolved | None:
    """The bundled config of a checkpoint, or None: this view never reaches for the Hub for a catalog's ids."""
    return resolve(hf_id) if find_bundled(hf_id) is not None else None


def ready_made_setups(
    model: str, *, prompt_tokens: float, output_tokens: float, common: Mapping[str, Any] | None = None,
    cached_prompt_fraction: float = 0.0, gpu_offers: Sequence[GpuPrice] | None = None,
) -> tuple[list[ReadyMade], list[Skipped]]:  # fmt: skip
    """Setups of ``model`` on every GPU type with a datasheet and an on-demand offer, and the GPUs left out with why.

    ``common`` is what every setup shares (SLO, scaling mode, peak to average); the token shape is the workload's,
    since whether a model fits with room for its KV cache depends on it."""
    resolved = _bundled(model)
    if resolved is None:
        raise InputError("model", f"{model!r} is not a bundled model; see `python -m infercost models list`")
    dtype = resolved.architecture.default_dtype
    shape = (max(1, round(prompt_tokens)), max(1, round(output_tokens)))
    offers = tuple(gpu_offers) if gpu_offers is not None else bundled_gpu_prices()
    found, skipped = [], []
    for gpu in dict.fromkeys(spec.gpu for spec in bundled_gpu_specs()):
        offer = cheapest_offer(gpu, offers)
        if offer is None:
            continue  # nobody rents it on demand: no price to set beside the APIs'
        placed = _fewest_gpus(model, gpu, dtype, shape, cached_prompt_fraction)
        if placed is None:
            weights = resolved.architecture.weight_bytes(dtype) / 1e9
            placed = (f"its weights ({weights:,.0f} GB at {dtype}) leave no room for a KV cache on "
                      f"{FIT_GPU_COUNTS[-1]} of them")  # fmt: skip
        if isinstance(placed, str):
            skipped.append(Skipped(gpu, placed))
            continue
        gpus, engine = placed
        found.append(ReadyMade(gpu, gpus, dtype, engine, offer,
                               _spec(resolved, model, gpu, gpus, dtype, engine, offer, common or {})))  # fmt: skip
    return found, skipped


def _fewest_gpus(model: str, gpu: str, dtype: str, shape: tuple[int, int],
                 cached_prompt_fraction: float) -> tuple[int, str] | str | None:  # fmt: skip
    """(GPUs, engine) of the smallest replica the engine model predicts for; why it cannot run on this GPU (a dtype
    it lacks); None where even the most GPUs do not hold it."""
    for gpus in FIT_GPU_COUNTS:
        try:
            return gpus, _predicted_engine(model, gpu, gpus, dtype, shape, cached_prompt_fraction)
        except InputError as error:
            if error.field not in DOES_NOT_FIT:
                return f"{error.field}: {error.reason}"
    return None


@cache
def _predicted_engine(model: str, gpu: str, gpus: int, dtype: str, shape: tuple[int, int],
                      cached_prompt_fraction: float) -> str:  # fmt: skip
    """The engine the prediction scheduled with (the nearest published table's); raises where it cannot predict."""
    predicted = predict_roofline(model, gpu, gpus, dtype, *shape, Load(cached_prompt_fraction=cached_prompt_fraction))
    return PROFILE_ENGINES.get(predicted.engine, "vllm")


def _spec(resolved: Resolved, model: str, gpu: str, gpus: int, dtype: str, engine: str, offer: GpuPrice,
          common: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    short = model.rsplit("/", 1)[-1]
    return {
        **common,
        "name": f"{short} · {gpus}× {gpu} · {dtype} · {engine}",
        "model": model,
        "gpu": gpu,
        "gpu_price_per_hour": offer.price_per_hour,
        "gpu_offer": offer.id,
        "gpus_per_replica": gpus,
        "throughput": {"roofline": {"model": resolved.name, "gpu": gpu, "dtype": dtype, "gpus": gpus,
                                    "engine": engine}},
    }  # fmt: skip


@dataclass(frozen=True)
class SameWeights:
    """The profile that sets one model's API offers beside its ready-made setups, and what the view must say."""

    document: dict[str, Any]  # a profile document: the workload, ``api_models`` the offers, ``self_host`` the setups
    matches: dict[str, str]  # API offer id -> "exact" | "same_architecture"
    skipped: list[Skipped]


def same_weights_profile(document: Mapping[str, Any], model: str, catalog: Sequence[ApiPrice],
                         common: Mapping[str, Any] | None = None) -> SameWeights:  # fmt: skip
    """The workload of ``document`` priced on every API offer of ``model``'s weights (the catalog with the profile's
    own price overrides) and self-hosted on each GPU ``ready_made_setups`` finds; the person's own setups and models
    are left out (they serve other weights)."""
    profile = parse_profile({**document, "self_host": []})
    prices, _ = price_list(profile, catalog)
    try:
        offers = offers_of_weights(model, prices).offers
    except InputError:
        offers = ()  # weights no API serves: the view still shows what self-hosting them costs
    tokenizer = _tokenizer_of(offers)
    output_tokens = profile.output_tokens + profile.reasoning_tokens
    setups, skipped = ready_made_setups(
        model, prompt_tokens=prompt_tokens_for(profile, tokenizer).tokens, output_tokens=output_tokens,
        common={**(common or {}), "tokenizer": tokenizer}, cached_prompt_fraction=profile.cached_prompt_fraction,
    )  # fmt: skip
    shown = {**document, "api_models": [price.id for _, price in offers],
             "self_host": [setup.spec for setup in setups]}  # fmt: skip
    return SameWeights(shown, {price.id: match for match, price in offers}, skipped)


def _tokenizer_of(offers: Sequence[tuple[str, ApiPrice]]) -> str:
    """The tokenizer the offers of these weights count with (the exact ones' first), so both sides bill the same
    tokens; ``llama3`` (a setup's default) where no API serves them."""
    counted = [price.tokenizer for match, price in offers if match == "exact"] or [p.tokenizer for _, p in offers]
    return max(dict.fromkeys(counted), key=counted.count) if counted else "llama3"
