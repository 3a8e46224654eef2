"""Issue 24: wide tables cut model ids at 1400 px (Streamlit sizes a column from its first rows only). The id column of
the Bill, Prices and Compare tables is as wide as its longest id and pinned, so it stays in view (AppTest: the width
each table asks the browser for)."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.ui.format import text_width_px
from tests.support.apptest import run_page as run

PAGES = Path(__file__).resolve().parents[2] / "infercost/ui/pages"


def id_config(at: AppTest, column: str, beside: str) -> tuple[dict, list[str]]:
    """The config and values of ``column`` in the table that also has ``beside`` (tables carry no id to find)."""
    frame = next(f for f in at.dataframe if {column, beside} <= set(f.value.columns))
    return json.loads(frame.proto.columns)[column], list(frame.value[column])


def test_the_bill_and_prices_tables_fit_their_longest_model_id():
    longest = "deepinfra/llama-4-maverick-17b-128e-instruct-fp8"  # 48 characters, a catalog id
    bill = run("bill.py", api_models=["gpt-4o-mini", longest])
    prices = run("prices.py")
    for at, column, beside in ((bill, "model", "cost_per_month"), (prices, "id", "input_per_mtok")):
        config, ids = id_config(at, column, beside)
        assert config["width"] >= text_width_px([longest]) and config["pinned"], (column, config)
        assert config["width"] >= text_width_px(ids)


def test_the_compare_table_fits_every_api_id_and_keeps_its_money_in_view():
    at = run("compare.py")  # the default models: their ids were cut at "medium"
    config, _ = id_config(at, "option", "kind")
    frame = next(f for f in at.dataframe if "kind" in f.value.columns).value
    api_ids = list(frame[frame["kind"] == "API"]["option"])
    assert config["pinned"] and config["width"] >= text_width_px(api_ids)
    # a self-host name longer than this is whole in the notes below the table; wider pushed money out of view
    assert config["width"] <= 232
