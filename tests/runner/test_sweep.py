"""Sweeps: every request stored, failures counted and the sweep going on, repeats and patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost import store
from infercost.runner.scripted_server import read_log
from infercost.runner.sweep import run_summary, run_sweep


def test_every_request_is_stored_with_the_fingerprint(scripted, sweep_config, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with scripted(ttft_ms=1, gap_us=200) as url:
        run_id = run_sweep(sweep_config(url), db_path=db)
    connection = store.connect(db)
    run = store.get_run(connection, run_id)
    assert run["status"] == "done" and run["hardware"]["cpu"] and run["engine"]["served_models"] == ["scripted"]
    assert len(store.get_requests(connection, run_id)) == 12
    assert len(store.get_requests(connection, run_id, phase="warmup")) == 2
    summary = run_summary(db, run_id)
    assert [level["concurrency"] for level in summary["levels"]] == [1, 3]
    assert all(level["completed"] == 6 and level["total_output_tokens"] == 48 for level in summary["levels"])


def test_faults_are_counted_and_the_sweep_goes_on(scripted, sweep_config, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with scripted(ttft_ms=1, gap_us=200, error_every=5, drop_every=7, stall_every=11) as url:
        run_id = run_sweep(sweep_config(url, levels=[4], requests=30, warmup=0, timeout=0.5), db_path=db)
    faults = [entry["fault"] for entry in read_log(tmp_path / "sent.jsonl") if entry["fault"]]
    [level] = run_summary(db, run_id)["levels"]
    assert level["completed"] + level["failed"] == 30
    assert level["failures"] == {"http_error": faults.count("error"), "dropped": faults.count("drop"),
                                 "timeout": faults.count("stall")}


@pytest.mark.parametrize(("pattern", "levels"), [("batch", [2]), ("rate", [200.0]), ("single", [1])])
def test_other_patterns_store_every_request(scripted, sweep_config, tmp_path: Path, pattern: str,
                                            levels: list[float]) -> None:
    with scripted(ttft_ms=1, gap_us=100) as url:
        run_id = run_sweep(sweep_config(url, pattern=pattern, levels=levels, requests=6), db_path=tmp_path / "r.db")
    [level] = run_summary(tmp_path / "r.db", run_id)["levels"]
    assert level["completed"] == 6 and level["pattern"] == pattern


def test_repeats_and_mixed_lengths(scripted, sweep_config, tmp_path: Path) -> None:
    with scripted(ttft_ms=1, gap_us=100) as url:
        config = sweep_config(url, levels=[2], repeats=3, mixed=(4, 40, 0.5), requests=8)
        run_id = run_sweep(config, db_path=tmp_path / "r.db")
    [level] = run_summary(tmp_path / "r.db", run_id)["levels"]
    assert level["repeats"] == 3 and "spread" in level
    lengths = {r["n_in"] for r in store.get_requests(store.connect(tmp_path / "r.db"), run_id)}
    assert lengths == {4, 40}


def test_duration_bound_stops_sending(scripted, sweep_config, tmp_path: Path) -> None:
    with scripted(ttft_ms=20, gap_us=100) as url:
        run_id = run_sweep(sweep_config(url, levels=[1], requests=None, duration_s=0.3), db_path=tmp_path / "r.db")
    [level] = run_summary(tmp_path / "r.db", run_id)["levels"]
    assert 1 <= level["completed"] < 20


def test_the_api_key_is_never_stored(scripted, sweep_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-never-stored")
    with scripted(ttft_ms=1, gap_us=100) as url:
        run_sweep(sweep_config(url, levels=[1]), db_path=tmp_path / "r.db")
    for path in tmp_path.glob("r.db*"):
        assert b"sk-secret-never-stored" not in path.read_bytes()
