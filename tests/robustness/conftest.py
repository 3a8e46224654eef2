"""Hostile input: helpers to run the CLI in process (fast) and as a real process (the contract)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from infercost.cli import main

ROOT = Path(__file__).resolve().parents[2]
BASE = {"name": "x", "calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 50, "api_models": ["gpt-4o-mini"]}
SETUP = {
    "name": "s", "gpu_price_per_hour": 2.0,
    "throughput": {"points": [{"concurrency": 1, "request_throughput": 0.8, "p95_ttft_ms": 40}]},
    "slo": {"p95_ttft_ms": 1000},
}  # fmt: skip


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def profile(**fields) -> dict:
    return {**BASE, **fields}


def setup(**fields) -> dict:
    return {**json.loads(json.dumps(SETUP)), **fields}


def run_in_process(capsys, *argv: str) -> Result:
    """The CLI's own entry point: exit status, stdout and stderr, as a person's shell would see them."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own errors exit from inside main
        code = exit_.code
    out = capsys.readouterr()
    return Result(code, out.out, out.err)


def run_process(*argv: str | bytes, stdin: bytes | None = None, timeout: float = 60) -> Result:
    done = subprocess.run([sys.executable, "-m", "infercost", *argv], input=stdin, capture_output=True,
                          timeout=timeout, cwd=ROOT)
    return Result(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def assert_one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 2, result
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.fixture
def cli(capsys):
    return lambda *argv: run_in_process(capsys, *argv)
