"""Ten writer processes on one store at once, on SQLite and on PostgreSQL: every write lands, names stay unique,
a contested name or job goes to exactly one process, and nobody sees "database is locked"."""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback

from infercost import store
from infercost.errors import InputError
from infercost.store import jobs

WRITERS = 10
ROUNDS = 8  # each writer's scenarios and runs
REQUESTS_PER_RUN = 5
DEADLINE_S = 180
PROFILE = {"calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 10}


def writer(target: str, number: int, start, results) -> None:
    """One process: its own scenarios and runs, the shared name, the contested copy and the contested job."""
    outcome = {"writer": number, "copies": 0, "claims": 0, "errors": []}
    try:
        db = store.connect(target)
        start.wait(60)
        for round_ in range(ROUNDS):
            store.save_scenario(db, f"w{number}-{round_}", {**PROFILE, "calls_per_day": number * 100 + round_ + 1})
            store.save_scenario(db, "shared", {**PROFILE, "calls_per_day": number + 1})  # everyone saves it
            run_id = store.create_run(db, backend="openai", model=f"w{number}", config={}, hardware={}, engine={},
                                      plan=[(0, 0, "concurrency", 1.0)])
            store.insert_requests(db, [{"run_id": run_id, "idx": 0, "repeat": 0, "seq": seq, "phase": "measure",
                                        "session": 0, "itl": [0.1], "status": "ok"}
                                       for seq in range(REQUESTS_PER_RUN)])
            store.finish_level(db, run_id, 0, 0, {"completed": REQUESTS_PER_RUN})
            contested = ((lambda: store.duplicate_scenario(db, "base", "contested"), "copies"),
                         (lambda: jobs.claim_job(db, "job-1", os.getpid(), is_alive=lambda pid: True), "claims"))
            for action, key in contested:
                try:
                    action()
                    outcome[key] += 1
                except InputError:
                    pass  # taken by another writer: the expected, clear refusal
        db.close()
    except Exception:  # noqa: BLE001 - reported to the test, which fails on it
        outcome["errors"].append(traceback.format_exc())
    results.put(outcome)


def test_ten_concurrent_writers_lose_nothing_and_names_stay_unique(store_target) -> None:
    db = store.connect(store_target)
    store.save_scenario(db, "base", PROFILE)
    jobs.create_job(db, {"id": "job-1", "input_path": "in", "input_sha256": "0", "out_dir": "out", "config": {}},
                    iter([(0, 0, "c0", 1, 1)]), lambda: ([(0, 0, 1)], {}))
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    processes = [context.Process(target=writer, args=(store_target, n, start, results)) for n in range(WRITERS)]
    for process in processes:
        process.start()
    start.set()
    deadline = time.monotonic() + DEADLINE_S
    outcomes = [results.get(timeout=max(1.0, deadline - time.monotonic())) for _ in processes]
    for process in processes:
        process.join(timeout=max(1.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
    assert [error for outcome in outcomes for error in outcome["errors"]] == []

    names = [scenario["name"] for scenario in store.list_scenarios(db)]
    expected = {f"w{n}-{r}" for n in range(WRITERS) for r in range(ROUNDS)} | {"base", "shared", "contested"}
    assert sorted(names) == sorted(expected)  # every save landed, each name once
    assert store.get_scenario(db, "shared")["profile"]["calls_per_day"] in range(1, WRITERS + 1)
    assert sum(outcome["copies"] for outcome in outcomes) == 1
    claimed = [outcome for outcome in outcomes if outcome["claims"]]
    assert len(claimed) == 1 and claimed[0]["claims"] == ROUNDS  # one process has it (and may claim it again)
    runs = store.list_runs(db)
    assert len(runs) == WRITERS * ROUNDS and len({run["id"] for run in runs}) == WRITERS * ROUNDS
    assert {run["requests"] for run in runs} == {REQUESTS_PER_RUN}
    assert {run["levels_done"] for run in runs} == {1}
    db.close()
