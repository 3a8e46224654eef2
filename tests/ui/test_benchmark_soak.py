"""The Benchmark form's soak (the CLI's --duration and --windows): a level held for a time, latency per window (AppTest
against a real server on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.runner.scripted_server import Script, running
from infercost.runner.sweep import run_summary

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "benchmark.py")


def test_a_soak_started_on_the_form_holds_each_level_and_reports_windows(tmp_path):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    with running(Script(ttft_ms=5, gap_us=2000), log=tmp_path / "sent.jsonl") as url:
        at.text_input(key="bench_base_url").set_value(url)
        at.text_input(key="bench_model").set_value("scripted")
        at.text_input(key="bench_concurrency").set_value("1")
        at.number_input(key="bench_output_tokens").set_value(8)
        at.toggle(key="bench_soak").set_value(True).run()
        assert at.number_input(key="bench_requests").disabled
        at.number_input(key="bench_duration_s").set_value(2.0)
        at.number_input(key="bench_window_s").set_value(0.4).run()
        at.button(key="start").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        job = at.session_state["bench_job"]
        assert job.config.duration_s == 2.0 and job.config.window_s == 0.4 and job.config.requests is None
        assert job.wait(60) and job.error is None
    level = run_summary(None, job.run_id)["levels"][0]
    assert len(level["over_time"]) >= 4  # 2 s in windows of 0.4 s (the last may be cut short)
    assert level["completed"] > 20  # sent for the duration, not the form's 20 requests
