"""The price catalog with each price's source and age, and the person's own prices on top."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from infercost.errors import InputError
from infercost.estimate import STALE_PRICE_DAYS
from infercost.files import parse_document
from infercost.pricing import ApiPrice
from infercost.pricing.diff import review_api_upload
from infercost.pricing.lifecycle import lifecycle, lifecycle_note
from infercost.ui.cached import catalog_json, gpu_prices_json, show_input_error
from infercost.ui.format import data_table, id_column

MAX_UPLOAD_BYTES = 20 * 1024 * 1024

st.title("Prices")
st.caption(f"Every price is a fact with a source and a date. Prices older than {STALE_PRICE_DAYS} days are flagged.")
st.session_state.setdefault("price_overrides", [])


def with_age(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame["age_days"] = [(dt.date.today() - dt.date.fromisoformat(day)).days for day in frame["as_of"]]
    frame["stale"] = frame["age_days"] > STALE_PRICE_DAYS
    return frame


def with_lifecycle(frame: pd.DataFrame) -> pd.DataFrame:
    """Each model's lifecycle (current / retiring within 30 days / retired) and, when flagged, its successor."""
    entries = [ApiPrice(**row) for row in catalog_json()]
    frame["lifecycle"] = [lifecycle(entry, today=dt.date.today()) for entry in entries]
    frame["lifecycle_note"] = [lifecycle_note(entry, today=dt.date.today()) for entry in entries]
    return frame


def show_review(review: dict) -> None:
    """The diff an upload would make, shown before it is applied."""
    summary = review["summary"]
    st.markdown(f"**This file would change:** {summary['added']} new models, {summary['removed']} not in the file, "
                f"{summary['flagged']} retired or retiring, {summary['changed']} changed values, "
                f"{summary['deliberate']} values where the catalog differs on purpose (kept).")  # fmt: skip
    if review["changed"]:
        data_table(pd.DataFrame(review["changed"]).astype(str), hide_index=True, key="review_changes")
    if review["added"]:
        st.caption("New: " + ", ".join(review["added"][:50]) + (" …" if len(review["added"]) > 50 else ""))
    if review["skipped"]:
        st.caption(f"{len(review['skipped'])} entries of the file left out, each with its reason:")
        data_table(pd.DataFrame(review["skipped"], columns=["entry: reason"]), hide_index=True, key="review_skipped")


api_tab, gpu_tab, yours_tab = st.tabs(["API models", "GPUs", "Your prices"])
with api_tab:
    api = with_lifecycle(with_age(catalog_json()))
    flagged = api[api["lifecycle"] != "current"]
    if len(flagged):
        # the headline in view and the list a click away: fifteen lines pushed the table off a phone's screen
        st.warning(f"{len(flagged)} models are retired or retire within 30 days; they stay for old scenarios (the "
                   "lifecycle column marks them).", icon="⚠️")  # fmt: skip
        with st.expander(f"The {len(flagged)} models and their successors"):
            st.markdown("\n".join(f"- **{row.id}**: {row.lifecycle_note}" for row in flagged.itertuples()))
    columns = ["id", "provider", "lifecycle", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok",
               "cache_write_per_mtok", "batch_input_per_mtok", "batch_output_per_mtok", "long_context_threshold",
               "deprecation_date", "successor", "tokenizer", "tokenizer_fidelity", "as_of", "age_days", "stale",
               "source"]  # fmt: skip
    links = {"source": st.column_config.LinkColumn(), "id": id_column("id", api["id"])}
    data_table(api[columns], hide_index=True, column_config=links, key="api_prices")
    st.caption(f"{len(api)} models from {api['provider'].nunique()} providers; US$ per 1M tokens.")
with gpu_tab:
    gpu = with_age(gpu_prices_json())
    data_table(gpu[["id", "gpu", "provider", "kind", "price_per_hour", "gpus_per_instance", "as_of", "age_days",
                    "stale", "source"]], hide_index=True,
               column_config={"source": st.column_config.LinkColumn(), "id": id_column("id", gpu["id"])})  # fmt: skip
    st.caption("US$ per GPU-hour; multi-GPU instances divided by their GPU count.")

with yours_tab:
    st.markdown("Your prices replace catalog entries with the same id and add new ones. They join the workload: "
                "saved scenarios, links and a reload keep them.")
    upload = st.file_uploader("Price file (JSON or YAML, catalog schema) or LiteLLM's price map",
                              type=["json", "yaml", "yml"])
    if upload is not None and st.button("Review prices", key="load_prices"):
        try:
            if upload.size > MAX_UPLOAD_BYTES:
                raise InputError(upload.name, f"larger than {MAX_UPLOAD_BYTES // 2**20} MiB")
            document = parse_document(upload.getvalue().decode("utf-8-sig"), name=upload.name)
            catalog = [ApiPrice(**row) for row in catalog_json()]
            entries, diff, skipped = review_api_upload(document, catalog, name=upload.name, today=dt.date.today())
            st.session_state["price_review"] = {
                **diff.to_json(), "skipped": [f"{k}: {v}" for k, v in skipped.items()],
                "entries": [entry.model_dump(mode="json", exclude_none=True) for entry in entries],
            }  # fmt: skip
        except UnicodeDecodeError:
            show_input_error(InputError(upload.name, "not UTF-8 text"))
        except InputError as error:
            show_input_error(error)
    review = st.session_state.get("price_review")
    if review:
        show_review(review)
        if st.button(f"Apply {len(review['entries'])} prices", key="apply_prices", type="primary"):
            applied = {e["id"]: e for e in [*st.session_state["price_overrides"], *review["entries"]]}
            st.session_state["price_overrides"] = list(applied.values())
            st.session_state.pop("price_review")
            st.success(f"Applied {len(review['entries'])} prices to your prices.")
    st.markdown("**Add or change one price** (e.g. a negotiated rate)")
    a, b, c, d = st.columns(4)
    model_id = a.text_input("Model id", key="override_id")
    input_price = b.number_input("Input US$/1M", min_value=0.0, value=1.0, key="override_input")
    output_price = c.number_input("Output US$/1M", min_value=0.0, value=4.0, key="override_output")
    cached_price = d.number_input("Cached input US$/1M (0 = none)", min_value=0.0, value=0.0, key="override_cached")
    if st.button("Save price", key="save_override") and model_id.strip():
        known = any(e["id"] == model_id.strip() for e in catalog_json())  # unset fields keep the catalog's
        entry = {"id": model_id.strip(), "input_per_mtok": input_price, "output_per_mtok": output_price,
                 **({"cached_input_per_mtok": cached_price} if cached_price else {}),
                 **({} if known else {"provider": "custom"}),
                 "source": "entered in the app", "as_of": dt.date.today().isoformat()}  # fmt: skip
        others = [e for e in st.session_state["price_overrides"] if e["id"] != entry["id"]]
        st.session_state["price_overrides"] = [*others, entry]
        if entry["id"] not in st.session_state.get("api_models", []):
            st.session_state["api_models"] = [*st.session_state.get("api_models", []), entry["id"]]
    if st.session_state["price_overrides"]:
        data_table(pd.DataFrame(st.session_state["price_overrides"]), hide_index=True, key="your_prices")
        if st.button("Clear your prices", key="clear_overrides"):
            st.session_state["price_overrides"] = []
            st.rerun()
