"""Every store function on both engines (SQLite and PostgreSQL): runs, levels and requests, scenarios, batch jobs."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import exc

from infercost import store
from infercost.errors import InputError
from infercost.store import jobs
from infercost.store.schema import scenarios

PROFILE = {"calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 10}


@pytest.fixture
def db(store_target):
    opened = store.connect(store_target)
    yield opened
    opened.close()


def new_run(db, **extra) -> str:
    return store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={}, **extra)


def test_a_measured_request_is_stored_once_and_itl_round_trips(db) -> None:
    run_id = new_run(db)
    row = {"run_id": run_id, "idx": 0, "repeat": 0, "seq": 3, "phase": "measure", "session": 0, "t0": 1.0,
           "t_first": 1.5, "t_last": 2.0, "itl": [0.25, 0.25], "status": "ok"}
    store.insert_requests(db, [row])
    store.insert_requests(db, [{**row, "t0": 9.0}])  # the same request again, as a resume might try
    stored = store.get_requests(db, run_id)
    assert len(stored) == 1 and stored[0]["t0"] == 1.0 and stored[0]["itl"] == [0.25, 0.25]
    assert store.stored_seqs(db, run_id, 0, 0) == {3}
    assert store.next_session(db, run_id) == 1


def test_a_nul_in_text_a_server_sent_is_stored_not_lost(db) -> None:
    run_id = new_run(db)
    store.insert_requests(db, [{"run_id": run_id, "idx": 0, "repeat": 0, "seq": 0, "phase": "measure", "session": 0,
                                "itl": [], "status": "http_500", "error": "bad\x00byte"}])
    assert store.get_requests(db, run_id)[0]["error"] == "bad\ufffdbyte"
    make_job(db)
    jobs.save_outcomes(db, "job-1", [{"idx": 0, "state": "failed", "attempts": 1, "reason": "http_500: a\x00b"}])
    assert jobs.failures(db, "job-1") == [{"reason": "http_500: a\ufffdb", "records": 1}]


def test_warmup_rows_are_kept_apart_from_measured_ones(db) -> None:
    run_id = new_run(db)
    key = {"run_id": run_id, "idx": 0, "repeat": 0, "seq": 0, "session": 0, "itl": [], "status": "ok"}
    store.insert_requests(db, [{**key, "phase": "warmup"}, {**key, "phase": "warmup"}, {**key, "phase": "measure"}])
    assert len(store.get_requests(db, run_id)) == 1 and len(store.get_requests(db, run_id, phase="warmup")) == 2


def test_an_in_flight_row_is_replaced_by_its_outcome_but_a_finished_one_never(db) -> None:
    run_id = new_run(db)
    key = {"run_id": run_id, "idx": 0, "repeat": 0, "phase": "measure", "session": 0, "itl": b""}
    store.insert_requests(db, [{**key, "seq": 0, "t0": 1.0, "status": "in_flight"},
                               {**key, "seq": 1, "t0": 1.0, "status": "in_flight"},
                               {**key, "seq": 2, "t0": 1.0, "status": "in_flight"}])
    store.insert_requests(db, [{**key, "seq": 0, "t0": 1.1, "status": "ok"},
                               {**key, "seq": 0, "t0": 9.0, "status": "timeout"}])  # a second outcome: ignored
    assert store.settle_in_flight(db, run_id, 0, 0, resend=False) == 2
    rows = {row["seq"]: row for row in store.get_requests(db, run_id)}
    assert (rows[0]["status"], rows[0]["t0"]) == ("ok", 1.1) and rows[1]["status"] == "interrupted"
    store.insert_requests(db, [{**key, "seq": 5, "status": "in_flight"}])
    assert store.settle_in_flight(db, run_id, 0, 0, resend=True) == 1
    assert store.stored_seqs(db, run_id, 0, 0) == {0, 1, 2}


def test_a_run_and_its_plan_are_stored_together_or_not_at_all(db) -> None:
    with pytest.raises(ValueError):  # a plan row that cannot be stored: the run is rolled back too
        new_run(db, plan=[(0, 0, "concurrency", 1.0), (1, 0)])
    assert store.list_runs(db) == []
    run_id = new_run(db, plan=[(0, 0, "concurrency", 1.0), (1, 0, "concurrency", 4.0)])
    store.plan_levels(db, run_id, [(0, 0, "concurrency", 99.0)])  # a resume re-plans: what is there stays
    store.finish_level(db, run_id, 0, 0, {"completed": 3})
    store.set_run_status(db, run_id, "done")
    store.set_run_engine(db, run_id, {"server": "Bearer sk-abcdefghijklmnopqrstuvwxyz"})
    run = store.get_run(db, run_id)
    assert [(level["load"], level["status"]) for level in run["levels"]] == [(1.0, "done"), (4.0, "pending")]
    assert run["status"] == "done" and "sk-" not in str(run["engine"])
    listed = store.list_runs(db)
    assert [(r["id"], r["levels_done"], r["levels_total"]) for r in listed] == [(run_id, 1, 2)]


def test_unknown_run_is_an_input_error(db) -> None:
    with pytest.raises(InputError, match="run_id"):
        store.get_run(db, "nope")


def test_scenarios_save_update_duplicate_rename_delete(db) -> None:
    first = store.save_scenario(db, "base", PROFILE, notes="keep me")
    second = store.save_scenario(db, "base", {**PROFILE, "calls_per_day": 5})
    assert second["profile"]["calls_per_day"] == 5
    assert second["notes"] == "keep me" and second["created_at"] == first["created_at"]
    store.duplicate_scenario(db, "base", "copy")
    with pytest.raises(InputError, match="exists already"):
        store.duplicate_scenario(db, "base", "copy")
    store.rename_scenario(db, "copy", "double volume")
    assert [s["name"] for s in store.list_scenarios(db)] == ["base", "double volume"]
    store.delete_scenario(db, "base")
    assert [s["name"] for s in store.list_scenarios(db)] == ["double volume"]
    with pytest.raises(InputError, match="NUL"):
        store.save_scenario(db, "x", PROFILE, notes="a\x00b")


def test_a_transaction_is_all_or_nothing(db) -> None:
    with pytest.raises(RuntimeError), db:
        store.save_scenario(db, "kept?", PROFILE)
        raise RuntimeError("stop")
    assert store.list_scenarios(db) == []


def test_an_error_inside_a_nested_block_undoes_only_that_block(db) -> None:
    with db:
        store.save_scenario(db, "outer", PROFILE)
        store.save_scenario(db, "taken", PROFILE)
        with pytest.raises(exc.IntegrityError), db:  # the unique name refuses a second "taken"
            db.execute(scenarios.insert().values(name="taken", profile="{}", created_at="", updated_at=""))
        store.save_scenario(db, "after", PROFILE)  # the transaction goes on (on PostgreSQL: not left aborted)
    assert [s["name"] for s in store.list_scenarios(db)] == ["after", "outer", "taken"]


def make_job(db, job_id: str = "job-1", records: int = 6) -> None:
    job = {"id": job_id, "input_path": "in.jsonl", "input_sha256": "0" * 64, "out_dir": "out", "config": {"a": 1}}
    rows = [(idx, idx // 3, f"c{idx}", 10, 5) for idx in range(records)]
    jobs.create_job(db, job, iter(rows), lambda: ([(0, 0, 3), (1, 3, 3)], {"records": records}))


def test_a_batch_job_records_outcomes_once_and_retries_failures(db) -> None:
    make_job(db)
    jobs.claim_job(db, "job-1", os.getpid(), is_alive=lambda pid: True)
    jobs.save_outcomes(db, "job-1", [{"idx": 0, "state": "ok", "attempts": 1, "n_in": 10, "n_out": 5, "cost": 0.5},
                                     {"idx": 1, "state": "failed", "attempts": 2, "reason": "http_500: boom"}])
    jobs.save_outcomes(db, "job-1", [{"idx": 0, "state": "failed", "attempts": 9}])  # a duplicate: ignored
    done = jobs.totals(db, "job-1")
    assert (done["records"], done["ok"], done["failed"], done["attempts"], done["cost"]) == (6, 1, 1, 3, 0.5)
    assert jobs.failures(db, "job-1") == [{"reason": "http_500: boom", "records": 1}]
    assert jobs.record_counts(db, "job-1")["pending"] == 4
    assert [row[0] for row in jobs.pending_records(db, "job-1")] == [2, 3, 4, 5]
    assert [row["custom_id"] for row in jobs.shard_outcomes(db, "job-1", 0, 0)] == ["c0", "c1"]
    assert jobs.reopen_failed(db, "job-1", 1) == 1 and jobs.last_pass(db, "job-1") == 1
    assert jobs.shard_passes(db, "job-1", 0) == [0, 1] and jobs.pending_attempts(db, "job-1") == 2
    jobs.set_shard(db, "job-1", 1, "done", ["shard-00001.jsonl"])
    assert [s["files"] for s in jobs.shards(db, "job-1")] == [[], ["shard-00001.jsonl"]]
    jobs.request_control(db, "job-1", "pause")
    assert jobs.heartbeat(db, "job-1", 1.5) == "pause"
    jobs.set_job(db, "job-1", actual={"cost": 1.0})
    listed = jobs.list_jobs(db)
    assert listed[0]["actual"] == {"cost": 1.0} and listed[0]["records"] == 6


def test_a_job_running_in_a_live_process_cannot_be_claimed_again(db) -> None:
    make_job(db)
    jobs.claim_job(db, "job-1", 111, is_alive=lambda pid: True)
    with pytest.raises(InputError, match="running in process 111"):
        jobs.claim_job(db, "job-1", 222, is_alive=lambda pid: True)
    jobs.claim_job(db, "job-1", 222, is_alive=lambda pid: False)  # its process died: taken over
    assert jobs.get_job(db, "job-1")["pid"] == 222


def test_a_repeated_custom_id_refuses_the_whole_job(db) -> None:
    job = {"id": "job-2", "input_path": "in", "input_sha256": "0", "out_dir": "out", "config": {}}
    with pytest.raises(InputError, match="custom_id"):
        jobs.create_job(db, job, iter([(0, 0, "same", 1, 1), (1, 0, "same", 1, 1)]), lambda: ([], {}))
    assert jobs.list_jobs(db) == []
