"""The comparison page: APIs and self-host setups side by side, and each of its tools, in AppTest."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/compare.py")


def opened() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception, at.exception
    return at


def options(at: AppTest):
    return next(frame.value for frame in at.dataframe if "kind" in frame.value.columns)


def test_apis_and_self_host_setups_share_one_table_with_their_basis():
    at = opened()
    at.toggle(key="cmp_elastic").set_value(True).run()
    table = options(at)
    kinds = set(table["kind"])
    assert "API" in kinds and "self-host · always_on" in kinds and "self-host · elastic" in kinds
    bases = " ".join(table["basis"])
    assert "published" in bases and "roofline" in bases and "exact tokens" in bases


def test_an_owned_setup_can_be_added():
    at = opened()
    at.radio(key="cmp_ownership").set_value("Owned").run()
    at.button(key="cmp_add").click().run()
    assert not at.exception
    assert any("owned" in name for name in options(at)["option"])


def test_a_speed_claim_is_placed_against_measurements():
    at = opened()
    at.number_input(key="cmp_claim").set_value(14_000).run()
    assert not at.exception
    assert any("best measured per-user speed" in md.value for md in at.markdown)
    assert any("if one replica really sustained 14,000" in md.value for md in at.markdown)


def test_the_bill_band_orders_its_percentiles():
    at = opened()
    values = {m.label: float(m.value.strip("$").replace(",", "")) for m in at.metric if m.label.startswith("P")}
    assert values["P50 per month"] <= values["P90 per month"] <= values["P99 per month"]


def test_changing_the_slo_can_make_a_setup_infeasible():
    at = opened()
    at.number_input(key="cmp_ttft").set_value(1.0).run()
    assert not at.exception
    assert at.warning and "No measured point meets the SLO" in at.warning[0].value
