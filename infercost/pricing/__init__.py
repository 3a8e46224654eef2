"""Prices: API per-token and GPU per-hour, each with its source and date."""

from infercost.pricing.catalog import (
    age_days,
    bundled_api_prices,
    bundled_gpu_prices,
    bundled_gpu_specs,
    find_price,
    load_api_overrides,
    merge,
    validate_entries,
)
from infercost.pricing.schema import ApiPrice, GpuPrice, GpuSpec

__all__ = [
    "ApiPrice",
    "GpuPrice",
    "GpuSpec",
    "age_days",
    "bundled_api_prices",
    "bundled_gpu_prices",
    "bundled_gpu_specs",
    "find_price",
    "load_api_overrides",
    "merge",
    "validate_entries",
]
