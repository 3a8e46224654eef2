"""Reports in every format carry the basis of each figure, escape what they show, and never carry secrets."""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import re

import pytest

from infercost.errors import InputError
from infercost.estimate import estimate
from infercost.profile import parse_profile
from infercost.report import FORMATS, md_escape, render_report
from tests.scenarios.scenario_profiles import SELF_HOST

WHEN = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def estimates() -> dict:
    """Two real estimates: one with a catalog model, a price of the person's own and a self-host setup."""
    first = {"name": "base", "calls_per_day": 10_000, "prompt_tokens": 500, "output_tokens": 100,
             "api_models": ["gpt-4o-mini"], "self_host": [SELF_HOST],
             "prices": [{"id": EVIL, "input_per_mtok": 1.0, "output_per_mtok": 2.0}]}  # fmt: skip
    second = {**first, "name": "double", "calls_per_day": 20_000, "prices": [], "self_host": []}
    return {"base": estimate(parse_profile(first)), "double": estimate(parse_profile(second))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_gives_the_basis_of_each_figure(estimates, fmt):
    text = render_report(estimates, fmt, generated_at=WHEN)
    for basis in ("o200k_base", "exact", "litellm", "2026-", "measured", "H100 SXM", "2026-11-29T12:00:00+00:00"):
        assert basis in text, basis
    assert "0.1.0" in text  # the infercost version


@pytest.mark.parametrize(("fmt", "escape"), [("markdown", md_escape), ("html", html.escape)])
def test_text_reports_give_the_inputs_and_the_warnings(fmt, escape):
    profile = {"calls_per_day": 1234, "prompt_tokens": 77, "output_tokens": 5, "batch": True,
               "prices": [{"id": "mine", "input_per_mtok": 1.0, "output_per_mtok": 2.0}]}  # fmt: skip
    document = estimate(parse_profile(profile))
    warnings = document["api"][0]["warnings"]
    assert any("batch" in w for w in warnings), "a price without a batch tier is flagged"
    text = render_report(document, fmt)
    assert "1,234" in text and "calls_per_day" in text
    assert all(escape(f"mine: {w}") in text for w in warnings)


def test_html_escapes_model_ids_and_has_no_script(estimates):
    page = render_report(estimates, "html")
    assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower() and "Content-Security-Policy" in page


def test_markdown_keeps_model_ids_from_becoming_html_or_breaking_tables(estimates):
    text = render_report(estimates, "markdown")
    assert EVIL not in text and r"\<script\>alert(1)\</script\>" in text


def test_csv_has_one_row_per_scenario_and_option_with_the_basis(estimates):
    rows = list(csv.DictReader(io.StringIO(render_report(estimates, "csv"))))
    assert [(r["scenario"], r["option"]) for r in rows] == [
        ("base", "gpt-4o-mini"), ("base", EVIL), ("base", SELF_HOST["name"]), ("double", "gpt-4o-mini")
    ]  # fmt: skip
    assert rows[0]["tokenizer"] == "o200k_base" and rows[0]["price_as_of"]
    assert rows[2]["basis"] == "measured" and rows[2]["input_calls_per_day"] == "10000"


def test_csv_numbers_carry_no_binary_noise(estimates):
    # a persona walk found 90.78890625000003 and 0.8999999999999999 in a report a team would open in a spreadsheet
    for row in csv.DictReader(io.StringIO(render_report(estimates, "csv"))):
        for column, cell in row.items():
            if re.fullmatch(r"-?[\d.]+(e-?\d+)?", cell) and cell.count(".") <= 1:  # a number, not a version
                significant = re.sub(r"e.*|[-.]", "", cell).strip("0")
                assert len(significant) <= 12 and not cell.endswith(".0"), (column, cell)
    float_noise = {"retry_rate": 0.1 * 3}  # 0.30000000000000004 in binary
    doc = {**estimates, "base": {**estimates["base"], "profile": {**estimates["base"]["profile"], **float_noise}}}
    assert "0.3," in render_report(doc, "csv") and "0.30000000000000004" not in render_report(doc, "csv")


def test_markdown_and_html_show_money_as_dollars_and_counts_as_whole_numbers(estimates):
    for fmt in ("markdown", "html"):
        text = render_report(estimates, fmt)
        row = next(r for r in estimates["base"]["api"] if r["model"] == "gpt-4o-mini")
        assert f"{row['input_tokens_per_day']:,.0f}" in text  # a count per day, not 315,787,500.00
        assert f"${row['cost_per_month']:,.2f}" in text
        assert "e-0" not in text and "e-1" not in text  # no exponents: $0.000054, not 5.4e-05


def test_json_report_holds_the_estimates_as_they_are(estimates):
    document = json.loads(render_report(estimates, "json", generated_at=WHEN))
    assert document["scenarios"]["base"]["api"] == estimates["base"]["api"]
    assert len(document["comparison"]) == 4 and document["generated_at"] == "2026-11-29T12:00:00+00:00"


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_credentials_or_environment_in_any_format(estimates, fmt, monkeypatch):
    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    leaky = json.loads(json.dumps(estimates["base"]))
    leaky["profile"]["prices"][0]["api_key"] = "hunter2-not-a-key-shape"
    leaky["profile"]["name"] = f"bot using {secret}"
    text = render_report(leaky, fmt)
    assert secret not in text and "hunter2" not in text and "redacted" in text


def test_an_unknown_format_names_the_field(estimates):
    with pytest.raises(InputError) as error:
        render_report(estimates, "pdf")
    assert error.value.field == "format"
