"""Issue 24: the bill band draws the proxy tokenizer's error and the spread of answer lengths, and every API row of
the Compare table has a P10–P90 range as self-host rows do (AppTest)."""

import re

from tests.ui.test_compare_page import band_values, opened, options

PROXY_MODEL = "claude-sonnet-4-5"  # Anthropic's tokenizer is not public: counted with o200k_base as a proxy
EXACT_MODEL = "gpt-4o-mini"


def test_every_api_row_has_a_p10_p90_range():
    table = options(opened())
    api = table[table["kind"] == "API"]
    assert len(api) >= 2
    for option, text in zip(api["option"], api["range"], strict=True):
        assert re.fullmatch(r"\$[\d,]+(–[\d,]+)?", text), (option, text)


def band_of(model: str, **state) -> tuple[dict[str, float], str]:
    at = opened()
    for key, value in state.items():
        at.session_state[key] = value
    at.session_state["cmp_tab"] = "Bill band (P10–P99)"
    at.run()
    at.selectbox(key="cmp_band_model").set_value(model).run()
    assert not at.exception, at.exception
    return band_values(at), " ".join(c.value for c in at.caption)


def test_a_proxy_counted_prompt_draws_the_tokenizers_error_and_an_exact_one_does_not():
    # German prompts given in characters: each model counts them with its own tokenizer (Claude's with o200k_base,
    # a proxy). The bundled tokenizers count the German passage 15-25% above o200k_base, so the band says so.
    # With no volume or answer-length spread, what is left of the band is the tokenizer's error.
    german = {"prompt_unit": "characters of a language", "prompt_chars": 4_000, "language": "de",
              "api_models": [PROXY_MODEL, EXACT_MODEL], "calls_per_day_cv": 0.0, "output_tokens_cv": 0.0}  # fmt: skip
    proxy, words = band_of(PROXY_MODEL, **german)
    assert "the proxy tokenizer's error" in words and "o200k_base is a proxy" in words, words
    assert "bundled de passage" in words
    exact, exact_words = band_of(EXACT_MODEL, **german)
    assert "the proxy tokenizer's error" not in exact_words and "own tokenizer (exact)" in exact_words
    width = {name: (v["P90 per month"] - v["P10 per month"]) / v["P50 per month"]
             for name, v in (("proxy", proxy), ("exact", exact))}
    assert width["proxy"] > 0.02 and width["exact"] < 0.005, width


def test_the_output_spread_is_an_input_with_its_assumption_stated():
    at = opened("Bill band (P10–P99)")
    spread = at.number_input(key="output_tokens_cv")
    assert spread.value == 0.5 and "assumption" in spread.help
    table = options(at)
    at.selectbox(key="cmp_band_model").set_value(table[table["kind"] == "API"]["option"].iloc[0]).run()
    assert "output lengths (gamma, CV 50%)" in " ".join(c.value for c in at.caption)
