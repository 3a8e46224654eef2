"""API against self-hosting for one workload: the table, the break-even, what moves the answer, claims and the band."""

from __future__ import annotations

import json

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from infercost.performance.architectures import ARCHITECTURES
from infercost.compare import claim_check, options_table
from infercost.costmodel.owned import OwnedHardware
from infercost.errors import InputError
from infercost.pricing import bundled_gpu_specs
from infercost.profile import unique_name
from infercost.ui.cached import (
    bill_band_json,
    break_evens,
    catalog_json,
    claim_costs,
    cost_curves,
    estimate_json,
    show_input_error,
    throughput_profiles,
    tornado_bars,
)
from infercost.ui.setups import DEFAULT_SLO, default_setups, owned_price, rented_price, setup_spec
from infercost.ui.state import init_state, profile_document

init_state(st.session_state, [entry["id"] for entry in catalog_json()])
profiles = throughput_profiles()
specs = {spec.gpu: spec for spec in bundled_gpu_specs()}
s = st.session_state

st.title("Compare APIs and self-hosting")
st.caption(
    f"Workload: {s['calls_per_day']:,} calls/day · {s['prompt_tokens']:,} prompt + {s['output_tokens']:,} output tokens "
    f"· retry rate {s['retry_rate']:.0%} — change it on *Workload and bill*."
)

with st.expander("Self-host settings", expanded=False):
    a, b, c, d = st.columns(4)
    slo = {"p95_ttft_ms": a.number_input("SLO p95 TTFT (ms)", 1.0, 1e6, DEFAULT_SLO["p95_ttft_ms"], key="cmp_ttft"),
           "p95_tpot_ms": b.number_input("SLO p95 TPOT (ms)", 1.0, 1e5, DEFAULT_SLO["p95_tpot_ms"], key="cmp_tpot")}  # fmt: skip
    common = {"slo": slo, "mode": "always_on",
              "peak_to_average": c.number_input("Peak / average", 1.0, 100.0, 2.0, key="cmp_peak"),
              "target_utilization": d.number_input("Target utilization", 0.05, 1.0, 0.8, key="cmp_util")}  # fmt: skip
    with_elastic = st.toggle("Also show each setup autoscaled (elastic)", value=False, key="cmp_elastic")
s.setdefault("compare_setups", default_setups([p for p in profiles if p.basis != "measured" or p.run_id is None], {}))

with st.expander("Add a self-host setup (rented or owned)"):
    source = st.radio("Throughput from", ["Roofline estimate", "Measured or published profile"], horizontal=True,
                      key="cmp_source")  # fmt: skip
    left, right = st.columns(2)
    if source == "Roofline estimate":
        model = left.selectbox(
            "Model", list(ARCHITECTURES), index=list(ARCHITECTURES).index("llama-3.1-8b"), key="cmp_model"
        )
        gpu = right.selectbox("GPU", list(specs), key="cmp_gpu")
        dtype = left.selectbox("Weights", ["bfloat16", "fp8", "int4"], key="cmp_dtype")
        gpus = right.number_input("GPUs per replica", 1, 64, 1, key="cmp_gpus")
        throughput = {"roofline": {"model": model, "gpu": gpu, "dtype": dtype, "gpus": int(gpus)}}
        label = f"{model} · {gpus}× {gpu} ({dtype}, roofline)"
    else:
        by_id = {p.id: p for p in profiles}
        chosen = left.selectbox("Profile", list(by_id), format_func=lambda i: by_id[i].name, key="cmp_profile")
        gpu, gpus = by_id[chosen].hardware, by_id[chosen].gpus_per_replica
        throughput, label = {"run": chosen}, f"{by_id[chosen].name} ({by_id[chosen].basis})"
    ownership = st.radio("GPUs", ["Rented", "Owned"], horizontal=True, key="cmp_ownership")
    if ownership == "Rented":
        default_price, note = rented_price(gpu)
        price = st.number_input(
            "US$ per GPU-hour", 0.01, 1000.0, float(default_price), key=f"cmp_rent_{gpu}", help=note
        )
    else:
        spec = specs.get(gpu)
        o1, o2, o3 = st.columns(3)
        hardware = OwnedHardware(
            purchase_price_usd=o1.number_input("Purchase price per GPU (US$)", 0.0, 1e7,
                                               float((spec.purchase_price_usd if spec else None) or 30_000), key="cmp_buy"),
            amortization_years=o2.number_input("Amortized over (years)", 0.5, 10.0, 3.0, key="cmp_years"),
            power_watts=o3.number_input("Power per GPU (W, board power)", 0.0, 5000.0,
                                        float(spec.board_power_w if spec else 700), key=f"cmp_watts_{gpu}"),
            pue=o1.number_input("PUE", 1.0, 3.0, 1.3, key="cmp_pue"),
            electricity_usd_per_kwh=o2.number_input("Electricity (US$/kWh)", 0.0, 2.0, 0.12, key="cmp_kwh"),
            hosting_usd_per_month=o3.number_input("Hosting per GPU (US$/month)", 0.0, 1e5, 150.0, key="cmp_hosting"),
        )  # fmt: skip
        price, note = owned_price(hardware)
        st.caption(f"{note} = **${price:.2f} per GPU-hour**")
        label += " · owned"
    if st.button("Add setup", key="cmp_add"):
        label = unique_name(label, [setup["name"] for setup in s["compare_setups"]])
        s["compare_setups"] = [*s["compare_setups"], setup_spec(label, throughput, price, {})]

names = [setup["name"] for setup in s["compare_setups"]]
kept = st.multiselect("Self-host setups", names, default=names, key=f"cmp_kept_{len(names)}")
setups = [{**setup, **common} for setup in s["compare_setups"] if setup["name"] in kept]
if with_elastic:
    setups += [{**setup, "name": f"{setup['name']} · elastic", "mode": "elastic"} for setup in setups]

document = profile_document(s) | {"self_host": setups}
profile_json = json.dumps(document, sort_keys=True, default=str)
try:
    result = estimate_json(profile_json)
except InputError as error:
    show_input_error(error)
    st.stop()
table = options_table(result)

st.subheader("Every option, one table")
priced = table.dropna(subset=["cost_per_month"])
if not priced.empty:
    best = priced.iloc[0]
    st.metric("Cheapest option per month", f"${best['cost_per_month']:,.0f}")
    st.caption(f"{best['option']} ({best['kind']}, basis: {best['basis']})")
st.dataframe(table, hide_index=True, key="options_table", column_config={
    "cost_per_month": st.column_config.NumberColumn("US$/month", format="$%.0f"),
    "cost_per_call": st.column_config.NumberColumn("US$/call", format="$%.6f"),
    "cost_per_million_tokens": st.column_config.NumberColumn("US$/1M tokens", format="$%.3f"),
})  # fmt: skip
infeasible = [r["name"] for r in result["self_host"] if not r["meets_slo"]]
if infeasible:
    st.warning(f"No measured point meets the SLO for: {', '.join(infeasible)} (no cost shown).")
with st.expander("Basis and notes of every self-host figure"):
    for row in result["self_host"]:
        note = row["basis_note"] or row["throughput_source"] or ""
        st.markdown(f"- **{row['name']}**: {row['basis']}{' · ' + note if note else ''}"
                    + "".join(f"\n  - {w}" for w in row["warnings"]))  # fmt: skip

bars, volume, movers, claims, band = st.tabs(
    [
        "Cost per month",
        "Against volume (break-even)",
        "What moves the answer",
        "Check a speed claim",
        "Bill band (P50–P99)",
    ]
)
with bars:
    st.plotly_chart(px.bar(priced, x="cost_per_month", y="option", color="kind", orientation="h",
                           labels={"cost_per_month": "US$ per month", "option": ""}), key="cmp_bars")  # fmt: skip
with volume:
    curves = cost_curves(profile_json)
    figure = px.line(curves, x="calls_per_day", y="cost_per_month", color="option", log_x=True, log_y=True,
                     labels={"calls_per_day": "calls per day", "cost_per_month": "US$ per month"})  # fmt: skip
    figure.add_vline(x=s["calls_per_day"], line_dash="dot", annotation_text="today")
    evens = break_evens(profile_json)
    for row in evens.dropna().itertuples():
        if row.api_model == (
            table[table["kind"] == "API"]["option"].iloc[0] if (table["kind"] == "API").any() else None
        ):
            figure.add_vline(x=row.break_even_calls_per_day, line_dash="dash", line_color="gray",
                             annotation_text=f"break-even: {row.self_host}", annotation_textangle=-90)  # fmt: skip
    st.plotly_chart(figure, key="cmp_curves")
    st.caption(
        "Break-even: the calls/day from which self-hosting costs no more than the API (blank: not within ×1000)."
    )
    st.dataframe(
        evens.pivot(index="self_host", columns="api_model", values="break_even_calls_per_day"), key="cmp_evens"
    )
with movers:
    option = st.selectbox("Option", priced["option"].tolist(), key="cmp_tornado_option")
    if option:
        tornado = tornado_bars(profile_json, option)
        if tornado.empty:
            st.info("No operating point meets the SLO, so nothing to vary.")
        else:
            base_cost = float(priced.set_index("option").loc[option, "cost_per_month"])
            figure = go.Figure()
            figure.add_bar(
                y=tornado["name"], x=tornado["cost_low"] - base_cost, base=base_cost, orientation="h", name="low"
            )
            figure.add_bar(
                y=tornado["name"], x=tornado["cost_high"] - base_cost, base=base_cost, orientation="h", name="high"
            )
            figure.update_layout(barmode="overlay", xaxis_title="US$ per month", yaxis={"autorange": "reversed"})
            st.plotly_chart(figure, key="cmp_tornado")
            st.dataframe(tornado, hide_index=True, key="cmp_tornado_table")
with claims:
    a, b = st.columns(2)
    claim = a.number_input("Vendor's claim (tokens/s)", 1.0, 1e7, 14_000.0, key="cmp_claim")
    by_id = {p.id: p for p in profiles}
    chosen = b.selectbox("Against", list(by_id), format_func=lambda i: by_id[i].name, key="cmp_claim_profile")
    if chosen:
        check = claim_check(claim, by_id[chosen])
        figure = px.scatter(check, x="aggregate_tokens_per_s", y="per_user_tokens_per_s", text="concurrency", log_x=True,
                            labels={"aggregate_tokens_per_s": "aggregate output tokens/s (per replica)",
                                    "per_user_tokens_per_s": "per-user tokens/s"})  # fmt: skip
        figure.add_hline(y=claim, line_dash="dash", annotation_text="claim as per-user speed")
        figure.add_vline(x=claim, line_dash="dot", annotation_text="claim as aggregate")
        st.plotly_chart(figure, key="cmp_claim_chart")
        best_user, best_total = check["per_user_tokens_per_s"].max(), check["aggregate_tokens_per_s"].max()
        st.markdown(
            f"{claim:,.0f} tokens/s is **{claim / best_user:,.1f}×** the best measured per-user speed "
            f"({best_user:,.0f} tokens/s, at concurrency {check.loc[check['per_user_tokens_per_s'].idxmax(), 'concurrency']:g}) "
            f"and **{claim / best_total:,.1f}×** the best aggregate throughput ({best_total:,.0f} tokens/s, at concurrency "
            f"{check.loc[check['aggregate_tokens_per_s'].idxmax(), 'concurrency']:g}) of *{by_id[chosen].name}*. "
            "A speed claim means little without its concurrency, input and output lengths, and hardware."
        )  # fmt: skip
        spec = setup_spec("claim", {"run": chosen}, rented_price(by_id[chosen].hardware)[0], common)
        costs = claim_costs(profile_json, json.dumps(spec), claim)
        as_measured = f"${costs['measured']:,.0f}" if costs["measured"] is not None else "no cost (no point meets the SLO)"
        st.markdown(
            f"For this workload on *{by_id[chosen].name}* (rented at its cheapest on-demand price): **{as_measured}** "
            f"per month as measured; **${costs['claimed']:,.0f}** if one replica really sustained {claim:,.0f} "
            "output tokens/s."
        )  # fmt: skip
        st.dataframe(check, hide_index=True, key="cmp_claim_table")
with band:
    api_models = table[table["kind"] == "API"]["option"].tolist()
    if api_models:
        model_id = st.selectbox("Model", api_models, key="cmp_band_model")
        distribution = s.get("prompt_distribution") or {}
        samples = next(iter(distribution.values()), None)
        st.caption("Prompt lengths drawn from your corpus (Tokens page)" if samples is not None
                   else "Fixed prompt length; load a corpus on the Tokens page to draw real lengths")  # fmt: skip
        simulated = bill_band_json(profile_json, model_id, tuple(samples) if samples is not None else None)
        monthly = simulated["monthly"]
        m1, m2, m3 = st.columns(3)
        m1.metric("P50 per month", f"${monthly['p50']:,.0f}")
        m2.metric("P90 per month", f"${monthly['p90']:,.0f}")
        m3.metric("P99 per month", f"${monthly['p99']:,.0f}")
        figure = px.histogram(pd.DataFrame({"US$ per month": simulated["monthly_bills"]}), x="US$ per month", nbins=60)
        for label in ("p50", "p90", "p99"):
            figure.add_vline(x=monthly[label], line_dash="dash", annotation_text=label.upper())
        st.plotly_chart(figure, key="cmp_band_chart")
        st.caption(f"{simulated['method']} simulation: retries and truncations drawn per call, every attempt billed.")
