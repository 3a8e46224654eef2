"""The app in a real browser: it renders, and changing an input changes the bill."""

import re

import pytest

pytestmark = pytest.mark.browser


def cheapest_monthly(page) -> float:
    metric = page.get_by_test_id("stMetric").filter(has_text="Cheapest API per month")
    text = metric.get_by_test_id("stMetricValue").inner_text(timeout=60_000)
    return float(re.sub(r"[^0-9.]", "", text))


def test_changing_calls_per_day_changes_the_bill(page, tmp_path):
    page.get_by_text("Workload and bill").first.wait_for(timeout=60_000)
    before = cheapest_monthly(page)
    calls = page.get_by_label("Calls per day")
    calls.fill("1000000")
    calls.press("Enter")
    page.wait_for_function(
        "(before) => [...document.querySelectorAll('[data-testid=stMetricValue]')]"
        ".some(e => parseFloat(e.innerText.replace(/[^0-9.]/g, '')) > before * 5)",
        arg=before, timeout=60_000,
    )  # fmt: skip
    assert cheapest_monthly(page) == pytest.approx(before * 10, rel=0.01)
    page.screenshot(path=str(tmp_path / "bill.png"), full_page=True)


def test_the_bill_table_and_charts_render(page):
    page.get_by_text("Cheapest API per month").wait_for(timeout=60_000)
    page.locator("[data-testid=stDataFrame]:visible").first.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    assert page.get_by_test_id("stException").count() == 0
