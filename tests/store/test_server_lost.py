"""A PostgreSQL server that goes away in the middle of a command: one line naming the store and the reason, exit
status 2, no traceback, and every request stored before it went is still there when the server is back."""

from __future__ import annotations

import subprocess
import sys
import time

import psycopg
import pytest

from infercost.runner.scripted_server import Script, running
from tests.support import postgres


def _stored_requests(server: postgres.Server, database: str) -> int:
    with psycopg.connect(host="127.0.0.1", port=server.port, user=postgres.SUPERUSER, dbname=database,
                         connect_timeout=5) as connection:  # fmt: skip
        try:
            return connection.execute("SELECT count(*) FROM requests").fetchone()[0]
        except psycopg.errors.UndefinedTable:  # the sweep has not migrated the new database yet
            return 0


def test_a_server_lost_mid_sweep_is_one_line_and_keeps_what_was_stored(tmp_path):
    try:
        server = postgres.start()  # its own server: this test stops it
    except postgres.Unavailable as error:
        pytest.skip(f"PostgreSQL tests skipped: {error}")
    try:
        url = server.create_database("lost")
        with running(Script(ttft_ms=20, gap_us=2000)) as base_url:
            sweep = subprocess.Popen(
                [sys.executable, "-m", "infercost", "bench", "--base-url", base_url, "--model", "scripted",
                 "--concurrency", "1", "--requests", "400", "--output-tokens", "8", "--db", url],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
            deadline = time.monotonic() + 60
            while _stored_requests(server, "lost") < 5:  # the sweep is storing requests: now take the server away
                assert sweep.poll() is None and time.monotonic() < deadline, sweep.communicate()
                time.sleep(0.1)
            stored_before = _stored_requests(server, "lost")
            postgres.stop_keeping_data(server, "fast")  # every client cut off
            _, stderr = sweep.communicate(timeout=60)
        assert sweep.returncode == 2, stderr
        lines = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert "Traceback" not in stderr and len(lines) == 1, stderr
        assert lines[0].startswith("error: db: ") and "127.0.0.1" in lines[0], lines[0]
        postgres.restart(server)
        assert _stored_requests(server, "lost") >= stored_before
    finally:
        server.stop()
