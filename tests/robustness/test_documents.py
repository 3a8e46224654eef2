"""Hostile profile and price documents: alias bombs, deep nesting, huge integers, non-finite numbers, lone surrogates.

Every one is refused by ``infercost.files`` with one line naming the place, in every command that reads documents.
"""

from __future__ import annotations

import json
import time

import pytest

from infercost.errors import InputError
from infercost.files import MAX_NESTING, parse_document
from tests.robustness.conftest import assert_one_line_error, profile, run_process, setup

PROFILE_YAML = "name: x\ncalls_per_day: 1000\nprompt_tokens: 100\noutput_tokens: 50\n"


def alias_bomb(levels: int = 9) -> str:
    """Nine levels of nine aliases: 9**9 = 387 million strings from under 1 KB."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(f"    {line}" for line in lines)


def bomb_in_prices() -> str:
    entry = "prices:\n  - id: m\n    input_per_mtok: 1\n    output_per_mtok: 1\n    junk:\n"
    return PROFILE_YAML + entry + alias_bomb()


def bomb_in_points() -> str:
    return PROFILE_YAML + (
        "self_host:\n  - name: s\n    gpu_price_per_hour: 2\n    throughput:\n      points:\n"
        "        - concurrency: 1\n          request_throughput: 1\n          junk:\n"
    ) + "\n".join("      " + line for line in alias_bomb().splitlines())


@pytest.mark.parametrize("text", [bomb_in_prices(), bomb_in_points()], ids=["prices", "points"])
def test_yaml_alias_bomb_is_refused_quickly(cli, tmp_path, text):
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.monotonic()
    result = cli("estimate", str(path), "--json")
    assert_one_line_error(result, "aliases expand to more than")
    assert time.monotonic() - started < 10


def test_alias_bomb_in_an_overrides_file(cli, tmp_path):
    path = tmp_path / "prices.yaml"
    entry = "- id: &id m\n  input_per_mtok: 1\n  output_per_mtok: 1\n  junk:\n"
    path.write_text(entry + alias_bomb(), encoding="utf-8")
    assert_one_line_error(cli("prices", "--overrides", str(path), "--json"), "aliases expand")


def test_a_few_aliases_still_work(tmp_path):
    text = "slo: &slo {p95_ttft_ms: 500}\nsetups: [{slo: *slo}, {slo: *slo}]\n"
    assert parse_document(text, name="a.yaml")["setups"][1]["slo"] == {"p95_ttft_ms": 500}


def test_a_recursive_alias_is_refused():
    with pytest.raises(InputError, match="contains it"):
        parse_document("a: &a [*a]\n", name="a.yaml")


def deep_json(levels: int) -> str:
    return json.dumps(profile()).replace('"name": "x"', '"name": "x", "junk": ' + "[" * levels + "]" * levels)


def deep_yaml(levels: int) -> str:
    return PROFILE_YAML + "junk: " + "[" * levels + "]" * levels + "\n"


@pytest.mark.parametrize(("name", "text"), [
    ("deep.json", deep_json(1500)), ("deep.json", deep_json(100_000)), ("deep.yaml", deep_yaml(1500)),
    ("deep.yaml", "\n".join("  " * i + f"k{i}:" for i in range(1200)) + " 1\n"),
])  # fmt: skip
def test_deep_nesting_is_one_line_in_estimate(cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert_one_line_error(cli("estimate", str(path)), "nested")


def test_nesting_up_to_the_limit_parses():
    assert isinstance(parse_document("[" * MAX_NESTING + "]" * MAX_NESTING, name="ok.json"), list)
    assert parse_document('{"a": "[[[[[[" }', name="brackets-in-strings.json") == {"a": "[[[[[["}


HUGE = "9" * 5000


@pytest.mark.parametrize("command", [("estimate",), ("report",), ("scenarios", "save", "x")])
@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_an_integer_over_4300_digits_names_the_field(cli, tmp_path, command, suffix):
    path = tmp_path / f"huge.{suffix}"
    text = json.dumps(profile()).replace('"calls_per_day": 1000', f'"calls_per_day": {HUGE}')
    path.write_text(text, encoding="utf-8")  # JSON is YAML too
    assert_one_line_error(cli(*command, str(path)), "calls_per_day", "5,000 digits")


def test_huge_integer_in_prices_overrides(cli, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(f'[{{"id": "m", "input_per_mtok": {HUGE}, "output_per_mtok": 1}}]', encoding="utf-8")
    assert_one_line_error(cli("prices", "--overrides", str(path)), "0.input_per_mtok", "digits")


@pytest.mark.parametrize("command", [("estimate",), ("report",), ("scenarios", "save", "x")])
def test_deep_nesting_in_report_and_save(cli, tmp_path, command):
    path = tmp_path / "deep.json"
    path.write_text(deep_json(2000), encoding="utf-8")
    assert_one_line_error(cli(*command, str(path)), "nested")


@pytest.mark.parametrize("command", [("estimate", "--json"), ("estimate",), ("report",), ("scenarios", "save", "x")])
def test_a_lone_surrogate_is_refused_before_any_output(tmp_path, command):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(profile(name="bot \ud800")), encoding="utf-8")  # json.dumps escapes it: "\ud800"
    assert_one_line_error(run_process(*command[:1], str(path), *command[1:]), "name", "surrogate")


@pytest.mark.parametrize(("document", "field"), [
    (profile(self_host=[setup(slo={"p95_ttft_ms": float("nan")})]), "self_host.0.slo.p95_ttft_ms"),
    (profile(self_host=[setup(slo={"p95_ttft_ms": float("inf")})]), "self_host.0.slo.p95_ttft_ms"),
    (profile(calls_per_day=float("inf")), "calls_per_day"),
    (profile(self_host=[setup(throughput={"points": [
        {"concurrency": 1, "request_throughput": float("inf"), "p95_ttft_ms": 40}]})]),
     "self_host.0.throughput.points.0.request_throughput"),
    (profile(prices=[{"id": "m", "input_per_mtok": float("nan"), "output_per_mtok": 1}]), "prices.0.input_per_mtok"),
])  # fmt: skip
def test_non_finite_numbers_are_refused_naming_the_field(cli, tmp_path, document, field):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document), encoding="utf-8")  # writes NaN / Infinity, as Python's json accepts
    assert_one_line_error(cli("estimate", str(path), "--json"), field, "finite")


@pytest.mark.parametrize("yaml_value", [".nan", ".inf", "-.inf", "1e999"])
def test_non_finite_yaml_numbers_are_refused(cli, tmp_path, yaml_value):
    path = tmp_path / "p.yaml"
    path.write_text(PROFILE_YAML.replace("1000", yaml_value), encoding="utf-8")
    assert_one_line_error(cli("estimate", str(path)), "calls_per_day", "finite")
