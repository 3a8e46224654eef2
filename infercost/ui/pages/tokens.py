"""Tokens: count a prompt with each model's tokenizer, see why languages cost what they cost, and measure a corpus."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st

from infercost.errors import InputError
from infercost.tokenizers import (
    LANGUAGE_NAMES,
    corpus_fields,
    corpus_stats,
    get_tokenizer,
    language_table,
    list_tokenizers,
    offline_ids,
)
from infercost.tokenizers.chat import prompt_like_first, roles_in_jsonl
from infercost.ui.cached import catalog_json
from infercost.ui.format import LEGEND_COLUMNS, colour_map, data_table, show_table

UPLOAD_TYPES = ["txt", "jsonl", "ndjson", "json", "csv", "tsv", "parquet"]
NO_FIELD = "(none)"


@st.cache_resource(show_spinner="Loading tokenizer…")
def tokenizer(tokenizer_id: str):
    return get_tokenizer(tokenizer_id)


@st.cache_data(show_spinner="Counting the language samples…")
def languages_frame() -> pd.DataFrame:
    return language_table()


@st.cache_data(show_spinner=False, max_entries=256)
def prompt_counts(text: str, tokenizer_ids: tuple[str, ...]) -> pd.DataFrame:
    rows = [{"tokenizer": tid, "fidelity": tokenizer(tid).info.fidelity, "tokens": tokenizer(tid).count(text),
             "chars": len(text), "tokens_per_char": tokenizer(tid).count(text) / max(1, len(text))}
            for tid in tokenizer_ids]
    return pd.DataFrame(rows)


def show_error(error: InputError) -> None:
    st.error(f"Please check **{error.field}**: {error.reason}", icon="⚠️")


def per_model_frame(stats: dict) -> pd.DataFrame:
    """The corpus as each priced model sees it: the model's tokenizer (exact or proxy) and its distribution."""
    return pd.DataFrame([
        {"model": entry["id"], "provider": entry["provider"], "tokenizer": entry["tokenizer"],
         "fidelity": entry["tokenizer_fidelity"], "note": entry.get("tokenizer_note", ""),
         "mean_prompt_tokens": float(np.mean(stats[entry["tokenizer"]].counts)),
         "p95_prompt_tokens": float(np.percentile(stats[entry["tokenizer"]].counts, 95))}
        for entry in catalog_json() if entry["tokenizer"] in stats
    ])  # fmt: skip


def histogram_frame(stats: dict) -> pd.DataFrame:
    rows = []
    for tid, token_stats in stats.items():
        histogram = token_stats.summary()["histogram"]
        edges = histogram["edges"]
        rows += [{"tokenizer": tid, "tokens": (lo + hi) / 2, "records": n}
                 for lo, hi, n in zip(edges[:-1], edges[1:], histogram["counts"], strict=True)]
    return pd.DataFrame(rows)


def language_chart(table: pd.DataFrame, measure: str):
    """Grouped bars per language, one colour per tokenizer (Vega-Lite: no Plotly to load for the page's first chart)."""
    import altair as alt

    shown = table.dropna(subset=[measure])
    colours = colour_map(shown["tokenizer"])
    bars = alt.Chart(shown).mark_bar().encode(
        x=alt.X("language_name", title=None, sort=list(LANGUAGE_NAMES.values()),
                axis=alt.Axis(labelAngle=-40, labelLimit=200, labelOverlap=False)), xOffset="tokenizer",
        y=alt.Y(measure, title=measure.replace("_", " ")),
        color=alt.Color("tokenizer", scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                        legend=alt.Legend(orient="bottom", title=None, columns=alt.ExprRef(LEGEND_COLUMNS))),
        tooltip=["language_name", "tokenizer", alt.Tooltip(measure, format=".2f")],
    )  # fmt: skip
    if measure != "tokens_per_char":
        return bars
    rule = alt.Chart(pd.DataFrame({measure: [0.25]})).mark_rule(strokeDash=[4, 4]).encode(y=measure)
    return bars + rule  # the "4 characters per token" rule of thumb


def chosen_tokenizers(key: str) -> list[str]:
    extra = st.session_state.get("extra_tokenizer", "").strip()
    ids = list(st.session_state.get(key) or [])
    return ids + [extra] if extra and extra not in ids else ids


def priced_tokenizers() -> list[str]:
    """The tokenizers of the models the workload prices, so a corpus carried into it has each model's own count."""
    models = set(st.session_state.get("api_models") or [])
    entries = [*catalog_json(), *st.session_state.get("price_overrides", [])]
    return list(dict.fromkeys(e["tokenizer"] for e in entries if e["id"] in models and e.get("tokenizer")))


def carry_into_workload(results: dict, use: str) -> None:
    """The corpus becomes the workload's prompt: every counted tokenizer's mean, shown for ``use``; lengths kept."""
    prompt = results["prompt"]
    means = {tid: float(np.mean(s.counts)) for tid, s in prompt.stats.items()}
    st.session_state["prompt_unit"] = "tokens"
    st.session_state["prompt_tokens"] = int(round(means[use]))
    if "output" in results:
        st.session_state["output_tokens"] = int(round(float(np.mean(results["output"].stats[use].counts))))
    st.session_state["prompt_distribution"] = {tid: s.counts for tid, s in prompt.stats.items()}
    st.session_state["corpus"] = {"file": Path(str(prompt.file)).name, "records": prompt.records,
                                  "field": prompt.field or "each line", "tokenizer": use,
                                  "prompt_tokens": st.session_state["prompt_tokens"],
                                  "prompt_tokens_by_tokenizer": means}  # fmt: skip


st.title("Tokens")
st.caption("A token is not a character: each model counts with its own tokenizer, and languages differ a lot. "
           "Counts here are the libraries' own (tiktoken, tokenizers, mistral-common), offline.")

with st.expander("Tokenizers", expanded=False):
    data_table(pd.DataFrame([dataclasses.asdict(i) for i in list_tokenizers()]), hide_index=True)
    st.text_input("Another tokenizer (Hugging Face repo id, local directory or tiktoken encoding)",
                  key="extra_tokenizer",
                  help="Loaded from the local cache, or the Hub when it is reachable; offline you get a clear message.")

# --- a prompt ---------------------------------------------------------------------------------------------------
st.subheader("Count a prompt")
st.multiselect("Tokenizers", offline_ids(), default=offline_ids(), key="tokenizer_ids")
text = st.text_area("Prompt text", key="prompt_text", height=150,
                    placeholder="Paste a prompt in any language; counted exactly as user content (no BOS/EOS).")
if text:
    try:
        counts = prompt_counts(text, tuple(chosen_tokenizers("tokenizer_ids")))
    except InputError as error:
        show_error(error)
    else:
        data_table(counts, hide_index=True, key="prompt_counts")

# --- languages --------------------------------------------------------------------------------------------------
st.subheader("Languages")
st.caption("The same three paragraphs written in each language (and Python source of similar length). "
           "`multiplier_vs_english` = tokens for the same passage / tokens in English: what the same message costs.")
table = languages_frame()
measure = st.radio("Show", ["multiplier_vs_english", "tokens_per_char"], horizontal=True, key="language_measure")
wide = table.pivot(index="language_name", columns="tokenizer", values=measure).reindex(
    [LANGUAGE_NAMES[code] for code in LANGUAGE_NAMES])
data_table(wide.style.format("{:.2f}", na_rep="–"), key="language_table")
st.altair_chart(language_chart(table, measure), key="language_chart")

# --- a corpus ---------------------------------------------------------------------------------------------------
st.subheader("Corpus statistics")
max_upload_mb = st.get_option("server.maxUploadSize")
where = st.radio("Corpus from", ["Upload", "Path on this machine"], horizontal=True, key="corpus_source",
                 help=f"Uploads are limited to {max_upload_mb} MB (server.maxUploadSize); point at a path for bigger "
                      "files: they are streamed in flat memory.")  # fmt: skip
if where == "Upload":
    source = st.file_uploader("TXT (one prompt per line), JSONL, CSV or Parquet", type=UPLOAD_TYPES,
                              key="corpus_upload")
else:
    path_text = st.text_input("Path", key="corpus_path", placeholder="/data/prompts.jsonl").strip()
    source = Path(path_text).expanduser() if path_text else None


def reset(source) -> None:
    if source is not None and hasattr(source, "seek"):
        source.seek(0)


def chat_roles_of(source, field: str) -> list[str]:
    """Which roles a chat-format field holds (from the first records), to say what the count includes."""
    if field == NO_FIELD or not str(getattr(source, "name", source)).lower().endswith((".jsonl", ".ndjson", ".json")):
        return []
    reset(source)
    try:
        if hasattr(source, "read"):
            return roles_in_jsonl(source, field)
        with open(source, "rb") as stream:
            return roles_in_jsonl(stream, field)
    except OSError:
        return []
    finally:
        reset(source)


if source is not None:
    try:
        reset(source)
        fields = corpus_fields(source)
    except InputError as error:
        show_error(error)
        st.stop()
    fields = prompt_like_first(fields)  # `messages`, `prompt`, `input`... before an id or a label
    a, b = st.columns(2)
    field = a.selectbox("Prompt field", fields or [NO_FIELD], key="corpus_field",
                        help="TXT files have no fields: each line is a prompt. Chat-format `messages` lists count "
                             "their messages' contents.")  # fmt: skip
    output_field = b.selectbox("Output field (optional)", [NO_FIELD, *fields], key="corpus_output_field")
    st.multiselect("Tokenizers", offline_ids(), default=offline_ids()[:3], key="corpus_tokenizers")
    if st.button("Count the corpus", key="count_corpus", type="primary"):
        bar = st.progress(0.0, text="Counting…")
        try:
            results = {}
            for role, name in (("prompt", field), ("output", output_field)):
                if role == "output" and name == NO_FIELD:
                    continue
                reset(source)
                counted = list(dict.fromkeys([*chosen_tokenizers("corpus_tokenizers"), *priced_tokenizers()]))
                results[role] = corpus_stats(source, field=None if name == NO_FIELD else name,
                                             tokenizer_ids=counted,
                                             progress=lambda f, role=role: bar.progress(f, text=f"Counting {role}s…"))
            st.session_state["corpus_result"] = results
            st.session_state["corpus_roles"] = chat_roles_of(source, field)
        except InputError as error:
            show_error(error)
        bar.empty()

results = st.session_state.get("corpus_result")
if results:
    prompt = results["prompt"]
    st.caption(f"{prompt.file}: {prompt.records:,} records, {prompt.chars:,} characters; "
               f"{prompt.skipped_count:,} skipped.")
    if roles := st.session_state.get("corpus_roles"):
        st.caption(f"Chat format: each record counts its messages' contents joined (roles {', '.join(roles)}); "
                   "a model's chat template adds a few tokens per message on top.")
    summary = pd.DataFrame([{"role": role, **{k: v for k, v in s.summary().items() if k != "histogram"}}
                            for role, stats in results.items() for s in stats.stats.values()])
    show_table(summary, hide_index=True, key="corpus_summary")
    per_model = per_model_frame(prompt.stats)
    if not per_model.empty:
        with st.expander(f"Per priced model ({len(per_model)} models use the tokenizers counted)"):
            show_table(per_model, hide_index=True)
    histogram = px.bar(histogram_frame(prompt.stats), x="tokens", y="records", color="tokenizer", barmode="overlay",
                       color_discrete_map=colour_map(prompt.stats),
                       opacity=0.6, labels={"tokens": "prompt tokens per record"})
    st.plotly_chart(histogram, key="corpus_histogram")
    if prompt.skipped:
        with st.expander(f"Skipped records ({prompt.skipped_count:,})"):
            data_table(pd.DataFrame([dataclasses.asdict(s) for s in prompt.skipped]), hide_index=True)
    use = st.selectbox("Tokenizer for the workload", list(prompt.stats), key="distribution_tokenizer")
    if st.button("Use this distribution in the workload", key="use_distribution"):
        carry_into_workload(results, use)
        st.success(f"The workload's prompts are now this corpus: each model is billed on its own tokenizer's mean "
                   f"({st.session_state['prompt_tokens']:,} tokens with {use}), and the bill band draws from the "
                   "lengths its tokenizer counted.")
