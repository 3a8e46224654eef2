"""``diagnose``: the article's order over a stored run, each step saying what it found and could not check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost.cli import main
from infercost.runner.diagnose import diagnose
from infercost.runner.sweep import run_summary, run_sweep

STEPS = ["inputs", "hardware", "concurrency", "logs", "baseline"]


def _level(load: float, ttft_ms: float, throughput: float, **extra: object) -> dict:
    return {"concurrency": load, "completed": 10, "failed": 0, "failures": {}, "median_ttft_ms": ttft_ms,
            "output_throughput": throughput, "mean_concurrency": load, "total_input_tokens": 2000,
            "total_output_tokens": 1000, **extra}


RUN = {"id": "r1", "model": "meta-llama/Llama-3.1-8B-Instruct", "backend": "openai", "engine": {}, "config": {},
       "hardware": {"cpu": "x86", "cpu_cores_logical": 2, "gpus": []}}


def test_queueing_mismatched_shape_and_a_baseline_are_found() -> None:
    levels = [_level(1, 20, 50), _level(8, 200, 100, failures={"timeout": 2}, failed=2)]
    against = {"id": "published:x", "model": "llama-3.1-8b-instruct", "dtype": "fp8", "hardware": "H100",
               "input_len": 1000, "output_len": 100}
    baseline = {"run_id": "b1", "model": "Llama-3.1-8B-Instruct", "levels": [_level(1, 50, 25)]}
    report = diagnose(RUN, levels, against=against, baselines=[baseline])
    steps = {step["step"]: step for step in report["steps"]}
    assert [step["step"] for step in report["steps"]] == STEPS
    inputs = " ".join(steps["inputs"]["found"])
    assert "different model" not in inputs and "input len differs: 200 here against 1000" in inputs
    assert any("precision" in note for note in steps["inputs"]["could_not_check"])
    assert steps["concurrency"]["evidence"]["ttft_growth"] == pytest.approx(10)
    assert any("queue" in note for note in steps["concurrency"]["found"])
    assert steps["logs"]["evidence"]["failures"] == {"timeout": 2}
    assert steps["baseline"]["evidence"]["gain"] == pytest.approx(4)


def test_a_client_bound_level_and_missing_evidence_are_said() -> None:
    levels = [_level(1, 20, 50, client={"client_bound": True, "gpu": {"status": "no GPU: skipped"}})]
    steps = {step["step"]: step for step in diagnose(RUN, levels)["steps"]}
    assert any("client set the pace at load 1" in note for note in steps["hardware"]["found"])
    assert any("no GPU: skipped" in note for note in steps["hardware"]["could_not_check"])
    assert steps["concurrency"]["could_not_check"] and steps["baseline"]["could_not_check"]
    assert any("--against" in note for note in steps["inputs"]["could_not_check"])


def test_cli_diagnoses_a_stored_soak_run(scripted, sweep_config, tmp_path: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    db = tmp_path / "r.db"
    with scripted(ttft_ms=2, gap_us=500, error_every=7) as url:
        run_id = run_sweep(sweep_config(url, levels=[1, 4], requests=None, duration_s=0.6, window_s=0.1),
                           db_path=db)
    assert main(["diagnose", run_id, "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [step["step"] for step in report["steps"]] == STEPS
    failed = sum(level["failed"] for level in run_summary(db, run_id)["levels"])
    assert failed and report["steps"][3]["evidence"]["failures"] == {"http_error": failed}
    assert all(step["found"] or step["could_not_check"] for step in report["steps"])
    assert main(["diagnose", run_id, "--db", str(db)]) == 0
    assert "5. Baseline" in capsys.readouterr().out


def test_an_unknown_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["diagnose", "nope", "--db", str(tmp_path / "r.db")]) == 2
    assert "run_id" in capsys.readouterr().err
