"""Self-host setups for the comparison: where throughput comes from and what a GPU-hour costs (no Streamlit here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infercost.costmodel.owned import OwnedHardware, owned_cost_per_gpu_hour
from infercost.pricing import GpuPrice, bundled_gpu_prices
from infercost.performance.profiles import ThroughputProfile

DEFAULT_SLO = {"p95_ttft_ms": 2000.0, "p95_tpot_ms": 100.0}


def cheapest_offer(gpu: str, offers: Sequence[GpuPrice] | None = None) -> GpuPrice | None:
    """The cheapest on-demand offer for a GPU in the catalog (spot can vanish; on-demand is the honest default)."""
    matching = [o for o in (offers or bundled_gpu_prices()) if o.gpu.lower() == gpu.lower() and o.kind == "on-demand"]
    return min(matching, key=lambda o: o.price_per_hour, default=None)


def rented_price(gpu: str) -> tuple[float, str]:
    """(US$ per GPU-hour, where it comes from)."""
    offer = cheapest_offer(gpu)
    if offer is None:
        return 2.5, f"no catalog offer for {gpu}: US$2.50/GPU-hour assumed"
    return offer.price_per_hour, f"{offer.provider} on-demand, {offer.as_of}"


def owned_price(hardware: OwnedHardware) -> tuple[float, str]:
    cost = owned_cost_per_gpu_hour(hardware)
    note = (f"owned: amortization ${cost.amortization_per_gpu_hour:.2f} + power ${cost.power_per_gpu_hour:.2f} "
            f"+ hosting ${cost.hosting_per_gpu_hour:.2f} per GPU-hour")  # fmt: skip
    return cost.total_per_gpu_hour, note


def setup_spec(
    name: str, throughput: dict[str, Any], price_per_hour: float, common: Mapping[str, Any]
) -> dict[str, Any]:
    """One profile ``self_host`` entry; ``common`` holds what all setups share (mode, SLO, peak, utilization)."""
    return {"name": name, "throughput": throughput, "gpu_price_per_hour": price_per_hour, **common}


def default_setups(profiles: Sequence[ThroughputProfile], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a newcomer sees first: an 8B model estimated on an H100, and each bundled measured/published profile."""
    roofline = {"roofline": {"model": "llama-3.1-8b", "gpu": "H100 SXM"}}
    setups = [setup_spec("llama-3.1-8b · 1× H100 SXM (roofline)", roofline, rented_price("H100 SXM")[0], common)]
    for profile in profiles:
        shape = f"{profile.input_len:,.0f}/{profile.output_len:,.0f} tokens"
        name = f"{profile.model.split('/')[-1]} · {profile.gpus_per_replica}× {profile.hardware} · {profile.dtype} · {shape} ({profile.basis})"
        setups.append(setup_spec(name, {"run": profile.id}, rented_price(profile.hardware)[0], common))
    return setups
