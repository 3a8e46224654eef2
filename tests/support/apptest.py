"""A page of the app run in AppTest with some session state set first, as a person would have left it."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "infercost/ui/pages"


def run_page(page: str, *, timeout_s: float = 120, **state) -> AppTest:
    """``page`` (a file of infercost/ui/pages) after one run with ``state`` in its session; it must not raise."""
    at = AppTest.from_file(str(PAGES / page), default_timeout=timeout_s)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at
