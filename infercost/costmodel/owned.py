"""Owned hardware priced per GPU-hour, so "rented vs owned" is one comparison of like with like.

A rented GPU has a price per GPU-hour; an owned machine has a purchase price, a power draw and a hosting bill.
Spreading all three over every hour of the amortization period (the machine costs money whether busy or idle)
gives the same unit, and self-host sizing prices GPU-hours without caring where the price came from.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from infercost.errors import InputError

HOURS_PER_YEAR = 24 * 365
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730: a month of hosting is a twelfth of a year


@dataclass(frozen=True)
class OwnedHardware:
    """One machine with ``gpus`` GPUs; price, power and hosting are for the whole machine."""

    purchase_price_usd: float
    amortization_years: float
    power_watts: float  # whole machine at load: measured where the runner read it, else the cards' board power
    pue: float  # power usage effectiveness of the data centre: facility watts per IT watt, >= 1
    electricity_usd_per_kwh: float
    hosting_usd_per_month: float  # rack space, network, remote hands
    gpus: int = 1

    def validate(self) -> OwnedHardware:
        """Raise InputError naming the first field a person must fix; return self."""
        for name, low, low_open in _RANGES:
            _check(name, getattr(self, name), low, low_open=low_open)
        if int(self.gpus) != self.gpus:
            raise InputError("gpus", f"must be a whole number, got {self.gpus!r}")
        return self


def _check(name: str, value: object, low: float, *, low_open: bool) -> None:
    """A finite number at or above ``low`` (strictly above where ``low_open``), else InputError naming ``name``."""
    ok = isinstance(value, numbers.Real) and math.isfinite(value) and (value > low if low_open else value >= low)
    if not ok:
        raise InputError(name, f"must be a number {'>' if low_open else '>='} {low:g}, got {value!r}")


# (field, lowest, lowest excluded)
_RANGES = (
    ("purchase_price_usd", 0, False),
    ("amortization_years", 0, True),
    ("power_watts", 0, False),
    ("pue", 1, False),
    ("electricity_usd_per_kwh", 0, False),
    ("hosting_usd_per_month", 0, False),
    ("gpus", 1, False),
)


@dataclass(frozen=True)
class CostBreakdown:
    """US dollars per GPU-hour, by where the money goes."""

    amortization_per_gpu_hour: float
    power_per_gpu_hour: float
    hosting_per_gpu_hour: float

    @property
    def total_per_gpu_hour(self) -> float:
        return self.amortization_per_gpu_hour + self.power_per_gpu_hour + self.hosting_per_gpu_hour


def owned_cost_per_gpu_hour(hw: OwnedHardware) -> CostBreakdown:
    """Every hour of the amortization period carries its share (24 x 365 hours a year), busy or idle."""
    hw.validate()
    machine_kw = hw.power_watts / 1000 * hw.pue
    return CostBreakdown(
        amortization_per_gpu_hour=hw.purchase_price_usd / (hw.amortization_years * HOURS_PER_YEAR) / hw.gpus,
        power_per_gpu_hour=machine_kw * hw.electricity_usd_per_kwh / hw.gpus,
        hosting_per_gpu_hour=hw.hosting_usd_per_month / HOURS_PER_MONTH / hw.gpus,
    )


def energy_kwh_per_million_tokens(power_watts: float, pue: float, tokens_per_second: float) -> float:
    """Facility energy for a million tokens at a sustained rate: the time they take times the power drawn."""
    _check("power_watts", power_watts, 0, low_open=False)
    _check("pue", pue, 1, low_open=False)
    _check("tokens_per_second", tokens_per_second, 0, low_open=True)
    seconds = 1e6 / tokens_per_second
    return power_watts * pue * seconds / 3.6e6  # joules to kWh
