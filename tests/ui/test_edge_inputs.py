"""Inputs a person can type that used to stop a page: each must give numbers or a friendly message (AppTest)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.estimate import NO_RANGE, cost_range_phrase, cost_range_text

PAGES = Path(__file__).resolve().parents[2] / "infercost/ui/pages"


def compare_with(**workload) -> AppTest:
    at = AppTest.from_file(str(PAGES / "compare.py"), default_timeout=120)
    for key, value in workload.items():
        at.session_state[key] = value
    return at.run()


def test_zero_output_tokens_still_compares_every_option():
    # Regression: the Bill page accepts 0 output tokens (a classifier, a prefill-only call), but Compare stopped at
    # "output_len: must be a number >= 1" because a fitted profile was carried to 0 output tokens.
    at = compare_with(output_tokens=0)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    table = next(frame.value for frame in at.dataframe if "kind" in frame.value.columns)
    assert (table["kind"] != "API").any() and table["cost_per_month"].notna().all()


def test_a_bill_equal_to_the_band_edge_lies_inside_the_band():
    # Regression: an always-on setup's band is its bill on most days, but the simulated month (a mean of equal days)
    # differs from the bill in the last bit, and the page said the bill "lies below the P10–P90 band".
    at = compare_with(cmp_tab="Bill band (P10–P99)")
    for option in at.selectbox(key="cmp_band_model").options[:4]:
        at.selectbox(key="cmp_band_model").set_value(option).run()
        assert not at.exception, at.exception
        verdict = next(m.value for m in at.markdown if "deterministic bill" in m.value)
        shown = {m.label: m.value for m in at.metric}
        bill = verdict.split("($")[1].split(")")[0]
        if shown["P10 per month"] == f"${bill}" or shown["P90 per month"] == f"${bill}":
            assert "lies inside" in verdict, (option, verdict, shown)


def test_the_largest_volume_the_form_takes_draws_its_cost_curves():
    # Regression: the curves ran to 100x today's volume, past the 1e12 calls/day a workload may have: a traceback.
    at = compare_with(calls_per_day=10**12, cmp_tab="Against volume (break-even)")
    assert not at.exception, at.exception
    assert [chart.key for chart in at.get("plotly_chart")] == ["cmp_curves"]


def test_a_speed_claim_against_zero_output_tokens_is_a_message():
    # Regression: the claim's cost readings raised "a throughput claim needs output tokens per call > 0" uncaught.
    at = compare_with(output_tokens=0, cmp_tab="Check a speed claim")
    assert not at.exception, at.exception
    assert any("output_tokens" in e.value for e in at.error)


def test_the_batch_form_offers_an_upload_before_planning():
    # Regression: the uploader was drawn only while "Plan the budget" ran, so "Upload" showed no way to upload.
    at = AppTest.from_file(str(PAGES / "batch.py"), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.radio(key="source").value == "Upload"
    assert len(at.get("file_uploader")) == 1


APP = str(PAGES.parents[2] / "app.py")


def test_benchmark_form_and_the_workload_and_batch_forms_keep_their_own_values():
    # Regression: the Benchmark form shared widget keys with the workload ("output_tokens") and the batch form
    # ("concurrency", "model", "base_url"): a benchmark's 32 output tokens became the bill's, and the batch page
    # raised a TypeError on the benchmark's "1,5,20,50".
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("infercost/ui/pages/benchmark.py").run()
    benchmark_output = next(n for n in at.number_input if n.label == "Output tokens")
    benchmark_output.set_value(32).run()
    at.switch_page("infercost/ui/pages/batch.py").run()
    assert not at.exception, at.exception
    assert next(n for n in at.number_input if n.label == "Concurrency").value == 16
    at.switch_page("infercost/ui/pages/bill.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key="output_tokens").value == 300


PIXELS = {"small": 75, "medium": 200, "large": 400}  # Streamlit's fixed column widths
MONEY_SHOWN = ("cost_per_month", "cost_per_call", "cost_per_million_tokens", "range")  # shown as the text they hold


def test_the_money_columns_of_the_options_table_fit_their_values():
    # Regression: at 1400 px the P10–P90 column showed "$1,937–3,87…" and large monthly bills were cut: the money
    # columns had the narrowest fixed width (and an unset width is sized from the first rows only). ~7 px a character
    # at the table's font, plus the cell's padding.
    import json

    at = compare_with(calls_per_day=3_000_000)
    frame = next(frame for frame in at.dataframe if "kind" in frame.value.columns)
    config = json.loads(frame.proto.columns)
    for column in MONEY_SHOWN:  # an unset width is sized from the first rows only: not enough
        width = PIXELS.get(config[column].get("width"), config[column].get("width"))
        longest = max(len(text) for text in frame.value[column])
        assert width is not None and longest * 7 + 16 <= width, (column, longest, width)


def test_a_prediction_of_a_model_nobody_measured_says_so_with_the_error_measured_for_that():
    # Regression: a setup the engine model has nothing to calibrate on was captioned "roofline · none transfer", and
    # then "error is unknown": it is the held-out error of predicting a model family from the others' priors.
    at = compare_with(cmp_tab="Predicted against measured")
    at.selectbox(key="cmp_model").set_value("qwen2.5-7b").run()
    at.button(key="cmp_add").click().run()
    setup = next(o for o in at.selectbox(key="cmp_engine_setup").options if o.startswith("qwen2.5-7b"))
    at.selectbox(key="cmp_engine_setup").set_value(setup).run()
    assert not at.exception, at.exception
    caption = next(c.value for c in at.caption if "roofline" in c.value)
    assert "none transfer" not in caption and "model transfer" in caption and "off by a median" in caption


def test_the_bills_in_dollars_carry_thousands_separators():
    # Regression: the bill table showed "$84078.42" a month ("$%.2f") beside "$84,078.42" on Compare.
    import json

    at = AppTest.from_file(str(PAGES / "bill.py"), default_timeout=120).run()
    frame = next(frame for frame in at.dataframe if "prompt_tokens" in frame.value.columns)
    config = json.loads(frame.proto.columns)
    assert {config[c]["type_config"]["format"] for c in ("cost_per_day", "cost_per_month")} == {"dollar"}


def test_the_kind_column_tells_the_scaling_modes_apart():
    # Regression: with "Also show each setup as", rows differ only in their kind, which a fixed 75 px column cut to
    # "self-host · o…" / "self-host · a…".
    import json

    at = compare_with(cmp_mode="autoscaled", cmp_also_modes=["offline_batch"])
    frame = next(frame for frame in at.dataframe if "kind" in frame.value.columns)
    width = json.loads(frame.proto.columns)["kind"].get("width")
    longest = max(len(kind) for kind in frame.value["kind"])
    assert isinstance(width, int) and longest * 7 + 16 <= width, (longest, width)


RANGES = [([1936.8, 1936.8], "$1,937"), ([1936.8, 1937.2], "$1,937"), ([1936.8, 1937.6], "$1,937–1,938"),
          ([839.5, None], "$840–SLO missed at p90")]


@pytest.mark.parametrize(("span", "text"), RANGES)
def test_a_range_whose_ends_read_the_same_is_one_value(span, text):
    # Regression: an always-on setup whose P10 and P90 both need one replica read "$1,937–1,937".
    assert cost_range_text({"cost_per_month_range": span}) == text


@pytest.mark.parametrize(("span", "phrase"), [([1936.8, 1936.8], " (the same at P10 and P90)"),
                                              ([1936.8, 3873.6], " (P10–P90 $1,937–3,874)")])
def test_a_sentence_says_a_range_whose_ends_read_the_same_is_the_same_at_both(span, phrase):
    # a persona walk read "$835/month (P10–P90 $835)" in the Same weights sentence as a range left out
    assert cost_range_phrase(cost_range_text({"cost_per_month_range": span})) == phrase
    assert cost_range_phrase(NO_RANGE) == f" ({NO_RANGE})" and cost_range_phrase("") == ""


def test_no_range_on_the_compare_page_repeats_its_value():
    at = compare_with()
    frame = next(frame for frame in at.dataframe if "kind" in frame.value.columns)
    ranges = [text for text in frame.value["range"] if "–" in text]
    assert ranges and all(low != f"${high}" for low, high in (text.split("–") for text in ranges)), ranges


def test_an_api_row_has_no_replicas_rather_than_none():
    # Regression: the table drew an API row's missing replicas (NaN) as a grey "None".
    at = compare_with()
    frame = next(frame for frame in at.dataframe if "kind" in frame.value.columns).value
    replicas = frame.set_index("kind")["replicas"]
    assert set(replicas.loc["API"]) == {"–"}
    assert all(text.isdigit() for text in replicas.drop("API"))


TABS = ["Cost per month", "Against volume (break-even)", "What moves the answer", "Bill band (P10–P99)",
        "Predicted against measured"]  # fmt: skip


@pytest.mark.parametrize("tab", TABS)
def test_a_prompt_longer_than_the_engine_model_takes_still_compares_the_apis(tab):
    # Regression: the form takes prompts up to 1e8 tokens, the engine model shapes up to 2M; at 3M tokens Compare
    # stopped on "Please check input_tokens: must be a whole number of tokens from 1 to 2,000,000": no API either.
    at = compare_with(prompt_tokens=3_000_000, cmp_tab=tab)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("self-host setups cannot be estimated, so they are left out" in w.value for w in at.warning)
    table = next(frame.value for frame in at.dataframe if "kind" in frame.value.columns)
    assert set(table["kind"]) == {"API"} and len(table) > 1


@pytest.mark.parametrize("tab", ["Cost per month by option", "Cost against calls per day"])
def test_a_prompt_longer_than_the_engine_model_takes_still_bills_the_apis(tab):
    at = AppTest.from_file(str(PAGES / "bill.py"), default_timeout=120)
    state = {"prompt_tokens": 3_000_000, "self_host_on": True, "bill_tab": tab,
             "bill_throughput_H100 SXM": "Roofline estimate for a model"}  # the engine model's 2M-token bound
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("self-hosted setups cannot be estimated" in w.value for w in at.warning)
    assert next(frame.value for frame in at.dataframe if "prompt_tokens" in frame.value.columns).shape[0] > 1


def test_a_shared_link_naming_a_run_this_store_lacks_keeps_the_api_bill():
    # A link from a colleague whose setup measures a run stored only in their database: the page stopped on
    # "Please check run_id"; the API bill is still worth showing, and the setup is named as left out.
    import json

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["self_host"] = json.dumps([{"name": "x", "gpu_price_per_hour": 2, "throughput": {"run": "nope"}}])
    at.run()
    assert not at.exception, at.exception
    assert any("left out: run_id: no stored run 'nope'" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("Cheapest API" in m.label for m in at.metric)
