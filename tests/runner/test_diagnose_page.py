"""The Benchmark page's diagnosis panel (AppTest): the steps of a stored soak run, and its latency over time."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.runner.sweep import run_sweep

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "benchmark.py")


def test_diagnosis_and_latency_over_time_of_a_soak_run(scripted, sweep_config) -> None:
    with scripted(ttft_ms=2, gap_us=500) as url:
        run_id = run_sweep(sweep_config(url, levels=[2], requests=None, duration_s=0.6, window_s=0.1), db_path=None)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and at.selectbox(key="diagnose_run").value == run_id
    text = " ".join(md.value for md in at.markdown)
    assert "1. Inputs" in text and "5. Baseline" in text and "could not check" in text
    keys = [chart.proto.id for chart in at.get("plotly_chart")]
    assert any(key.endswith("plot_over_time_tpot") for key in keys)
    assert any(key.endswith("plot_over_time_ttft") for key in keys)


def test_a_bad_claim_is_a_message(scripted, sweep_config) -> None:
    with scripted(ttft_ms=1, gap_us=200) as url:
        run_sweep(sweep_config(url, levels=[1]), db_path=None)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="diagnose_against").set_value("published:no-such-claim").run()
    assert not at.exception and any("run" in error.value for error in at.error)
