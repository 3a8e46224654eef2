"""Input-length sweeps: every length measured at each level, and the prefill rate recovered from TTFT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost.cli import main
from infercost.runner.metrics import ttft_by_input_length
from infercost.runner.sweep import run_summary, run_sweep


def test_the_fit_is_exact_on_a_line() -> None:
    records = [{"seq": seq, "status": "ok", "n_in": n, "t0": 0.0, "t_first": (10 + 0.5 * n) / 1e3}
               for seq, n in enumerate([100, 1000, 4000] * 2)]
    fit = ttft_by_input_length(records, [100, 1000, 4000])
    assert fit["prefill_tokens_per_s"] == pytest.approx(2000.0) and fit["overhead_ms"] == pytest.approx(10.0)
    assert [p["requests"] for p in fit["points"]] == [2, 2, 2] and fit["r2"] == pytest.approx(1.0)


def test_one_length_has_no_fit() -> None:
    records = [{"seq": 0, "status": "ok", "n_in": 5, "t0": 0.0, "t_first": 0.01}]
    assert ttft_by_input_length(records, [5, 50])["prefill_tokens_per_s"] is None


def test_prefill_rate_is_recovered_within_5_percent(scripted, sweep_config, tmp_path: Path) -> None:
    # 50 µs a prompt word: 20 000 tokens/s of prefill, on top of 5 ms
    with scripted(ttft_ms=5, gap_us=500, ttft_ms_per_input_token=0.05) as url:
        config = sweep_config(url, levels=[1, 2], input_lengths=[64, 512, 2048], requests=9, output_tokens=4)
        run_id = run_sweep(config, db_path=tmp_path / "r.db")
    for level in run_summary(tmp_path / "r.db", run_id)["levels"]:
        fit = level["input_sweep"]
        assert [p["input_len"] for p in fit["points"]] == [64, 512, 2048]
        assert all(p["requests"] == 3 for p in fit["points"])
        assert fit["prefill_tokens_per_s"] == pytest.approx(20_000, rel=0.05)
        assert fit["overhead_ms"] == pytest.approx(5, abs=3)


def test_cli_input_lengths_and_windows(scripted, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with scripted(ttft_ms=1, gap_us=300, ttft_ms_per_input_token=0.05) as url:
        code = main(["bench", "--base-url", url, "--model", "scripted", "--concurrency", "2", "--duration", "0.6",
                     "--windows", "0.1", "--input-tokens", "16,256", "--output-tokens", "4",
                     "--db", str(tmp_path / "r.db"), "--json"])
    [level] = json.loads(capsys.readouterr().out)["levels"]
    assert code == 0 and level["input_lengths"] == [16, 256] and level["input_sweep"]["prefill_tokens_per_s"]
    assert len(level["over_time"]) >= 5 and level["drift"]["metric"] == "p50_tpot_ms"


@pytest.mark.parametrize(("argv", "field"), [
    (["--input-tokens", "128,x"], "input_tokens"),
    (["--input-tokens", "128,0.5"], "input_tokens"),
    (["--windows", "10"], "windows"),
    (["--windows", "-1", "--duration", "5"], "windows"),
])
def test_bad_soak_and_sweep_input_is_one_line(argv: list[str], field: str, capsys: pytest.CaptureFixture) -> None:
    try:
        code = main(["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", *argv])
    except SystemExit as exit_:  # argparse's own checks (a --windows that is not a time) exit from the parser
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and field in err and "Traceback" not in err
