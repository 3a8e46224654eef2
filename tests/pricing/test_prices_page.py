"""The Prices page flags retired and retiring models with their successors (AppTest, no exception)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "prices.py"


def test_the_prices_page_marks_retired_models_and_names_successors():
    at = AppTest.from_file(str(PAGE), default_timeout=120).run()
    assert not at.exception
    warning = at.warning[0].value
    assert "retired or retire within 30 days" in warning
    listed = " ".join(m.value for m in at.expander[0].markdown)  # the list is a click away, the headline in view
    assert "**deepseek-chat**: retired 2026-07-24; successor: deepseek-v4-flash" in listed
    table = at.dataframe[0].value
    assert {"lifecycle", "deprecation_date", "successor"} <= set(table.columns)
    assert table.set_index("id").loc["deepseek-chat", "lifecycle"] == "retired"
