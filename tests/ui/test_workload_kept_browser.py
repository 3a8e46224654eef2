"""The workload a person typed is the same on every page, whichever pages they visit in between (a real browser)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import settle
from tests.ui.test_glue_browser import WAIT_MS, go_to, set_number

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("detour", ["Benchmark", "Batch jobs"])
def test_the_workload_survives_a_visit_to_a_page_that_refreshes_itself(page, detour):
    """Benchmark and Batch jobs redraw parts of themselves every second; the form must still be there afterwards."""
    page.get_by_text("Cheapest API per month").wait_for(timeout=WAIT_MS)
    set_number(page, "Calls per day", "250000")
    set_number(page, "Output tokens per call", "333")
    go_to(page, detour)
    page.wait_for_timeout(3500)  # several of the page's own timed refreshes
    go_to(page, "Compare")
    page.get_by_text(re.compile(r"Workload: 250,000 calls/day .* \+ 333 output tokens")).first.wait_for(
        timeout=WAIT_MS
    )
    go_to(page, "Workload and bill")
    expect(page.get_by_label("Calls per day", exact=True)).to_have_value("250000")
    expect(page.get_by_label("Output tokens per call", exact=True)).to_have_value("333")


def test_a_report_downloaded_under_a_scenario_name_is_titled_with_it(page):
    page.get_by_text("Cheapest API per month").wait_for(timeout=WAIT_MS)
    go_to(page, "Scenarios")
    name = page.get_by_label("Scenario name")
    name.fill("support-bot-zh-250k")
    name.press("Enter")
    settle(page)
    with page.expect_download() as download:
        page.get_by_test_id("stDownloadButton").filter(has_text="Report (markdown)").first.click()
    report = open(download.value.path(), encoding="utf-8").read()
    assert "Scenario: support-bot-zh-250k" in report
    assert "my-workload" not in report


def test_the_form_survives_a_reload_on_a_page_that_stops_early(page):
    """The Scenarios page ends its run early (``st.stop()``) until two scenarios are saved: the address bar was then
    never written, so a reload there put 500,000 calls/day back to 100,000 (a persona walk found it)."""
    page.get_by_text("Cheapest API per month").wait_for(timeout=WAIT_MS)
    set_number(page, "Calls per day", "500000")
    # it stops early with no scenario saved, or fewer than two picked to compare (the store is the session app's)
    go_to(page, "Scenarios")
    page.get_by_text("The current form", exact=True).wait_for(timeout=WAIT_MS)
    settle(page)
    assert "calls_per_day=500000" in page.url, page.url
    page.reload()
    page.get_by_role("heading", name="Scenarios").first.wait_for(timeout=WAIT_MS)
    settle(page)
    go_to(page, "Workload and bill")
    expect(page.get_by_label("Calls per day", exact=True)).to_have_value("500000")
