"""Tokens per character by language, from passages written for infercost in every language (``samples/``).

Each ``samples/<code>.txt`` is the same three paragraphs (a support team, why tokens are not characters, a delivery
on a cold morning) written in one language; ``code.txt`` is Python source of similar length. A profile that gives
``prompt_chars`` and ``language`` becomes ``round(prompt_chars * tokens_per_char(tokenizer, language))`` tokens.
Characters are Unicode code points of the NFC text (what ``len(str)`` counts in Python).
"""

from __future__ import annotations

import functools
import math
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from infercost.errors import InputError
from infercost.tokenizers.registry import get_tokenizer, offline_ids

if TYPE_CHECKING:
    import pandas as pd

SAMPLES_DIR = Path(__file__).with_name("samples")
LANGUAGE_NAMES = {
    "en": "English", "zh-Hans": "Chinese (Simplified)", "zh-Hant": "Chinese (Traditional)", "ja": "Japanese",
    "ko": "Korean", "hi": "Hindi", "ar": "Arabic", "ru": "Russian", "es": "Spanish", "de": "German",
    "fr": "French", "pt": "Portuguese", "code": "Source code (Python)",
}
LANGUAGES: list[str] = list(LANGUAGE_NAMES)
NOT_TRANSLATED = {"code"}  # not the same passage, so no same-content multiplier


@functools.cache
def sample_text(language: str) -> str:
    if language not in LANGUAGE_NAMES:
        raise InputError("language", f"unknown language {language!r}; one of: {', '.join(LANGUAGES)}")
    text = (SAMPLES_DIR / f"{language}.txt").read_text(encoding="utf-8")
    return unicodedata.normalize("NFC", text)


@functools.cache
def sample_tokens(tokenizer_id: str, language: str) -> int:
    return get_tokenizer(tokenizer_id).count(sample_text(language))


def tokens_per_char(tokenizer_id: str, language: str) -> float:
    """Tokens per character of ``language`` for one tokenizer (cached: one count per pair per process)."""
    return sample_tokens(tokenizer_id, language) / len(sample_text(language))


def multiplier_vs_english(tokenizer_id: str, language: str) -> float:
    """Tokens for the same passage in ``language`` over tokens in English: how much more the same message costs."""
    if language in NOT_TRANSLATED:
        return math.nan
    return sample_tokens(tokenizer_id, language) / sample_tokens(tokenizer_id, "en")


@functools.cache
def _table(tokenizer_ids: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd  # only the table needs it; the CLI's counts start faster without

    rows = [
        {"tokenizer": tid, "language": lang, "language_name": LANGUAGE_NAMES[lang],
         "chars": len(sample_text(lang)), "tokens": sample_tokens(tid, lang),
         "tokens_per_char": tokens_per_char(tid, lang), "multiplier_vs_english": multiplier_vs_english(tid, lang)}
        for tid in tokenizer_ids for lang in LANGUAGES
    ]
    return pd.DataFrame(rows)


def language_table(tokenizer_ids: list[str] | None = None) -> pd.DataFrame:
    """One row per tokenizer × language: chars, tokens, tokens_per_char, multiplier_vs_english (long form)."""
    return _table(tuple(tokenizer_ids or offline_ids())).copy()
