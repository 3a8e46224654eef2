"""An exported HTML report fits a 1400 px window in Chromium: it was 2,506 px wide (issue 24)."""

from __future__ import annotations

import pytest

from infercost.estimate import estimate
from infercost.performance.profiles import closed_loop_profiles
from infercost.profile import parse_profile
from infercost.report import render_report
from infercost.ui.setups import default_setups

pytestmark = pytest.mark.browser


def test_the_html_report_is_no_wider_than_its_window(browser):
    profile = {"name": "support-bot-zh-250k", "calls_per_day": 250_000, "prompt_tokens": 1200, "output_tokens": 300,
               "api_models": ["gpt-4o-mini", "claude-sonnet-4-5", "together/meta-llama-3.1-8b"],
               "self_host": default_setups(closed_loop_profiles(), {})}  # fmt: skip
    report = render_report(estimate(parse_profile(profile)), "html")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_content(report)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    assert page.get_by_role("heading", name="Scenario: support-bot-zh-250k").is_visible()
    context.close()
