"""Issue 24: the Compare page's bill band in real Chromium at 1400 px: both spreads are inputs in view, the caption says
what the band drew for the tokenizer, and an API row's P10–P90 sits in the table beside its cost."""

import pytest

from tests.ui.test_compare_browser import open_tab, shot

pytestmark = pytest.mark.browser


def test_the_band_tab_states_its_spreads_and_the_tokenizer_it_drew(page, app_url, tmp_path):
    page.goto(f"{app_url}/compare")
    page.get_by_text("Every option, one table").wait_for(timeout=120_000)
    grid = page.locator("[data-testid=stDataFrame]:visible").first
    grid.wait_for(timeout=60_000)
    open_tab(page, "Bill band (P10–P99)")
    for label in ("Day-to-day spread of calls per day (CV)", "Call-to-call spread of output tokens (CV)"):
        assert page.get_by_role("spinbutton", name=label).is_visible()
    caption = page.get_by_text("Tokenizer:").first
    assert caption.is_visible() and "output lengths (gamma, CV 50%)" in caption.inner_text()
    page.get_by_text("lies inside the P10–P90 band").first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    shot(page, tmp_path, "compare-band-tab.png")
