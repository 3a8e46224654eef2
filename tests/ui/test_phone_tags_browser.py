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
