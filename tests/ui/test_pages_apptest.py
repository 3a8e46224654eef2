"""Each page runs without an exception (AppTest), and the bill follows the form."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def page(path: str) -> AppTest:
    return AppTest.from_file(str(ROOT / path), default_timeout=120)


def test_the_app_opens_on_the_bill():
    at = page("app.py").run()
    assert not at.exception
    assert at.title[0].value == "Workload and bill"


def monthly_cheapest(at: AppTest) -> str:
    return next(m.value for m in at.metric if m.label == "Cheapest API per month")


def test_changing_calls_per_day_changes_the_bill():
    at = page("infercost/ui/pages/bill.py").run()
    before = monthly_cheapest(at)
    at.number_input(key="calls_per_day").set_value(1_000_000).run()
    assert not at.exception
    after = monthly_cheapest(at)
    dollars = [float(text.strip("$").replace(",", "")) for text in (before, after)]
    assert dollars[1] == pytest.approx(10 * dollars[0], rel=0.01)


def test_a_self_host_setup_joins_the_bill():
    at = page("infercost/ui/pages/bill.py").run()
    at.toggle(key="self_host_on").set_value(True).run()
    assert not at.exception
    frames = [frame.value for frame in at.dataframe]
    assert any("gpu_hours_per_day" in frame.columns for frame in frames)


def test_no_models_says_what_to_do():
    at = page("infercost/ui/pages/bill.py").run()
    at.multiselect(key="api_models").set_value([]).run()
    assert not at.exception and "Pick at least one model" in at.info[0].value


def test_prices_page_shows_ages_and_takes_your_price():
    at = page("infercost/ui/pages/prices.py").run()
    assert not at.exception
    assert "age_days" in at.dataframe[0].value.columns
    at.text_input(key="override_id").set_value("my-model").run()
    at.button(key="save_override").click().run()
    assert not at.exception
    assert at.session_state["price_overrides"][0]["id"] == "my-model"
    assert "my-model" in at.session_state["api_models"]


def test_methodology_page_states_the_semantics():
    at = page("infercost/ui/pages/methodology.py").run()
    assert not at.exception
    assert "every attempt is billed in full" in at.markdown[0].value.lower()


def test_a_prompt_in_characters_is_counted_per_model_and_language():
    at = page("infercost/ui/pages/bill.py").run()
    at.radio(key="prompt_unit").set_value("characters of a language").run()
    at.selectbox(key="language").set_value("hi").run()
    assert not at.exception
    table = next(frame.value for frame in at.dataframe if "prompt_tokens" in frame.value.columns)
    by_model = dict(zip(table["model"], table["prompt_tokens"], strict=True))
    assert len(set(by_model.values())) > 1  # Hindi costs different tokens on different tokenizers


def test_a_hand_written_link_with_a_bad_value_names_that_value():
    # Regression: "?prompt_tokens=1e30" opened the app on "The link's calls_per_day: Field required".
    at = page("app.py")
    at.query_params["prompt_tokens"] = "1e30"
    at.run()
    assert not at.exception
    assert at.error and at.error[0].value.startswith("The link's prompt_tokens:"), [e.value for e in at.error]
