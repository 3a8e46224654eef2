"""The SQLite store: migrations applied once; measured requests stored once. (A new revision applied on the next
open, and all of this on PostgreSQL too: tests/store.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError


def test_migrations_are_recorded_and_applied_once(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    names = [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]
    assert names == sorted(store.heads())
    assert store.apply_migrations(db) == []


def test_a_measured_request_is_stored_once_and_itl_round_trips(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={})
    row = {"run_id": run_id, "idx": 0, "repeat": 0, "seq": 3, "phase": "measure", "session": 0, "t0": 1.0,
           "t_first": 1.5, "t_last": 2.0, "itl": [0.25, 0.25], "status": "ok"}
    store.insert_requests(db, [row])
    store.insert_requests(db, [{**row, "t0": 9.0}])  # the same request again, as a resume might try
    stored = store.get_requests(db, run_id)
    assert len(stored) == 1 and stored[0]["t0"] == 1.0 and stored[0]["itl"] == [0.25, 0.25]
    assert store.stored_seqs(db, run_id, 0, 0) == {3}


def test_unknown_run_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run_id"):
        store.get_run(store.connect(tmp_path / "a.db"), "nope")


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="db"):
        store.connect(tmp_path)


def test_a_run_and_its_plan_are_stored_together_or_not_at_all(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    with pytest.raises(ValueError):  # a plan row that cannot be stored: the run is rolled back too
        store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={},
                         plan=[(0, 0, "concurrency", 1.0), (1, 0)])  # type: ignore[list-item]
    assert store.list_runs(db) == []
    run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={},
                              plan=[(0, 0, "concurrency", 1.0)])
    assert [level["load"] for level in store.get_levels(db, run_id)] == [1.0]


def test_an_in_flight_row_is_replaced_by_its_outcome_but_a_finished_one_never(tmp_path: Path) -> None:
    db = store.connect(tmp_path / "a.db")
    run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={})
    key = {"run_id": run_id, "idx": 0, "repeat": 0, "phase": "measure", "session": 0, "itl": b""}
    store.insert_requests(db, [{**key, "seq": 0, "t0": 1.0, "status": "in_flight"},
                               {**key, "seq": 1, "t0": 1.0, "status": "in_flight"}])
    store.insert_requests(db, [{**key, "seq": 0, "t0": 1.1, "status": "ok"},
                               {**key, "seq": 0, "t0": 9.0, "status": "timeout"}])  # a second outcome: ignored
    assert store.settle_in_flight(db, run_id, 0, 0, resend=False) == 1
    rows = {row["seq"]: row for row in store.get_requests(db, run_id)}
    assert (rows[0]["status"], rows[0]["t0"]) == ("ok", 1.1) and rows[1]["status"] == "interrupted"
