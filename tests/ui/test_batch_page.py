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
    return next(job["job_id"] for job in batch.list_jobs()
                if batch.job_status(job["job_id"])["config"]["model"] == model)


def test_after_planning_a_second_job_the_page_follows_it(tmp_path, monkeypatch):
    monkeypatch.setenv("INFERCOST_APP_LOCAL_PATHS", "1")  # the test names a file outside the upload folder
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    plan(at, write_batch_file(tmp_path / "first.jsonl", 3))
    plan(at, write_batch_file(tmp_path / "second.jsonl", 5), "other-model")
    second = job_of("other-model")
    at.run()  # the next refresh of the page
    assert at.session_state["batch_job"] == second
    assert at.selectbox(key="follow").value == second
    assert any(header.value.startswith(f"{second}:") for header in at.subheader)


def shown_values(frame) -> list[str]:
    return [str(value) for column in frame.columns for value in frame[column]]


def test_budget_and_actual_read_in_units_with_no_none_or_raw_floats(tmp_path, monkeypatch):
    monkeypatch.setenv("INFERCOST_APP_LOCAL_PATHS", "1")  # the test names a file outside the upload folder
    from infercost.runner.scripted_server import Script, running

    with running(Script(ttft_ms=1, gap_us=100)) as url:
        at = AppTest.from_file(PAGE, default_timeout=60).run()
        at.text_input(key="base_url").set_value(url)
        plan(at, write_batch_file(tmp_path / "in.jsonl", 6))  # no pricing: the cost lines have no figure
        planned = next(frame.value for frame in at.dataframe if list(frame.value.columns) == ["line", "budget"])
        assert "None" not in shown_values(planned) and "nan" not in shown_values(planned)
        assert planned.set_index("line").loc["cost (USD)", "budget"] == "–"
        batch.run_job(at.session_state["batch_job"])
    at.run()
    versus = next(frame.value for frame in at.dataframe if "difference (%)" in frame.value.columns)
    values = shown_values(versus)
    assert "None" not in values and "nan" not in values
    assert all(text == "–" or text.endswith("%") for text in versus["difference (%)"])
    assert versus.set_index("line").loc["duration (s)", "actual"].endswith(" s")
    raw = [text for text in values if "." in text and len(text.split(".")[-1]) > 2
           and text.replace(".", "").replace(",", "").lstrip("-").isdigit()]  # a float as Python prints it
    assert not raw, raw
