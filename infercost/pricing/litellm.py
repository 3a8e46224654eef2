"""Import LiteLLM's ``model_prices_and_context_window.json`` as catalog entries.

LiteLLM stores US dollars per token; the catalog stores US dollars per million tokens. The map is a community file
read from outside, so every field is checked before use: an entry with a price that is not a finite, non-negative,
plausible number (a string, list, dict, NaN, a negative or huge value), or a key that is not text, is skipped with a
one-line reason naming the entry and the field; nothing in the map can raise past this module.

``select_catalog`` applies the catalog's rules (covered providers, current text models, one id per model) and
returns what comes in and why everything else stays out; the bundled catalog is generated the same way
(``scripts/catalog_from_litellm.py``), so ``prices diff`` compares like with like.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from infercost.errors import InputError, from_pydantic
from infercost.files import read_document
from infercost.pricing.schema import ApiPrice

LITELLM_VERSION = "1.110.2"
LITELLM_URL = f"https://github.com/BerriAI/litellm/blob/v{LITELLM_VERSION}/model_prices_and_context_window.json"
MAX_PRICE_PER_TOKEN = 0.01  # US$10,000 per 1M tokens: the schema's ceiling
MAX_TOKENS = 100_000_000

# LiteLLM provider -> (catalog provider name, id prefix for hosts of open models or None for first-party ids)
PROVIDERS: dict[str, tuple[str, str | None]] = {
    "openai": ("OpenAI", None),
    "text-completion-openai": ("OpenAI", None),  # OpenAI's /completions models (gpt-3.5-turbo-instruct, davinci-002)
    "anthropic": ("Anthropic", None),
    "gemini": ("Google", None),
    "xai": ("xAI", None),
    "deepseek": ("DeepSeek", None),
    "mistral": ("Mistral", None),
    "dashscope": ("Alibaba", None),
    "groq": ("Groq", "groq"),
    "together_ai": ("Together AI", "together"),
    "fireworks_ai": ("Fireworks AI", "fireworks"),
    "deepinfra": ("DeepInfra", "deepinfra"),
    "nebius": ("Nebius", "nebius"),
}
TEXT_MODES = ("chat", "completion", "responses")
# Names of models that are not text-in/text-out chat models, or not a model at all; first match gives the reason.
NOT_TEXT_MODELS: tuple[tuple[str, str], ...] = (
    (r"^ft:", "a fine-tuned model's rate, not a base model"),
    (r"audio|realtime|tts|lyria|omni|voxtral", "an audio or omni-modal model"),
    (r"(^|[-/])search|deep-research|computer-use|robotics", "a tool or agent product, not a plain text model"),
    (r"image|embed|transcri|moderation|ocr|rerank", "not a text-generation model"),
    (r"(^|[-/])(latest|auto|auto-instant|firerouter)$|-latest-", "a moving alias or router, not one model"),
    (r"fp8-draft|-draft-", "a speculative-decoding draft model"),
    (r"prompt-guard", "a safety classifier, not a text-generation model"),
    (r"(^|[-/])exp-\d|experimental|grok-[^/]*-beta", "a beta or experimental name, not a released model"),
)

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


class Skip(Exception):
    """An entry that stays out of the catalog; ``str()`` is the one-line reason."""


def _number(raw: Mapping[str, Any], name: str, *, high: float) -> float | None:
    """A finite number in [0, high] or None where absent; anything else is a Skip naming the field."""
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Skip(f"{name}: expected a number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        raise Skip(f"{name}: number too large") from None
    if not math.isfinite(number) or not 0 <= number <= high:
        raise Skip(f"{name}: {number!r} is not a price between 0 and {high:g}")
    return number


def _per_mtok(raw: Mapping[str, Any], name: str) -> float | None:
    value = _number(raw, name, high=MAX_PRICE_PER_TOKEN)
    return None if value is None else round(value * 1e6, 6)


def _tokens(raw: Mapping[str, Any], name: str) -> int | None:
    value = _number(raw, name, high=MAX_TOKENS)
    return int(value) if value else None


def _long_context(raw: Mapping[str, Any]) -> dict[str, Any]:
    """LiteLLM names long-context tiers ``input_cost_per_token_above_<N>k_tokens``; take the lowest threshold."""
    tiers = sorted(
        int(m.group(1))
        for key in raw
        if isinstance(key, str) and (m := re.fullmatch(r"input_cost_per_token_above_(\d{1,6})k_tokens", key))
    )
    for kilo in tiers:
        output = _per_mtok(raw, f"output_cost_per_token_above_{kilo}k_tokens")
        if output is not None:
            return {
                "long_context_threshold": kilo * 1000,
                "long_context_input_per_mtok": _per_mtok(raw, f"input_cost_per_token_above_{kilo}k_tokens"),
                "long_context_output_per_mtok": output,
            }
    return {}


def _tiered(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Alibaba's ``tiered_pricing``: a list of prompt-length ranges, each with its own input and output price.

    Two tiers are the catalog's long-context pair; three or more become ``price_tiers``. The first tier gives the
    regular prices.
    """
    tiers = raw.get("tiered_pricing")
    if tiers is None:
        return {}
    if not isinstance(tiers, list) or not tiers or not all(isinstance(t, dict) for t in tiers):
        raise Skip("tiered_pricing: expected a list of tiers")
    parsed = []
    for index, tier in enumerate(tiers):
        span = tier.get("range")
        if not isinstance(span, list) or len(span) != 2:
            raise Skip(f"tiered_pricing[{index}].range: expected [from, to]")
        start = _number({"range": span[0]}, "range", high=MAX_TOKENS)
        prices = (_per_mtok(tier, "input_cost_per_token"), _per_mtok(tier, "output_cost_per_token"))
        if start is None or None in prices:
            raise Skip(f"tiered_pricing[{index}]: needs a range start, an input and an output price")
        parsed.append((int(start), *prices, _per_mtok(tier, "cache_read_input_token_cost")))
    parsed.sort(key=lambda tier: tier[0])
    (_, first_in, first_out, first_cached), rest = parsed[0], [t[:3] for t in parsed[1:]]
    fields: dict[str, Any] = {"input_per_mtok": first_in, "output_per_mtok": first_out}
    if first_cached is not None and raw.get("cache_read_input_token_cost") is None:
        fields["cached_input_per_mtok"] = first_cached
    if len(rest) == 1:
        start, tier_in, tier_out = rest[0]
        fields |= {"long_context_threshold": start, "long_context_input_per_mtok": tier_in,
                   "long_context_output_per_mtok": tier_out}  # fmt: skip
    elif rest:
        fields["price_tiers"] = [{"above_tokens": s, "input_per_mtok": i, "output_per_mtok": o} for s, i, o in rest]
    return fields


def _deprecation(raw: Mapping[str, Any]) -> dt.date | None:
    """The map's retirement date (a YAML copy of the map may hold it as a date already)."""
    value = raw.get("deprecation_date")
    if value is None or isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise Skip(f"deprecation_date: expected a date, got {type(value).__name__}")
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        raise Skip("deprecation_date: not a date (YYYY-MM-DD)") from None


def catalog_id(model_key: str, provider: str) -> str:
    """The catalog's id for a map key: first-party models keep their name, hosts get ``host/<model>``."""
    prefix = PROVIDERS.get(provider, (provider, provider))[1]
    if prefix is None:
        return re.sub(rf"^{re.escape(provider)}/", "", model_key)
    return f"{prefix}/{model_key.rsplit('/', 1)[-1].lower()}"


def _scales(fields: Mapping[str, Any], batch_cached: float) -> bool:
    """Whether a batch cached rate is the cached rate times the batch discount (the bill's default rule)."""
    cached, regular = fields["cached_input_per_mtok"], fields["input_per_mtok"]
    if cached is None or not regular:
        return False
    return math.isclose(batch_cached, cached * fields["batch_input_per_mtok"] / regular, rel_tol=0.02)


def _prices(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Every per-token price the catalog holds, checked; a Skip names the first bad field."""
    fields = {
        "input_per_mtok": _per_mtok(raw, "input_cost_per_token"),
        "output_per_mtok": _per_mtok(raw, "output_cost_per_token"),
        "cached_input_per_mtok": _per_mtok(raw, "cache_read_input_token_cost"),
        "cache_write_per_mtok": _per_mtok(raw, "cache_creation_input_token_cost"),
        "batch_input_per_mtok": _per_mtok(raw, "input_cost_per_token_batches"),
        "batch_output_per_mtok": _per_mtok(raw, "output_cost_per_token_batches"),
        **_long_context(raw),
    }
    if None in (fields["batch_input_per_mtok"], fields["batch_output_per_mtok"]):
        fields["batch_input_per_mtok"] = fields["batch_output_per_mtok"] = None
    batch_cached = _per_mtok(raw, "cache_read_input_token_cost_batches")
    if fields["batch_input_per_mtok"] is not None and batch_cached is not None and not _scales(fields, batch_cached):
        fields["batch_cached_input_per_mtok"] = batch_cached  # the provider's own batch rate, not the batch discount
    reasoning = _per_mtok(raw, "output_cost_per_reasoning_token")
    tiered = _tiered(raw)
    fields |= tiered
    if tiered and "long_context_threshold" in tiered and "price_tiers" in fields:
        fields.pop("price_tiers")
    if fields["input_per_mtok"] is None or fields["output_per_mtok"] is None:
        raise Skip("no input or output price")
    if reasoning is not None and reasoning != fields["output_per_mtok"]:
        fields["thinking_output_per_mtok"] = reasoning
    return fields


def entry_from_litellm(model_key: str, raw: Mapping[str, Any], *, source: str, as_of: dt.date) -> ApiPrice:
    """One catalog entry from one map entry; Skip (with the reason) where the entry cannot be priced."""
    provider = raw.get("litellm_provider")
    if not isinstance(provider, str):
        raise Skip("litellm_provider: expected text")
    model_id = catalog_id(model_key, provider)
    tokenizer, fidelity = tokenizer_for(model_id)
    fields = {
        "id": model_id,
        "provider": PROVIDERS.get(provider, (provider, None))[0],
        **_prices(raw),
        "context_window": _tokens(raw, "max_input_tokens"),
        "deprecation_date": _deprecation(raw),
        "litellm_key": model_key,
        "tokenizer": tokenizer,
        "tokenizer_fidelity": fidelity,
        "tokenizer_note": "" if fidelity == "exact" else "tokenizer not public or not bundled; a proxy counts tokens",
        "source": source,
        "as_of": as_of,
    }
    try:
        return ApiPrice(**fields)
    except ValidationError as error:
        raise Skip(str(from_pydantic(error))) from None


@dataclass
class LiteLLMImport:
    entries: list[ApiPrice]
    skipped: dict[str, str] = field(default_factory=dict)  # map key -> one-line reason


def _key_label(model_key: Any) -> str:
    return model_key if isinstance(model_key, str) else repr(model_key)[:80]


def _text_model_reason(model_key: str, raw: Mapping[str, Any]) -> str | None:
    """Why an entry is not a chat/completion text model, or None when it is one."""
    if raw.get("mode") not in TEXT_MODES:
        return "not a chat or completion model"
    name = model_key.lower()
    return next((reason for pattern, reason in NOT_TEXT_MODELS if re.search(pattern, name)), None)


def _alias_target(raw: Mapping[str, Any]) -> str | None:
    """The key an alias entry (``{"alias_of": "claude-opus-5-5"}``: no provider, no mode, no prices) stands for."""
    target = raw.get("alias_of")
    return target if isinstance(target, str) else None


def covered_text_model(document: Mapping[Any, Any], model_key: Any) -> bool:
    """Whether a map key is a text model of a provider the catalog covers, an alias judged by what it stands for:
    each such key is in the catalog or in ``litellm_excluded.json`` with its reason."""
    raw = document.get(model_key)
    target = _alias_target(raw) if isinstance(raw, dict) else None
    raw = document.get(target) if target else raw
    return isinstance(raw, dict) and raw.get("litellm_provider") in PROVIDERS and raw.get("mode") in TEXT_MODES


def _document(path: str | Path) -> Mapping[Any, Any]:
    document = read_document(path)
    if not isinstance(document, dict):
        raise InputError(str(path), "expected LiteLLM's object of model name -> prices")
    return document


def import_litellm(path: str | Path, *, as_of: dt.date | None = None, source: str = LITELLM_URL) -> LiteLLMImport:
    """Every priced chat/completion model of a LiteLLM price map; ``as_of`` defaults to the file's date."""
    document = _document(path)
    when = as_of or dt.date.fromtimestamp(Path(path).stat().st_mtime)
    return import_litellm_document(document, as_of=when, source=source)


def import_litellm_document(document: Mapping[Any, Any], *, as_of: dt.date, source: str = LITELLM_URL) -> LiteLLMImport:
    """The same, from a parsed map (an upload); malformed entries are skipped with a reason, never raised."""
    result = LiteLLMImport(entries=[])
    for model_key, raw in document.items():
        label = _key_label(model_key)
        if not isinstance(model_key, str):
            result.skipped[label] = "model name: expected text"
        elif not isinstance(raw, dict):
            result.skipped[label] = "expected an object of prices"
        elif target := _alias_target(raw):
            result.skipped[label] = f"a moving alias of {target}, not one model"
        elif reason := _text_model_reason(model_key, raw):
            result.skipped[label] = reason
        else:
            try:
                result.entries.append(entry_from_litellm(model_key, raw, source=source, as_of=as_of))
            except Skip as skip:
                result.skipped[label] = str(skip)
    return result


def skipped_lines(skipped: Mapping[str, str]) -> list[str]:
    """One line per skipped entry: ``<map key>: <field>: <reason>``."""
    return [f"{key}: {reason}" for key, reason in skipped.items()]


_DATED = re.compile(r"^(?P<base>.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")
PRICE_FIELDS = (
    "input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok", "batch_input_per_mtok",
    "batch_output_per_mtok", "long_context_threshold", "long_context_input_per_mtok", "long_context_output_per_mtok",
    "batch_cached_input_per_mtok", "thinking_output_per_mtok", "price_tiers",
)  # fmt: skip


def _same_prices(a: ApiPrice, b: ApiPrice) -> bool:
    return all(getattr(a, name) == getattr(b, name) for name in PRICE_FIELDS)


COVERED = frozenset(name for name, _ in PROVIDERS.values())


def select_catalog(imported: LiteLLMImport, *, keep_keys: frozenset[str] = frozenset()) -> LiteLLMImport:
    """The catalog's share of an import: covered providers, current models, one entry per model.

    Out (each with its reason): other providers, models retired before the import's date, models without a price
    (free or experimental), dated snapshots priced like their undated name, and a second map key for an id already
    taken. Map keys in ``keep_keys`` (the catalog's own) win id collisions and are never dropped as snapshots or for
    retirement: old scenarios name them.
    """
    chosen: dict[str, ApiPrice] = {}  # catalog id, and the id with dots as dashes, -> entry
    out = dict(imported.skipped)
    by_key = {entry.litellm_key: entry for entry in imported.entries}
    for entry in sorted(imported.entries, key=lambda e: e.litellm_key not in keep_keys):
        reason = _exclusion(entry, chosen, by_key, kept=entry.litellm_key in keep_keys)
        if reason:
            out[entry.litellm_key or entry.id] = reason
        else:
            chosen[entry.id] = chosen[_spelling(entry.id)] = entry
    return LiteLLMImport(entries=list({id(e): e for e in chosen.values()}.values()), skipped=out)


def _spelling(model_id: str) -> str:
    """One spelling for ids that differ only in dots and dashes (``mistral-medium-3.5`` / ``mistral-medium-3-5``)."""
    return model_id.replace(".", "-")


def _exclusion(entry: ApiPrice, chosen: dict[str, ApiPrice], by_key: dict[Any, ApiPrice], *, kept: bool) -> str:
    """Why an imported entry stays out of the catalog, or "" when it comes in."""
    if entry.provider not in COVERED:
        return "provider not covered by the catalog"
    if entry.id in chosen:
        return f"same model as {chosen[entry.id].litellm_key} (id {entry.id})"
    if entry.input_per_mtok == 0 and entry.output_per_mtok == 0:
        return "no price (free or experimental)"
    if kept:
        return ""
    twin = chosen.get(_spelling(entry.id))
    if twin is not None and _same_prices(twin, entry):
        return f"same model as {twin.litellm_key}, spelled with dots for dashes, same prices"
    if entry.deprecation_date is not None and entry.deprecation_date < entry.as_of:
        return f"retired on {entry.deprecation_date} (deprecation_date)"
    dated = _DATED.match(entry.litellm_key or "")
    base = by_key.get(dated.group("base")) if dated else None
    if base is not None and _same_prices(base, entry):
        return f"dated snapshot of {base.litellm_key}, same prices"
    return ""
