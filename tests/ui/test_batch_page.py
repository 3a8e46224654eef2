"""The Batch jobs page follows the job a person just planned, and reads its budget in units (AppTest)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost import batch
from tests.batch.conftest import write_batch_file

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "batch.py")


def plan(at: AppTest, source: Path, model: str = "my-model") -> None:
    at.radio(key="source").set_value("A path on this machine").run()
    at.text_input(key="input_path").set_value(str(source))
    at.text_input(key="model").set_value(model)
    at.button(key="plan").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def job_of(model: str) -> str:
    return next(job["job_id"] for job in batch.list_jobs() if batch.job_status(job["job_id"])["config"]["model"] == model)


def test_after_planning_a_second_job_the_page_follows_it(tmp_path):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    plan(at, write_batch_file(tmp_path / "first.jsonl", 3))
    plan(at, write_batch_file(tmp_path / "second.jsonl", 5), "other-model")
    second = job_of("other-model")
    at.run()  # the next refresh of the page
    assert at.session_state["batch_job"] == second
    assert at.selectbox(key="follow").value == second
    assert any(header.value.startswith(f"{second}:") for header in at.subheader)
