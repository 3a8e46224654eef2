"""What-if scenarios as data: a profile as URL query parameters, as a file, and several estimates side by side.

No Streamlit here: the app passes ``st.session_state`` and ``st.query_params`` as plain mappings, so a profile, a URL
and the form stay one thing (session keys are the profile's field names) and all of it is testable without a browser.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from infercost.errors import InputError
from infercost.files import MAX_DOCUMENT_BYTES, check_nesting
from infercost.profile import Profile, parse_profile

if TYPE_CHECKING:
    import pandas as pd

# Defaults a URL may leave out: the profile schema's own, so a shared link means the same on any version of the form.
QUERY_DEFAULTS: dict[str, Any] = {
    name: field.get_default(call_default_factory=True)
    for name, field in Profile.model_fields.items()
    if not field.is_required()
}
JSON_FIELDS = frozenset({"api_models", "prices", "self_host", "prompt_samples",
                         "prompt_tokens_by_tokenizer"})  # lists and objects
TEXT_FIELDS = frozenset({"name", "language"})
BOOL_FIELDS = frozenset({"batch"})
BOOL_TEXT = {"true": True, "false": False}
IGNORED_PARAMS = frozenset({"embed", "embed_options"})  # Streamlit's own (add any the app uses for itself)
STATE_KEYS = {"prices": "price_overrides"}  # profile field -> session key, where the form names it differently
# The form's choice of prompt description (infercost.ui.state's values; a test keeps the two equal).
PROMPT_UNIT_KEY = "prompt_unit"
PROMPT_UNITS = {"prompt_tokens": "tokens", "prompt_chars": "characters of a language"}
CORPUS_FIELD, CORPUS_KEY = "prompt_tokens_by_tokenizer", "corpus"  # profile field, and the form's corpus (ui.state)
APPLIED_QUERY_KEY = "_applied_query"  # session key: the query last written into the form, so it is applied once


def _compact_json(field: str, value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(field, f"cannot be shared as JSON: {error}") from None


def _scalar_text(field: str, value: Any) -> str:
    """Plain text that parses back to the same value: ``repr`` of a float is its shortest exact form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(field, f"must be a finite number, not {value}")
        return repr(float(value))  # a numpy float64 is a float whose repr is "np.float64(...)"
    return str(value)


def profile_to_query(profile: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters for a profile: only the fields that differ from the schema's defaults."""
    query = {}
    for field, value in profile.items():
        if field not in Profile.model_fields:
            raise InputError(field, "not a profile field")
        if field in QUERY_DEFAULTS and _same(value, QUERY_DEFAULTS[field]):
            continue
        query[field] = _compact_json(field, value) if field in JSON_FIELDS else _scalar_text(field, value)
    return query


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default or (value is None and default is None)


def _single(field: str, value: str | list[str]) -> str:
    if isinstance(value, str):
        return value
    if len(value) != 1:
        raise InputError(field, f"given {len(value)} times; give it once")
    return value[0]


def _number(field: str, text: str) -> int | float:
    try:
        number = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise InputError(field, f"not a number (got {text!r})") from None
    if not math.isfinite(number):
        raise InputError(field, f"must be a finite number (got {text!r})")
    return number


def _json_value(field: str, text: str) -> Any:
    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not a number")

    if len(text) > MAX_DOCUMENT_BYTES:
        raise InputError(field, f"longer than {MAX_DOCUMENT_BYTES // 2**20} MiB")
    check_nesting(text, field)  # a link with thousands of "[" would raise RecursionError at the top of every page
    try:
        return json.loads(text, parse_constant=no_constants)
    except ValueError as error:
        raise InputError(field, f"not valid JSON: {error}") from None


def _parse_value(field: str, text: str) -> Any:
    if field in JSON_FIELDS:
        return _json_value(field, text)
    if field in TEXT_FIELDS:
        return text
    if field in BOOL_FIELDS:
        if text.lower() not in BOOL_TEXT:
            raise InputError(field, f"must be true or false (got {text!r})")
        return BOOL_TEXT[text.lower()]
    return _number(field, text)


def profile_from_query(params: Mapping[str, str | list[str]], base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The profile a URL describes: the schema's defaults (and ``base``, for the fields a profile must have that the
    URL leaves out), then the parameters; checked like a profile file."""
    profile = {**QUERY_DEFAULTS, **(base or {})}
    for field, raw in params.items():
        if field in IGNORED_PARAMS:
            continue
        if field not in Profile.model_fields:
            raise InputError(field, "not a profile field (a URL parameter infercost does not know)")
        profile[field] = _parse_value(field, _single(field, raw))
    parse_profile(profile, name="query")
    return profile


def profile_params(params: Mapping[str, str | list[str]]) -> dict[str, str | list[str]]:
    """The parameters that describe a profile, without Streamlit's own."""
    return {key: value for key, value in params.items() if key not in IGNORED_PARAMS}


def load_into_state(state: MutableMapping[str, Any], profile: Mapping[str, Any]) -> None:
    """Write a profile's fields into the form's session keys, and pick the form's prompt unit to match.

    ``None`` (e.g. "all catalog models") leaves a key as it is, because the form's widgets cannot hold it.
    Per-tokenizer prompt counts (a corpus carried in on the Tokens page) become the form's corpus again, so the form
    bills each model on its own count as the saved profile did; a profile without them ends any corpus in use.
    """
    for field, value in profile.items():
        if value is not None and field != CORPUS_FIELD:
            state[STATE_KEYS.get(field, field)] = value
    counts = profile.get(CORPUS_FIELD)
    state[CORPUS_KEY] = {"file": None, "prompt_tokens": profile.get("prompt_tokens"),
                         "prompt_tokens_by_tokenizer": dict(counts)} if counts else None  # fmt: skip
    for field, unit in PROMPT_UNITS.items():
        if profile.get(field) is not None:
            state[PROMPT_UNIT_KEY] = unit


def apply_query_params(state: MutableMapping[str, Any], params: Mapping[str, str | list[str]],
                       form_defaults: Mapping[str, Any] | None = None) -> bool:  # fmt: skip
    """Fill the form from a shared URL, once per distinct URL, so later edits are not overwritten on every rerun.

    Returns whether the form changed. Malformed parameters raise InputError naming the parameter.
    """
    shared = profile_params(params)
    key = _query_key(shared)
    if not shared or state.get(APPLIED_QUERY_KEY) == key:
        return False
    load_into_state(state, profile_from_query(shared, form_base(state, shared, form_defaults or {})))
    state[APPLIED_QUERY_KEY] = key
    return True


PROMPT_FIELDS = ("prompt_tokens", "prompt_chars", "prompt_samples", "prompt_tokens_by_tokenizer")


def form_base(state: Mapping[str, Any], shared: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a profile must have that a link leaves out (volume, output, a prompt), as the form has them (a new
    form: ``defaults``). A hand-written link such as ``?retry_rate=1.5`` then fills what it names, or its error names
    that parameter, not "calls_per_day: Field required"."""

    def current(field: str) -> Any:
        return defaults.get(field) if state.get(field) is None else state[field]

    wanted = ["calls_per_day", "output_tokens"]
    if not any(field in shared for field in PROMPT_FIELDS):
        in_chars = state.get(PROMPT_UNIT_KEY) == PROMPT_UNITS["prompt_chars"]
        wanted += ["prompt_chars", "language"] if in_chars else ["prompt_tokens"]
    return {field: current(field) for field in wanted if field not in shared and current(field) is not None}


def _query_key(params: Mapping[str, str | list[str]]) -> str:
    return json.dumps(sorted((k, v if isinstance(v, str) else list(v)) for k, v in params.items()))


def form_in_url(state: MutableMapping[str, Any], profile: Mapping[str, Any],
                params: Mapping[str, str | list[str]]) -> dict[str, str] | None:  # fmt: skip
    """The URL parameters for the form as it is now, where the address bar says something else (None: it already
    says this), so that a reload, a bookmark or a copied address opens the same form. They are marked applied, so
    the app does not fill the form again from its own address."""
    query = profile_to_query(profile)
    key = _query_key(query)
    if _query_key(profile_params(params)) == key:
        return None
    state[APPLIED_QUERY_KEY] = key
    return query


def scenario_file(profile: Mapping[str, Any]) -> str:
    """A profile file that ``python -m infercost estimate FILE`` reads as it is; checked before it is written."""
    parse_profile(dict(profile), name="scenario")
    return json.dumps(profile, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


COMPARISON_COLUMNS = (
    "scenario", "kind", "option", "weights", "cost_per_day", "cost_per_month", "cost_per_month_p10_p90",
    "cost_per_call", "cost_per_million_tokens", "provider", "tokenizer", "fidelity", "prompt_token_basis",
    "price_source", "price_as_of", "basis", "run_id", "hardware", "throughput_source", "meets_slo", "replicas",
    "gpu_hours_per_day", "warnings",
)  # fmt: skip


def _option_rows(scenario: str, estimate: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per API model and self-host setup; a self-host cost per call is its daily cost over the calls, and a
    predicted one carries its P10–P90 range (a self-host figure is never compared without it)."""
    from infercost.estimate import cost_range_text  # the estimate's own wording; heavy, so only where compared

    calls_per_day = float(estimate["profile"]["calls_per_day"])
    rows = [{**row, "kind": "api", "option": row["model"], "weights": row.get("open_weights"),
             "cost_per_month_p10_p90": cost_range_text(row)}
            for row in estimate["api"]]  # the bill band's P10–P90 where the estimate has it (``infercost.band``)
    for row in estimate["self_host"]:
        per_day = row.get("cost_per_day")
        per_call = None if per_day is None else per_day / calls_per_day
        rows.append({**row, "kind": "self_host", "option": row["name"], "weights": row.get("model"),
                     "cost_per_call": per_call,
                     "cost_per_month_p10_p90": cost_range_text(row)})  # fmt: skip
    return [{**row, "scenario": scenario, "warnings": "; ".join(row.get("warnings", []))} for row in rows]


def comparison_records(estimates: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Several estimate documents side by side as plain rows: one per scenario × option, with each figure's basis."""
    rows = [row for name, estimate in estimates.items() for row in _option_rows(name, estimate)]
    return [{column: row.get(column) for column in COMPARISON_COLUMNS} for row in rows]


def compare_scenarios(estimates: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The comparison as a table (see ``comparison_records``) with cost per month, per call and per 1M tokens."""
    import pandas as pd  # only the app and reports need it; the CLI starts without it

    return pd.DataFrame(comparison_records(estimates), columns=list(COMPARISON_COLUMNS))
