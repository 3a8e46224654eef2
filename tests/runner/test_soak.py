"""Soak runs: per-window summaries, and a drift verdict that finds a server slowing down and not a steady one."""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost.runner.soak import drift, over_time
from infercost.runner.sweep import run_summary, run_sweep


def _record(t0: float, ttft_s: float, tpot_s: float, n_out: int = 5, status: str = "ok") -> dict:
    return {"t0": t0, "t_first": t0 + ttft_s, "t_last": t0 + ttft_s + tpot_s * (n_out - 1), "n_out": n_out,
            "status": status, "session": 0}


def test_windows_summarise_the_requests_sent_in_them() -> None:
    records = [_record(0.0, 0.010, 0.002), _record(0.5, 0.030, 0.004), _record(1.2, 0.050, 0.006),
               _record(1.5, 0.0, 0.0, n_out=0, status="timeout")]
    first, second = over_time(records, window_s=1.0)
    assert (first["t_start_s"], first["t_end_s"], first["requests"]) == (0.0, 1.0, 2)
    assert first["p50_ttft_ms"] == pytest.approx(20.0) and first["p50_tpot_ms"] == pytest.approx(3.0)
    assert second["requests"] == 1 and second["failures"] == 1 and second["p95_tpot_ms"] == pytest.approx(6.0)
    # 15 tokens: 10 arrive in the first second, the third request's 5 (1.25 s to 1.274 s) in the second
    assert first["output_throughput"] == pytest.approx(10.0)


def test_a_resumed_level_lays_its_sessions_end_to_end() -> None:
    records = [_record(100.0, 0.01, 0.001), {**_record(5.0, 0.01, 0.001), "session": 1}]  # a new process's clock
    windows = over_time(records, window_s=0.01)
    assert sum(w["requests"] for w in windows) == 2 and windows[0]["t_start_s"] == 0.0


def test_drift_needs_enough_windows() -> None:
    windows = [{"t_start_s": k, "t_end_s": k + 1, "p50_tpot_ms": 1.0 + k} for k in range(4)]
    assert drift(windows)["verdict"] == "too few windows"


def test_drift_slope_is_per_hour() -> None:
    windows = [{"t_start_s": k, "t_end_s": k + 1, "p50_tpot_ms": 10.0 + 0.5 * k} for k in range(12)]
    result = drift(windows)
    assert result["verdict"] == "degrading" and result["slope_per_hour"] == pytest.approx(1800.0)
    assert result["p_value"] < 1e-4


@pytest.mark.parametrize(("degrade_per_s", "verdict"), [(1.0, "degrading"), (0.0, "steady")])
def test_drift_found_when_the_server_degrades_and_not_when_steady(scripted, sweep_config, tmp_path: Path,
                                                                  degrade_per_s: float, verdict: str) -> None:
    db = tmp_path / "r.db"
    with scripted(ttft_ms=2, gap_us=2000, degrade_per_s=degrade_per_s) as url:
        config = sweep_config(url, levels=[2], requests=None, duration_s=2.4, window_s=0.2)
        run_id = run_sweep(config, db_path=db)
    [level] = run_summary(db, run_id)["levels"]
    assert len(level["over_time"]) >= 10
    assert set(level["over_time"][0]) >= {"t_start_s", "t_end_s", "p50_ttft_ms", "p95_ttft_ms", "p50_tpot_ms",
                                          "p95_tpot_ms", "output_throughput", "failures"}
    assert level["drift"]["metric"] == "p50_tpot_ms" and level["drift"]["verdict"] == verdict
    if degrade_per_s:  # 2 ms a token, growing by 2 ms every second: about 7200 ms an hour
        assert 3000 < level["drift"]["slope_per_hour"] < 12000


def test_a_significant_but_negligible_creep_is_steady() -> None:
    windows = [{"t_start_s": k, "t_end_s": k + 1, "p50_tpot_ms": 2.0 + 0.001 * k} for k in range(12)]
    result = drift(windows)
    assert result["p_value"] < 1e-4 and result["verdict"] == "steady"
