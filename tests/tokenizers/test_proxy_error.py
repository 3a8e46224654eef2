"""The proxy tokenizer's error for the bill band: from stored passage counts that cannot drift, or the corpus."""

import pytest

from infercost.tokenizers.proxy_error import count_passages, passage_counts, proxy_error


def test_the_stored_passage_counts_are_what_the_bundled_tokenizers_count_now():
    assert passage_counts() == count_passages()  # else: python -m infercost.tokenizers.proxy_error --write


def test_the_error_is_the_other_tokenizers_spread_around_the_proxy():
    counts = passage_counts()["zh-Hans"]
    others = sorted(n / counts["o200k_base"] - 1 for tid, n in counts.items() if tid != "o200k_base")
    error = proxy_error("o200k_base", "zh-Hans")
    assert others[0] <= error.quantiles["p10"] <= error.quantiles["p50"] <= error.quantiles["p90"] <= others[-1]
    assert "zh-Hans passage" in error.basis
    assert proxy_error("o200k_base").basis == proxy_error("o200k_base", "en").basis  # English when none is named


def test_a_corpus_counted_by_several_tokenizers_is_its_own_basis():
    error = proxy_error("o200k_base", "en", {"o200k_base": 100.0, "qwen2.5": 110.0, "llama3": 120.0})
    assert error.quantiles["p10"] == pytest.approx(0.11) and error.quantiles["p90"] == pytest.approx(0.19)
    assert "your corpus" in error.basis
    # the corpus counted by one other tokenizer only says nothing about a spread: the passage is used
    assert "passage" in proxy_error("o200k_base", "en", {"o200k_base": 100.0, "qwen2.5": 110.0}).basis


def test_a_tokenizer_nothing_counted_has_no_error():
    assert proxy_error("a-private-tokenizer", "en") is None
