"""The Batch jobs page offers the CLI's ``--backend`` and ``--executor`` and checks them as the CLI does (AppTest)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost import batch
from infercost.batch.background import uploads_dir
from tests.batch.conftest import write_batch_file

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "batch.py")


def in_process_form(source: Path, **form) -> AppTest:
    source = shutil.copy(source, uploads_dir())  # the app's own upload folder: the page may name files there
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="source").set_value("A path on this machine").run()
    at.text_input(key="input_path").set_value(str(source))
    at.radio(key="backend").set_value("transformers").run()
    at.text_input(key="model").set_value("random:tiny-llama")
    for key, value in form.items():
        widget = {"executor": at.selectbox, "actors": at.number_input, "gpus": at.checkbox}[key]
        widget(key=key).set_value(value)
    return at


def test_the_page_offers_the_clis_backends_and_executors():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert len(at.radio(key="backend").options) == len(batch.BACKENDS)  # what `batch run --backend` takes
    assert len(at.selectbox(key="executor").options) == len(batch.EXECUTORS)
    assert at.text_input(key="base_url").disabled is False and at.number_input(key="actors").disabled is True
    at.radio(key="backend").set_value("transformers").run()
    assert at.text_input(key="base_url").disabled is True and at.number_input(key="actors").disabled is False


def test_actors_without_ray_are_refused_as_the_cli_refuses_them(tmp_path):
    at = in_process_form(write_batch_file(tmp_path / "in.jsonl", 3), executor="local", actors=2)
    at.button(key="plan").click().run()
    assert not at.exception and "batch_job" not in at.session_state
    assert any("actors" in error.value and "--executor ray" in error.value for error in at.error), at.error


def test_an_in_process_job_planned_on_the_page_runs_the_model_in_process(tmp_path):
    at = in_process_form(write_batch_file(tmp_path / "in.jsonl", 4, max_tokens=(2, 4)), executor="local")
    at.button(key="plan").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    job_id = at.session_state["batch_job"]
    config = batch.job_status(job_id)["config"]
    assert (config["backend"], config["executor"], config["base_url"]) == ("transformers", "local", None)
    at.button(key="start").click().run()  # the job's own process, as `batch resume` from the CLI
    deadline = time.monotonic() + 180
    while (status := batch.job_status(job_id))["status"] not in ("done", "failed", "interrupted"):
        assert time.monotonic() < deadline, status["status"]
        time.sleep(0.5)
    assert status["status"] == "done" and status["counts"]["ok"] == 4, status["counts"]
