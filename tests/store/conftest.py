"""The store's tests run against both engines: ``store_target`` is a fresh SQLite file or a fresh database on a
PostgreSQL 15 server that this test session starts itself (``tests/support/postgres.py``). Where PostgreSQL cannot
start, its half of the tests skips with the reason."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import postgres

ENGINES = ["sqlite", "postgresql"]
_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[postgres.Server]:
    started = time.monotonic()
    try:
        server = postgres.start()
    except postgres.Unavailable as error:
        pytest.skip(f"PostgreSQL tests skipped: {error}")
    print(f"\nPostgreSQL 15 started in {time.monotonic() - started:.2f} s on port {server.port}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_target(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """What ``store.connect`` takes: a new SQLite file path, or the URL of a new PostgreSQL database."""
    if engine == "sqlite":
        return str(tmp_path / "store.db")
    server = request.getfixturevalue("postgres_server")
    return server.create_database(f"t{next(_databases)}_{int(time.time() * 1000) % 10**8}")
