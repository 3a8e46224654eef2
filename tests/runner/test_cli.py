"""``bench`` and ``runs`` through the command line: the JSON contract and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost.cli import main


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, dict | list, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def test_bench_json_then_runs_list_and_show(scripted, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    db = str(tmp_path / "cli.db")
    with scripted(ttft_ms=1, gap_us=200) as url:
        code, summary, err = run_cli(capsys, "bench", "--base-url", url, "--model", "scripted", "--concurrency",
                                     "1,2", "--requests", "4", "--output-tokens", "6", "--db", db, "--json")
    assert code == 0 and "level 2/2" in err  # the progress bar is on stderr, stdout is only the JSON
    assert [level["concurrency"] for level in summary["levels"]] == [1, 2]
    assert {"completed", "failed", "duration", "request_throughput", "output_throughput", "total_token_throughput",
            "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "mean_e2el_ms",
            "input_len", "output_len", "backend", "model", "hardware"} <= set(summary["levels"][0])
    code, runs, _ = run_cli(capsys, "runs", "--db", db, "--json")
    assert code == 0 and [run["id"] for run in runs] == [summary["run_id"]] and runs[0]["requests"] == 8
    code, shown, _ = run_cli(capsys, "runs", "show", summary["run_id"], "--db", db, "--json")
    assert code == 0 and shown["levels"] == summary["levels"] and shown["hardware"]["cpu"]


@pytest.mark.parametrize(("argv", "field"), [
    (["bench", "--model", "m"], "base_url"),
    (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "1,x"], "concurrency"),
    (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--concurrency", "0"], "concurrency"),
    (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "base_url"),
    (["bench", "--base-url", "ftp://x", "--model", "m"], "base_url"),
    (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--mixed", "a:b"], "mixed"),
    (["bench", "--resume", "no-such-run"], "run_id"),
    (["runs", "show", "no-such-run"], "run_id"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], field: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture) -> None:
    code = main([*argv, "--db", str(tmp_path / "e.db")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(f"error: {field}:") and "\n" not in err


def test_an_unreachable_server_leaves_no_run_behind(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    db = str(tmp_path / "u.db")
    assert main(["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--db", db]) == 2
    capsys.readouterr()
    assert run_cli(capsys, "runs", "--db", db, "--json")[1] == []
