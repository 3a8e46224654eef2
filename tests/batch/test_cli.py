"""``python -m infercost batch``: JSON on stdout, one-line errors with exit status 2."""

from __future__ import annotations

import json

from infercost.cli import main
from tests.batch.conftest import write_batch_file


def test_budget_only_prints_the_job_as_json_and_sends_nothing(tmp_path, capsys):
    source = write_batch_file(tmp_path / "in.jsonl", 30)
    code = main(["batch", "run", str(source), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "out"), "--price", "gpt-4o-mini", "--budget-only", "--json"])
    status = json.loads(capsys.readouterr().out)
    assert code == 0 and status["status"] == "created" and status["counts"]["pending"] == 30
    assert status["budget"]["records"] == 30 and status["budget"]["cost"] > 0
    listed = main(["batch", "list", "--json"])
    assert listed == 0 and json.loads(capsys.readouterr().out)[0]["job_id"] == status["job_id"]


def test_an_unknown_job_is_one_line_and_status_2(capsys):
    assert main(["batch", "status", "nope", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: job_id:") and err.count("\n") == 1


def test_max_cost_without_output_caps_is_refused(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}}\n')
    code = main(["batch", "run", str(source), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "out"), "--price", "gpt-4o-mini", "--max-cost", "1", "--json"])
    assert code == 2 and "max_tokens" in capsys.readouterr().err


def test_gpu_price_needs_a_throughput_source(tmp_path, capsys):
    source = write_batch_file(tmp_path / "in.jsonl", 3)
    code = main(["batch", "run", str(source), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                 str(tmp_path / "out"), "--gpu-price", "2.5", "--json"])
    assert code == 2 and "throughput" in capsys.readouterr().err
