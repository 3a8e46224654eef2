"""Profiles and a scenario database for the scenario tests."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from infercost.store import connect
from tests.scenarios.scenario_profiles import SELF_HOST

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def profile() -> dict:
    return {
        "name": "support-bot",
        "calls_per_day": 100_000,
        "prompt_tokens": 1200,
        "output_tokens": 300,
        "retry_rate": 0.05,
        "api_models": ["gpt-4o-mini"],
        "self_host": [SELF_HOST],
    }


@pytest.fixture
def db(tmp_path: Path):
    connection = connect(tmp_path / "scenarios.db")
    yield connection
    connection.close()


@pytest.fixture
def profile_file(tmp_path: Path, profile: dict) -> Path:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile), encoding="utf-8")
    return path


@dataclass
class Completed:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(tmp_path: Path):
    """``python -m infercost`` as a person runs it, in a real process, with its own database file."""
    db = str(tmp_path / "cli.db")

    def run(*args: str) -> Completed:
        command = [sys.executable, "-m", "infercost", *args]
        if args and args[0] in ("scenarios", "report"):
            command += ["--db", db]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
        return Completed(done.returncode, done.stdout, done.stderr)

    return run
