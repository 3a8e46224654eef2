"""A saved scenario comes back whole: its name in links and reports, its per-tokenizer prompt counts on load and in a
shared link (AppTest, the whole app)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from tests.ui.test_corpus_to_bill import carried_corpus, mean_tokens
from tests.ui.test_pages_apptest import page


def billed_prompt_tokens(at) -> dict[str, float]:
    table = next(frame.value for frame in at.dataframe if "prompt_tokens" in frame.value.columns)
    return dict(zip(table["tokenizer"], table["prompt_tokens"], strict=False))


def share_link(at) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(next(code.value for code in at.code if "?" in code.value)).query))


def test_the_name_a_scenario_is_saved_as_is_the_name_its_link_carries():
    at = page("app.py").run()
    at.switch_page("infercost/ui/pages/scenarios.py").run()
    at.text_input(key="name").set_value("support-bot-zh-250k").run()
    assert not at.exception
    assert share_link(at)["name"] == "support-bot-zh-250k"


def test_loading_a_scenario_keeps_its_per_tokenizer_counts(tmp_path):
    at = carried_corpus(tmp_path)
    counted = billed_prompt_tokens(at)
    assert len(set(counted.values())) > 1
    at.switch_page("infercost/ui/pages/scenarios.py").run()
    at.text_input(key="name").set_value("corpus-counts").run()
    at.button(key="save_scenario").click().run()
    at.switch_page("infercost/ui/pages/bill.py").run()
    at.number_input(key="prompt_tokens").set_value(50).run()  # the person describes prompts themselves
    assert set(billed_prompt_tokens(at).values()) == {50}
    at.switch_page("infercost/ui/pages/scenarios.py").run()
    at.selectbox(key="scenario_selected").set_value("corpus-counts").run()
    at.button(key="load_scenario").click().run()
    at.switch_page("infercost/ui/pages/bill.py").run()
    assert not at.exception
    assert billed_prompt_tokens(at) == counted
    for tokenizer_id, tokens in counted.items():
        assert tokens == mean_tokens(tokenizer_id)


def test_a_shared_link_keeps_the_per_tokenizer_counts(tmp_path):
    at = carried_corpus(tmp_path)
    counted = billed_prompt_tokens(at)
    at.switch_page("infercost/ui/pages/scenarios.py").run()
    link = share_link(at)
    assert "prompt_tokens_by_tokenizer" in link
    fresh = page("app.py")
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception
    assert billed_prompt_tokens(fresh) == counted
