"""What a model needs: its parameters, weight and KV-cache bytes, and the GPUs it fits on with how many sequences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from infercost.errors import InputError
from infercost.performance.architecture import DTYPES
from infercost.performance.models import fits_by_gpu
from infercost.ui.cached import model_report_json, model_rows, show_input_error
from infercost.ui.format import data_table

OTHER = "Another model (Hugging Face id or config.json path)"
CHECKPOINT = "the checkpoint's own"

st.title("Models")
st.caption("Parameters, weights and KV cache from each model's own config.json; where it fits on 1, 2, 4 or 8 GPUs "
           "of each datasheet, and how many sequences of that context the memory left holds.")  # fmt: skip

rows = {row["model"]: row for row in model_rows()}
names = [*rows, OTHER]
left, right = st.columns([2, 3])


def label(name: str) -> str:
    return name if name == OTHER else f"{name} · {rows[name]['kind']} · {rows[name]['total_params'] / 1e9:,.1f}B"


picked = left.selectbox("Model", names, index=names.index("gpt-oss-120b"), key="models_model", format_func=label)
other, config_path = "", ""
if picked == OTHER:
    typed = right.text_input("Hugging Face id, config.json or model directory", key="models_other",
                             placeholder="Qwen/Qwen3-4B  or  /models/my-model/config.json").strip()
    is_path = typed.startswith(("/", ".", "~")) or typed.endswith(".json")
    other, config_path = ("", typed) if is_path else (typed, "")
a, b, c = st.columns(3)
dtype = a.selectbox("Weights", [CHECKPOINT, *DTYPES], key="models_dtype")
kv_dtype = b.selectbox("KV cache", [CHECKPOINT, "bfloat16", "float16", "fp8", "float32"], key="models_kv_dtype",
                       help="the checkpoint's own: FP8 beside FP8 weights, else 16-bit")  # fmt: skip
context = int(c.number_input("Context (tokens per sequence)", min_value=1, max_value=10_000_000, value=8192,
                             step=1024, key="models_context"))  # fmt: skip

report = None
if picked == OTHER and not (other or config_path):
    st.info("Type a Hugging Face model id (needs the network) or the path of a config.json or model directory.")
else:
    try:
        report = model_report_json(other if picked == OTHER else picked, config_path,
                                   "" if dtype == CHECKPOINT else dtype, "" if kv_dtype == CHECKPOINT else kv_dtype,
                                   context)  # fmt: skip
    except InputError as error:
        show_input_error(error)


def _count(value: float) -> str:
    """Parameters in B, or T from a trillion on (a metric card cuts off what is wider: Kimi-K2's 1,026.41B)."""
    return f"{value / 1e12:,.2f}T" if value >= 1e12 else f"{value / 1e9:,.2f}B"


def _size(value: float, digits: int = 1) -> str:
    """Bytes in GB, or TB from a terabyte on (GLM-5's 1,487.8 GB in bfloat16 was cut to "1,487.8…")."""
    return f"{value / 1e12:,.2f} TB" if value >= 1e12 else f"{value / 1e9:,.{digits}f} GB"


if report is not None:
    st.subheader(f"{report['model']} · {report['kind']} · {report['attention']} attention")
    m = st.columns(6)
    m[0].metric("Parameters", _count(report["total_params"]))
    m[1].metric("Active per token", _count(report["active_params"]))
    m[2].metric(f"Weights ({report['dtype']})", _size(report["weight_bytes"]))
    m[3].metric("KV per token", f"{report['kv_bytes_per_token'] / 1024:,.1f} KiB",
                help=f"{report['kv_dtype']} keys and values of the full-attention layers: what grows with every "
                     "token")  # fmt: skip
    m[4].metric("KV per sequence", _size(report["kv_bytes_per_sequence"], 3),
                help=f"one sequence of {report['context']:,} tokens in {report['kv_dtype']}: windowed layers capped "
                     "at their window, plus any per-sequence state")  # fmt: skip
    m[5].metric("FLOPs per token", f"{report['flops_per_token'] / 1e9:,.1f} G")
    source = report.get("config_source")
    if source:
        st.caption(f"config.json of {report['hf_id']}, bundled from {source['repo']} · {source['path']}")
    else:
        st.caption(f"config.json from {report['source']}")
    listed = rows.get(report["model"], {})
    tables = listed.get("tables", {})
    stand_ins = [f"{count} {engine} tables of {twin}, a model of the same shapes"
                 for twin, counts in listed.get("twin_tables", {}).items() for engine, count in counts.items()]
    st.markdown("**Throughput predictions** (Compare, Workload and bill): calibrated on "
                + ", ".join([f"{count} bundled {engine} tables" for engine, count in tables.items()] + stand_ins)
                if tables or stand_ins else "**Throughput predictions** (Compare, Workload and bill): no bundled "
                "table of this model, so the engine model's priors for its kind and engine alone, with the error "
                "measured for that: a held-out model family predicted from the others (Methodology).")  # fmt: skip
    st.markdown(f"**Where it fits**: concurrent {report['context']:,}-token sequences (KV cache "
                f"{report['kv_dtype']}) beside the weights, 1 GB runtime per GPU and 90% of the rest for the cache")
    table = pd.DataFrame(fits_by_gpu(report["fits"]))
    if not table.empty:
        table["native"] = table["native"].map({True: "native", False: "emulated"})
        table = table[[c for c in table.columns if c != "native"] + ["native"]]
        for column in table.columns:
            if column.endswith(("GPU", "GPUs")):  # words, not a grey None, where the weights do not fit
                table[column] = table[column].map(lambda v: "does not fit" if pd.isna(v) else f"{int(v):,}")
        data_table(table, hide_index=True, key="models_fits",
                   column_config={"native": st.column_config.TextColumn(f"{report['dtype']} on this GPU")})
        st.caption("Concurrent sequences of that context per GPU count. Emulated: the GPU has no tensor cores for the "
                   "format, so its weights are widened to 16 bits for compute (FP4 before Blackwell).")
    else:
        st.warning("The weights fit on no datasheet GPU at up to 8 GPUs.")
    with st.expander("Parameters by part and the config fields read"):
        parts = pd.DataFrame([{"part": k, "parameters": v} for k, v in report["params_by_part"].items() if v])
        data_table(parts, hide_index=True)
        st.json(report["architecture"], expanded=False)
