"""The app's state: session keys are the profile's field names, so the form, a profile file and a URL are one thing.

No Streamlit import here: functions take the session state as a plain mapping, so they are testable.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

WORKLOAD_DEFAULTS: dict[str, Any] = {
    "name": "my-workload",
    "calls_per_day": 100_000,
    "prompt_tokens": 1_200,
    "output_tokens": 300,
    "reasoning_tokens": 0,
    "retry_rate": 0.05,
    "max_retries": 3,
    "truncation_rate": 0.0,
    "cached_prompt_fraction": 0.0,
    "cache_write_fraction": 0.0,
    "batch": False,
    "days_per_month": 30,
}
PREFERRED_MODELS = (
    "gpt-4o-mini",
    "gpt-5-mini",
    "claude-sonnet-4-5",
    "gemini-2.5-flash",
    "deepseek-chat",
    "together/meta-llama-3.1-8b-instruct-turbo",
)
PROMPT_IN_CHARACTERS = "characters of a language"
PERSISTENT_KEYS = (*WORKLOAD_DEFAULTS, "api_models", "price_overrides", "self_host", "prompt_distribution",
                   "prompt_unit", "prompt_chars", "language", "panel_setup")  # fmt: skip


def default_models(available: Sequence[str]) -> list[str]:
    """A handful of well-known models that the catalog holds."""
    chosen = [model for model in PREFERRED_MODELS if model in available]
    return chosen or list(available[:5])


def init_state(state: MutableMapping[str, Any], available_models: Sequence[str]) -> None:
    for key, value in WORKLOAD_DEFAULTS.items():
        state.setdefault(key, value)
    state.setdefault("api_models", default_models(available_models))
    state.setdefault("price_overrides", [])
    state.setdefault("self_host", [])
    state.setdefault("prompt_unit", "tokens")
    state.setdefault("prompt_chars", 4000)
    state.setdefault("language", "en")


def keep_widget_state(state: MutableMapping[str, Any]) -> None:
    """Streamlit forgets a widget's value when its page is not shown; re-assigning keeps it across pages."""
    for key in PERSISTENT_KEYS:
        if key in state:
            state[key] = state[key]


def profile_document(state: MutableMapping[str, Any]) -> dict[str, Any]:
    """The workload profile (DESIGN.md) that the current form describes."""
    document = {key: state[key] for key in WORKLOAD_DEFAULTS if key in state}
    if state.get("prompt_unit") == PROMPT_IN_CHARACTERS:  # each model then counts with its own tokenizer
        del document["prompt_tokens"]
        document |= {"prompt_chars": state["prompt_chars"], "language": state["language"]}
    document["api_models"] = list(state.get("api_models", []))
    document["prices"] = list(state.get("price_overrides", []))
    panel = [state["panel_setup"]] if state.get("panel_setup") else []  # the bill page's own setup, if included
    document["self_host"] = [*state.get("self_host", []), *panel]
    return document
