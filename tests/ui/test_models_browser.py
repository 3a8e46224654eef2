"""The Models page in real Chromium: gpt-oss-120b's numbers and its fit table, then another model by its config path
with a bad one shown on the form. Screenshots go to the test's tmp_path (and to $INFERCOST_SCREENSHOTS when set)."""

import json
import os
from pathlib import Path

import pytest

from infercost.performance.models import bundled_config
from tests.support.browser import settle

pytestmark = pytest.mark.browser


def shot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True)
    if os.environ.get("INFERCOST_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["INFERCOST_SCREENSHOTS"]) / name), full_page=True)


def metric_value(page, label: str) -> str:
    card = page.locator("[data-testid=stMetric]").filter(has_text=label).first
    return card.locator("[data-testid=stMetricValue]").inner_text()


def test_models_page_in_chromium(page, app_url, tmp_path):
    page.goto(f"{app_url}/models")
    page.get_by_text("Where it fits").first.wait_for(timeout=120_000)
    settle(page)
    assert metric_value(page, "Parameters") == "116.83B"
    assert metric_value(page, "Weights (mxfp4)") == "65.2 GB"
    grid = page.locator("[data-testid=stDataFrame]:visible").first
    grid.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelector('[data-testid=stDataFrame] table th')", timeout=60_000)
    headers = page.evaluate("""() => [...document.querySelector('[data-testid=stDataFrame] table')
                               .querySelectorAll('th')].map(th => th.innerText)""")
    assert {"gpu", "1 GPU", "8 GPUs", "mxfp4 on this GPU"} <= set(headers), headers
    shot(page, tmp_path, "models-gpt-oss-120b.png")

    config = tmp_path / "config.json"
    config.write_text(json.dumps(bundled_config("qwen3-8b")))
    other = "Another model (Hugging Face id or config.json path)"
    box = page.get_by_test_id("stSelectbox").filter(has_text="Model").first.locator("input")
    box.click()
    box.fill("Another model")
    page.get_by_role("option", name=other).click()
    settle(page)
    box = page.get_by_label("Hugging Face id, config.json or model directory")
    box.wait_for(timeout=60_000)
    box.fill(str(tmp_path / "nope.json"))
    box.press("Enter")
    settle(page)
    page.get_by_text("no config.json at").first.wait_for(timeout=60_000)
    shot(page, tmp_path, "models-bad-path.png")
    box.fill(str(config))
    box.press("Enter")
    settle(page)
    page.get_by_text("config.json from local").first.wait_for(timeout=60_000)
    assert metric_value(page, "Parameters") == "8.19B"
    shot(page, tmp_path, "models-local-config.png")
