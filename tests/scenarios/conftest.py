"""Profiles and a scenario database for the scenario tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenario_profiles import SELF_HOST

from infercost.store import connect


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
