"""The tokenizer registry: ids to loaders, and the one ``Tokenizer`` interface every count goes through.

A count is what the model's own tokenizer gives for text arriving as user content (DESIGN.md): tiktoken encodings
with ``encode_ordinary`` (special-token strings are ordinary text), Hugging Face tokenizers with
``encode(text, add_special_tokens=False)``, Mistral's Tekken with ``encode(text, bos=False, eos=False)``, and Qwen
after NFC normalization. Batches go through the libraries' own batch paths, which run on every core.
"""

from __future__ import annotations

import functools
import os
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from infercost.errors import InputError

Fidelity = Literal["exact", "proxy", "heuristic"]
Source = Literal["bundled", "hub", "local"]
THREADS = max(2, os.cpu_count() or 2)


@dataclass(frozen=True)
class TokenizerInfo:
    """What a tokenizer is and whether it can be used here; ``note`` says where its data comes from."""

    id: str
    family: str
    fidelity: Fidelity
    source: Source
    available: bool
    note: str = ""


class Tokenizer(ABC):
    """Counts tokens the way one model's tokenizer does."""

    def __init__(self, info: TokenizerInfo) -> None:
        self.info = info

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as user content (no BOS/EOS)."""

    @abstractmethod
    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many texts through the library's parallel batch path."""

    def count(self, text: str) -> int:
        return len(self.encode(text))


@functools.cache
def executor() -> ThreadPoolExecutor:
    """One pool for the process: what ``encode_ordinary_batch`` does per call, without starting threads each time."""
    return ThreadPoolExecutor(THREADS, thread_name_prefix="infercost-tokenize")


def nfc(text: str) -> str:
    """Qwen's tokenizer normalizes to NFC before splitting (CPython returns the same string when it already is NFC)."""
    return unicodedata.normalize("NFC", text)


class TiktokenTokenizer(Tokenizer):
    """A ``tiktoken.Encoding``: ``encode_ordinary``; threaded ``encode_ordinary_batch`` (Rust drops the GIL)."""

    def __init__(self, info: TokenizerInfo, encoding: Any, normalize: Callable[[str], str] | None = None) -> None:
        super().__init__(info)
        self.encoding = encoding
        self.normalize = normalize

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(self.normalize(text) if self.normalize else text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if self.normalize:  # normalize inside the workers, so one thread's NFC overlaps another's GIL-free encoding
            return list(executor().map(self.count, texts))
        return [len(ids) for ids in self.encoding.encode_ordinary_batch(list(texts), num_threads=THREADS)]


class HFTokenizer(Tokenizer):
    """A ``tokenizers.Tokenizer``: ``encode(add_special_tokens=False)``; batches: Rust's parallel ``encode_batch_fast``.

    Added tokens (e.g. DeepSeek's ``<｜begin▁of▁sentence｜>``) written in the text count as one token, because that is
    what the library does with them.
    """

    def __init__(self, info: TokenizerInfo, tokenizer: Any) -> None:
        super().__init__(info)
        self.tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(e) for e in self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)]


class TransformersTokenizer(Tokenizer):
    """Any ``transformers`` tokenizer (Hub id or local directory), counted by its own ``encode`` and batch call."""

    def __init__(self, info: TokenizerInfo, tokenizer: Any) -> None:
        super().__init__(info)
        self.tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        ids = self.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return [len(row) for row in ids]


Loader = Callable[[], Tokenizer]
_OFFLINE: dict[str, tuple[TokenizerInfo, Loader]] = {}


def register(info: TokenizerInfo, loader: Loader) -> None:
    """Offline tokenizers register themselves here (see ``bundled.py``)."""
    _OFFLINE[info.id] = (info, loader)


def offline_ids() -> list[str]:
    return list(_OFFLINE)


def list_tokenizers() -> list[TokenizerInfo]:
    """The bundled tokenizers, each marked available when its data file is installed (nothing is loaded)."""
    return [info for info, _ in _OFFLINE.values()]


@functools.lru_cache(maxsize=32)
def get_tokenizer(tokenizer_id: str) -> Tokenizer:
    """A loaded tokenizer by id: a bundled id, a tiktoken encoding name, a Hugging Face repo id or a local directory."""
    tokenizer_id = (tokenizer_id or "").strip()
    if not tokenizer_id:
        raise InputError("tokenizer", "empty tokenizer id")
    if tokenizer_id in _OFFLINE:
        info, loader = _OFFLINE[tokenizer_id]
        if not info.available:
            raise InputError("tokenizer", f"{tokenizer_id}: data file missing ({info.note})")
        return loader()
    from infercost.tokenizers.online import load_online

    return load_online(tokenizer_id)


def count_tokens(tokenizer_id: str, text: str) -> int:
    """Tokens of ``text`` for one tokenizer id."""
    return get_tokenizer(tokenizer_id).count(text)
