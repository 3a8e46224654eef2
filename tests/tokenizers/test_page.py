"""The Tokens page (AppTest): count a prompt, the language table, a corpus carried into the workload."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.tokenizers import count_tokens

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "tokens.py")


def opened() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    return at


def frame(at: AppTest, column: str):
    """The table that has ``column`` (AppTest does not expose a dataframe's key)."""
    return next(element.value for element in at.dataframe if column in element.value.columns)


def test_language_table_renders():
    at = opened()
    table = frame(at, "mistral-tekken")
    assert "Hindi" in table.index and table.loc["English", "o200k_base"] == 1.0


def test_counting_a_prompt_shows_each_tokenizers_count():
    at = opened()
    text = "今天的天气很好。The weather is nice today."
    at.text_area(key="prompt_text").set_value(text).run()
    assert not at.exception
    counts = frame(at, "tokens_per_char").set_index("tokenizer")["tokens"].to_dict()
    assert counts == {tid: count_tokens(tid, text) for tid in counts} and len(counts) == 6


def test_a_corpus_fills_the_workload(tmp_path):
    path = tmp_path / "prompts.jsonl"
    prompts = ["short one", "a somewhat longer prompt about invoices and passwords", "第三个提示"]
    path.write_text("".join(json.dumps({"prompt": p, "answer": p.upper()}) + "\n" for p in prompts))
    at = opened()
    at.radio(key="corpus_source").set_value("Path on this machine").run()
    at.text_input(key="corpus_path").set_value(str(path)).run()
    at.selectbox(key="corpus_output_field").set_value("answer").run()
    at.button(key="count_corpus").click().run()
    assert not at.exception
    assert set(frame(at, "role")["records"]) == {3}
    per_model = frame(at, "mean_prompt_tokens")
    assert len(per_model) and set(per_model.tokenizer) <= {"o200k_base", "cl100k_base", "qwen2.5"}
    at.button(key="use_distribution").click().run()
    assert not at.exception
    expected = [count_tokens("o200k_base", p) for p in prompts]
    assert at.session_state["prompt_tokens"] == round(sum(expected) / 3)
    assert list(at.session_state["prompt_distribution"]["o200k_base"]) == expected
    assert at.session_state["output_tokens"] == round(sum(count_tokens("o200k_base", p.upper()) for p in prompts) / 3)
