"""Issue 24: a batch job started from the page moves within seconds, and says it is starting meanwhile (it took 12-15 s
before anything moved: a rerun of the whole page after *Start*, and a job process that imported scipy for nothing)."""

from __future__ import annotations

import time

import pytest

from tests.batch.conftest import write_batch_file
from tests.batch.test_browser import browser, fill  # noqa: F401 - Chromium for this module
from tests.ui.conftest import app_url, page  # noqa: F401 - the real app server

pytestmark = pytest.mark.browser
FIRST_RECORDS_S = 8.0  # about 3 s here after the fix, 12-15 s in the walkthrough; a busy machine gets slack


def test_start_says_it_is_starting_and_records_move_within_seconds(page, tmp_path, scripted):  # noqa: F811
    source = write_batch_file(tmp_path / "in.jsonl", 50)
    page.goto(page.url.rstrip("/") + "/batch")
    page.locator("input[type=file]").first.set_input_files(str(source))
    with scripted() as url:
        fill(page, "Base URL", url)
        fill(page, "Model", "scripted")
        page.get_by_role("button", name="Plan the budget").click()
        page.get_by_role("button", name="Start").wait_for(timeout=60_000)
        page.wait_for_timeout(1500)  # the page settles after planning
        clicked = time.monotonic()
        page.get_by_role("button", name="Start").click()
        page.get_by_text("Starting the job's own process").or_(page.get_by_text(": running")).or_(
            page.get_by_text(": done")).first.wait_for(timeout=30_000)
        said = time.monotonic() - clicked
        page.get_by_text(": done").first.wait_for(timeout=60_000)
        moved = time.monotonic() - clicked
    page.screenshot(path=str(tmp_path / "batch-started.png"), full_page=True)
    assert said < 2.5, f"{said:.1f} s before the page said anything"
    assert moved < FIRST_RECORDS_S, f"{moved:.1f} s from Start to the job done"
