"""Batch-job fixtures: batch files written by the test, the scripted server as a real subprocess on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from infercost.runner.backends.openai import WORDS
from infercost.runner.scripted_server import Script, running


def write_batch_file(path: Path, n: int, *, seed: int = 0, max_tokens: tuple[int, int] = (1, 12),
                     tagged: bool = True) -> Path:
    """``n`` requests, chat and completions alternating; each prompt starts with its record's tag ``rN`` (the
    scripted server logs a prompt's first word, so the test can count what it received per record) and continues
    with common English words, one token each in every BPE vocabulary (the scripted server counts words; untagged
    prompts have as many tokens as words)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))
            words = f"r{i} {words}" if tagged else words
            body: dict = {"model": "gpt-4o-mini", "max_tokens": rng.randint(*max_tokens)}
            if i % 2:
                url, body["messages"] = "/v1/chat/completions", [{"role": "user", "content": words}]
            else:
                url, body["prompt"] = "/v1/completions", words
            out.write(json.dumps({"custom_id": f"req-{i}", "method": "POST", "url": url, "body": body}) + "\n")
    return path


def read_outputs(out_dir: Path) -> tuple[list[dict], list[dict]]:
    """(success lines, error lines) of every output file of a job."""
    ok, errors = [], []
    for path in sorted(out_dir.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        (errors if path.name.endswith(".errors.jsonl") else ok).extend(lines)
    return ok, errors


@pytest.fixture
def scripted(tmp_path: Path) -> Callable[..., contextlib.AbstractContextManager[str]]:
    """``with scripted(error_every=7) as url:``; the server's log is at ``tmp_path / 'sent.jsonl'`` once it stops."""

    @contextlib.contextmanager
    def start(**script: object) -> Iterator[str]:
        settings = {"ttft_ms": 0.5, "gap_us": 20.0, "tokens_per_chunk": 4, **script}
        with running(Script(**settings), log=tmp_path / "sent.jsonl") as url:  # type: ignore[arg-type]
            yield url

    return start
