"""The pure cost engine: plain data in, plain data out. No I/O, no Streamlit, no HTTP, no SQL."""

from infercost.costmodel.api_bill import ApiBill, TokenPrices, api_bill, bill_warnings, cost_per_day
from infercost.costmodel.breakeven import StepCost, break_even_regions, describe_regions, self_host_step_cost
from infercost.costmodel.montecarlo import Band, BillBand, bill_band
from infercost.costmodel.owned import (
    CostBreakdown,
    OwnedHardware,
    energy_kwh_per_million_tokens,
    owned_cost_per_gpu_hour,
)
from infercost.costmodel.selfhost import (
    SelfHostEstimate,
    SelfHostSetup,
    ThroughputPoint,
    is_feasible,
    operating_point,
    size_self_host,
)
from infercost.costmodel.sensitivity import TornadoBar, default_spans, tornado
from infercost.costmodel.whatif import whatif_costs, workload_grid
from infercost.costmodel.workload import TokenVolumes, Workload, attempts_per_call, token_volumes

__all__ = [
    "ApiBill",
    "Band",
    "BillBand",
    "CostBreakdown",
    "OwnedHardware",
    "SelfHostEstimate",
    "SelfHostSetup",
    "StepCost",
    "ThroughputPoint",
    "TokenPrices",
    "TokenVolumes",
    "TornadoBar",
    "Workload",
    "api_bill",
    "attempts_per_call",
    "bill_band",
    "bill_warnings",
    "break_even_regions",
    "describe_regions",
    "self_host_step_cost",
    "cost_per_day",
    "default_spans",
    "energy_kwh_per_million_tokens",
    "is_feasible",
    "operating_point",
    "owned_cost_per_gpu_hour",
    "size_self_host",
    "token_volumes",
    "tornado",
    "whatif_costs",
    "workload_grid",
]
