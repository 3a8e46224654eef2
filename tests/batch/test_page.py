"""The Batch jobs page (AppTest): plan a job from a path, see its budget, start, follow, pause, and see the bill."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost import batch
from infercost.batch.background import LOCAL_PATHS_ENV, uploads_dir
from tests.batch.conftest import write_batch_file

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "batch.py")


@pytest.fixture(autouse=True)
def local_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests name inputs by their path, as an operator who started the app with --allow-local-paths may."""
    monkeypatch.setenv(LOCAL_PATHS_ENV, "1")


def wait_for(job_id: str, states: tuple[str, ...], timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = batch.job_status(job_id)
        if status["status"] in states:
            return status
        time.sleep(0.2)
    raise TimeoutError(f"{job_id} still {status['status']}")


def frame_with(at: AppTest, column: str):
    """The table that has this column (AppTest does not expose a dataframe's key)."""
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def plan(at: AppTest, source: Path, url: str) -> str:
    at.radio(key="source").set_value("A path on this machine").run()
    at.text_input(key="input_path").set_value(str(source))
    at.text_input(key="base_url").set_value(url)
    at.text_input(key="model").set_value("scripted")
    at.selectbox(key="price").set_value("gpt-4o-mini")
    at.button(key="plan").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at.session_state["batch_job"]


def test_page_opens_without_jobs() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("No batch jobs yet" in info.value for info in at.info)


def test_plan_start_and_follow_a_job_to_its_bill(tmp_path, scripted) -> None:
    source = write_batch_file(tmp_path / "in.jsonl", 300)
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    with scripted() as url:
        job_id = plan(at, source, url)
        # the budget, before anything is sent (records, as the table writes them)
        assert frame_with(at, "budget")["budget"][0] == "300"
        at.button(key="start").click().run()
        status = wait_for(job_id, ("done",))
    at.run()
    assert not at.exception and status["counts"]["ok"] == 300
    assert "output tokens" in frame_with(at, "why")["line"].tolist()
    assert at.get("download_button")


def test_pause_stops_a_running_job_and_resume_finishes_it(tmp_path, scripted) -> None:
    source = write_batch_file(tmp_path / "in.jsonl", 400, max_tokens=(100, 100))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    with scripted(gap_us=2000, tokens_per_chunk=1) as url:  # 0.2 s per record: the job takes a few seconds
        job_id = plan(at, source, url)
        at.button(key="start").click().run()
        wait_for(job_id, ("running",))
        at.run()
        at.button(key="pause").click().run()
        paused = wait_for(job_id, ("paused",))
        assert 0 < paused["counts"]["pending"] < 400
        at.run()
        at.button(key="start").click().run()  # now labelled Resume
        assert wait_for(job_id, ("done",), 120)["counts"]["ok"] == 400


def test_a_job_started_from_the_cli_shows_on_the_page(tmp_path) -> None:
    source = write_batch_file(tmp_path / "in.jsonl", 5)
    config = batch.JobConfig(base_url="http://127.0.0.1:9/v1", model="m", out_dir=str(tmp_path / "out"))
    job_id = batch.create_job(source, config)["job_id"]
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert job_id in frame_with(at, "job_id")["job_id"].tolist()


def test_a_missing_file_is_a_message_not_a_crash(tmp_path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="source").set_value("A path on this machine").run()
    at.text_input(key="input_path").set_value(str(tmp_path / "nope.jsonl"))
    at.text_input(key="model").set_value("m")
    at.button(key="plan").click().run()
    assert not at.exception and "no such file" in at.error[0].value


def path_form(path: Path) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="source").set_value("A path on this machine").run()
    at.text_input(key="input_path").set_value(str(path))
    at.text_input(key="base_url").set_value("http://127.0.0.1:9/v1")
    at.text_input(key="model").set_value("m")
    at.button(key="plan").click().run()
    assert not at.exception
    return at


@pytest.mark.parametrize("where", ["outside", "dot-dot", "symlink"])
def test_by_default_a_path_outside_the_upload_folder_is_refused(where: str, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(LOCAL_PATHS_ENV)
    secret = write_batch_file(tmp_path / "secret.jsonl", 3)
    if where == "dot-dot":
        secret = uploads_dir() / ".." / ".." / "secret.jsonl"
    elif where == "symlink":
        (uploads_dir() / "link.jsonl").symlink_to(secret)
        secret = uploads_dir() / "link.jsonl"
    at = path_form(secret)
    assert "batch_job" not in at.session_state and batch.list_jobs() == []
    assert "**input_path**: only files in the app's upload folder" in at.error[0].value
    assert "--allow-local-paths" in at.error[0].value


def test_by_default_a_file_in_the_upload_folder_may_be_named(monkeypatch) -> None:
    monkeypatch.delenv(LOCAL_PATHS_ENV)
    at = path_form(write_batch_file(uploads_dir() / "in.jsonl", 3))
    assert not at.error and batch.job_status(at.session_state["batch_job"])["counts"]["pending"] == 3
