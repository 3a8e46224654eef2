"""What-if grids: every combination of a few varied workload fields, priced in one vectorized pass."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.workload import WORKLOAD_FIELDS, Workload
from infercost.errors import InputError


def workload_grid(base: Workload, axes: Mapping[str, Sequence[float]]) -> Workload:
    """One Workload whose varied fields are flat arrays over the Cartesian product of ``axes``."""
    unknown = [name for name in axes if name not in WORKLOAD_FIELDS or name == "batch"]
    if unknown:
        raise InputError(unknown[0], "cannot be varied in a what-if grid")
    mesh = np.meshgrid(*(np.asarray(values, dtype=float) for values in axes.values()), indexing="ij")
    grid = dataclasses.replace(base, **{name: values.ravel() for name, values in zip(axes, mesh, strict=True)})
    return grid.validate()


def whatif_costs(base: Workload, axes: Mapping[str, Sequence[float]], prices: TokenPrices) -> dict[str, NDArray]:
    """Columns for a table or a chart: each varied field, then tokens and costs per variant."""
    grid = workload_grid(base, axes)
    bill = api_bill(grid, prices)
    columns = {name: np.asarray(getattr(grid, name)) for name in axes}
    columns["input_tokens_per_day"] = np.broadcast_to(bill.volumes.input_tokens_per_day, bill.cost_per_day.shape)
    columns["output_tokens_per_day"] = np.broadcast_to(bill.volumes.output_tokens_per_day, bill.cost_per_day.shape)
    columns["cost_per_day"] = bill.cost_per_day
    columns["cost_per_month"] = np.broadcast_to(bill.cost_per_month, bill.cost_per_day.shape)
    columns["cost_per_call"] = np.broadcast_to(bill.cost_per_call, bill.cost_per_day.shape)
    return columns
