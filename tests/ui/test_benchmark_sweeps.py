"""One sweep per target at a time, found again (with its progress and cancel) after a reload: AppTest and Chromium."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.errors import InputError
from infercost.runner.jobs import BenchJob
from infercost.runner.scripted_server import Script, running
from infercost.runner.sweep_registry import SWEEPS

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "benchmark.py")


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[str]:
    """A real server on 127.0.0.1 slow enough that a sweep is still running while the test looks at it."""
    with running(Script(ttft_ms=50, gap_us=5000), log=tmp_path / "sent.jsonl") as url:
        yield url


def fill_form(at: AppTest, url: str) -> None:
    at.text_input(key="bench_base_url").set_value(url)
    at.text_input(key="bench_model").set_value("scripted")
    at.text_input(key="bench_concurrency").set_value("1,2")
    at.number_input(key="bench_requests").set_value(200)
    at.number_input(key="bench_output_tokens").set_value(16)


def wait_until(condition, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_second_start_does_not_orphan_the_first_and_a_reload_finds_it(slow_server):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    fill_form(at, slow_server)
    at.button(key="start").click().run()
    first = at.session_state["bench_job"]
    wait_until(lambda: first.progress.done >= 1)
    at.run()
    assert at.button(key="start").disabled  # a sweep against this server is running
    with pytest.raises(InputError, match="already running"):  # a click that slipped through starts nothing
        SWEEPS.start(BenchJob(first.config))
    assert at.session_state["bench_job"] is first and not first.finished

    reloaded = AppTest.from_file(PAGE, default_timeout=60).run()  # a reload is a new session
    assert not reloaded.exception
    assert any(slow_server in bar.proto.text for bar in reloaded.get("progress"))
    sweep_id = next(entry.id for entry in SWEEPS.running() if entry.job is first)
    reloaded.button(key=f"cancel_{sweep_id}").click().run()
    assert first.wait(60) and first.cancel.is_set() and first.error is None


@pytest.mark.browser
def test_in_chromium_start_is_disabled_while_running_and_a_reload_can_cancel(page, app_url, slow_server, tmp_path):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/benchmark")
    page.get_by_role("heading", name="Benchmark").wait_for(timeout=90_000)
    for label, value in (("Base URL", slow_server), ("Model", "scripted"), ("Concurrency (batch sizes in process)",
                         "1,2"), ("Requests per level", "200"), ("Output tokens", "16")):  # fmt: skip
        box = page.get_by_label(label, exact=True)
        box.fill(value)
        box.press("Enter")
        page.wait_for_timeout(300)
    start = page.get_by_role("button", name="Start sweep")
    start.click()
    expect(start).to_be_disabled(timeout=30_000)
    page.get_by_text(f"{slow_server}: level").wait_for(timeout=30_000)
    page.reload()  # a new session: the sweep is still found, with its progress and a cancel
    page.get_by_text(f"{slow_server}: level").wait_for(timeout=90_000)
    page.screenshot(path=str(tmp_path / "benchmark-after-reload.png"), full_page=True)
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text("cancelled: stored below").wait_for(timeout=60_000)
    run_id = page.get_by_text("cancelled: stored below").inner_text().split()[1]
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=60_000)
    page.screenshot(path="/tmp/benchmark-cancelled.png", full_page=True)
    assert page.get_by_test_id("stException").count() == 0
    assert run_id
