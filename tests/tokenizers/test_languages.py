"""The language table: the same passages in every language, tokens per character, multipliers against English."""

from __future__ import annotations

import math

import pytest

from infercost.errors import InputError
from infercost.tokenizers import LANGUAGES, count_tokens, language_table, offline_ids, tokens_per_char
from infercost.tokenizers.languages import sample_text

REQUIRED = {"en", "zh-Hans", "zh-Hant", "ja", "ko", "hi", "ar", "ru", "es", "de", "code"}


def test_required_languages_have_samples():
    assert REQUIRED <= set(LANGUAGES)
    assert all(len(sample_text(language)) > 200 for language in LANGUAGES)


@pytest.mark.parametrize("language", sorted(set(LANGUAGES) - {"code"}))
def test_samples_are_the_same_three_paragraphs(language):
    assert len(sample_text(language).strip().split("\n\n")) == 3


def test_tokens_per_char_is_the_count_over_the_characters():
    text = sample_text("hi")
    assert tokens_per_char("cl100k_base", "hi") == count_tokens("cl100k_base", text) / len(text)


def test_unknown_language_is_an_input_error():
    with pytest.raises(InputError, match="language"):
        tokens_per_char("o200k_base", "tlh")


def test_table_covers_every_tokenizer_and_language():
    table = language_table()
    assert len(table) == len(offline_ids()) * len(LANGUAGES)
    english = table[table.language == "en"]
    assert (english.multiplier_vs_english == 1.0).all()
    assert table[table.language == "code"].multiplier_vs_english.map(math.isnan).all()
    assert (table.tokens_per_char > 0).all()


def test_hindi_costs_more_on_an_older_tokenizer():
    """Why the table exists: the same Hindi message is several times the English tokens on cl100k, less on o200k."""
    table = language_table().set_index(["tokenizer", "language"])
    assert table.loc[("cl100k_base", "hi"), "multiplier_vs_english"] > 3
    hindi = table.xs("hi", level="language").multiplier_vs_english
    assert hindi["o200k_base"] < hindi["cl100k_base"]
