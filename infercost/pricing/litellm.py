"""Import LiteLLM's ``model_prices_and_context_window.json`` as catalog entries.

LiteLLM stores US dollars per token; the catalog stores US dollars per million tokens. Only chat and completion
models with both an input and an output price come in; the rest are counted as skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from infercost.errors import InputError, from_pydantic
from infercost.files import read_document
from infercost.pricing.schema import ApiPrice

LITELLM_URL = "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json"

# Which tokenizer counts a model's tokens, by model name; first match wins. Claude, Gemini and Grok tokenizers are
# not public, so they get a labelled proxy.
TOKENIZER_RULES: tuple[tuple[str, str, str], ...] = (
    (r"gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|\bo[134]\b|o[134]-|gpt-oss|chatgpt", "o200k_base", "exact"),
    (r"gpt-4|gpt-3\.5|text-embedding-3|davinci", "cl100k_base", "exact"),
    (r"deepseek", "deepseek", "exact"),
    (r"qwen|qwq", "qwen2.5", "exact"),
    (r"llama-?3|llama3", "llama3", "exact"),
    (
        r"mistral-nemo|open-mistral-nemo|pixtral|ministral|mistral-(small|medium|large)-(25|24)|codestral-25",
        "mistral-tekken",
        "exact",
    ),
    (r"mistral|mixtral|codestral|magistral|devstral", "mistral-tekken", "proxy"),
)
PROXY_DEFAULT = ("o200k_base", "proxy")


def tokenizer_for(model_id: str) -> tuple[str, str]:
    """(tokenizer id, fidelity) for a model name; unknown families get a proxy, labelled as such."""
    name = model_id.lower()
    for pattern, tokenizer, fidelity in TOKENIZER_RULES:
        if re.search(pattern, name):
            return tokenizer, fidelity
    return PROXY_DEFAULT


def _per_mtok(value: Any) -> float | None:
    return None if value is None else float(value) * 1e6


def _long_context(raw: dict[str, Any]) -> dict[str, Any]:
    """LiteLLM names long-context tiers ``input_cost_per_token_above_<N>k_tokens``; take the lowest threshold."""
    tiers = sorted(
        int(m.group(1)) for key in raw if (m := re.fullmatch(r"input_cost_per_token_above_(\d+)k_tokens", key))
    )
    for kilo in tiers:
        output = raw.get(f"output_cost_per_token_above_{kilo}k_tokens")
        if output is not None:
            return {
                "long_context_threshold": kilo * 1000,
                "long_context_input_per_mtok": _per_mtok(raw[f"input_cost_per_token_above_{kilo}k_tokens"]),
                "long_context_output_per_mtok": _per_mtok(output),
            }
    return {}


def entry_from_litellm(model_id: str, raw: dict[str, Any], *, source: str, as_of: dt.date) -> ApiPrice:
    tokenizer, fidelity = tokenizer_for(model_id)
    batch_in, batch_out = raw.get("input_cost_per_token_batches"), raw.get("output_cost_per_token_batches")
    has_batch = batch_in is not None and batch_out is not None
    fields = {
        "id": model_id,
        "provider": str(raw.get("litellm_provider") or "unknown"),
        "input_per_mtok": _per_mtok(raw["input_cost_per_token"]),
        "output_per_mtok": _per_mtok(raw["output_cost_per_token"]),
        "cached_input_per_mtok": _per_mtok(raw.get("cache_read_input_token_cost")),
        "cache_write_per_mtok": _per_mtok(raw.get("cache_creation_input_token_cost")),
        "batch_input_per_mtok": _per_mtok(batch_in) if has_batch else None,
        "batch_output_per_mtok": _per_mtok(batch_out) if has_batch else None,
        "context_window": raw.get("max_input_tokens") or None,
        "tokenizer": tokenizer,
        "tokenizer_fidelity": fidelity,
        "tokenizer_note": "" if fidelity == "exact" else "tokenizer not public or not bundled; a proxy counts tokens",
        "source": source,
        "as_of": as_of,
        **_long_context(raw),
    }
    return ApiPrice(**fields)


@dataclass
class LiteLLMImport:
    entries: list[ApiPrice]
    skipped: dict[str, str] = field(default_factory=dict)  # model id -> reason


def import_litellm(path: str | Path, *, as_of: dt.date | None = None, source: str = LITELLM_URL) -> LiteLLMImport:
    """Every priced chat/completion model of a LiteLLM price map; ``as_of`` defaults to the file's date."""
    document = read_document(path)
    if not isinstance(document, dict):
        raise InputError(str(path), "expected LiteLLM's object of model name -> prices")
    when = as_of or dt.date.fromtimestamp(Path(path).stat().st_mtime)
    result = LiteLLMImport(entries=[])
    for model_id, raw in document.items():
        if not isinstance(raw, dict) or raw.get("mode") not in ("chat", "completion"):
            result.skipped[model_id] = "not a chat or completion model"
        elif raw.get("input_cost_per_token") is None or raw.get("output_cost_per_token") is None:
            result.skipped[model_id] = "no input or output price"
        else:
            try:
                result.entries.append(entry_from_litellm(model_id, raw, source=source, as_of=when))
            except ValidationError as error:
                result.skipped[model_id] = str(from_pydantic(error))
    return result
