"""Is the client the bottleneck? The flag rises when the runner is starved, and GPU sampling says when it skipped."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import pytest

from infercost.runner.client_monitor import client_verdict
from infercost.runner.sweep import run_summary, run_sweep


def test_verdict_flags_a_busy_core_and_a_late_loop() -> None:
    assert client_verdict(0.95, 1.0, [0.001])["client_bound"]
    assert client_verdict(0.1, 1.0, [0.05] * 10)["client_bound"]
    calm = client_verdict(0.1, 1.0, [0.001] * 10)
    assert not calm["client_bound"] and calm["reasons"] == []


def _hog_the_interpreter(stop: threading.Event) -> None:
    """``sum(range(...))`` runs in C without giving up the GIL: the client's event loop waits behind it, as it
    would behind any CPU-bound work in the runner's process. About one tick in six waits out a hog (tens of ms
    late), well above the 5% that P95 ignores."""
    while not stop.wait(0.05):  # the pauses let the rest of the sweep (its writer thread) get on
        sum(range(8_000_000))  # about 80 ms here, four times the lag limit


def _level(scripted, sweep_config, tmp_path: Path, starve: bool) -> dict:
    stop = threading.Event()
    hog = threading.Thread(target=_hog_the_interpreter, args=(stop,), daemon=True)
    with scripted(ttft_ms=2, gap_us=1000) as url:
        if starve:
            hog.start()
        try:
            run_id = run_sweep(sweep_config(url, levels=[2], requests=None, duration_s=0.8), db_path=tmp_path / "r.db")
        finally:
            stop.set()
            if starve:
                hog.join(timeout=10)
    [level] = run_summary(tmp_path / "r.db", run_id)["levels"]
    return level


def test_a_starved_client_is_flagged(scripted, sweep_config, tmp_path: Path) -> None:
    client = _level(scripted, sweep_config, tmp_path, starve=True)["client"]
    assert client["client_bound"] and client["p95_loop_lag_ms"] > 20


def test_a_calm_client_is_not_flagged_and_gpu_sampling_says_why_it_skipped(scripted, sweep_config,
                                                                          tmp_path: Path) -> None:
    client = _level(scripted, sweep_config, tmp_path, starve=False)["client"]
    assert not client["client_bound"], client["reasons"]
    if importlib.util.find_spec("pynvml") is None:  # said in words a person acts on, not "ModuleNotFoundError: …"
        assert client["gpu"]["status"] == ("no GPU: skipped (nvidia-ml-py is not installed; pip install nvidia-ml-py "
                                           "to sample one)")  # fmt: skip


def test_energy_per_million_tokens() -> None:
    from infercost.runner.client_monitor import energy_kwh_per_mtok

    # 700 W for an hour is 0.7 kWh; over 3.5 million tokens, 0.2 kWh a million
    assert energy_kwh_per_mtok(700, 3600, 3_500_000) == pytest.approx(0.2)
    assert energy_kwh_per_mtok(700, 3600, 0) is None
