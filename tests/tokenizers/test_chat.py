"""Chat-format JSONL (``messages`` lists, the format most logs are in) is counted, and prompt-like fields come first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.tokenizers import corpus_fields, corpus_stats, count_tokens
from infercost.tokenizers.chat import chat_roles, chat_text, prompt_like_first

PAGE = str(Path(__file__).resolve().parents[2] / "infercost" / "ui" / "pages" / "tokens.py")
CONVERSATIONS = [
    [{"role": "system", "content": "You answer billing questions."}, {"role": "user", "content": "What is a token?"}],
    [{"role": "user", "content": [{"type": "text", "text": "Describe this invoice"},
                                  {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                                  {"type": "text", "text": "in one line."}]},
     {"role": "assistant", "content": "An invoice for 3 GPUs."}],
]  # fmt: skip


@pytest.fixture
def chat_log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    lines = [json.dumps({"source": "web", "messages": messages}) for messages in CONVERSATIONS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_conversation_is_its_messages_contents_joined():
    assert chat_text(CONVERSATIONS[0]) == "You answer billing questions.\nWhat is a token?"
    assert chat_text(CONVERSATIONS[1]) == "Describe this invoice\nin one line.\nAn invoice for 3 GPUs."
    assert chat_roles(CONVERSATIONS) == ["system", "user", "assistant"]


NOT_CHAT = [[], [1, 2], ["a"], [{"content": 3}], [{"role": "user", "content": {"a": 1}}], "text"]


@pytest.mark.parametrize("value", NOT_CHAT)
def test_what_is_not_a_conversation_is_none(value):
    assert chat_text(value) is None


def test_a_chat_log_is_counted_not_refused(chat_log):
    stats = corpus_stats(chat_log, field="messages", tokenizer_ids=["o200k_base"])
    expected = [count_tokens("o200k_base", chat_text(messages)) for messages in CONVERSATIONS]
    assert stats.records == 2 and list(stats.stats["o200k_base"].counts) == expected


def test_the_messages_field_is_offered_and_prompt_like_fields_come_first(chat_log):
    assert "messages" in corpus_fields(chat_log)
    assert prompt_like_first(["id", "source", "answer", "text", "prompt"]) == ["prompt", "text", "id", "source",
                                                                                "answer"]  # fmt: skip


def test_the_tokens_page_picks_messages_and_says_which_roles(chat_log):
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.radio(key="corpus_source").set_value("Path on this machine").run()
    at.text_input(key="corpus_path").set_value(str(chat_log)).run()
    assert at.selectbox(key="corpus_field").value == "messages"
    at.button(key="count_corpus").click().run()
    assert not at.exception
    assert any("system, user, assistant" in caption.value for caption in at.caption)
