"""The Scenarios page in AppTest: save the form, see it listed, load it, compare two, share as a link."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.scenarios import profile_to_query
from infercost.store import connect, get_scenario, list_scenarios

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/scenarios.py")


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120)


def save(at: AppTest, name: str) -> AppTest:
    at.text_input(key="name").set_value(name)
    return at.button(key="save_scenario").click().run()


def frame_with(at: AppTest, column: str):
    """AppTest does not expose a dataframe's key: find the table by a column only it has."""
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def dollars(shown):
    """The table shows money as text ("$1,234.56"): the amounts it reads."""
    return shown.map(lambda text: float(text.strip("$").replace(",", "")))


def saved_names(home: Path) -> list[str]:
    with connect(home / "infercost.db") as db:
        return [s["name"] for s in list_scenarios(db)]


def test_an_empty_store_says_what_to_do():
    at = page().run()
    assert not at.exception
    assert "No saved scenarios yet" in at.info[0].value


def test_saving_the_form_lists_the_scenario(infercost_home):
    at = save(page().run(), "base")
    assert not at.exception
    assert saved_names(infercost_home) == ["base"]
    table = frame_with(at, "self-host setups")
    assert list(table["name"]) == ["base"] and table["calls_per_day"][0] == 100_000
    assert "Saved 'base'" in at.success[0].value


def test_two_scenarios_compare_side_by_side(infercost_home):
    at = save(page().run(), "base")
    at.session_state["calls_per_day"] = 400_000
    at = save(at.run(), "four times")
    at.multiselect(key="compare_names").set_value(["base", "four times"]).run()
    assert not at.exception
    frame = frame_with(at, "scenario")
    assert set(frame["scenario"]) == {"base", "four times"}
    base = dollars(frame[frame["scenario"] == "base"].set_index("option")["cost_per_month"])
    bigger = dollars(frame[frame["scenario"] == "four times"].set_index("option")["cost_per_month"])
    assert ((bigger - 4 * base).abs() <= 0.03).all()  # four times the bill, to the cent each figure is shown at
    assert at.get("plotly_chart")


def test_load_duplicate_rename_delete(infercost_home):
    at = save(page().run(), "base")
    at.session_state["calls_per_day"] = 5
    at.button(key="load_scenario").click().run()
    assert at.session_state["calls_per_day"] == 100_000
    at.text_input(key="scenario_new_name").set_value("copy")
    at.button(key="duplicate_scenario").click().run()
    assert saved_names(infercost_home) == ["base", "copy"]
    at.selectbox(key="scenario_selected").set_value("copy").run()
    at.text_input(key="scenario_new_name").set_value("renamed")
    at.button(key="rename_scenario").click().run()
    at.selectbox(key="scenario_selected").set_value("base").run()
    at.button(key="delete_scenario").click().run()
    assert not at.exception
    assert saved_names(infercost_home) == ["renamed"]
    with connect(infercost_home / "infercost.db") as db:
        assert get_scenario(db, "renamed")["profile"]["calls_per_day"] == 100_000


def test_a_shared_link_fills_the_form():
    at = page()
    for key, value in profile_to_query({"calls_per_day": 777, "prompt_tokens": 42, "output_tokens": 7}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert (at.session_state["calls_per_day"], at.session_state["prompt_tokens"]) == (777, 42)


def test_a_malformed_link_is_named_not_a_crash():
    at = page()
    at.query_params["calls_per_day"] = "lots"
    at.run()
    assert not at.exception
    assert "calls_per_day" in at.error[0].value


def test_share_puts_the_form_in_the_address_bar():
    at = page().run()
    at.button(key="share_in_url").click().run()
    assert not at.exception
    assert at.query_params["calls_per_day"] == "100000"
    assert "calls_per_day=100000" in at.code[0].value


def test_the_app_lists_the_scenarios_page():
    at = AppTest.from_file(str(Path(PAGE).parents[3] / "app.py"), default_timeout=120).run()
    assert not at.exception
    at.switch_page("infercost/ui/pages/scenarios.py").run()
    assert not at.exception and at.title[0].value == "Scenarios"


def test_the_form_downloads_as_a_scenario_file_and_every_report_format():
    at = page().run()
    labels = [button.proto.label for button in at.get("download_button")]
    assert labels == ["Scenario file (JSON)", *(f"Report ({fmt})" for fmt in ("markdown", "html", "csv", "json"))]


def test_a_link_nested_thousands_deep_is_a_warning_on_every_page():
    """``app.py`` reads the link before any page draws: a RecursionError there broke every page of the app."""
    at = AppTest.from_file(str(Path(PAGE).parents[3] / "app.py"), default_timeout=120)
    at.query_params["self_host"] = "[" * 5000
    at.run()
    assert not at.exception
    assert at.error[0].value.startswith("The link's self_host: nested 5000 levels deep")
