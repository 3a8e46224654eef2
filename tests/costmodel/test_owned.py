"""Owned hardware per GPU-hour, on numbers computed by hand."""

import pytest

from infercost.costmodel.owned import OwnedHardware, energy_kwh_per_million_tokens, owned_cost_per_gpu_hour
from infercost.errors import InputError

# An 8-GPU server: $300,000 over 3 years, 10 kW at PUE 1.3, $0.10/kWh, $2,190 a month of hosting.
SERVER = OwnedHardware(purchase_price_usd=300_000, amortization_years=3, power_watts=10_000, pue=1.3,
                       electricity_usd_per_kwh=0.10, hosting_usd_per_month=2_190, gpus=8)  # fmt: skip


def test_amortization_spreads_the_price_over_every_hour_of_the_period():
    assert owned_cost_per_gpu_hour(SERVER).amortization_per_gpu_hour == pytest.approx(300_000 / 26_280 / 8)  # 1.427


def test_power_is_watts_times_pue_times_price_shared_by_the_gpus():
    assert owned_cost_per_gpu_hour(SERVER).power_per_gpu_hour == pytest.approx(13 * 0.10 / 8)  # 13 kW at the meter


def test_hosting_per_month_is_spread_over_730_hours():
    assert owned_cost_per_gpu_hour(SERVER).hosting_per_gpu_hour == pytest.approx(3 / 8)  # $3 an hour for the machine


def test_total_is_the_sum_of_the_parts():
    assert owned_cost_per_gpu_hour(SERVER).total_per_gpu_hour == pytest.approx(300_000 / 26_280 / 8 + 1.3 / 8 + 3 / 8)


def test_energy_per_million_tokens():
    # 700 W at PUE 1.2 for 1e6 / 2,000 = 500 s: 840 W x 500 s = 420 kJ = 0.1167 kWh
    assert energy_kwh_per_million_tokens(700, 1.2, 2_000) == pytest.approx(420_000 / 3.6e6)


@pytest.mark.parametrize("field, value", [("amortization_years", 0), ("pue", 0.9), ("gpus", 0), ("gpus", 1.5),
                                          ("power_watts", -1), ("purchase_price_usd", float("nan"))])  # fmt: skip
def test_bad_hardware_names_the_field(field, value):
    with pytest.raises(InputError, match=f"^{field}:"):
        owned_cost_per_gpu_hour(OwnedHardware(**{**SERVER.__dict__, field: value}))


def test_energy_needs_a_positive_rate():
    with pytest.raises(InputError, match="^tokens_per_second:"):
        energy_kwh_per_million_tokens(700, 1.2, 0)
