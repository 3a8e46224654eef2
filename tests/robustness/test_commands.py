"""Smaller hostile inputs to single commands: scenario names, racing renames, load levels, SLOs, future dates."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from infercost.errors import InputError
from infercost.pricing import age_days
from infercost.store import connect, duplicate_scenario, get_scenario, rename_scenario, save_scenario
from tests.robustness.conftest import assert_one_line_error, profile, run_process


@pytest.fixture
def db(tmp_path):
    connection = connect(tmp_path / "s.db")
    yield connection
    connection.close()


def test_names_are_stripped_on_lookup_as_on_save(db):
    save_scenario(db, "  base  ", profile())
    assert get_scenario(db, " base")["name"] == "base"
    assert rename_scenario(db, "base ", "other")["name"] == "other"


@pytest.mark.parametrize("name", ["bot\x1b[2J", "a\x07b", "bad \udcff byte"])
def test_unprintable_or_non_utf8_names_are_refused(db, name):
    with pytest.raises(InputError) as error:
        save_scenario(db, name, profile())
    assert error.value.field == "name"


def test_a_non_utf8_argument_is_one_line(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile()), encoding="utf-8")
    result = run_process("scenarios", "save", b"\xff\xfe", str(path), "--db", str(tmp_path / "s.db"))
    assert_one_line_error(result, "name", "UTF-8")
    assert_one_line_error(run_process("scenarios", "show", b"\xff", "--db", str(tmp_path / "s.db")), "no scenario")


@pytest.mark.parametrize("action", [duplicate_scenario, rename_scenario])
def test_a_name_taken_by_another_process_meanwhile_is_a_clear_error(tmp_path, monkeypatch, action):
    """The check-then-write race: another process inserts the new name between this one's check and its write."""
    path = tmp_path / "s.db"
    mine, theirs = connect(path), connect(path)
    save_scenario(mine, "base", profile())
    import infercost.store.scenarios as scenarios

    def taken_meanwhile(db, name):
        save_scenario(theirs, name, profile())

    monkeypatch.setattr(scenarios, "_must_be_free", taken_meanwhile)
    with pytest.raises(InputError, match="exists already"):
        action(mine, "base", "copy")
    mine.close()
    theirs.close()


def test_save_refuses_what_estimate_refuses(cli, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile(api_models=["no-such-model"])), encoding="utf-8")
    assert_one_line_error(cli("estimate", str(path)), "api_models")
    assert_one_line_error(cli("scenarios", "save", "x", str(path)), "api_models")
    assert json.loads(cli("scenarios", "list", "--json").stdout) == {"scenarios": []}


BENCH = ("bench", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")


@pytest.mark.parametrize(("args", "fragment"), [
    (("--concurrency", "inf"), "concurrency"),
    (("--concurrency", "nan"), "concurrency"),
    (("--concurrency", "1e9"), "concurrency"),
    (("--pattern", "rate", "--rate", "1e-300"), "rate"),
    (("--pattern", "rate", "--rate", "inf"), "rate"),
    (("--slo", "bogus:5"), "unknown metric 'bogus'"),
    (("--slo", "ttft:nan"), "slo"),
    (("--slo", "ttft"), "slo"),
    (("--timeout", "inf"), "--timeout"),
    (("--duration", "nan"), "--duration"),
])  # fmt: skip
def test_bench_refuses_unbounded_levels_and_unknown_slo_metrics(cli, args, fragment):
    assert_one_line_error(cli(*BENCH, *args), fragment)


def test_a_price_dated_in_the_future_is_refused():
    today = dt.date(2026, 12, 1)
    assert age_days(dt.date(2026, 12, 2), today=today) == 0  # tomorrow: another time zone
    with pytest.raises(InputError, match="in the future"):
        age_days(dt.date(2027, 6, 1), today=today)



def test_notes_that_are_not_utf8_are_one_line(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile()), encoding="utf-8")
    result = run_process("scenarios", "save", "x", str(path), "--notes", b"\xff", "--db", str(tmp_path / "s.db"))
    assert_one_line_error(result, "notes", "UTF-8")


@pytest.mark.parametrize(("body", "fragment"), [
    ("[" * 5000 + "]" * 5000, "nested"), ('{"a": ' + "9" * 5000 + "}", "digits"), ('{"a": NaN}', "finite"),
])  # fmt: skip
def test_bench_extra_body_is_read_like_a_document(cli, body, fragment):
    assert_one_line_error(cli(*BENCH, "--extra-body", body), "extra_body", fragment)
