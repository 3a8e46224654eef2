"""The workload and its bill: the form, the API bill table and charts, and the self-host panel."""

from __future__ import annotations

import json
import math

import pandas as pd
import plotly.express as px
import streamlit as st

from infercost.compare import break_even_table, options_table, row_flags
from infercost.costmodel.scaling import SCALING_MODES
from infercost.errors import InputError
from infercost.pricing import GpuPrice
from infercost.tokenizers import LANGUAGE_NAMES, LANGUAGES
from infercost.ui.cached import (
    catalog_json,
    cost_curves,
    estimate_leaving_out_setups,
    gpu_prices_json,
    show_corpus_note,
    show_input_error,
    throughput_profiles,
)
from infercost.ui.format import (
    colour_map,
    cost_bars,
    data_table,
    fit_legend,
    id_column,
    options_shown,
    text_width_px,
)
from infercost.ui.setups import (
    DEFAULT_SLO,
    layout_choice,
    layout_label,
    offer_age,
    pick_offer,
    price_is_offers,
    roofline_choice,
    throughput_for_gpu,
)
from infercost.ui.state import PROMPT_IN_CHARACTERS, editor_start, init_state, keep_edited, profile_document

ROOFLINE, OWN_POINTS = "Roofline estimate for a model", "My own measured points"
INCREMENTS = [1, 5, 15, 30, 60, 120, 180, 240, 360, 480, 720, 1440]

catalog = catalog_json()
yours = [entry["id"] for entry in st.session_state.get("price_overrides", [])]
model_ids = list(dict.fromkeys([entry["id"] for entry in catalog] + yours))
init_state(st.session_state, model_ids)

st.title("Workload and bill")
st.caption("Describe what your product sends to a model each day; infercost prices it on every model you pick.")

with st.container(border=True):
    st.subheader("Workload")
    left, middle, right = st.columns(3)
    left.number_input("Calls per day", min_value=1, max_value=10**12, step=1000, key="calls_per_day")
    unit = left.radio("Prompt length in", ["tokens", PROMPT_IN_CHARACTERS], horizontal=True, key="prompt_unit",
                      help="Characters: each model's tokens are counted with its own tokenizer, "
                           "per language.")  # fmt: skip
    if unit == PROMPT_IN_CHARACTERS:
        left.number_input("Prompt characters per call", min_value=0, max_value=10**9, step=500, key="prompt_chars")
        left.selectbox("Language", LANGUAGES, key="language", format_func=lambda code: LANGUAGE_NAMES.get(code, code))
    else:
        left.number_input("Prompt tokens per call", min_value=0, max_value=10**8, step=100, key="prompt_tokens")
    left.number_input("Output tokens per call", min_value=0, max_value=10**8, step=50, key="output_tokens")
    left.number_input("Reasoning tokens per call", min_value=0, max_value=10**8, step=100, key="reasoning_tokens",
                      help="Hidden thinking tokens, billed as output.")  # fmt: skip
    middle.number_input("Retry rate", min_value=0.0, max_value=0.99, step=0.01, key="retry_rate",
                        help="Share of attempts that fail and are retried; every attempt is billed "
                             "in full.")  # fmt: skip
    middle.number_input("Max retries", min_value=0, max_value=100, step=1, key="max_retries")
    middle.number_input("Truncation rate", min_value=0.0, max_value=1.0, step=0.01, key="truncation_rate",
                        help="Share of calls cut off and issued once more, in full.")  # fmt: skip
    middle.number_input("Days per month", min_value=1, max_value=31, step=1, key="days_per_month")
    right.number_input("Cached prompt fraction", min_value=0.0, max_value=1.0, step=0.05, key="cached_prompt_fraction",
                       help="Share of prompt tokens read from the provider's prompt cache.")  # fmt: skip
    right.number_input("Cache write fraction", min_value=0.0, max_value=1.0, step=0.05, key="cache_write_fraction",
                       help="Share of prompt tokens written to the cache (priced at the cache-write "
                            "rate).")  # fmt: skip
    right.toggle("Batch API", key="batch", help="Use batch prices; models without a batch tier are flagged.")
    st.multiselect("Models", model_ids, key="api_models", help="Prices come from the catalog (see Prices).")
    show_corpus_note(st.session_state)

with st.expander(
    "Self-hosted setup: a GPU, its offer and its throughput",
    expanded=bool(st.session_state["self_host"] or st.session_state.get("panel_setup")),
):
    profiles = throughput_profiles()
    offers = [GpuPrice(**g) for g in gpu_prices_json()]
    gpus = list(dict.fromkeys(o.gpu for o in offers))
    a, b, c = st.columns(3)
    gpu = a.selectbox("GPU", gpus, index=gpus.index("H100 SXM") if "H100 SXM" in gpus else 0, key="bill_gpu")
    offer = pick_offer(b, "GPU offer", gpu, key=f"gpu_offer_{gpu}", offers=offers, custom=True,
                       help="Every catalog offer for this GPU, with the date its price was seen")
    price = c.number_input("Price per GPU-hour (US$)", min_value=0.01, max_value=1000.0,
                           value=float(offer.price_per_hour if offer else 2.5),
                           key=f"gpu_price_{gpu}_{offer.id if offer else 'custom'}",
                           help="The offer's price; type your own to replace it")
    if offer is not None and not price_is_offers(price, offer):
        st.caption(f"Your price, ${price:,.2f}/h, replaces the offer's (${offer.price_per_hour:,.2f}/h at "
                   f"{offer.provider}): the bill names no offer.")
        offer = None  # a typed price is not the offer's: the bill must not show the offer as its source
    elif offer is not None:
        st.caption(f"Offer: [{offer.provider} {offer.kind}]({offer.source}) · as of {offer.as_of} "
                   f"({offer_age(offer)})")
    measured_here = throughput_for_gpu(gpu, profiles)
    sources = {f"{p.name} ({p.basis})": p for p in measured_here}
    a, b, c = st.columns(3)
    source = a.selectbox("Throughput on this GPU", [*sources, ROOFLINE, OWN_POINTS], key=f"bill_throughput_{gpu}",
                         help="A profile measured or published on this GPU; else a roofline estimate")
    gpus_per_replica = 1
    if source in sources:
        chosen = sources[source]
        throughput, gpus_per_replica = {"run": chosen.id}, chosen.gpus_per_replica
        st.caption(f"Model: **{chosen.model}** on {chosen.gpus_per_replica}× {gpu} · {chosen.basis} · {chosen.source}")
    elif source == ROOFLINE:
        chosen_model = roofline_choice(b, c, c, st.session_state, "bill_roofline")
        gpus_per_replica = int(b.number_input("GPUs per replica", 1, 64, 1, key="gpus_per_replica"))
        layout = layout_choice(b, chosen_model["model"], gpus_per_replica, st.session_state, "bill_roofline")
        throughput = {"roofline": {**chosen_model, "gpu": gpu, "gpus": gpus_per_replica, **layout}}
        st.caption(f"Model: **{chosen_model['model']}** on {gpus_per_replica}× {gpu} ({chosen_model['dtype']}"
                   f"{layout_label(layout)}) · roofline estimate, not measured")
    else:
        example = next((p for p in profiles if "p95_tpot_ms" in p.points[0] and "H100" in p.hardware), profiles[0])
        gpus_per_replica = int(b.number_input("GPUs per replica", 1, 1024, int(example.gpus_per_replica or 1),
                                              key="own_points_gpus", help="the GPUs that served the points below"))
        st.caption(f"Operating points of one replica: requests/s, output tokens/s and latencies at each concurrency. "
                   f"Prefilled with *{example.name}* ({example.basis}, not measured here); "
                   "replace them with yours.")  # fmt: skip
        columns = ["concurrency", "request_throughput", "output_throughput", "mean_ttft_ms", "mean_tpot_ms",
                   "p95_ttft_ms", "p95_tpot_ms"]  # fmt: skip
        prefilled = pd.DataFrame(example.points).reindex(columns=columns)
        points = st.data_editor(editor_start(st.session_state, "points_editor", prefilled), num_rows="dynamic",
                                key="points_editor")  # fmt: skip
        keep_edited(st.session_state, "points_editor", points)
        m_in, m_out = st.columns(2)
        throughput = {"points": points.dropna(how="all").to_dict("records"),
                      "input_len": m_in.number_input("Measured at input tokens", 1, 10**7,
                                                     int(example.input_len or 1000), key="measured_in"),
                      "output_len": m_out.number_input("Measured at output tokens", 1, 10**7,
                                                       int(example.output_len or 200), key="measured_out")}  # fmt: skip
    a, b, c, d = st.columns(4)
    slo_ttft = a.number_input("SLO p95 TTFT (ms)", min_value=1.0, value=DEFAULT_SLO["p95_ttft_ms"],
                              key="slo_p95_ttft_ms")  # fmt: skip
    slo_tpot = b.number_input("SLO p95 TPOT (ms)", min_value=1.0, value=DEFAULT_SLO["p95_tpot_ms"],
                              key="slo_p95_tpot_ms")  # fmt: skip
    peak = c.number_input("Peak / average", min_value=1.0, max_value=23.9, value=2.0, key="peak_to_average")
    mode = d.selectbox("Scaling", list(SCALING_MODES), key="self_host_mode")
    scaling = {}
    if mode != "always_on":
        e, f, g, h, k = st.columns(5)
        scaling = {
            "max_replicas": int(k.number_input("Max replicas (0: none)", 0, 100_000, 0, key="max_replicas")) or None,
            "cold_start_minutes": e.number_input("Cold start (min)", 0.0, 1440.0, 10.0, key="cold_start_minutes"),
            "billing_increment_minutes": f.selectbox("Billing increment (min)", INCREMENTS, index=INCREMENTS.index(60),
                                                     key="billing_increment_minutes"),
            "min_replicas": int(g.number_input("Min replicas", 0, 100_000, 1, key="min_replicas")),
            "deadline_hours": h.number_input("Batch deadline (h)", 0.5, 24.0, 24.0, key="deadline_hours"),
        }  # fmt: skip
    if st.toggle("Include this setup in the bill", key="self_host_on"):
        name = throughput.get("roofline", {}).get("model") or (sources[source].model.split("/")[-1]
                                                               if source in sources else "my points")  # fmt: skip
        st.session_state["panel_setup"] = {
            "name": f"{name} · {gpus_per_replica}× {gpu}", "gpu": gpu, "gpu_price_per_hour": price,
            "gpus_per_replica": gpus_per_replica, "throughput": throughput,
            "slo": {"p95_ttft_ms": slo_ttft, "p95_tpot_ms": slo_tpot}, "peak_to_average": peak, "mode": mode,
            **scaling, **({"gpu_offer": offer.id} if offer else {}),
        }  # fmt: skip
    else:
        st.session_state["panel_setup"] = None
    loaded = st.session_state["self_host"]
    if loaded:
        st.caption("Also in the bill, added on *Compare* or from a scenario or a shared link: "
                   + ", ".join(s["name"] for s in loaded))
        if st.button("Remove those setups", key="clear_loaded_setups"):
            st.session_state["self_host"] = []
            st.rerun()

profile_json = json.dumps(profile_document(st.session_state), sort_keys=True, default=str)
try:
    result, profile_json, left_out = estimate_leaving_out_setups(profile_json)
except InputError as error:
    show_input_error(error)
    st.stop()
if left_out is not None:  # the API bill still shows; the curves below see the profile without the setups
    st.warning(f"The self-hosted setups cannot be estimated, so they are left out: {left_out.field}: "
               f"{left_out.reason}", icon="⚠️")

api = pd.DataFrame(result["api"])
self_host = pd.DataFrame(result["self_host"])
if api.empty and self_host.empty:
    st.info("Pick at least one model, or include a self-hosted setup.")
    st.stop()

st.subheader("The bill")
if not api.empty:
    cheapest = api.loc[api["cost_per_month"].idxmin()]
    m1, m2, m3 = st.columns(3)
    m1.metric("Cheapest API per month", f"${cheapest['cost_per_month']:,.0f}")
    m1.caption(f"{cheapest['model']} · ${cheapest['cost_per_million_tokens']:.3f} per 1M tokens")
    m2.metric("Input tokens per day", f"{cheapest['input_tokens_per_day']:,.0f}")
    m3.metric("Output tokens per day", f"{cheapest['output_tokens_per_day']:,.0f}")
    api["flags"] = [row_flags(row) for row in result["api"]]  # a missing batch tier or an overflow shows on its row
    shown = api[["model", "cost_per_day", "cost_per_month", "cost_per_call", "cost_per_million_tokens", "flags",
                 "provider", "tokenizer", "fidelity", "prompt_tokens", "price_as_of", "price_source"]]  # fmt: skip
    data_table(
        shown.sort_values("cost_per_month"),
        hide_index=True,
        column_config={
            "cost_per_day": st.column_config.NumberColumn("US$/day", format="dollar"),
            "cost_per_month": st.column_config.NumberColumn("US$/month", format="dollar"),
            "cost_per_call": st.column_config.NumberColumn("US$/call", format="$%.6f"),
            "cost_per_million_tokens": st.column_config.NumberColumn("US$/1M tokens", format="$%.3f"),
            "price_source": st.column_config.LinkColumn("source"),
            "flags": st.column_config.TextColumn("⚠ check"),
            "model": id_column("model", shown["model"]),
        },
        key="bill_table",
    )
if not self_host.empty:
    st.markdown("**Self-hosted**")
    table = options_table({"profile": result["profile"], "api": [], "self_host": result["self_host"]})
    table["gpu_hours_per_day"] = table["option"].map(self_host.set_index("name")["gpu_hours_per_day"])
    shown = options_shown(table)  # a setup that meets no SLO reads "SLO not met", never a grey "None"
    by_cost = api.sort_values("cost_per_month")["model"].tolist() if "cost_per_month" in api else []  # no API: none
    if by_cost and st.session_state.get("bill_break_even_api") not in by_cost:
        st.session_state["bill_break_even_api"] = by_cost[0]  # the cheapest, until the person picks another
    against = st.selectbox("Break-even against the API", by_cost, key="bill_break_even_api",
                           help="The calls/day at which this setup costs no more than the API picked (cheapest "
                                "first)") if by_cost else None  # fmt: skip
    if against:
        words = break_even_table(result).query("api_model == @against").set_index("self_host")["break_even"]
        shown[f"vs {against}"] = [words.get(option, "–") for option in shown["option"]]  # none without a cost
    order = ["option", "cost_per_month", "range", "basis", "cost_per_million_tokens", "replicas", "gpu_hours_per_day",
             *([f"vs {against}"] if against else []), "flags", "gpu_offer"]  # fmt: skip
    data_table(shown, hide_index=True, key="self_host_table", column_order=order, column_config={
        "cost_per_month": st.column_config.TextColumn("US$/month", alignment="right",
                                                      width=text_width_px(shown["cost_per_month"])),
        "range": st.column_config.TextColumn("P10–P90", width=text_width_px(shown["range"]),
                                             help="The cost if the prediction erred as its measured p10 and p90"),
        "basis": st.column_config.TextColumn("basis", width="medium"),
        "cost_per_million_tokens": st.column_config.TextColumn("US$/1M tok", alignment="right"),
        "replicas": st.column_config.TextColumn("replicas", alignment="right"),
        "gpu_hours_per_day": st.column_config.TextColumn("GPU-hours/day", alignment="right"),
        "flags": st.column_config.TextColumn("⚠ check"),
        "gpu_offer": st.column_config.TextColumn("GPU offer"),
    })  # fmt: skip
    hourly = pd.DataFrame([{"hour": hour, "replicas": count, "setup": row["name"]} for row in result["self_host"]
                           for hour, count in enumerate(row["replicas_per_hour"])])  # fmt: skip
    if any(row["mode"] != "always_on" for row in result["self_host"]):
        figure = px.bar(hourly, x="hour", y="replicas", color="setup", barmode="group",
                        labels={"hour": "hour of day", "replicas": "replicas running"})  # fmt: skip
        st.plotly_chart(figure, key="replicas_by_hour")
notes = [
    f"{row.get('model') or row.get('name')}: {w}"
    for row in result["api"] + result["self_host"]
    for w in row["warnings"]
]
if notes:
    with st.expander(f"Notes ({len(notes)})"):
        st.markdown("\n".join(f"- {note}" for note in notes))

by_model, by_volume = st.tabs(["Cost per month by option", "Cost against calls per day"], key="bill_tab",
                              on_change="rerun")  # only the open tab runs: nothing off screen is computed or drawn
with by_model:
    if by_model.open:
        # every priced option with its P10–P90 and basis (for the tooltip); an API-less bill has only setups
        bars = options_table(result).dropna(subset=["cost_per_month"])[["option", "cost_per_month", "range", "basis"]]
        st.altair_chart(cost_bars(bars), key="cost_by_model")
with by_volume:
    if by_volume.open:
        curves = cost_curves(profile_json)
        figure = px.line(curves, x="calls_per_day", y="cost_per_month", color="option", log_x=True, log_y=True,
                         color_discrete_map=colour_map(curves["option"]),
                         labels={"calls_per_day": "calls per day", "cost_per_month": "US$ per month"})  # fmt: skip
        fit_legend(figure, curves["option"].nunique())
        figure.add_vline(x=st.session_state["calls_per_day"], line_dash="dot")  # plotly misplaces its text on log axes
        figure.add_annotation(x=math.log10(st.session_state["calls_per_day"]), y=0.02, yref="paper", text="today",
                              showarrow=False, xanchor="left")
        st.plotly_chart(figure, key="cost_by_volume")
