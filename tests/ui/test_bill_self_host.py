"""The bill page's self-host panel: a GPU picks its offer and its throughput, and names the model (AppTest)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.ui.setups import offer_choice, offers_for

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/bill.py")


def with_self_host() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.toggle(key="self_host_on").set_value(True).run()
    assert not at.exception, at.exception
    return at


def self_host_table(at: AppTest):
    return next(frame.value for frame in at.dataframe if "gpu_offer" in frame.value.columns)


def test_choosing_a_gpu_picks_its_throughput_and_names_the_model():
    # Regression (issue 9): picking an A100 offer used to price H100 throughput at the A100 rate.
    at = with_self_host()
    at.selectbox(key="bill_gpu").set_value("A100 80GB").run()
    assert not at.exception
    setup = at.session_state["panel_setup"]
    assert setup["gpu"] == "A100 80GB" and "a100" in setup["throughput"]["run"]
    assert any("Model: **meta-llama/Meta-Llama-3-8B-Instruct** on 1× A100 80GB" in c.value for c in at.caption)
    row = self_host_table(at).iloc[0]
    assert "A100" in row["option"] and "a100" in row["basis"]


def test_a_gpu_nobody_measured_gets_a_roofline_estimate_for_a_named_model():
    at = with_self_host()
    at.selectbox(key="bill_gpu").set_value("L40S").run()
    assert at.selectbox(key="bill_throughput_L40S").value.startswith("Roofline")
    assert at.session_state["panel_setup"]["throughput"]["roofline"] == {"model": "llama-3.1-8b", "gpu": "L40S",
                                                                         "dtype": "bfloat16", "gpus": 1}  # fmt: skip
    assert self_host_table(at).iloc[0]["basis"].startswith("roofline")


def test_a_roofline_on_the_bill_takes_the_layout_picked_and_prices_it():
    """The bill's roofline form offers the same layouts as Compare's: gpt-oss-120b's experts over two L40S."""
    at = with_self_host()
    at.selectbox(key="bill_gpu").set_value("L40S").run()
    at.selectbox(key="bill_roofline_model").set_value("gpt-oss-120b").run()
    at.number_input(key="gpus_per_replica").set_value(2).run()
    assert at.selectbox(key="bill_roofline_layout").options[0] == "TP2 EP1 DP1"
    at.selectbox(key="bill_roofline_layout").set_value("TP2 EP2 DP1").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    roofline = at.session_state["panel_setup"]["throughput"]["roofline"]
    assert (roofline["tensor_parallel"], roofline["expert_parallel"], roofline["data_parallel"]) == (2, 2, 1)
    assert any("on 2× L40S (mxfp4, TP2 EP2 DP1)" in c.value for c in at.caption)
    assert "L40S" in self_host_table(at).iloc[0]["option"]


def test_the_offer_sets_the_price_and_shows_its_age():
    at = with_self_host()
    offers = at.selectbox(key="gpu_offer_H100 SXM")
    spot = next(i for i, label in enumerate(offers.options) if "spot" in label)
    offers.select_index(spot).run()
    setup = at.session_state["panel_setup"]
    chosen = offers_for("H100 SXM")[spot]
    assert offer_choice(chosen) == at.selectbox(key="gpu_offer_H100 SXM").options[spot]
    assert chosen.kind == "spot" and setup["gpu_offer"] == chosen.id
    assert setup["gpu_price_per_hour"] == chosen.price_per_hour
    assert "d old" in self_host_table(at).iloc[0]["gpu_offer"]
    assert any(f"as of {chosen.as_of} (" in c.value and "d old" in c.value for c in at.caption)


def test_autoscaling_shows_replicas_by_hour():
    at = with_self_host()
    at.selectbox(key="self_host_mode").set_value("autoscaled").run()
    assert not at.exception
    assert at.session_state["panel_setup"]["mode"] == "autoscaled"
    # the replicas running in each hour (the cost bars are Vega-Lite; the curves run only when their tab is opened)
    assert [chart.key for chart in at.get("plotly_chart")] == ["replicas_by_hour"]


def test_own_points_prefilled_from_a_multi_gpu_table_count_its_gpus():
    # Regression: the points were prefilled from a 4× H100 table but priced as one GPU per replica (a quarter of
    # the cost).
    from infercost.performance.profiles import closed_loop_profiles

    at = with_self_host()
    at.selectbox(key="bill_throughput_H100 SXM").set_value("My own measured points").run()
    assert not at.exception, at.exception
    prefilled = next(p for p in closed_loop_profiles() if any(f"*{p.name}*" in c.value for c in at.caption))
    assert prefilled.gpus_per_replica > 1  # the case this guards
    assert at.session_state["panel_setup"]["gpus_per_replica"] == prefilled.gpus_per_replica


def test_a_typed_gpu_price_is_not_shown_as_the_offer_it_replaced():
    at = with_self_host()
    price = next(box for box in at.number_input if box.label == "Price per GPU-hour (US$)")
    offered = price.value
    assert offered != 2.0
    price.set_value(2.0).run()
    assert not at.exception
    row = self_host_table(at).iloc[0]
    assert row["gpu_offer"] == "custom price $2.00/h"
    assert f"${offered:.2f}" not in row["gpu_offer"]
    assert any("Your price, $2.00/h, replaces the offer's" in c.value for c in at.caption)


def test_the_break_even_can_be_read_against_any_api_of_the_bill():
    at = with_self_host()
    picker = at.selectbox(key="bill_break_even_api")
    cheapest, dearest = picker.options[0], picker.options[-1]
    assert picker.value == cheapest
    picker.set_value(dearest).run()
    assert not at.exception
    assert f"vs {dearest}" in self_host_table(at).columns and f"vs {cheapest}" not in self_host_table(at).columns
