"""Absurd numbers stay out, every figure stays finite, and what is printed is whole, strict and safe for a terminal."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infercost.cli import json_text, terminal_text
from infercost.errors import InputError
from infercost.report import redact
from tests.robustness.conftest import ROOT, assert_one_line_error, profile, setup


def points(request_throughput: float) -> dict:
    return {"points": [{"concurrency": 1, "request_throughput": request_throughput, "p95_ttft_ms": 40}]}


@pytest.mark.parametrize("rate", [5e-324, 1e-300, 1e-7])
def test_a_vanishing_throughput_is_refused_with_its_bound(cli, tmp_path, rate):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile(self_host=[setup(throughput=points(rate))])), encoding="utf-8")
    assert_one_line_error(cli("estimate", str(path), "--json"), "request_throughput", "1e-06 requests/s")


def test_the_largest_allowed_inputs_give_finite_figures(cli, tmp_path):
    """Every input at its bound at once: replicas and money are big, but finite numbers and valid JSON."""
    extreme = profile(
        calls_per_day=1e12, prompt_tokens=1e8, output_tokens=1e8, reasoning_tokens=1e8, retry_rate=0.99,
        max_retries=100, truncation_rate=1, days_per_month=31, api_models=["m"],
        prices=[{"id": "m", "input_per_mtok": 10000, "output_per_mtok": 10000}],
        self_host=[setup(gpu_price_per_hour=1000, gpus_per_replica=1024, peak_to_average=100, target_utilization=0.01,
                         throughput=points(1e-6), slo={})],
    )  # fmt: skip
    path = tmp_path / "p.json"
    path.write_text(json.dumps(extreme), encoding="utf-8")
    result = cli("estimate", str(path), "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in the output"))
    assert len(str(document["self_host"][0]["replicas"])) < 30


@pytest.mark.parametrize("utilization", [1e-300, 0.001])
def test_target_utilization_has_a_floor(cli, tmp_path, utilization):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile(self_host=[setup(target_utilization=utilization)])), encoding="utf-8")
    assert_one_line_error(cli("estimate", str(path)), "target_utilization")


def test_json_output_is_never_nan():
    with pytest.raises(InputError, match="not a finite number"):
        json_text({"cost": float("inf")})


def test_json_output_with_a_stored_lone_surrogate_is_still_json():
    assert json.loads(json_text({"name": "a\ud800"})) == {"name": "a\ud800"}


def test_terminal_escapes_are_shown_not_obeyed():
    shown = terminal_text("name\x1b[31mred\x1b]0;title\x07\x9b2J ok\nnext\tcol")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\x1b[31m" in shown and shown.endswith("ok\nnext\tcol")


def test_escape_sequences_in_a_scenario_name_are_not_printed_raw(cli, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile(name="bot\x1b]0;pwned\x07")), encoding="utf-8")
    result = cli("report", str(path))
    assert result.code == 0 and "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_a_closed_pipe_is_not_a_traceback():
    """``infercost prices --json | head -1``: the reader goes away; no BrokenPipeError traceback."""
    process = subprocess.Popen([sys.executable, "-m", "infercost", "prices", "--json"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()


@pytest.mark.parametrize("name", ["password-reset-bot", "secret santa", "bearer of news", "api_key rotation"])
@pytest.mark.parametrize("fmt", ["markdown", "html", "csv", "json"])
def test_report_keeps_estimates_whose_name_holds_a_credential_word(cli, tmp_path, name, fmt):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile(name=name)), encoding="utf-8")
    result = cli("report", str(path), "--format", fmt, "--json")
    assert result.code == 0, result.stderr
    assert "gpt-4o-mini" in json.loads(result.stdout)["report"]


def test_redaction_takes_the_secret_string_not_the_document():
    document = {"password-bot": {"cost_per_day": 1.5, "api_key": "hunter2", "note": "key sk-abcdefghijklmnopqrstuv"}}
    expected = {"cost_per_day": 1.5, "api_key": "[redacted]", "note": "key [redacted]"}
    assert redact(document) == {"password-bot": expected}
