"""The Prices page in Chromium: an uploaded price map is shown as a diff, and applies only when asked."""

import json
from pathlib import Path

import pytest

from tests.ui.conftest import app_url, browser, page  # noqa: F401  (a real app server and Debian's Chromium)

pytestmark = pytest.mark.browser
EXCERPT = Path(__file__).with_name("fixtures") / "litellm_1.110.2_excerpt.json"


def open_your_prices(page, app_url):  # noqa: F811
    page.goto(f"{app_url}/prices")
    page.get_by_role("tab", name="Your prices").click(timeout=60_000)


def test_an_uploaded_map_is_reviewed_then_applied(page, app_url, tmp_path):  # noqa: F811
    document = json.loads(EXCERPT.read_text())
    document["gpt-4o"] = document["gpt-4o"] | {"input_cost_per_token": 2e-06}
    document["gpt-5"] = document["gpt-5"] | {"output_cost_per_token": "ten dollars"}
    upload = tmp_path / "map.json"
    upload.write_text(json.dumps(document))
    open_your_prices(page, app_url)
    page.locator("input[type=file]").set_input_files(str(upload))
    page.get_by_role("button", name="Review prices").click(timeout=60_000)
    page.get_by_text("This file would change").wait_for(timeout=60_000)
    assert page.get_by_text("1 changed values").count() == 1
    assert page.get_by_test_id("stException").count() == 0
    apply = page.get_by_role("button", name="Apply 1 prices")
    apply.wait_for(timeout=60_000)
    apply.click()
    page.get_by_text("Applied 1 prices").wait_for(timeout=60_000)
    assert page.get_by_test_id("stException").count() == 0
