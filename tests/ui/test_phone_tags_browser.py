"""Issue 24: on a phone (390x844) the Bill page's model picker showed five of its six tags and cut the sixth: the tags
scrolled inside a box 155 px high. The box now grows with its tags (real Chromium)."""

import pytest

from tests.ui.test_compare_browser import shot

pytestmark = pytest.mark.browser

TAG_BOXES = """() => [...document.querySelectorAll('[data-testid=stMultiSelect] .react-aria-ComboBox > div')]
    .map(box => ({client: box.clientHeight, scroll: box.scrollHeight,
                  inner: [...box.querySelectorAll('div')].map(d => d.scrollHeight - d.clientHeight)}))"""


def test_every_model_tag_shows_on_a_phone(browser, app_url, tmp_path):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(app_url)
        page.get_by_role("heading", name="The bill").first.wait_for(timeout=120_000)
        picker = page.get_by_test_id("stMultiSelect").first
        picker.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        shot(picker, tmp_path, "phone-models.png")
        assert picker.inner_text().count("\n") >= 5  # the six default models (and the label)
        [box] = page.evaluate(TAG_BOXES)[:1]
        assert box["scroll"] <= box["client"] and max(box["inner"], default=0) <= 1, box  # nothing scrolled away
    finally:
        context.close()


LABEL_SHARE = """() => {
    const chart = document.querySelector('[data-testid=stVegaLiteChart] svg');
    const labels = [...chart.querySelectorAll('.role-axis-label text')].map(t => t.getBBox().width);
    return {chart: chart.getBoundingClientRect().width, widest: Math.max(...labels)};
}"""


def test_compare_on_a_phone_shows_every_setup_tag_and_bars_beside_their_labels(browser, app_url, tmp_path):
    """At 390 px Compare's setups picker cut its fifth tag, and the bar chart's labels (up to 400 px) took the whole
    width, leaving the bars none."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/compare")
        page.get_by_text("Every option, one table").wait_for(timeout=120_000)
        page.locator("[data-testid=stVegaLiteChart] svg .role-axis-label text").first.wait_for(timeout=120_000)
        boxes = page.evaluate(TAG_BOXES)
        assert boxes and all(b["scroll"] <= b["client"] and max(b["inner"], default=0) <= 1 for b in boxes), boxes
        chart = page.get_by_test_id("stVegaLiteChart").first
        chart.scroll_into_view_if_needed()
        shot(chart, tmp_path, "phone-compare-bars.png")
        share = page.evaluate(LABEL_SHARE)
        assert share["widest"] <= share["chart"] / 3 + 2, share
    finally:
        context.close()


LEGEND_FITS = """() => {
    const chart = document.querySelector('[data-testid=stVegaLiteChart]');
    const box = chart.getBoundingClientRect();
    const right = Math.max(...[...chart.querySelectorAll('.role-legend-label text')]
        .map(t => t.getBoundingClientRect().right));
    return {chart_right: box.right, legend_right: right};
}"""


def test_the_languages_chart_legend_wraps_on_a_phone(browser, app_url, tmp_path):
    """Six tokenizers in one legend row ran off the chart's right edge at 390 px (mistral-tekken and llama3 cut)."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/tokens")
        page.locator("[data-testid=stVegaLiteChart] .role-legend-label text").first.wait_for(timeout=120_000)
        chart = page.get_by_test_id("stVegaLiteChart").first
        chart.scroll_into_view_if_needed()
        shot(chart, tmp_path, "phone-tokens-legend.png")
        fits = page.evaluate(LEGEND_FITS)
        assert fits["legend_right"] <= fits["chart_right"] + 1, fits
    finally:
        context.close()
