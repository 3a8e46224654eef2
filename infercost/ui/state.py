"""The app's state: session keys are the profile's field names, so the form, a profile file and a URL are one thing.

No Streamlit import here: functions take the session state as a plain mapping, so they are testable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from infercost.pricing import ApiPrice, bundled_api_prices, lifecycle

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
# One model line per well-known provider (and an open-weights host), named by a model the catalog holds; a line whose
# model has a retirement date announced is carried on to the successor the catalog names, so the defaults stay current.
MODEL_LINES = (
    "gpt-4o-mini",
    "gpt-5-mini",
    "claude-sonnet-4-5",
    "gemini-2.5-flash",
    "deepseek-chat",
    "together/meta-llama-3.1-8b",
)
PROMPT_IN_CHARACTERS = "characters of a language"
PERSISTENT_KEYS = (*WORKLOAD_DEFAULTS, "api_models", "price_overrides", "self_host", "prompt_distribution",
                   "prompt_unit", "prompt_chars", "language", "panel_setup", "corpus")  # fmt: skip
# Widgets whose value a person sets and expects to find again after visiting another page. A page that adds such a
# widget names its key here (or uses one of the prefixes). Buttons, uploads, data editors and chart or table
# selections must not be listed: Streamlit refuses to have their values set.
KEPT_WIDGET_KEYS = frozenset({
    # the bill's self-host panel
    "self_host_on", "gpu_offer", "gpus_per_replica", "slo_p95_ttft_ms", "slo_p95_tpot_ms", "peak_to_average",
    "self_host_mode", "measured_in", "measured_out", "bill_tab", "billing_increment_minutes", "cold_start_minutes",
    "deadline_hours", "min_replicas", "max_replicas", "target_utilization", "own_points_gpus",
    # tokens and benchmark forms
    "tokenizer_ids", "extra_tokenizer", "language_measure", "corpus_source", "corpus_path", "corpus_tokenizers",
    "distribution_tokenizer", "compare_runs",
    # the benchmark form: its own keys, never the workload's ("output_tokens") or the batch form's ("concurrency")
    "bench_target", "bench_base_url", "bench_model", "bench_api", "bench_api_key_env", "bench_concurrency",
    "bench_requests", "bench_input_tokens", "bench_output_tokens", "bench_cpu_only", "bench_soak", "bench_duration_s",
    "bench_window_s",
    # the batch form
    "base_url", "model", "concurrency", "backend", "executor", "address", "actors", "gpus",
    "scenario_notes",
})  # fmt: skip
KEPT_WIDGET_PREFIXES = ("cmp_", "bill_", "gpu_price_", "gpu_offer_", "models_", "override_")
NOT_RESTORABLE = frozenset({"cmp_add", "bill_table"})  # buttons and tables under a kept prefix
KEPT_COPY = "_kept_widget_values"  # session key: the permanent copy


def current_model(model_id: str, catalog: Mapping[str, ApiPrice], today: dt.date) -> str | None:
    """The model, or its newest successor in the catalog while a retirement is announced; None if that is not current
    (a retired model prices old scenarios, but a new workload should not start on it)."""
    seen = {model_id}
    while (entry := catalog.get(model_id)) and entry.deprecation_date and entry.successor in catalog:
        if entry.successor in seen:  # a loop in the data: stop where we are
            break
        model_id = entry.successor
        seen.add(model_id)
    entry = catalog.get(model_id)
    return model_id if entry is not None and lifecycle(entry, today=today) == "current" else None


def default_models(available: Sequence[str], today: dt.date | None = None) -> list[str]:
    """A handful of well-known models that the catalog holds, each current today (see ``MODEL_LINES``)."""
    catalog = {entry.id: entry for entry in bundled_api_prices()}
    when = today or dt.date.today()
    chosen = [current_model(model, catalog, when) for model in MODEL_LINES]
    picked = [model for model in dict.fromkeys(chosen) if model is not None and model in available]
    return picked or list(available[:5])


def init_state(state: MutableMapping[str, Any], available_models: Sequence[str]) -> None:
    for key, value in WORKLOAD_DEFAULTS.items():
        state.setdefault(key, value)
    state.setdefault("api_models", default_models(available_models))
    state.setdefault("price_overrides", [])
    state.setdefault("self_host", [])
    state.setdefault("prompt_unit", "tokens")
    state.setdefault("prompt_chars", 4000)
    state.setdefault("language", "en")


def is_kept_widget(key: str) -> bool:
    return key not in NOT_RESTORABLE and (key in KEPT_WIDGET_KEYS or key.startswith(KEPT_WIDGET_PREFIXES))


def keep_widget_state(state: MutableMapping[str, Any]) -> None:
    """Streamlit forgets a widget's value when its page is not shown; this keeps what a person set across pages.

    Profile fields and kept widgets get a permanent copy, refreshed from the state while it has them and written
    back on every run: a value set in the same run is what the browser is told to show, so a widget that comes back
    shows the kept value (one restored a run earlier lives only on the server, and the browser draws the widget's
    default). Re-assigning a profile field alone is not enough: a page that refreshes a fragment on a timer
    (Benchmark, Batch jobs) ends runs in which this function does not run, and Streamlit then drops a value stored
    under the key of a widget that is not on the page, so the copy is what brings the workload back.
    Call at the top of every run, before any widget.
    """
    kept: dict[str, Any] = state.setdefault(KEPT_COPY, {})
    for key in [key for key in state if isinstance(key, str) and (key in PERSISTENT_KEYS or is_kept_widget(key))]:
        kept[key] = state[key]
    for key, value in kept.items():
        state[key] = value


def editor_start(state: MutableMapping[str, Any], key: str, default: Any) -> Any:
    """The table a data editor is drawn from: the person's last edited table once the editor has lost its edits.

    Streamlit holds a data editor's edits only as changes against the table it was given, and drops them when the
    page is not shown, so a page keeps the edited table itself (``keep_edited``). While the editor's changes live
    (``key`` in the state) it must keep the table they apply to; once they are gone, it starts from the edited one.
    """
    start = f"{key}_start"
    if key not in state or start not in state:
        state[start] = state.get(f"{key}_edited", default)
    return state[start]


def keep_edited(state: MutableMapping[str, Any], key: str, edited: Any) -> None:
    """Remember what a data editor shows now, for ``editor_start`` after a visit to another page."""
    state[f"{key}_edited"] = edited


def profile_document(state: MutableMapping[str, Any]) -> dict[str, Any]:
    """The workload profile (DESIGN.md) that the current form describes."""
    document = {key: state[key] for key in WORKLOAD_DEFAULTS if key in state}
    if state.get("prompt_unit") == PROMPT_IN_CHARACTERS:  # each model then counts with its own tokenizer
        del document["prompt_tokens"]
        document |= {"prompt_chars": state["prompt_chars"], "language": state["language"]}
    elif (corpus := corpus_in_use(state)) is not None:  # each model's own tokenizer's mean over the corpus
        document["prompt_tokens_by_tokenizer"] = dict(corpus["prompt_tokens_by_tokenizer"])
    document["api_models"] = list(state.get("api_models", []))
    document["prices"] = list(state.get("price_overrides", []))
    panel = [state["panel_setup"]] if state.get("panel_setup") else []  # the bill page's own setup, if included
    document["self_host"] = [*state.get("self_host", []), *panel]
    return document


def corpus_in_use(state: MutableMapping[str, Any]) -> dict[str, Any] | None:
    """The corpus carried in from the Tokens page, while the prompt length is still the one it set.

    Typing another prompt length (or switching to characters) means the person describes the prompt themselves.
    """
    corpus = state.get("corpus")
    if not corpus or state.get("prompt_unit") == PROMPT_IN_CHARACTERS:
        return None
    return corpus if state.get("prompt_tokens") == corpus["prompt_tokens"] else None


def corpus_note(corpus: dict[str, Any]) -> str:
    if corpus.get("file") is None:  # counts that came back with a scenario or a link: the file is not known here
        return ("Prompt lengths are per-tokenizer means carried in with the scenario or link: each model is billed "
                f"on its own tokenizer's mean ({len(corpus['prompt_tokens_by_tokenizer'])} tokenizers counted). "
                "Change the prompt length to describe prompts yourself.")
    return (f"Prompt lengths come from the corpus **{corpus['file']}** ({corpus['records']:,} records, field "
            f"`{corpus['field']}`): each model is billed on the mean its own tokenizer counts; "
            f"{corpus['prompt_tokens']:,} tokens is the mean with {corpus['tokenizer']}. "
            "Change the prompt length to describe prompts yourself.")


def workload_summary(state: MutableMapping[str, Any]) -> str:
    """One line that says what the form describes, in the unit the person chose (tokens, characters or a corpus)."""
    from infercost.tokenizers.languages import LANGUAGE_NAMES  # light: a dict of names

    if state.get("prompt_unit") == PROMPT_IN_CHARACTERS:
        language = LANGUAGE_NAMES.get(state["language"], state["language"])
        prompt = f"{state['prompt_chars']:,} prompt characters ({language}, counted per model)"
    elif (corpus := corpus_in_use(state)) is not None:
        prompt = f"prompts from the corpus {corpus['file'] or 'of the scenario'} (each model's own mean)"
    else:
        prompt = f"{state['prompt_tokens']:,} prompt tokens"
    return (f"{state['calls_per_day']:,} calls/day · {prompt} + {state['output_tokens']:,} output tokens "
            f"· retry rate {state['retry_rate']:.0%}")
