"""Page state is the profile: what a person set survives a visit to another page (AppTest, multipage)."""

import datetime as dt
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.pricing import bundled_api_prices, lifecycle
from infercost.ui.state import (
    current_model,
    default_models,
    editor_start,
    is_kept_widget,
    keep_edited,
    keep_widget_state,
)

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_the_bill_panel_and_compare_settings_come_back_after_another_page():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.toggle(key="self_host_on").set_value(True).run()
    at.number_input(key="slo_p95_ttft_ms").set_value(777.0).run()
    at.switch_page("infercost/ui/pages/compare.py").run()
    at.number_input(key="cmp_peak").set_value(3.5).run()
    at.switch_page("infercost/ui/pages/prices.py").run()
    at.switch_page("infercost/ui/pages/bill.py").run()
    assert not at.exception
    assert at.toggle(key="self_host_on").value is True
    assert at.session_state["panel_setup"]["slo"]["p95_ttft_ms"] == 777.0
    at.switch_page("infercost/ui/pages/compare.py").run()
    assert at.number_input(key="cmp_peak").value == 3.5


def test_buttons_are_never_written_back():
    assert is_kept_widget("cmp_peak") and is_kept_widget("self_host_on")
    assert not is_kept_widget("cmp_add") and not is_kept_widget("save_scenario")


def test_a_kept_value_is_written_back_once_streamlit_dropped_it():
    state = {"slo_p95_ttft_ms": 777.0, "save_scenario": False}
    keep_widget_state(state)
    del state["slo_p95_ttft_ms"]  # what Streamlit does when the widget is not rendered
    keep_widget_state(state)
    assert state["slo_p95_ttft_ms"] == 777.0 and "save_scenario" not in state["_kept_widget_values"]


def test_a_data_editor_comes_back_with_the_table_the_person_edited():
    state: dict = {}
    assert editor_start(state, "points_editor", "prefilled") == "prefilled"
    state["points_editor"] = {"edited_rows": {0: {"x": 7}}}  # Streamlit's record of the edits
    keep_edited(state, "points_editor", "edited")
    assert editor_start(state, "points_editor", "prefilled") == "prefilled"  # the edits still apply to it
    del state["points_editor"]  # another page was shown: Streamlit dropped the edits
    assert editor_start(state, "points_editor", "prefilled") == "edited"


def test_every_default_model_is_in_the_catalog_and_current():
    # Regression: the defaults named claude-sonnet-4-5, gemini-2.5-flash, deepseek-chat and a Together Llama that the
    # catalog marks retired, so a new workload was priced on models no one can call.
    catalog = {entry.id: entry for entry in bundled_api_prices()}
    today = dt.date.today()
    chosen = default_models(list(catalog), today)
    assert len(chosen) >= 5 and len({catalog[model].provider for model in chosen}) >= 5
    assert all(lifecycle(catalog[model], today=today) == "current" for model in chosen), chosen


def test_a_model_line_moves_to_the_successor_once_a_retirement_is_announced():
    catalog = {entry.id: entry for entry in bundled_api_prices()}
    retired = next(e for e in catalog.values() if e.deprecation_date and e.successor in catalog)
    before, after = retired.deprecation_date - dt.timedelta(days=400), retired.deprecation_date
    assert current_model(retired.id, catalog, after) not in (None, retired.id)
    assert current_model(retired.id, catalog, before) != retired.id  # announced: new workloads start on the successor


def test_the_setup_included_in_the_bill_is_compared_too():
    # Regression: Compare priced only its own setups, so the one a person built and included on the bill was missing.
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.toggle(key="self_host_on").set_value(True).run()
    name = at.session_state["panel_setup"]["name"]
    at.switch_page("infercost/ui/pages/compare.py").run()
    assert not at.exception, at.exception
    table = next(frame.value for frame in at.dataframe if "kind" in frame.value.columns)
    assert name in table["option"].tolist()
