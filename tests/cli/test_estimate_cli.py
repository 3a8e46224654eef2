"""``estimate`` and ``prices`` as scripts use them: DESIGN.md's fields, one-line errors, exit status 2."""

import json
import re

import pytest

DESIGN_PROFILE = {
    "name": "support-bot", "calls_per_day": 100000, "prompt_tokens": 1200, "output_tokens": 300,
    "reasoning_tokens": 0, "retry_rate": 0.05, "max_retries": 3, "truncation_rate": 0.0,
    "cached_prompt_fraction": 0.0, "batch": False, "days_per_month": 30,
    "api_models": ["gpt-4o-mini", "claude-sonnet-4-5"],
    "prices": [{"id": "my-negotiated-model", "input_per_mtok": 3.0, "output_per_mtok": 15.0}],
    "self_host": [{
        "name": "llama-8b-on-h100", "gpu": "H100 SXM", "gpu_price_per_hour": 2.5, "gpus_per_replica": 1,
        "throughput": {"points": [{"concurrency": 1, "request_throughput": 0.8, "output_throughput": 210,
                                   "p95_ttft_ms": 40, "p95_tpot_ms": 4.8}]},
        "slo": {"p95_ttft_ms": 1000, "p95_tpot_ms": 50},
        "peak_to_average": 2.0, "target_utilization": 0.8, "mode": "always_on",
    }],
}  # fmt: skip
API_FIELDS = {"model", "tokenizer", "fidelity", "input_tokens_per_day", "cached_input_tokens_per_day",
              "output_tokens_per_day", "cost_per_day", "cost_per_month", "cost_per_call", "cost_per_million_tokens",
              "warnings"}  # fmt: skip
SELF_HOST_FIELDS = {"name", "operating_point", "basis", "run_id", "meets_slo", "replicas", "gpu_hours_per_day",
                    "cost_per_day", "cost_per_month", "cost_per_million_tokens", "warnings"}  # fmt: skip


@pytest.fixture
def profile_path(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(DESIGN_PROFILE))
    return path


def test_estimate_reproduces_the_design_example(cli, profile_path):
    done = cli("estimate", str(profile_path), "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    rows = {row["model"]: row for row in result["api"]}
    assert set(rows) == {"gpt-4o-mini", "claude-sonnet-4-5", "my-negotiated-model"}
    assert all(API_FIELDS <= set(row) for row in rows.values())
    negotiated = rows["my-negotiated-model"]
    # 105,262.5 attempts/day x (1200 x $3 + 300 x $15) / 1e6
    assert negotiated["cost_per_day"] == pytest.approx(105_262.5 * (1200 * 3 + 300 * 15) / 1e6)
    assert negotiated["input_tokens_per_day"] == pytest.approx(126_315_000)
    assert rows["claude-sonnet-4-5"]["fidelity"] == "proxy"
    (self_host,) = result["self_host"]
    assert SELF_HOST_FIELDS <= set(self_host)
    # 1.218 req/s x 2 / (0.8 x 0.8) -> 4 replicas, 96 GPU-hours, $240/day
    assert self_host["replicas"] == 4 and self_host["gpu_hours_per_day"] == 96
    assert self_host["cost_per_day"] == pytest.approx(240) and self_host["basis"] == "measured"
    assert result["profile"]["max_retries"] == 3 and result["profile"]["name"] == "support-bot"


def test_estimate_reads_yaml_and_stdin(cli, tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("calls_per_day: 1000\nprompt_tokens: 500\noutput_tokens: 100\napi_models: [gpt-4o]\n")
    from_file = cli("estimate", str(path), "--json").json()
    workload = {"calls_per_day": 1000, "prompt_tokens": 500, "output_tokens": 100, "api_models": ["gpt-4o"]}
    from_stdin = cli("estimate", "-", "--json", stdin=json.dumps(workload))
    assert from_file["api"] == from_stdin.json()["api"]


def test_estimate_without_models_prices_the_whole_catalog(cli, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"calls_per_day": 10, "prompt_tokens": 5, "output_tokens": 5}))
    assert len(cli("estimate", str(path), "--json").json()["api"]) >= 30


def test_human_output_is_a_table(cli, profile_path):
    done = cli("estimate", str(profile_path))
    assert done.code == 0 and "cost_per_month" in done.stdout and "llama-8b-on-h100" in done.stdout


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ({"calls_per_day": -5, "prompt_tokens": 1, "output_tokens": 1}, "calls_per_day"),
        ({"calls_per_day": 5, "prompt_tokens": 1}, "output_tokens: Field required"),
        ({"calls_per_day": 5, "prompt_tokens": 1, "output_tokens": 1, "retry_rate": 1.5}, "retry_rate"),
        ({"calls_per_day": 5, "prompt_tokens": 1, "output_tokens": 1, "api_models": ["gpt-9000"]}, "unknown model"),
        ({"calls_per_day": 5, "prompt_tokens": 1, "output_tokens": 1, "colour": "red"}, "colour"),
        ({"calls_per_day": 5, "output_tokens": 1}, "exactly one of"),
        ({**DESIGN_PROFILE, "self_host": [{**DESIGN_PROFILE["self_host"][0], "slo": {"p95_ttft": 3}}]},
         "self_host.0.slo"),
        ([1, 2, 3], "a profile is a JSON/YAML object"),
    ],
)  # fmt: skip
def test_bad_profiles_get_one_line_naming_the_field(cli, tmp_path, profile, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(profile))
    done = cli("estimate", str(path), "--json")
    assert done.code == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("content", "message"), [(b"{nope", "not valid JSON at line 1"), (b"\x00\x01", "binary"),
                                                  (b"\xff\xfeabc", "not UTF-8")])  # fmt: skip
def test_unreadable_profiles_get_one_line(cli, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    done = cli("estimate", str(path))
    assert done.code == 2 and message in done.stderr and done.stderr.count("\n") == 1


def test_a_missing_file_and_a_bad_flag_exit_2(cli):
    assert cli("estimate", "/nonexistent.json").code == 2
    flag = cli("estimate", "--frobnicate")
    assert flag.code == 2 and flag.stderr.count("\n") == 1


def test_prices_json_lists_api_and_gpu_entries_with_source_and_date(cli):
    done = cli("prices", "--json")
    assert done.code == 0
    catalog = done.json()
    assert len(catalog["api"]) >= 30 and catalog["gpu"]
    assert all(entry["source"] and entry["as_of"] and "age_days" in entry for entry in catalog["api"] + catalog["gpu"])


def test_self_host_rows_carry_break_even_regions_per_api_model(cli, profile_path):
    # One replica carries 0.8 x 0.8 x 86,400 / 2 = 27,648 attempts/day = 26,266 calls/day (1.052625 attempts per
    # call) and costs $2.50 x 24 x 30 = $1,800 a month. claude-sonnet-4-5 costs $25,578.79 a month at 100,000
    # calls/day: $0.2557879 per call/day, so one replica is cheaper from 1,800 / 0.2557879 = 7,037 calls/day, and
    # every later replica step (j x 26,266 >= (j + 1) x 7,037) stays cheaper: [[7,037, null]]. gpt-4o-mini
    # ($0.01136835 per call/day) needs 158,334 calls/day per replica's cost, more than a replica carries: never.
    row = cli("estimate", str(profile_path), "--json").json()["self_host"][0]
    regions = row["break_even"]
    assert regions["gpt-4o-mini"] == []
    assert len(regions["claude-sonnet-4-5"]) == 1
    start, end = regions["claude-sonnet-4-5"][0]
    assert start == pytest.approx(1800 / 0.2557879, rel=1e-6) and end is None
    assert set(regions) == {"gpt-4o-mini", "claude-sonnet-4-5", "my-negotiated-model"}


def test_elastic_in_an_old_profile_means_autoscaled(cli, tmp_path):
    profile = {**DESIGN_PROFILE, "self_host": [{**DESIGN_PROFILE["self_host"][0], "mode": "elastic"}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(profile))
    row = cli("estimate", str(path), "--json").json()["self_host"][0]
    assert row["mode"] == "autoscaled" and len(row["replicas_per_hour"]) == 24


@pytest.mark.parametrize("field, value", [("billing_increment_minutes", 45), ("max_replicas", 0),
                                          ("load_shape", [1.0] * 23), ("mode", "sometimes")])  # fmt: skip
def test_bad_scaling_fields_are_named(cli, tmp_path, field, value):
    profile = {**DESIGN_PROFILE, "self_host": [{**DESIGN_PROFILE["self_host"][0], field: value}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(profile))
    done = cli("estimate", str(path), "--json")
    assert done.code == 2 and f"self_host.0.{field}" in done.stderr and "Traceback" not in done.stderr


def test_the_human_view_shows_a_predicted_cost_with_its_range(cli, tmp_path):
    # Regression: the p10-p90 range a fitted cost carries was in --json only; the table a person reads had none.
    from infercost.estimate import cost_range_text

    nim_8b = "published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-2000in-200out"
    profile = {"calls_per_day": 1_000_000, "prompt_tokens": 1200, "output_tokens": 300, "api_models": ["gpt-4o-mini"],
               "self_host": [{"name": "llama-8b", "gpu": "H100 SXM", "gpu_price_per_hour": 2.69,
                              "throughput": {"run": nim_8b}, "slo": {"p95_ttft_ms": 1000, "p95_tpot_ms": 50}}]}
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    (row,) = cli("estimate", str(path), "--json").json()["self_host"]
    shown = cli("estimate", str(path)).stdout
    assert row["basis"] == "fitted" and "–" in cost_range_text(row)  # a range with two ends, not one value
    assert "cost_per_month_p10_p90" in shown and cost_range_text(row) in shown


def test_the_human_view_writes_money_without_an_exponent(cli, tmp_path):
    # Regression: a $63,950 month read "6.395e+04" and a $0.00005 call "5.368e-05" in the table a person reads.
    path = tmp_path / "p.yaml"
    path.write_text("calls_per_day: 250000\nprompt_tokens: 1200\noutput_tokens: 300\nretry_rate: 0.05\n"
                    "api_models: [claude-sonnet-4-6, nebius/meta-llama-3.1-8b-instruct]\n")
    done = cli("estimate", str(path))
    rows = {row["model"]: row for row in cli("estimate", str(path), "--json").json()["api"]}
    assert done.code == 0 and not re.search(r"\de[+-]\d", done.stdout), done.stdout
    assert f"{rows['claude-sonnet-4-6']['cost_per_month']:,.0f}" in done.stdout  # 63,947: whole dollars
    assert f"{rows['nebius/meta-llama-3.1-8b-instruct']['cost_per_call']:.8f}".rstrip("0") in done.stdout  # 0.00004421
