"""The pure cost engine: plain data in, plain data out. No I/O, no Streamlit, no HTTP, no SQL."""

from infercost.costmodel.api_bill import ApiBill, TokenPrices, api_bill, bill_warnings, cost_per_day
from infercost.costmodel.selfhost import (
    SelfHostEstimate,
    SelfHostSetup,
    ThroughputPoint,
    is_feasible,
    operating_point,
    size_self_host,
)
from infercost.costmodel.whatif import whatif_costs, workload_grid
from infercost.costmodel.workload import TokenVolumes, Workload, attempts_per_call, token_volumes

__all__ = [
    "ApiBill",
    "SelfHostEstimate",
    "SelfHostSetup",
    "ThroughputPoint",
    "TokenPrices",
    "TokenVolumes",
    "Workload",
    "api_bill",
    "attempts_per_call",
    "bill_warnings",
    "cost_per_day",
    "is_feasible",
    "operating_point",
    "size_self_host",
    "token_volumes",
    "whatif_costs",
    "workload_grid",
]
