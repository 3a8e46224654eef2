"""A negotiated price on a catalog model keeps the fields not given (cached price) and holds with the Batch switch."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.pricing.catalog import apply_override

APP = str(Path(__file__).resolve().parents[2] / "app.py")
ATTEMPTS = 1 + 0.05 + 0.05**2 + 0.05**3  # the form's default retry rate 5 %, at most 3 retries


def bill_row(at: AppTest, model: str):
    table = next(frame.value for frame in at.dataframe if "prompt_tokens" in frame.value.columns)
    return table.set_index("model").loc[model]


def overridden(**form) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("infercost/ui/pages/prices.py").run()
    at.text_input(key="override_id").set_value("gpt-4o-mini")
    at.number_input(key="override_input").set_value(0.10)
    at.number_input(key="override_output").set_value(0.40).run()
    at.button(key="save_override").click().run()
    at.switch_page("infercost/ui/pages/bill.py").run()
    for key, value in form.items():
        (at.toggle if isinstance(value, bool) else at.number_input)(key=key).set_value(value).run()
    assert not at.exception
    return at


def test_the_override_holds_with_batch_on_keeping_the_catalogs_batch_discount():
    at = overridden(batch=True)
    per_day = 100_000 * ATTEMPTS * (1200 * 0.10 * 0.5 + 300 * 0.40 * 0.5) / 1e6  # the catalog's batch tier is half
    assert bill_row(at, "gpt-4o-mini")["cost_per_month"] == pytest.approx(per_day * 30)


def test_the_override_keeps_the_catalogs_cached_price():
    at = overridden(cached_prompt_fraction=0.5)
    per_day = 100_000 * ATTEMPTS * (600 * 0.10 + 600 * 0.075 + 300 * 0.40) / 1e6
    assert bill_row(at, "gpt-4o-mini")["cost_per_month"] == pytest.approx(per_day * 30)
    assert bill_row(at, "gpt-4o-mini")["provider"] == "OpenAI"


def test_fields_not_given_keep_the_catalogs_values():
    base = {"id": "m", "input_per_mtok": 2.0, "output_per_mtok": 8.0, "batch_input_per_mtok": 1.0,
            "batch_output_per_mtok": 4.0, "cached_input_per_mtok": 0.5}  # fmt: skip
    assert apply_override(base, {"id": "m", "input_per_mtok": 1.0}) == {**base, "input_per_mtok": 1.0,
                                                                         "batch_input_per_mtok": 0.5}  # fmt: skip
    given = {"id": "m", "input_per_mtok": 1.0, "batch_input_per_mtok": 0.9}
    assert apply_override(base, given)["batch_input_per_mtok"] == 0.9  # a batch price given is taken as it is
