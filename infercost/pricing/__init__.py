"""Prices: API per-token and GPU per-hour, each with its source and date."""

from infercost.pricing.catalog import (
    age_days,
    api_prices_with_home,
    bundled_api_prices,
    bundled_gpu_prices,
    bundled_gpu_specs,
    canonical_gpu_name,
    catalog_gpu_name,
    cheapest_offer,
    find_price,
    gpu_prices_with_home,
    gpu_spec,
    load_api_overrides,
    merge,
    validate_entries,
)
from infercost.pricing.lifecycle import lifecycle, lifecycle_note
from infercost.pricing.schema import ApiPrice, GpuPrice, GpuSpec, PriceTier

__all__ = [
    "ApiPrice",
    "GpuPrice",
    "GpuSpec",
    "PriceTier",
    "age_days",
    "api_prices_with_home",
    "bundled_api_prices",
    "bundled_gpu_prices",
    "bundled_gpu_specs",
    "canonical_gpu_name",
    "catalog_gpu_name",
    "cheapest_offer",
    "find_price",
    "gpu_prices_with_home",
    "gpu_spec",
    "lifecycle",
    "lifecycle_note",
    "load_api_overrides",
    "merge",
    "validate_entries",
]
