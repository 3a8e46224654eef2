"""Fixtures for runner tests: the scripted server as a real subprocess on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from infercost.runner.backends import BackendOptions
from infercost.runner.scripted_server import Script, running
from infercost.runner.sweep import SweepConfig


@pytest.fixture
def scripted(tmp_path: Path) -> Callable[..., contextlib.AbstractContextManager[str]]:
    """``with scripted(ttft_ms=5, ...) as url:``; the server's log is at ``tmp_path / 'sent.jsonl'`` once it stops."""

    @contextlib.contextmanager
    def start(**script: object) -> Iterator[str]:
        with running(Script(**script), log=tmp_path / "sent.jsonl") as url:  # type: ignore[arg-type]
            yield url

    return start


@pytest.fixture
def sweep_config() -> Callable[..., SweepConfig]:
    """``sweep_config(url, **overrides)``: a small, fast sweep (tests override what they exercise)."""
    return make_sweep_config


def make_sweep_config(url: str, **overrides: object) -> SweepConfig:
    options = BackendOptions(model="scripted", base_url=url, read_timeout_s=float(overrides.pop("timeout", 10.0)))
    settings = dict(backend="openai", options=options, levels=[1, 3], input_tokens=8, output_tokens=8,
                    requests=6, warmup=1)
    settings.update(overrides)
    return SweepConfig(**settings)  # type: ignore[arg-type]
