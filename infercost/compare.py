"""Comparisons across models and volumes, as tables for the app's charts (no Streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from infercost.costmodel import whatif_costs
from infercost.estimate import estimate, price_list, prompt_tokens_for, workload_for
from infercost.pricing import ApiPrice, find_price
from infercost.profile import Profile

CURVE_POINTS = 60


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
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["calls_per_day", "cost_per_month", "option"])


def self_host_cost_curves(profile: Profile, *, points: int = CURVE_POINTS, **estimate_kwargs: Any) -> pd.DataFrame:
    """Cost per month against calls/day for each self-host setup: replicas step up with volume."""
    rows = []
    for calls in calls_axis(profile.calls_per_day, points=points):
        varied = profile.model_copy(update={"calls_per_day": float(calls), "api_models": [], "prices": []})
        for row in estimate(varied, catalog=[], **estimate_kwargs)["self_host"]:
            if row["cost_per_month"] is not None:
                rows.append({"calls_per_day": calls, "cost_per_month": row["cost_per_month"], "option": row["name"]})
    return pd.DataFrame(rows, columns=["calls_per_day", "cost_per_month", "option"])
