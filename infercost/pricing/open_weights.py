"""Which catalog offers serve which public weights, so an API offer and a self-hosted setup of the same model meet.

Every catalog entry carries ``open_weights``: the Hugging Face id of the checkpoint it serves, or ``None`` where the
catalog knows of no public checkpoint (closed models, and the few names listed in ``NO_PUBLIC_CHECKPOINT`` with the
reason). SOURCES.md ("Open weights") states the rule and its exceptions.

Offers of *other* checkpoints with the same architecture (DeepSeek-V3, V3-0324 and R1; an instruct model and its
base) are listed too, marked as such; ``architecture_key`` decides that, by a name rule.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from infercost.errors import InputError
from infercost.pricing.schema import ApiPrice

# Providers whose catalog entries are mostly open weights served by a host: each of their entries needs an
# ``open_weights`` id or a reason below (a catalog test holds this).
OPEN_WEIGHT_HOSTS = frozenset({"Together AI", "Fireworks AI", "DeepInfra", "Groq", "Nebius"})

# Entries of those hosts (and of first-party APIs) that serve no public checkpoint, by id pattern, with the reason.
NO_PUBLIC_CHECKPOINT: tuple[tuple[str, str], ...] = (
    (r"^deepinfra/claude-", "Anthropic's Claude, resold by DeepInfra; the weights are not public"),
    (r"^deepinfra/gemini-", "Google's Gemini, resold by DeepInfra; the weights are not public"),
    (r"(^|/)qwen[-0-9.p]*(-(coder|vl))?-?(max|plus|flash)(-|$)|^qwen-(turbo|coder)|^qwq-plus$",
     "Alibaba's hosted Qwen API line (Max, Plus, Flash, Turbo, Coder): no checkpoint of that name is public; the open "
     "Qwen releases are named by size (Qwen3-235B-A22B, ...)"),
    (r"^deepinfra/seed-", "ByteDance Seed API models; ByteDance's open release is Seed-OSS, not these"),
    (r"^together/together-ai-", "a Together price tier for models of a size range (custom or fine-tuned), not a model"),
    (r"^fireworks/yi-large$", "01.AI's Yi-Large is API-only"),
    (r"^fireworks/kat-coder$", "Kwaipilot's KAT-Coder is API-only (its open release is KAT-Dev)"),
    (r"^fireworks/(ember-1|fare-20b|ultramarine-1-flash-us)$",
     "a Fireworks-only model name; no public checkpoint of it was found"),
    (r"^(deepseek-chat|deepseek-reasoner|deepseek-coder|deepseek-flash|deepseek-v4-flash|deepseek-v4-pro)$",
     "a DeepSeek API alias whose checkpoint DeepSeek changes in place (dated V4 snapshots such as -0731 exist); the "
     "API docs do not say which checkpoint it serves now"),
    (r"^(mistral-large-3|mistral-large-4|mistral-large-4-0|mistral-small|mistral-tiny|zai-glm-5)$",
     "a Mistral API alias without a version (Mistral re-points these), or a version whose weights are not confirmed "
     "public"),
    (r"^(mistral-medium|codestral|mistral-vibe)",
     "Mistral's closed models (Medium, Codestral 25.08, Vibe CLI endpoints)"),
    (r"^(gpt-|o\d|chatgpt)", "OpenAI's hosted models; only gpt-oss is open, and OpenAI's API does not serve it"),
    (r"^claude-", "Anthropic's Claude; the weights are not public"),
    (r"^gemini-(?!gemma)", "Google's Gemini; the weights are not public"),
    (r"^grok-", "xAI's Grok 4.x; the weights are not public"),
)

Match = Literal["exact", "same_architecture"]


@dataclass(frozen=True)
class WeightsOffers:
    """The API offers of one model's weights: ``open_weights`` are the checkpoint ids the name resolved to (none when
    it named only an architecture), ``offers`` each with how it matches."""

    model: str
    open_weights: tuple[str, ...]
    architecture: str
    offers: tuple[tuple[Match, ApiPrice], ...]


def closed_reason(entry_id: str) -> str | None:
    """Why an entry names no public checkpoint, or None when no rule says so."""
    return next((reason for pattern, reason in NO_PUBLIC_CHECKPOINT if re.search(pattern, entry_id)), None)


# Tags that name a post-training variant, a date, a precision or a packaging of one architecture. Stripped from the
# end of a name part until none is left: "Qwen3-235B-A22B-Instruct-2507" -> "qwen3-235b-a22b".
_VARIANT_TAG = re.compile(
    r"[-_](instruct|chat|it|base|hf|thinking|reasoning|terminus|preview|exp|pt|\d{4}|\d{6}|\d{4}-\d{2}(-\d{2})?"
    r"|fp8|bf16|fp16|nvfp4|mxfp4|awq|gptq)$"
)
# Names that differ in more than tags but are published as one architecture.
_SAME_ARCHITECTURE = (
    (re.compile(r"^deepseek-(v3|r1)(\.1)?$"), "deepseek-v3"),  # V3, V3-0324, R1, R1-0528, V3.1, V3.1-Terminus
    (re.compile(r"^gpt-oss-(safeguard-)?(\d+b)$"), r"gpt-oss-\2"),  # gpt-oss-safeguard is a gpt-oss fine-tune
)


@cache
def architecture_key(hf_id: str) -> str:
    """A name for the architecture of a checkpoint: equal keys mean the same weights' shapes (so the same self-host
    numbers). A name rule: the repository name, lower-cased, without variant tags (and without the "Meta-" that
    Meta's repositories dropped: ``Meta-Llama-3.1-8B-Instruct`` is ``Llama-3.1-8B-Instruct``), then a small table of
    equivalences. Not the bundled config a name resolves to: that maps Llama-3 onto Llama-3.1 (same shapes, another
    context length and model)."""
    name = hf_id.rsplit("/", 1)[-1].lower().removeprefix("meta-")  # Meta renamed "Meta-Llama-3.1-*" "Llama-3.1-*"
    while (stripped := _VARIANT_TAG.sub("", name)) != name:
        name = stripped
    for pattern, key in _SAME_ARCHITECTURE:
        if pattern.match(name):
            return pattern.sub(key, name)
    return name


def _lookup_names(prices: Sequence[ApiPrice]) -> dict[str, set[str]]:
    """What a person may type (an id, or its name without the owner; lower case) -> the ids it means."""
    names: dict[str, set[str]] = {}
    for hf_id in {p.open_weights for p in prices if p.open_weights}:
        for typed in (hf_id.lower(), hf_id.rsplit("/", 1)[-1].lower()):
            names.setdefault(typed, set()).add(hf_id)
    return names


def resolve(model: str, prices: Sequence[ApiPrice]) -> tuple[set[str], str]:
    """(the checkpoint ids ``model`` names, its architecture key); an InputError with close names when the catalog
    serves neither that checkpoint nor one of its architecture."""
    typed = model.strip().lower()
    if not typed:
        raise InputError("open-weights", "give a model's Hugging Face id or name, e.g. openai/gpt-oss-120b")
    names = _lookup_names(prices)
    exact = names.get(typed, set())
    key = architecture_key(next(iter(exact))) if exact else architecture_key(typed)
    if exact or any(architecture_key(p.open_weights) == key for p in prices if p.open_weights):
        return exact, key
    close = difflib.get_close_matches(typed, list(names), n=5, cutoff=0.6)
    hint = f"; close: {', '.join(close)}" if close else "; see `python -m infercost prices --json` (open_weights)"
    raise InputError("open-weights", f"no catalog offer serves {model!r}{hint}")


def offers_of_weights(model: str, prices: Sequence[ApiPrice]) -> WeightsOffers:
    """Every offer of ``model``'s weights (``exact``) and of checkpoints with its architecture
    (``same_architecture``), exact first, then cheapest output price first."""
    exact, key = resolve(model, prices)
    offers: list[tuple[Match, ApiPrice]] = [
        ("exact" if entry.open_weights in exact else "same_architecture", entry)
        for entry in prices
        if entry.open_weights is not None and architecture_key(entry.open_weights) == key
    ]
    offers.sort(key=lambda o: (o[0] != "exact", o[1].output_per_mtok, o[1].input_per_mtok, o[1].id))
    return WeightsOffers(model=model, open_weights=tuple(sorted(exact)), architecture=key, offers=tuple(offers))
