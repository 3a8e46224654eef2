"""A corpus carried into the workload: each model is billed on its own tokenizer's count, and the bill says so."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.tokenizers import get_tokenizer

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PROMPTS = ["Привет! Как рассчитать стоимость токенов для нашего чат-бота?",
           "東京の天気はどうですか？明日は雨ですか？", "Summarise this support ticket in two sentences, please.",
           "¿Cuánto cuesta procesar un millón de tokens?"]  # fmt: skip


def carried_corpus(tmp_path: Path) -> AppTest:
    corpus = tmp_path / "prompts.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "prompt": p}) + "\n" for i, p in enumerate(PROMPTS)), "utf-8")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("infercost/ui/pages/tokens.py").run()
    at.radio(key="corpus_source").set_value("Path on this machine").run()
    at.text_input(key="corpus_path").set_value(str(corpus)).run()
    at.selectbox(key="corpus_field").set_value("prompt").run()
    at.button(key="count_corpus").click().run()
    at.button(key="use_distribution").click().run()
    assert not at.exception
    at.switch_page("infercost/ui/pages/bill.py").run()
    assert not at.exception
    return at


def mean_tokens(tokenizer_id: str) -> float:
    return sum(get_tokenizer(tokenizer_id).count_batch(PROMPTS)) / len(PROMPTS)


def test_each_model_is_billed_on_its_own_tokenizers_mean(tmp_path):
    at = carried_corpus(tmp_path)
    table = next(frame.value for frame in at.dataframe if "prompt_tokens" in frame.value.columns)
    by_tokenizer = dict(zip(table["tokenizer"], table["prompt_tokens"], strict=False))
    for tokenizer_id, prompt_tokens in by_tokenizer.items():
        assert prompt_tokens == mean_tokens(tokenizer_id), tokenizer_id
    assert len(set(by_tokenizer.values())) > 1


def test_the_bill_says_a_corpus_is_in_use(tmp_path):
    at = carried_corpus(tmp_path)
    notes = " ".join(element.value for element in [*at.info, *at.caption])
    assert "prompts.jsonl" in notes and "corpus" in notes
