"""Profiles and a scenario database for the scenario tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infercost.store import connect

SELF_HOST = {
    "name": "llama-8b-on-h100", "gpu": "H100 SXM", "gpu_price_per_hour": 2.5, "gpus_per_replica": 1,
    "throughput": {"points": [{"concurrency": 1, "request_throughput": 0.8, "output_throughput": 210.0,
                               "p95_ttft_ms": 40.0, "p95_tpot_ms": 4.8}]},
    "slo": {"p95_ttft_ms": 1000.0, "p95_tpot_ms": 50.0},
}  # fmt: skip


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
