"""A sweep that finishes while the app runs reaches Compare and the Bill page at once, under a label of its own."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost import store

COMPARE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/compare.py")


def finished_run(model: str = "random:tiny-llama") -> str:
    """A stored run with one completed level, as the runner leaves it."""
    db = store.connect()
    try:
        run_id = store.create_run(db, backend="openai", model=model, config={}, hardware={"cpu": "test cpu"},
                                  engine={}, status="done")  # fmt: skip
        store.plan_levels(db, run_id, [(0, 0, "concurrency", 1)])
        store.finish_level(db, run_id, 0, 0, {"completed": 10, "request_throughput": 2.0, "output_throughput": 100.0,
                                              "p95_ttft_ms": 50.0, "p95_tpot_ms": 10.0, "input_len": 128,
                                              "output_len": 64})  # fmt: skip
        return run_id
    finally:
        db.close()


def test_a_run_stored_while_the_app_runs_is_offered_on_compare_with_a_unique_label():
    at = AppTest.from_file(COMPARE, default_timeout=120)
    at.session_state["cmp_tab"] = "Check a speed claim"
    at.run()
    before = at.selectbox(key="cmp_claim_profile").options
    first, second = finished_run(), finished_run()
    at.run()
    after = at.selectbox(key="cmp_claim_profile").options
    assert not at.exception
    assert len(after) == len(before) + 2
    new = [label for label in after if label not in before]
    assert len(set(new)) == 2, new  # two runs of one model on one machine are told apart
    assert any(first in label for label in new) and any(second in label for label in new)
