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
        """(before) => {
            const metric = [...document.querySelectorAll('[data-testid=stMetric]')]
                .find(e => e.innerText.includes('Cheapest API per month'));
            const value = metric && metric.querySelector('[data-testid=stMetricValue]');
            return value && parseFloat(value.innerText.replace(/[^0-9.]/g, '')) > before * 5;
        }""",
        arg=before, timeout=60_000,
    )  # fmt: skip
    assert cheapest_monthly(page) == pytest.approx(before * 10, rel=0.01)
    page.screenshot(path=str(tmp_path / "bill.png"), full_page=True)


def test_the_bill_table_and_charts_render(page):
    page.get_by_text("Cheapest API per month").wait_for(timeout=60_000)
    page.locator("[data-testid=stDataFrame]:visible").first.wait_for(timeout=60_000)
    page.locator("[data-testid=stVegaLiteChart] canvas, [data-testid=stVegaLiteChart] svg").first.wait_for(
        timeout=60_000
    )
    assert page.get_by_test_id("stException").count() == 0


def not_blank(png: bytes) -> bool:
    """A rendered table or chart has many colours; a blank or failed render has one or two."""
    import io

    from PIL import Image

    return len(Image.open(io.BytesIO(png)).convert("RGB").getcolors(maxcolors=1_000_000) or []) > 20


def test_the_comparison_page_shows_its_table_and_charts(page, app_url, tmp_path):
    page.goto(f"{app_url}/compare")
    page.get_by_text("Every option, one table").wait_for(timeout=90_000)
    table = page.locator("[data-testid=stDataFrame]:visible").first
    table.wait_for(timeout=60_000)
    chart = page.locator("[data-testid=stVegaLiteChart]:visible").first
    chart.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)  # let the canvas grid and plotly finish drawing
    assert not_blank(table.screenshot(path=str(tmp_path / "table.png")))
    assert not_blank(chart.screenshot(path=str(tmp_path / "chart.png")))
    page.get_by_role("tab", name="Against volume (break-even)").click()
    curves = page.locator(".js-plotly-plot:visible").first
    curves.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    assert not_blank(curves.screenshot())
    assert page.get_by_test_id("stException").count() == 0
