"""Issue 24: every API row of ``estimate --json`` has its bill band's P10–P90, as self-host rows have a range, and the
reports carry each option's band (Markdown and HTML: a section; CSV: columns)."""

import csv
import io
import json

from infercost.band import MAX_BANDED_API_ROWS

PROFILE = {"name": "band", "calls_per_day": 2_000, "prompt_chars": 3_000, "language": "zh-Hans", "output_tokens": 250,
           "retry_rate": 0.05, "api_models": ["gpt-4o-mini", "claude-sonnet-4-5"]}  # fmt: skip


def test_api_rows_have_a_band_and_a_proxy_counted_prompt_draws_its_error(cli, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(PROFILE))
    done = cli("estimate", str(path), "--json")
    assert done.code == 0, done.stderr
    rows = {row["model"]: row for row in done.json()["api"]}
    for row in rows.values():
        low, high = row["cost_per_month_range"]
        assert low < row["band"]["p50"] < high <= row["band"]["p99"]
        assert "output lengths (gamma, CV 50%)" in row["band"]["varied"]
    # Chinese counted with o200k_base for Claude (a proxy): the band draws how far other vocabularies count it
    assert "the proxy tokenizer's error" in rows["claude-sonnet-4-5"]["band"]["varied"]
    assert "the proxy tokenizer's error" not in rows["gpt-4o-mini"]["band"]["varied"]
    text = cli("estimate", str(path))
    assert "cost_per_month_p10_p90" in text.stdout and "$" in text.stdout


def test_a_profile_pricing_the_whole_catalog_says_why_its_rows_have_no_band(cli, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({key: value for key, value in PROFILE.items() if key != "api_models"}))
    result = cli("estimate", str(path), "--json").json()
    assert len(result["api"]) > MAX_BANDED_API_ROWS
    assert all(row["cost_per_month_range"] is None for row in result["api"])
    assert "name the models in api_models" in result["band_note"]


def test_reports_carry_each_options_band(cli, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(PROFILE))
    markdown = cli("report", str(path)).stdout
    assert "### Bill band (US$ per month, Monte Carlo)" in markdown
    band_table = markdown.split("### Bill band")[1].split("###")[0]
    assert "claude-sonnet-4-5" in band_table and "gpt-4o-mini" in band_table
    html_page = cli("report", str(path), "--format", "html").stdout
    assert "<h3>Bill band (US$ per month, Monte Carlo)</h3>" in html_page
    rows = list(csv.DictReader(io.StringIO(cli("report", str(path), "--format", "csv").stdout)))
    for row in rows:
        assert float(row["band_p10_per_month"]) < float(row["band_p90_per_month"])
        assert row["cost_per_month_p10_p90"].startswith("$")
