"""Every request that leaves the client is an attempt the job counts: a server that drops keep-alive connections
after reading a request (a real one on 127.0.0.1) gets each record sent only as often as the job says it was."""

from __future__ import annotations

import collections
from pathlib import Path

from infercost import batch
from tests.batch.conftest import read_outputs, write_batch_file
from tests.support.dropping_server import dropping_server


def test_requests_read_by_a_server_that_then_drops_the_connection_are_counted_attempts(tmp_path):
    source = write_batch_file(tmp_path / "in.jsonl", 10)
    with dropping_server() as (url, received):  # each connection: one answer, then a request read and dropped
        config = batch.JobConfig(base_url=url, model="dropper", out_dir=str(tmp_path / "out"), concurrency=1,
                                 max_attempts=6, read_timeout_s=5)
        created = batch.create_job(source, config, price="gpt-4o-mini")
        status = batch.run_job(created["job_id"])
    sent = collections.Counter(entry["tag"] for entry in received)
    dropped = sum(not entry["answered"] for entry in received)
    assert status["status"] == "done" and status["counts"]["ok"] == 10
    assert dropped >= 4  # every second request on a connection was read and dropped
    assert status["actual"]["attempts"] == sum(sent.values())  # every send counted: none replayed unseen
    assert status["actual"]["retries"] == dropped
    ok, errors = read_outputs(Path(status["out_dir"]))
    assert sorted(line["custom_id"] for line in ok) == sorted(f"req-{i}" for i in range(10)) and errors == []
