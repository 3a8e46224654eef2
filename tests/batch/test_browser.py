"""The Batch jobs page in a real browser: plan a job, see its budget, start it, and see the bill beside the budget."""

from __future__ import annotations

import pytest

from tests.batch.conftest import write_batch_file
from tests.support.browser import settle
from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, app_url, page  # noqa: F401 - the real app server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    """Chromium for this module only: Playwright's sync API keeps an event loop running in the main thread while it
    is open, and the tests that follow this module call ``asyncio.run``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def fill(tab, label: str, value: str) -> None:
    box = tab.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    settle(tab)  # a click that lands while the page reruns can be dropped


def test_plan_and_run_a_job_in_the_browser(page, app_url, tmp_path, scripted):  # noqa: F811
    source = write_batch_file(tmp_path / "in.jsonl", 200)
    page.goto(f"{app_url}/batch")
    page.locator("input[type=file]").first.set_input_files(str(source))  # the app reads no host path by default
    settle(page)
    with scripted() as url:
        fill(page, "Base URL", url)
        fill(page, "Model", "scripted")
        page.get_by_test_id("stSelectbox").filter(has_text="Price as").click()
        page.keyboard.type("gpt-4o-mini")
        page.get_by_role("option", name="gpt-4o-mini", exact=True).click()
        settle(page)
        page.get_by_role("button", name="Plan the budget").click()
        page.get_by_text(": created").first.wait_for(timeout=120_000)  # the planned job's own view, with its budget
        page.get_by_role("button", name="Start").click(timeout=60_000)
        page.get_by_text(": done").first.wait_for(timeout=90_000)
    page.get_by_role("button", name="Download outputs (zip)").wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # let the tables draw
    page.screenshot(path=str(tmp_path / "batch.png"), full_page=True)
    assert page.get_by_test_id("stException").count() == 0
    assert page.get_by_text("200 of 200 records").count() == 1
    assert page.get_by_text("gpt-4o-mini (OpenAI)", exact=False).count() == 1  # priced, with the price's basis
