from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest


@dataclass
class Completed:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def cli():
    """Run ``python -m infercost`` as a person would: a real process, its exit code, stdout and stderr."""

    def run(*args: str, stdin: str | bytes | None = None) -> Completed:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        done = subprocess.run([sys.executable, "-m", "infercost", *args], input=data, capture_output=True, timeout=300)
        return Completed(done.returncode, done.stdout.decode(), done.stderr.decode())

    return run
