"""The Benchmark page (AppTest): a sweep started from the form against a real server, then compared in plots."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "benchmark.py")


def start_sweep(at: AppTest, url: str, concurrency: str, requests: int) -> None:
    at.text_input(key="bench_base_url").set_value(url)
    at.text_input(key="bench_model").set_value("scripted")
    at.text_input(key="bench_concurrency").set_value(concurrency)
    at.number_input(key="bench_requests").set_value(requests)
    at.number_input(key="bench_output_tokens").set_value(8)
    at.button(key="start").click().run()


def test_page_opens_without_runs() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("No stored runs" in info.value for info in at.info)


def test_sweep_from_the_form_is_stored_and_plotted(scripted) -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    with scripted(ttft_ms=1, gap_us=200) as url:
        start_sweep(at, url, "1,2", 4)
        assert not at.exception
        job = at.session_state["bench_job"]
        assert job.wait(60) and job.error is None
    at.run()
    assert not at.exception
    # throughput, per-user vs aggregate, TTFT and TPOT percentiles, and the engine model beside the run: a scripted
    # server on a CPU has no datasheet, so the simple fitted model carries it and the caption says so
    assert len(at.get("plotly_chart")) == 5
    assert any("cannot simulate" in caption.value for caption in at.caption)
    assert job.summary()["levels"][1]["completed"] == 4
    assert any(job.run_id in str(frame.value["id"].tolist()) for frame in at.dataframe)


def test_bad_levels_are_a_message_not_a_crash() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="bench_model").set_value("m")
    at.text_input(key="bench_concurrency").set_value("one,two")
    at.button(key="start").click().run()
    assert not at.exception and any("concurrency" in error.value for error in at.error)


def test_cancel_stops_a_running_sweep(scripted) -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    with scripted(ttft_ms=50, gap_us=2000) as url:
        start_sweep(at, url, "1,2,3", 50)
        job = at.session_state["bench_job"]
        deadline = time.monotonic() + 30
        while job.progress.done < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        at.run()
        at.button(key="cancel").click().run()
        assert job.wait(60)
    assert job.cancel.is_set() and job.progress.done < 50 and job.error is None


def test_in_process_sweep_from_the_form() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="bench_target").set_value("In process (transformers)").run()
    at.text_input(key="bench_model").set_value("random:tiny-llama")
    at.text_input(key="bench_concurrency").set_value("1,2")
    at.number_input(key="bench_requests").set_value(2)
    at.number_input(key="bench_input_tokens").set_value(8)
    at.number_input(key="bench_output_tokens").set_value(4)
    at.button(key="start").click().run()
    job = at.session_state["bench_job"]
    assert job.wait(120) and job.error is None
    assert [level["batch_size"] for level in job.summary()["levels"]] == [1, 2]
