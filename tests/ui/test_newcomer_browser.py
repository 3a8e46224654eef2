"""The README's first three tour steps in real Chromium, as someone new to the app takes them: price a workload on
APIs, add a self-hosted setup of an open model and read its range (and the same weights from APIs), then check a
vendor's speed claim as a skeptic would, naming the model, GPU and lengths it was measured on. Each step's
screenshot and the app's time per step go to the test's tmp_path (and to $INFERCOST_SCREENSHOTS when set)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser import settle
from tests.ui.test_glue_browser import choose, go_to, open_expander, open_list, set_number

pytestmark = pytest.mark.browser
WAIT_MS = 120_000


def shot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True)
    if os.environ.get("INFERCOST_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["INFERCOST_SCREENSHOTS"]) / name), full_page=True)


def tables(page) -> str:
    """The text of every table in view (the grid draws on a canvas and mirrors its cells in a hidden table)."""
    page.wait_for_function("() => document.querySelector('[data-testid=stDataFrame] table td')", timeout=WAIT_MS)
    page.wait_for_timeout(500)  # the grid fills its mirror a moment after it draws
    frames = page.locator("[data-testid=stDataFrame]:visible")
    return "\n".join(" | ".join(frames.nth(i).locator("th, td").all_text_contents()) for i in range(frames.count()))


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    settle(page)


def test_a_newcomer_prices_a_workload_compares_self_hosting_and_checks_a_claim(browser, app_url, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})  # tall: the app scrolls inside main
    page = context.new_page()
    seconds: dict[str, float] = {}
    try:
        start = time.monotonic()
        page.goto(app_url)
        page.get_by_text("Cheapest API per month").wait_for(timeout=WAIT_MS)
        set_number(page, "Calls per day", "250000")
        bill = tables(page)
        assert {"exact", "proxy"} & set(bill.split(" | ")) and "None" not in bill  # which tokenizer counted
        seconds["1 price a workload"] = time.monotonic() - start
        shot(page, tmp_path, "tour-1-bill.png")

        start = time.monotonic()
        go_to(page, "Compare")
        open_expander(page, "Add a self-host setup")
        choose(page, "Model", "llama-3.1-8b")
        page.get_by_role("button", name="Add setup").click()
        settle(page)
        added = "llama-3.1-8b · 1× H100 SXM (bfloat16, roofline)"
        expect(page.get_by_test_id("stMultiSelect").filter(has_text="Your setups")).to_contain_text(added)
        table = tables(page)
        assert "$" in table and "–" in table and "None" not in table  # its cost, and the P10–P90 range beside it
        assert page.get_by_text("Cheapest self-host per month").count() == 1
        open_tab(page, "Same weights: API or self-host")
        sentence = page.locator("[data-testid=stMarkdownContainer]").filter(has_text="calls/day").filter(
            has_text="Basis:").first  # fmt: skip
        expect(sentence).to_contain_text("250,000 calls/day", timeout=WAIT_MS)
        seconds["2 compare self-hosting"] = time.monotonic() - start
        shot(page, tmp_path, "tour-2-compare.png")

        start = time.monotonic()
        open_tab(page, "Check a speed claim")
        set_number(page, "Vendor's claim (tokens/s)", "14000")
        name = page.get_by_label("Model it was measured on")
        name.fill("llama-3-8b")
        name.press("Enter")
        settle(page)
        gpu = page.get_by_test_id("stTabs").get_by_role("combobox", name="GPU", exact=True)
        open_list(page, gpu)
        gpu.fill("H100 SXM")
        page.get_by_role("option", name="H100 SXM", exact=True).click()
        settle(page)
        set_number(page, "GPUs per replica (0: not said)", "1")
        set_number(page, "Input tokens per request (0: not said)", "200")
        set_number(page, "Output tokens per request (0: not said)", "1000")
        verdict = page.locator("[data-testid=stMarkdownContainer] strong").filter(has_text="14,000 tokens/s").first
        expect(verdict).to_contain_text("the most this setup serves in total", timeout=WAIT_MS)  # "No: …"
        assert "Not like for like" not in verdict.inner_text()  # the profile offered first is the claim's own setup
        expect(page.get_by_text("What this workload needs on")).to_be_visible()
        seconds["3 check a speed claim"] = time.monotonic() - start
        shot(page, tmp_path, "tour-3-claim.png")
        assert page.get_by_test_id("stException").count() == 0
    finally:
        (tmp_path / "tour-seconds.json").write_text(json.dumps(seconds, indent=1), encoding="utf-8")
        print("app time per tour step (s):", json.dumps({k: round(v, 1) for k, v in seconds.items()}))
        context.close()
