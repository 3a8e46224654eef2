"""The test server's own behaviour: where PostgreSQL is missing it says why (the fixture skips with that reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import postgres


def test_a_missing_postgresql_is_unavailable_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "PG_BIN", tmp_path / "no-postgresql" / "bin")
    with pytest.raises(postgres.Unavailable, match="PostgreSQL 15 is not installed .*initdb is missing"):
        postgres.start()


def test_the_server_listens_on_loopback_and_stops(postgres_server: postgres.Server) -> None:
    import psycopg

    with psycopg.connect(postgres_server.url(), connect_timeout=10) as connection:
        assert connection.execute("SHOW listen_addresses").fetchone()[0] == "127.0.0.1"
        assert connection.execute("SHOW unix_socket_directories").fetchone()[0] == str(postgres_server.directory)
