"""What a job's tokens or GPU time cost, and which tokenizer counts its prompts: from the price catalog, or from a
stored run or profile (``performance.find_profile``) at the job's concurrency and a GPU's hourly price."""

from __future__ import annotations

from pathlib import Path

from infercost.batch.budget import Pricing
from infercost.errors import InputError

DEFAULT_TOKENIZER = "o200k_base"


def resolve_pricing(*, price: str | None, throughput: str | None, gpu_price: float | None, concurrency: int,
                    db_path: str | Path | None) -> Pricing:
    if price and throughput:
        raise InputError("price", "give --price (an API model) or --throughput with --gpu-price, not both")
    if price:
        return api_pricing(price)
    if throughput:
        if gpu_price is None or gpu_price <= 0:
            raise InputError("gpu-price", "--throughput needs --gpu-price, the USD per GPU-hour")
        return gpu_pricing(throughput, gpu_price, concurrency, db_path)
    if gpu_price is not None:
        raise InputError("throughput", "--gpu-price needs --throughput RUN_ID (a stored run or profile)")
    return Pricing(kind="none", basis="no pricing given")


def api_pricing(model_id: str) -> Pricing:
    from infercost.pricing import bundled_api_prices, find_price

    entry = find_price(bundled_api_prices(), model_id)
    basis = (f"{entry.id} ({entry.provider}): ${entry.input_per_mtok:g}/M input, ${entry.output_per_mtok:g}/M "
             f"output, {entry.source} as of {entry.as_of}")
    return Pricing(kind="api", basis=basis, input_per_mtok=entry.input_per_mtok,
                   output_per_mtok=entry.output_per_mtok)


def gpu_pricing(profile_id: str, gpu_price: float, concurrency: int, db_path: str | Path | None) -> Pricing:
    """The request throughput measured at the job's concurrency (the nearest measured one, said so)."""
    from infercost.performance.profiles import find_profile

    profile = find_profile(profile_id, db_path)
    points = [p for p in profile.points if p.get("request_throughput")]
    if not points:
        raise InputError("throughput", f"{profile_id} has no request throughput")
    point = min(points, key=lambda p: (abs(p["concurrency"] - concurrency), -p["concurrency"]))
    at = f"at concurrency {point['concurrency']:g}"
    if point["concurrency"] != concurrency:
        at += f" (nearest measured to the job's {concurrency})"
    basis = (f"{profile.name} ({profile.basis}): {point['request_throughput']:.3g} requests/s {at}, "
             f"{profile.gpus_per_replica} GPU(s) at ${gpu_price:g}/h")
    return Pricing(kind="gpu", basis=basis, gpu_price_per_hour=gpu_price, gpus=profile.gpus_per_replica,
                   request_throughput=float(point["request_throughput"]))


def resolve_tokenizer(*, price: str | None, tokenizer: str | None, model: str) -> tuple[str, str]:
    """(tokenizer id, fidelity): ``--tokenizer``, else the priced model's catalog tokenizer, else the model name when
    it is a tokenizer id, else o200k_base as a labelled proxy."""
    from infercost.tokenizers import get_tokenizer, offline_ids

    if tokenizer:
        return tokenizer, get_tokenizer(tokenizer).info.fidelity
    if price:
        from infercost.pricing import bundled_api_prices, find_price

        entry = find_price(bundled_api_prices(), price)
        return entry.tokenizer, entry.tokenizer_fidelity
    if model in offline_ids():
        return model, "exact"
    return DEFAULT_TOKENIZER, "proxy"
