"""Smaller glue: Compare's caption follows the prompt unit, one default SLO, numbers and colours shown one way."""

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from infercost.ui.format import colour_map, number, tidy

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_compares_caption_says_characters_when_the_prompt_is_in_characters():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.radio(key="prompt_unit").set_value("characters of a language").run()
    at.switch_page("infercost/ui/pages/compare.py").run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Workload:"))
    assert "4,000 prompt characters (English" in caption and "1,200 prompt tokens" not in caption


def test_the_bill_and_compare_start_from_the_same_slo():
    at = AppTest.from_file(APP, default_timeout=120).run()
    bill = (at.number_input(key="slo_p95_ttft_ms").value, at.number_input(key="slo_p95_tpot_ms").value)
    at.switch_page("infercost/ui/pages/compare.py").run()
    assert bill == (at.number_input(key="cmp_ttft").value, at.number_input(key="cmp_tpot").value)


def test_numbers_are_shown_to_the_precision_they_carry():
    assert number(15143.7984) == "15,144" and number(12.3456) == "12.35" and number(0.012345) == "0.0123"
    frame = tidy(pd.DataFrame({"break_even_calls_per_day": [15143.7984], "cost_per_call": [0.000123456]}))
    assert frame.iloc[0].tolist() == [15144.0, 0.000123456]  # money keeps its precision


def test_each_option_keeps_one_colour_and_no_two_share_one():
    state: dict = {}
    first = colour_map([f"model-{i}" for i in range(30)], state)
    assert len(set(first.values())) == 30  # Streamlit's theme would cycle ten
    assert colour_map(["model-7", "new"], state)["model-7"] == first["model-7"]


def test_the_methodology_page_shows_docs_methodology_md_and_every_rule():
    at = AppTest.from_file(str(Path(APP).parent / "infercost/ui/pages/methodology.py"), default_timeout=60).run()
    assert not at.exception
    page = (Path(APP).parent / "docs" / "methodology.md").read_text(encoding="utf-8")
    assert [markdown.value for markdown in at.markdown] == [page.strip()]  # the file itself: no copy to drift
    for rule in ("roofline", "fitted", "published", "owned", "autoscaled", "offline batch", "bill band",
                 "break-even", "tornado"):  # fmt: skip
        assert rule in page.lower(), rule


def test_a_chart_gets_the_colours_of_its_own_options_only():
    state: dict = {}
    colour_map(["a", "b", "c"], state)
    assert list(colour_map(["c", "a"], state)) == ["c", "a"]
