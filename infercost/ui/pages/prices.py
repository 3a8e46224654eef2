"""The price catalog with each price's source and age, and the person's own prices on top."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from infercost.errors import InputError
from infercost.files import parse_document
from infercost.pricing import ApiPrice, validate_entries
from infercost.pricing.litellm import import_litellm
from infercost.ui.cached import catalog_json, gpu_prices_json, show_input_error

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
STALE_AFTER_DAYS = 90

st.title("Prices")
st.caption(f"Every price is a fact with a source and a date. Prices older than {STALE_AFTER_DAYS} days are flagged.")
st.session_state.setdefault("price_overrides", [])


def with_age(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame["age_days"] = [(dt.date.today() - dt.date.fromisoformat(day)).days for day in frame["as_of"]]
    frame["stale"] = frame["age_days"] > STALE_AFTER_DAYS
    return frame


api_tab, gpu_tab, yours_tab = st.tabs(["API models", "GPUs", "Your prices"])
with api_tab:
    api = with_age(catalog_json())
    columns = ["id", "provider", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok",
               "batch_input_per_mtok", "batch_output_per_mtok", "long_context_threshold", "tokenizer",
               "tokenizer_fidelity", "as_of", "age_days", "stale", "source"]  # fmt: skip
    st.dataframe(api[columns], hide_index=True, column_config={"source": st.column_config.LinkColumn()}, key="api_prices")
    st.caption(f"{len(api)} models from {api['provider'].nunique()} providers; US$ per 1M tokens.")
with gpu_tab:
    gpu = with_age(gpu_prices_json())
    st.dataframe(gpu[["id", "gpu", "provider", "kind", "price_per_hour", "gpus_per_instance", "as_of", "age_days",
                      "stale", "source"]], hide_index=True, column_config={"source": st.column_config.LinkColumn()})  # fmt: skip
    st.caption("US$ per GPU-hour; multi-GPU instances divided by their GPU count.")

with yours_tab:
    st.markdown("Your prices replace catalog entries with the same id and add new ones. They stay in this session.")
    upload = st.file_uploader("Price file (JSON or YAML, catalog schema) or LiteLLM's price map", type=["json", "yaml", "yml"])
    if upload is not None and st.button("Load prices", key="load_prices"):
        try:
            if upload.size > MAX_UPLOAD_BYTES:
                raise InputError(upload.name, f"larger than {MAX_UPLOAD_BYTES // 2**20} MiB")
            text = upload.getvalue().decode("utf-8-sig")
            document = parse_document(text, name=upload.name)
            if isinstance(document, dict) and "entries" not in document:  # LiteLLM's map: model name -> prices
                with tempfile.TemporaryDirectory() as folder:
                    path = Path(folder) / "litellm.json"
                    path.write_text(text, encoding="utf-8")
                    imported = import_litellm(path, as_of=dt.date.today())
                entries, skipped = imported.entries, len(imported.skipped)
            else:
                entries, skipped = validate_entries(document, ApiPrice, name=upload.name), 0
            st.session_state["price_overrides"] = [entry.model_dump(mode="json") for entry in entries]
            st.success(f"Loaded {len(entries)} prices" + (f" ({skipped} entries without prices skipped)" if skipped else ""))
        except UnicodeDecodeError:
            show_input_error(InputError(upload.name, "not UTF-8 text"))
        except InputError as error:
            show_input_error(error)
    st.markdown("**Add or change one price** (e.g. a negotiated rate)")
    a, b, c, d = st.columns(4)
    model_id = a.text_input("Model id", key="override_id")
    input_price = b.number_input("Input US$/1M", min_value=0.0, value=1.0, key="override_input")
    output_price = c.number_input("Output US$/1M", min_value=0.0, value=4.0, key="override_output")
    cached_price = d.number_input("Cached input US$/1M (0 = none)", min_value=0.0, value=0.0, key="override_cached")
    if st.button("Save price", key="save_override") and model_id.strip():
        entry = {"id": model_id.strip(), "provider": "custom", "input_per_mtok": input_price,
                 "output_per_mtok": output_price, "cached_input_per_mtok": cached_price or None,
                 "source": "entered in the app", "as_of": dt.date.today().isoformat()}  # fmt: skip
        others = [e for e in st.session_state["price_overrides"] if e["id"] != entry["id"]]
        st.session_state["price_overrides"] = [*others, entry]
        if entry["id"] not in st.session_state.get("api_models", []):
            st.session_state["api_models"] = [*st.session_state.get("api_models", []), entry["id"]]
    if st.session_state["price_overrides"]:
        st.dataframe(pd.DataFrame(st.session_state["price_overrides"]), hide_index=True, key="your_prices")
        if st.button("Clear your prices", key="clear_overrides"):
            st.session_state["price_overrides"] = []
            st.rerun()
