"""Cached wrappers around core calls, shared by the pages (the only ui module besides pages that imports Streamlit)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from infercost.compare import api_cost_curves, self_host_cost_curves
from infercost.errors import InputError
from infercost.estimate import estimate, run_loader
from infercost.pricing import ApiPrice, bundled_api_prices, bundled_gpu_prices, merge, validate_entries
from infercost.profile import parse_profile


@st.cache_data(show_spinner=False)
def catalog_json() -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json") for entry in bundled_api_prices()]


@st.cache_data(show_spinner=False)
def gpu_prices_json() -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json") for entry in bundled_gpu_prices()]


def catalog_with(overrides: list[dict[str, Any]]) -> list[ApiPrice]:
    """The bundled catalog plus the person's complete override entries (partial ones apply via the profile)."""
    return merge(bundled_api_prices(), validate_entries(overrides, ApiPrice, name="price overrides"))


@st.cache_data(show_spinner="Pricing the workload…")
def estimate_json(profile_json: str) -> dict[str, Any]:
    """The estimate for a profile document (a JSON string, so the cache key is exact)."""
    return estimate(parse_profile(json.loads(profile_json)), load_run=run_loader())


@st.cache_data(show_spinner=False)
def cost_curves(profile_json: str) -> pd.DataFrame:
    profile = parse_profile(json.loads(profile_json))
    curves = [api_cost_curves(profile, bundled_api_prices()), self_host_cost_curves(profile, load_run=run_loader())]
    return pd.concat(curves, ignore_index=True)


def show_input_error(error: InputError) -> None:
    st.error(f"Please check **{error.field}**: {error.reason}", icon="⚠️")
