"""Real tokenizers, offline by default: per-model token counts, language calibration, corpus statistics.

>>> from infercost.tokenizers import count_tokens
>>> count_tokens("o200k_base", "Hello, world!")
4
"""

from infercost.tokenizers import bundled as _bundled  # noqa: F401  (registers the six offline tokenizers)
from infercost.tokenizers.corpus import (
    CorpusStats,
    Skipped,
    TextCount,
    TokenStats,
    corpus_fields,
    corpus_stats,
    count_text_file,
)
from infercost.tokenizers.languages import LANGUAGE_NAMES, LANGUAGES, language_table, tokens_per_char
from infercost.tokenizers.registry import (
    Tokenizer,
    TokenizerInfo,
    count_tokens,
    get_tokenizer,
    list_tokenizers,
    offline_ids,
)

__all__ = [
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "CorpusStats",
    "Skipped",
    "TextCount",
    "TokenStats",
    "Tokenizer",
    "TokenizerInfo",
    "corpus_fields",
    "corpus_stats",
    "count_text_file",
    "count_tokens",
    "get_tokenizer",
    "language_table",
    "list_tokenizers",
    "offline_ids",
    "tokens_per_char",
]
