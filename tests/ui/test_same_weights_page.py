"""Compare's *Same weights* tab: one open model's API offers beside its ready-made self-host setups, in AppTest."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/compare.py")
TAB = "Same weights: API or self-host"


def same_weights(model: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["cmp_tab"] = TAB
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if model is not None:
        at.selectbox(key="cmp_same_model").set_value(model).run()
    assert not at.exception, at.exception
    return at


def view_table(at: AppTest):
    return next(frame.value for frame in at.dataframe if "weights" in frame.value.columns)


@pytest.mark.parametrize("model", ["openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B",
                                   "meta-llama/Llama-3.1-8B-Instruct"])  # fmt: skip
def test_one_table_holds_the_api_offers_and_the_setups_with_their_ranges(model):
    at = same_weights(model)
    table = view_table(at)
    api, hosted = table[table["kind"] == "API"], table[table["kind"] != "API"]
    assert len(api) >= 2 and len(hosted) >= 3
    assert set(api["weights"]) <= {"exact", "same_architecture"} and "exact" in set(api["weights"])
    assert hosted["range"].str.len().gt(0).all()  # every predicted cost says its range (or that it is unknown)
    assert all("roofline" in basis for basis in hosted["basis"])
    answer = " ".join(m.value for m in at.markdown)
    assert f"At {at.session_state['calls_per_day']:,.0f} calls/day" in answer and "Basis:" in answer
    assert at.get("plotly_chart")


def test_the_answer_follows_the_volume():
    low = " ".join(m.value for m in same_weights("openai/gpt-oss-120b", calls_per_day=2_000).markdown)
    high = " ".join(m.value for m in same_weights("openai/gpt-oss-120b", calls_per_day=5_000_000).markdown)
    assert "At 2,000 calls/day" in low and "At 5,000,000 calls/day" in high and low != high


def test_gpus_the_model_does_not_fit_are_named_with_why():
    at = same_weights("deepseek-ai/DeepSeek-V3")
    captions = " ".join(c.value for c in at.caption)
    assert "Not set up on H100 SXM, H100 PCIe" in captions and "no room for a KV cache on 8 of them" in captions


def test_the_reports_carry_the_same_table():
    at = same_weights("openai/gpt-oss-120b")
    buttons = [b for b in at.get("download_button") if b.proto.label.startswith("Report")]
    assert {b.proto.label for b in buttons} == {"Report (markdown)", "Report (html)", "Report (csv)"}


def test_prompt_caching_is_said_beside_both_tables():
    at = same_weights("openai/gpt-oss-120b", cached_prompt_fraction=0.6)
    notes = [c.value for c in at.caption if c.value.startswith("Prompt caching (60% of each prompt)")]
    assert len(notes) == 2 and "vllm, sglang" in notes[0] and "cached-input rate" in notes[0]
    assert not [c for c in same_weights("openai/gpt-oss-120b").caption if c.value.startswith("Prompt caching")]


@pytest.mark.parametrize("workload", [{"prompt_tokens": 3_000_000}, {"calls_per_day": 10**12}, {"output_tokens": 0},
                                      {"calls_per_day": 1.0, "retry_rate": 0.5}])  # fmt: skip
def test_edge_workloads_give_numbers_or_a_reason_never_a_traceback(workload):
    at = same_weights("deepseek-ai/DeepSeek-V3", **workload)
    assert not at.error, [e.value for e in at.error]
    table = view_table(at)
    assert (table["kind"] == "API").any()
    if workload.get("prompt_tokens"):  # longer than the engine model takes: every GPU says why, the APIs stay
        assert set(table["kind"]) == {"API"}
        assert any(c.value.startswith("Not set up on H100 SXM") and "input_tokens" in c.value for c in at.caption)


def test_an_api_offer_reads_the_same_range_here_as_in_the_main_table():
    """The offers' ranges are their bill bands, drawn as the rest of Compare draws them (they were blank here while
    the main table showed them)."""
    from infercost.pricing import bundled_api_prices
    from infercost.pricing.open_weights import offers_of_weights

    offer = offers_of_weights("openai/gpt-oss-120b", bundled_api_prices()).offers[0][1].id
    at = same_weights("openai/gpt-oss-120b", api_models=[offer])
    main = next(frame.value for frame in at.dataframe if "weights" not in frame.value.columns)
    view = view_table(at)
    here = view.loc[view["option"] == offer, "range"].item()
    assert here.startswith("$") and here == main.loc[main["option"] == offer, "range"].item()
    reports = {b.proto.label: b for b in at.get("download_button") if b.proto.label.startswith("Report")}
    assert reports  # the report is rendered from the same banded rows (checked in tests/scenarios for the text)
