"""Cached wrappers around core calls, shared by the pages (the only ui module besides pages that imports Streamlit)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from infercost import store
from infercost.band import (
    MAX_BANDED_API_ROWS,
    api_band,
    band_prompt_samples,
    band_summary,
    self_host_band_of,
    with_bands,
)
from infercost.compare import (
    api_cost_curves,
    api_tornado,
    claim_readings,
    self_host_band_curves,
    self_host_cost_curves,
    self_host_tornado,
)
from infercost.errors import InputError
from infercost.estimate import estimate, price_list, resolve_setup, run_loader
from infercost.performance.profiles import ThroughputProfile, closed_loop_profiles, stored_profiles
from infercost.pricing import bundled_api_prices, bundled_gpu_prices, find_price
from infercost.profile import SelfHost, parse_profile
from infercost.ui.state import corpus_in_use, corpus_note


@st.cache_data(show_spinner=False)
def catalog_json() -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json") for entry in bundled_api_prices()]


@st.cache_data(show_spinner=False)
def model_report_json(model: str, config_path: str, dtype: str, kv_dtype: str, context: int) -> dict[str, Any]:
    """``models show`` for the Models page (a model by name, or a config.json path or model directory)."""
    from infercost.performance.models import model_report, resolve
    from infercost.pricing import bundled_gpu_specs

    resolved = resolve(model or None, config_path or None)
    return model_report(resolved, dtype=dtype or None, kv_dtype=kv_dtype or None, context=context,
                        gpu_specs=bundled_gpu_specs())  # fmt: skip


@st.cache_data(show_spinner=False)
def model_rows() -> list[dict[str, Any]]:
    """``models list``'s rows: each bundled model with the bundled tables it is calibrated on per engine."""
    from infercost.performance.profiles import listed_models

    return listed_models()


@st.cache_data(show_spinner=False)
def gpu_prices_json() -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json") for entry in bundled_gpu_prices()]


def store_stamp(db_path: Path | None = None) -> tuple:
    """Changes whenever the store commits (SQLite in WAL mode writes the ``-wal`` file, a checkpoint the main file).

    Caches of anything that reads stored runs take it as an argument, so a sweep that finishes while the app runs
    reaches every page at once. Two ``stat`` calls: cheap enough for every rerun. A PostgreSQL store has no file:
    one query of counts and maxima there (``store.change_stamp``).
    """
    target = store.resolve(db_path)
    if store.is_server(target):  # a PostgreSQL store: no file to watch, so ask it what it holds
        with closing(store.connect(target)) as db:
            return (store.change_stamp(db),)
    path = Path(str(target).removeprefix("sqlite:///"))
    stamp = []
    for file in (path, path.with_name(path.name + "-wal")):
        try:
            info = file.stat()
        except OSError:
            info = None
        stamp.append((info.st_mtime_ns, info.st_size) if info else (0, 0))
    return tuple(stamp)


def estimate_json(profile_json: str) -> dict[str, Any]:
    """The estimate for a profile document (a JSON string, so the cache key is exact), as of the store's state."""
    return _estimate_json(profile_json, store_stamp())


def banded_estimate_json(profile_json: str) -> dict[str, Any]:
    """The estimate with each option's bill band (``infercost.band``), for the reports a person downloads."""
    return _banded_estimate_json(profile_json, store_stamp())


@st.cache_data(show_spinner="Simulating each option's bill band…", max_entries=64)
def _banded_estimate_json(profile_json: str, stamp: tuple) -> dict[str, Any]:
    profile = parse_profile(json.loads(profile_json))
    return with_bands(estimate_json(profile_json), profile, bundled_api_prices(), run_loader())


def estimate_leaving_out_setups(profile_json: str) -> tuple[dict[str, Any], str, InputError | None]:
    """The estimate, the profile it is of, and None; where only the self-host setups stop it (a token shape the
    engine model does not take), the API bills alone, their profile and the setups' error, so the page still
    compares what it can. An error of the workload itself is raised as it is."""
    try:
        return estimate_json(profile_json), profile_json, None
    except InputError as error:
        document = json.loads(profile_json)
        if not document.get("self_host"):
            raise
        without = json.dumps({**document, "self_host": []}, sort_keys=True, default=str)
        return estimate_json(without), without, error


@st.cache_data(show_spinner="Pricing the workload…", max_entries=256)
def _estimate_json(profile_json: str, stamp: tuple) -> dict[str, Any]:
    return estimate(parse_profile(json.loads(profile_json)), load_run=run_loader())


def cost_curves(profile_json: str) -> pd.DataFrame:
    return _cost_curves(profile_json, store_stamp())


@st.cache_data(show_spinner=False, max_entries=64)
def _cost_curves(profile_json: str, stamp: tuple) -> pd.DataFrame:
    profile = parse_profile(json.loads(profile_json))
    curves = [api_cost_curves(profile, bundled_api_prices()), self_host_cost_curves(profile, load_run=run_loader())]
    return pd.concat(curves, ignore_index=True)


def show_input_error(error: InputError) -> None:
    st.error(f"Please check **{error.field}**: {error.reason}", icon="⚠️")


def show_corpus_note(state: Any) -> None:
    """Say so when the prompt lengths come from a corpus (the Tokens page), so no one takes them for typed ones."""
    if (corpus := corpus_in_use(state)) is not None:
        st.info(corpus_note(corpus), icon=":material/dataset:")


def tornado_bars(profile_json: str, option: str) -> pd.DataFrame:
    """The tornado of one option (an API model id or a self-host setup name) as a table."""
    return _tornado_bars(profile_json, option, store_stamp())


@st.cache_data(show_spinner=False, max_entries=64)
def _tornado_bars(profile_json: str, option: str, stamp: tuple) -> pd.DataFrame:
    profile = parse_profile(json.loads(profile_json))
    names = [spec.name for spec in profile.self_host]
    if option in names:
        index = names.index(option)
        bars = self_host_tornado(profile, resolve_setup(profile, profile.self_host[index], index, run_loader()))
    else:
        prices, _ = price_list(profile, bundled_api_prices())
        bars = api_tornado(profile, find_price(prices, option))
    return pd.DataFrame([bar.__dict__ for bar in bars])


@st.cache_data(show_spinner="Simulating the bill…", max_entries=256)
def bill_band_json(profile_json: str, model_id: str, prompt_samples: tuple[float, ...] | None) -> dict[str, Any]:
    """P10–P99 of the daily and monthly bill (``infercost.band``): this model's own prompt lengths where given, the
    proxy tokenizer's error, the output-length spread and volume from the profile; ``drawn`` says what, in words."""
    profile = parse_profile(json.loads(profile_json))
    prices, _ = price_list(profile, bundled_api_prices())
    distribution = {find_price(prices, model_id).tokenizer: prompt_samples} if prompt_samples else None
    band, inputs = api_band(profile, find_price(prices, model_id), distribution)
    return {**_band_json(band), "lengths": inputs.lengths, "tokenizer": inputs.tokenizer,
            "summary": band_summary(band, (inputs.lengths, inputs.tokenizer))}


def api_row_band(profile_json: str, row: Mapping[str, Any],
                 prompt_distribution: Mapping[str, Sequence[float]] | None) -> dict[str, Any]:  # fmt: skip
    """One API row's band as the Bill band tab draws it: the corpus's lengths as this model's tokenizer counted them."""
    samples, _ = band_prompt_samples(prompt_distribution, row["tokenizer"])
    return bill_band_json(profile_json, row["model"], tuple(samples) if samples is not None else None)


def with_api_bands(result: dict[str, Any], profile_json: str,
                   prompt_distribution: Mapping[str, Sequence[float]] | None) -> dict[str, Any]:  # fmt: skip
    """The estimate with each API row's ``band`` and ``cost_per_month_range`` (its band's P10–P90), drawn as the
    Bill band tab draws it, so every table, sentence and report of a page reads the same range: an API bill is
    uncertain too. Beyond ``MAX_BANDED_API_ROWS`` rows (the CLI's cap) none is drawn and ``band_note`` says so."""
    if len(result["api"]) > MAX_BANDED_API_ROWS:
        return {**result, "band_note": f"{len(result['api'])} API models: bands are simulated for up to "
                                       f"{MAX_BANDED_API_ROWS}; pick fewer models to have theirs"}  # fmt: skip
    rows = []
    for row in result["api"]:
        summary = api_row_band(profile_json, row, prompt_distribution)["summary"]
        rows.append({**row, "band": summary, "cost_per_month_range": [summary["p10"], summary["p90"]]})
    return {**result, "api": rows}


def _band_json(band: Any) -> dict[str, Any]:
    return {"daily": band.daily.__dict__, "monthly": band.monthly.__dict__, "method": band.method,
            "sources": list(band.sources), "monthly_bills": band.monthly_bills.tolist()}  # fmt: skip


def self_host_band_json(profile_json: str, name: str, expected_error_json: str) -> dict[str, Any]:
    """The monthly cost band of one self-host setup of the profile: day-to-day volume and the throughput error."""
    return _self_host_band_json(profile_json, name, expected_error_json, store_stamp())


@st.cache_data(show_spinner="Simulating the self-host cost…", max_entries=64)
def _self_host_band_json(profile_json: str, name: str, expected_error_json: str, stamp: tuple) -> dict[str, Any]:
    profile = parse_profile(json.loads(profile_json))
    index = [spec.name for spec in profile.self_host].index(name)
    return _band_json(self_host_band_of(profile, index, json.loads(expected_error_json), run_loader()))


def throughput_profiles() -> list[ThroughputProfile]:
    """Bundled profiles and this person's stored runs (stored runs first: measured here beats published)."""
    return _throughput_profiles(store_stamp())


@st.cache_data(show_spinner=False, max_entries=4)
def _throughput_profiles(stamp: tuple) -> list[ThroughputProfile]:
    return [*stored_profiles(), *closed_loop_profiles()]


def claim_readings_frame(profile_json: str, spec_json: str, claim_tokens_per_s: float) -> pd.DataFrame:
    """Replicas and monthly cost of one setup as its points say, and if the claim held, read both ways."""
    return _claim_readings_frame(profile_json, spec_json, claim_tokens_per_s, store_stamp())


@st.cache_data(show_spinner=False, max_entries=64)
def _claim_readings_frame(profile_json: str, spec_json: str, claim_tokens_per_s: float, stamp: tuple) -> pd.DataFrame:
    profile = parse_profile(json.loads(profile_json))
    resolved = resolve_setup(profile, SelfHost(**json.loads(spec_json)), 0, run_loader())
    return claim_readings(profile, resolved, claim_tokens_per_s)


@st.cache_data(show_spinner=False)
def open_model_choices() -> list[dict[str, Any]]:
    """The open models the *Same weights* view offers: served by a catalog offer and described by a bundled config."""
    from infercost.same_weights import open_models

    return [model.__dict__ for model in open_models(bundled_api_prices())]


@st.cache_data(show_spinner="Fitting the model on every GPU type and pricing its API offers…", max_entries=32)
def same_weights_json(profile_json: str, model: str, common_json: str) -> dict[str, Any]:
    """The *Same weights* view of one model at the workload: its profile, estimate, offer matches and skipped GPUs
    (no stored runs are read: every setup is predicted, every offer is priced from the catalog)."""
    from infercost.same_weights import same_weights_profile

    view = same_weights_profile(json.loads(profile_json), model, bundled_api_prices(), json.loads(common_json))
    return {"profile_json": json.dumps(view.document, sort_keys=True, default=str),
            "result": estimate(parse_profile(view.document), load_run=run_loader()), "matches": view.matches,
            "skipped": [skip.__dict__ for skip in view.skipped]}  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=32)
def band_curves(profile_json: str) -> pd.DataFrame:
    """Each predicted setup's P10–P90 monthly cost against calls/day (``self_host_band_curves``)."""
    return self_host_band_curves(parse_profile(json.loads(profile_json)), load_run=run_loader())
