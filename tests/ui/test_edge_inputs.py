"""Inputs a person can type that used to stop a page: each must give numbers or a friendly message (AppTest)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "infercost/ui/pages"


def compare_with(**workload) -> AppTest:
    at = AppTest.from_file(str(PAGES / "compare.py"), default_timeout=120)
    for key, value in workload.items():
        at.session_state[key] = value
    return at.run()


def test_zero_output_tokens_still_compares_every_option():
    # Regression: the Bill page accepts 0 output tokens (a classifier, a prefill-only call), but Compare stopped at
    # "output_len: must be a number >= 1" because a fitted profile was carried to 0 output tokens.
    at = compare_with(output_tokens=0)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    table = next(frame.value for frame in at.dataframe if "kind" in frame.value.columns)
    assert (table["kind"] != "API").any() and table["cost_per_month"].notna().all()
