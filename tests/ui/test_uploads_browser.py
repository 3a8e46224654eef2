"""Uploads a person gets wrong, in a real browser: the message names the file they uploaded and what is wrong."""

from __future__ import annotations

import pytest

from tests.support.browser import settle

pytestmark = pytest.mark.browser


def upload(page, path) -> None:
    """Upload ``path`` and wait until the uploader shows it and the run the upload started has finished: on a busy
    machine an action taken sooner can reach the app before the file does."""
    page.locator("[data-testid=stFileUploader] input[type=file]").first.set_input_files(str(path))
    page.get_by_test_id("stFileChip").filter(has_text=path.name).first.wait_for(timeout=120_000)
    settle(page)


def alert_with(page, text: str) -> str:
    alert = page.get_by_test_id("stAlert").filter(has_text=text).first
    alert.wait_for(timeout=120_000)
    return alert.inner_text()


def test_a_batch_upload_that_cannot_be_read_names_the_uploaded_file_and_why(page, app_url, tmp_path):
    # Regression: the message named the copy kept under the home (".../batch-inputs/ee766515130ad65c-prompts.txt")
    # and said only "no usable records (2 skipped)".
    bad = tmp_path / "prompts.txt"
    bad.write_bytes(b"caf\xe9\nna\xefve\n")  # Latin-1, not UTF-8
    page.goto(f"{app_url}/batch")
    page.get_by_role("button", name="Plan the budget").wait_for(timeout=120_000)
    upload(page, bad)
    page.get_by_label("Model", exact=True).fill("tiny")
    page.get_by_label("Model", exact=True).press("Enter")
    settle(page)
    page.get_by_role("button", name="Plan the budget").click()
    settle(page)
    message = alert_with(page, "prompts.txt")
    assert "not valid UTF-8" in message and "batch-inputs" not in message, message
    assert page.get_by_test_id("stException").count() == 0


def test_a_corpus_upload_with_no_readable_record_says_why_at_once(page, app_url, tmp_path):
    # Regression: the field chooser offered "(none)" and counting said "JSONL records need a field naming the text".
    bad = tmp_path / "prompts.jsonl"
    bad.write_bytes(b'{"prompt": "hi"\n{"prompt": \n')
    page.goto(f"{app_url}/tokens")
    page.get_by_text("Corpus statistics").wait_for(timeout=120_000)
    upload(page, bad)
    message = alert_with(page, "prompts.jsonl")
    assert "malformed JSON" in message, message
    assert page.get_by_test_id("stException").count() == 0
