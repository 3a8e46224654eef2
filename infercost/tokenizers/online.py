"""Tokenizers beyond the bundled six: any tiktoken encoding name, Hugging Face repo id, or local directory.

Offline must fail fast and say so: the local cache is tried first (``local_files_only``), ``HF_HUB_OFFLINE`` is
honoured, and the network is probed with a short timeout before anything that could wait on a download.
"""

from __future__ import annotations

import os
from pathlib import Path

from infercost.errors import InputError
from infercost.tokenizers.registry import TiktokenTokenizer, Tokenizer, TokenizerInfo, TransformersTokenizer

PROBE_TIMEOUT_S = 3.0
TIKTOKEN_HOST = "https://openaipublic.blob.core.windows.net"


def reachable(url: str) -> str | None:
    """``None`` when ``url`` answers within the probe timeout, else why not."""
    import httpx

    try:
        httpx.head(url, timeout=PROBE_TIMEOUT_S, follow_redirects=False)
    except httpx.HTTPError as error:
        return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def load_tiktoken_name(name: str) -> Tokenizer:
    """A tiktoken encoding other than the bundled two: tiktoken downloads it unless its cache has it."""
    import tiktoken

    problem = reachable(TIKTOKEN_HOST)
    if problem:
        raise InputError("tokenizer", f"{name}: tiktoken needs to download it and {TIKTOKEN_HOST} is unreachable "
                                      f"({problem}); offline use o200k_base or cl100k_base")
    info = TokenizerInfo(name, "openai", "exact", "hub", True, "tiktoken.get_encoding")
    return TiktokenTokenizer(info, tiktoken.get_encoding(name))


def load_transformers(name: str) -> Tokenizer:
    """``AutoTokenizer`` on a local directory or a Hub repo id; cache first, network only when it answers."""
    from transformers import AutoTokenizer

    local = Path(name).expanduser()
    source = "local" if local.is_dir() else "hub"
    target = str(local) if source == "local" else name
    try:
        tokenizer = AutoTokenizer.from_pretrained(target, local_files_only=True, trust_remote_code=False)
    except (OSError, ValueError) as cached_error:
        if source == "local":
            reason = f"no tokenizer in this directory ({one_line(cached_error)})"
            raise InputError("tokenizer", f"{name}: {reason}") from None
        tokenizer = load_from_hub(name)
    info = TokenizerInfo(name, "transformers", "exact", source, True, f"transformers.AutoTokenizer ({source})")
    return TransformersTokenizer(info, tokenizer)


def one_line(error: BaseException) -> str:
    """transformers' messages run over several lines (a numbered list of what it tried): one line, all of it."""
    return " ".join(str(error).split())


def load_from_hub(name: str):
    from huggingface_hub import constants
    from transformers import AutoTokenizer

    if hub_offline():
        raise InputError("tokenizer", f"{name}: not in the local Hugging Face cache and HF_HUB_OFFLINE is set")
    problem = reachable(constants.ENDPOINT)
    if problem:
        raise InputError("tokenizer", f"{name}: not in the local cache and the Hugging Face Hub "
                                      f"({constants.ENDPOINT}) is unreachable: {problem}")
    try:
        return AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except (OSError, ValueError) as error:
        raise InputError("tokenizer", f"{name}: {one_line(error)}") from None


def load_online(name: str) -> Tokenizer:
    """Dispatch an id that is not bundled; unknown shapes get a message listing what works offline."""
    import tiktoken

    from infercost.tokenizers.registry import offline_ids

    if name in tiktoken.list_encoding_names():
        return load_tiktoken_name(name)
    if Path(name).expanduser().is_dir() or "/" in name:
        return load_transformers(name)
    raise InputError("tokenizer", f"unknown tokenizer {name!r}; offline ids: {', '.join(offline_ids())}; "
                                  "or a Hugging Face repo id (owner/name), a local directory, a tiktoken encoding")
