"""The comparison page in real Chromium at 1400 px: money in view, break-even shaded, a log-log claim check, a band
that contains the bill. Screenshots go to the test's tmp_path (and to $INFERCOST_SCREENSHOTS when set)."""

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
MONEY = ["US$/month", "P10–P90", "US$/call", "US$/1M tok"]


def shot(locator, tmp_path: Path, name: str) -> None:
    locator.screenshot(path=str(tmp_path / name))
    if os.environ.get("INFERCOST_SCREENSHOTS"):
        locator.screenshot(path=str(Path(os.environ["INFERCOST_SCREENSHOTS"]) / name))


def visible_headers(page) -> list[str]:
    """The data grid's accessible table holds the columns in view, so it says what a person sees unscrolled."""
    return page.evaluate("""() => [...document.querySelector('[data-testid=stDataFrame] table').querySelectorAll('th')]
                             .map(th => th.innerText)""")


def plot_layout(page, index: int = 0) -> dict:
    return page.evaluate("""(i) => { const p = [...document.querySelectorAll('.js-plotly-plot')]
        .filter(e => e.offsetParent !== null)[i];
        return {shapes: p.layout.shapes || [], xaxis: p.layout.xaxis.type, yaxis: p.layout.yaxis.type,
                text: [...p.querySelectorAll('.textpoint text')].map(t => t.textContent)}; }""", index)


def open_tab(page, name: str):
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(300)  # only the open tab runs: wait for the run that draws it
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                           ".getAttribute('data-test-script-state') === 'notRunning'", timeout=60_000)
    chart = page.locator(".js-plotly-plot:visible").first
    chart.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)  # let plotly finish drawing
    return chart


def test_compare_page_at_1400_px(page, app_url, tmp_path):
    page.goto(f"{app_url}/compare")
    page.get_by_text("Every option, one table").wait_for(timeout=120_000)
    table = page.locator("[data-testid=stDataFrame]:visible").first
    table.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelector('[data-testid=stDataFrame] table th')", timeout=60_000)
    page.wait_for_timeout(1000)
    # a predicted cost in view with its range and its basis (the basis column was scrolled off to the right)
    assert {*MONEY, "basis"} <= set(visible_headers(page)), visible_headers(page)
    shot(table, tmp_path, "compare-table.png")

    chart = open_tab(page, "Against volume (break-even)")
    assert any(shape["type"] == "rect" for shape in plot_layout(page)["shapes"])  # shaded cheaper regions
    assert page.get_by_text("(shaded; exact on the cost steps").first.is_visible()
    shot(chart, tmp_path, "compare-break-even.png")

    chart = open_tab(page, "Check a speed claim")
    layout = plot_layout(page)
    assert (layout["xaxis"], layout["yaxis"]) == ("log", "log")
    assert len([s for s in layout["shapes"] if s["type"] == "line"]) == 2  # the claim read both ways
    assert {"c=1", "c=5", "c=25"} <= set(layout["text"])  # each point labelled with its concurrency
    shot(chart, tmp_path, "compare-claim.png")
    readings = page.get_by_text("What this workload needs on")
    readings.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(tmp_path / "compare-claim-readings.png"))
    if os.environ.get("INFERCOST_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["INFERCOST_SCREENSHOTS"]) / "compare-claim-readings.png"))

    chart = open_tab(page, "Bill band (P10–P99)")
    assert page.get_by_text("lies inside the P10–P90 band").first.is_visible()
    shot(chart, tmp_path, "compare-band.png")

    chart = open_tab(page, "Predicted against measured")
    traces = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].filter(e => e.offsetParent)
                              .flatMap(p => p.data.map(t => t.name))""")
    assert any(name.startswith("predicted at") for name in traces), traces
    assert page.get_by_text("transfer").first.is_visible()  # the predicted curve says its basis and expected error
    shot(chart, tmp_path, "compare-predicted.png")
    assert page.get_by_test_id("stException").count() == 0
