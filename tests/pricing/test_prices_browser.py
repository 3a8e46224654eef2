"""The Prices page in Chromium: an uploaded price map is shown as a diff, and applies only when asked."""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, wait_for

pytestmark = pytest.mark.browser
EXCERPT = Path(__file__).with_name("fixtures") / "litellm_1.110.2_excerpt.json"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    port, home = free_port(), tmp_path_factory.mktemp("prices-browser-home")
    app = subprocess.Popen([sys.executable, "-m", "infercost", "app", "--port", str(port)], cwd=ROOT,
                           env={**os.environ, "INFERCOST_HOME": str(home)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/_stcore/health", app)
        yield f"http://127.0.0.1:{port}"
    finally:
        app.terminate()
        app.wait(timeout=20)


def in_chromium(check, *args):
    """Run ``check(page, *args)`` in its own thread: Playwright's sync API refuses to start beside another session
    (tests/ui keeps one open for the whole run), and a thread has no event loop of its own yet."""
    from playwright.sync_api import sync_playwright

    def run():
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                return check(chromium.new_context(viewport={"width": 1400, "height": 1000}).new_page(), *args)
            finally:
                chromium.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result(timeout=300)


def review_then_apply(page, app_url, upload):
    page.goto(f"{app_url}/prices")
    page.get_by_role("tab", name="Your prices").click(timeout=60_000)
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


def test_an_uploaded_map_is_reviewed_then_applied(app_url, tmp_path):
    document = json.loads(EXCERPT.read_text())
    document["gpt-4o"] = document["gpt-4o"] | {"input_cost_per_token": 2e-06}
    document["gpt-5"] = document["gpt-5"] | {"output_cost_per_token": "ten dollars"}
    upload = tmp_path / "map.json"
    upload.write_text(json.dumps(document))
    in_chromium(review_then_apply, app_url, upload)
