"""``scenarios`` and ``report`` as a person runs them: exit codes, JSON on stdout, one-line errors."""

from __future__ import annotations

import json

import pytest


def test_save_list_duplicate_rename_export_delete(cli, profile_file, profile, tmp_path):
    assert cli("scenarios", "save", "base", str(profile_file), "--notes", "today").code == 0
    assert cli("scenarios", "duplicate", "base", "copy").code == 0
    assert cli("scenarios", "rename", "copy", "double").code == 0
    listed = cli("scenarios", "list", "--json")
    assert listed.code == 0
    assert [s["name"] for s in json.loads(listed.stdout)["scenarios"]] == ["base", "double"]
    exported = tmp_path / "double.json"
    assert cli("scenarios", "export", "double", "-o", str(exported)).code == 0
    assert json.loads(exported.read_text(encoding="utf-8")) == profile
    estimated = cli("estimate", str(exported), "--json")
    assert estimated.code == 0 and json.loads(estimated.stdout)["api"][0]["model"] == "gpt-4o-mini"
    assert cli("scenarios", "delete", "base", "--json").code == 0
    assert "base" not in cli("scenarios", "list").stdout


def test_show_prints_the_saved_profile_as_json(cli, profile_file, profile):
    cli("scenarios", "save", "base", str(profile_file))
    shown = cli("scenarios", "show", "base", "--json")
    assert shown.code == 0 and json.loads(shown.stdout)["profile"] == profile


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("scenarios", "show", "missing"), "error: scenario: no scenario named 'missing'"),
        (("scenarios", "show"), "error: scenarios show: takes NAME"),
        (("scenarios", "save", "x", "no-such-file.json"), "error: no-such-file.json: no such file"),
        (("scenarios", "teleport"), "error: infercost scenarios: argument action: invalid choice"),
        (("scenarios", "list", "-o", "x.json"), "error: --output: only export writes a file"),
        (("report",), "error: PROFILE: give a profile file or --scenario NAME"),
        (("report", "--scenario", "missing"), "error: scenario: no scenario named 'missing'"),
        (("report", "x.json", "--format", "pdf"), "error: infercost report: argument --format: invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    done = cli(*args)
    assert done.code == 2 and done.stdout == ""
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_a_bad_profile_is_refused_before_it_is_saved(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"calls_per_day": -3, "prompt_tokens": 1, "output_tokens": 1}', encoding="utf-8")
    done = cli("scenarios", "save", "bad", str(bad))
    assert done.code == 2 and done.stderr.startswith("error: calls_per_day:")
    assert json.loads(cli("scenarios", "list", "--json").stdout) == {"scenarios": []}


def test_report_compares_a_file_and_a_saved_scenario(cli, profile_file, tmp_path):
    cli("scenarios", "save", "saved", str(profile_file))
    out = tmp_path / "report.html"
    done = cli("report", str(profile_file), "--scenario", "saved", "--format", "html", "-o", str(out), "--json")
    assert done.code == 0 and json.loads(done.stdout)["scenarios"] == ["support-bot", "saved"]
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<h2>Comparison</h2>" in page and "o200k_base" in page


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json"])
def test_report_prints_to_stdout(cli, profile_file, fmt):
    done = cli("report", str(profile_file), "--format", fmt)
    assert done.code == 0 and "gpt-4o-mini" in done.stdout and "o200k_base" in done.stdout
