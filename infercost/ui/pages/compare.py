"""API against self-hosting for one workload: the table, the break-even, what moves the answer, claims and the band."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from infercost.compare import (
    Claim,
    band_verdict,
    break_even_spans,
    break_even_table,
    claim_check,
    claim_differences,
    claim_sentence,
    options_table,
    prompt_caching_note,
)
from infercost.costmodel.owned import OwnedHardware
from infercost.costmodel.scaling import SCALING_MODES
from infercost.errors import InputError
from infercost.estimate import cost_range_phrase
from infercost.numbers import count_of
from infercost.pricing import bundled_gpu_specs
from infercost.profile import unique_name
from infercost.ui.cached import (
    api_row_band,
    catalog_json,
    claim_readings_frame,
    cost_curves,
    estimate_leaving_out_setups,
    self_host_band_json,
    show_input_error,
    throughput_profiles,
    tornado_bars,
    with_api_bands,
)
from infercost.ui.format import colour_map, cost_bars, data_table, options_columns, options_shown, show_table
from infercost.ui.prediction import show_prediction
from infercost.ui.same_weights import show_same_weights
from infercost.ui.setups import (
    DEFAULT_SLO,
    cheapest_offer,
    default_setups,
    follow_settings,
    layout_choice,
    layout_label,
    offer_age,
    offer_choice,
    owned_price,
    pick_offer,
    price_is_offers,
    roofline_choice,
    setup_spec,
)
from infercost.ui.state import init_state, profile_document, workload_summary

init_state(st.session_state, [entry["id"] for entry in catalog_json()])
profiles = throughput_profiles()
specs = {spec.gpu: spec for spec in bundled_gpu_specs()}
s = st.session_state
s.setdefault("calls_per_day_cv", 0.15)
s.setdefault("output_tokens_cv", 0.5)

st.title("Compare APIs and self-hosting")
st.caption(f"Workload: {workload_summary(s)} — change it on *Workload and bill*.")

MODES = list(SCALING_MODES)
OPTION_MOST = 232  # px: the money columns and the basis stay in view at 1400 px (330 pushed one out, 440 two)
NOT_SAID = "(not said)"
INCREMENTS = [1, 5, 15, 30, 60, 120, 180, 240, 360, 480, 720, 1440]
with st.expander("Self-host settings: SLO and scaling", expanded=False):
    a, b, c, d, e = st.columns(5)
    slo = {"p95_ttft_ms": a.number_input("SLO p95 TTFT (ms)", 1.0, 1e6, DEFAULT_SLO["p95_ttft_ms"], key="cmp_ttft"),
           "p95_tpot_ms": b.number_input("SLO p95 TPOT (ms)", 1.0, 1e5, DEFAULT_SLO["p95_tpot_ms"],
                                         key="cmp_tpot")}  # fmt: skip
    mode = e.selectbox("Scaling", MODES, key="cmp_mode", help="always_on: peak replicas all day; autoscaled: follow a "
                       "24-hour load shape; offline_batch: the day's volume within a deadline")  # fmt: skip
    common = {"slo": slo, "mode": mode,
              "peak_to_average": c.number_input("Peak / average", 1.0, 23.9, 2.0, key="cmp_peak",
                                                help="Also sets the autoscaled day: a smooth curve peaking at 14:00"),
              "target_utilization": d.number_input("Target utilization", 0.05, 1.0, 0.8, key="cmp_util")}  # fmt: skip
    f, g, h, i, j = st.columns(5)
    top = g.number_input("Max replicas (0: no limit)", 0, 100_000, 0, key="cmp_max_replicas")
    common |= {
        "min_replicas": f.number_input("Min replicas (autoscaled)", 0, 100_000, 1, key="cmp_min_replicas"),
        "max_replicas": int(top) or None,
        "cold_start_minutes": h.number_input("Cold start (min)", 0.0, 1440.0, 10.0, key="cmp_cold_start",
                                             help="A new replica is billed this long before it serves"),
        "billing_increment_minutes": i.selectbox("Billing increment (min)", INCREMENTS, index=INCREMENTS.index(60),
                                                 key="cmp_increment"),
        "deadline_hours": j.number_input("Batch deadline (h)", 0.5, 24.0, 24.0, key="cmp_deadline"),
    }  # fmt: skip
    also = st.multiselect("Also show each setup as", [m for m in MODES if m != mode], key="cmp_also_modes")
s.setdefault("compare_setups", default_setups([p for p in profiles if p.basis != "measured" or p.run_id is None], {}))

with st.expander("Add a self-host setup (rented or owned)"):
    source = st.radio("Throughput from", ["Roofline estimate", "Measured or published profile"], horizontal=True,
                      key="cmp_source")  # fmt: skip
    left, right = st.columns(2)
    if source == "Roofline estimate":
        gpu = right.selectbox("GPU", list(specs), key="cmp_gpu")
        gpus = right.number_input("GPUs per replica", 1, 64, 1, key="cmp_gpus")
        chosen_model = roofline_choice(left, left, right, s, "cmp")
        layout = layout_choice(right, chosen_model["model"], int(gpus), s, "cmp")
        throughput = {"roofline": {**chosen_model, "gpu": gpu, "gpus": int(gpus), **layout}}
        engine_label = "".join(f" {chosen_model[k]}" for k in ("engine", "engine_version") if k in chosen_model)
        engine_label = f",{engine_label}" if engine_label else ""
        label = (f"{chosen_model['model']} · {gpus}× {gpu} ({chosen_model['dtype']}{engine_label}"
                 f"{layout_label(layout)}, roofline)")
    else:
        by_id = {p.id: p for p in profiles}
        chosen = left.selectbox("Profile", list(by_id), format_func=lambda i: by_id[i].name, key="cmp_profile")
        gpu, gpus = by_id[chosen].hardware, by_id[chosen].gpus_per_replica
        throughput, label = {"run": chosen}, f"{by_id[chosen].name} ({by_id[chosen].basis})"
    ownership = st.radio("GPUs", ["Rented", "Owned"], horizontal=True, key="cmp_ownership")
    offer = None
    if ownership == "Rented":
        offer = pick_offer(st, "GPU offer", gpu, key=f"cmp_offer_{gpu}", custom=True)
        price = st.number_input("US$ per GPU-hour", 0.01, 1000.0, float(offer.price_per_hour if offer else 2.5),
                                key=f"cmp_rent_{gpu}_{offer.id if offer else 'custom'}",
                                help=offer.source if offer else None)  # fmt: skip
        if offer is not None and not price_is_offers(price, offer):
            offer = None  # a typed price: the setup names no offer (nor takes the offer picked below for its GPU)
    else:
        spec = specs.get(gpu)
        o1, o2, o3 = st.columns(3)
        hardware = OwnedHardware(
            purchase_price_usd=o1.number_input("Purchase price per GPU (US$)", 0.0, 1e7,
                                               float((spec.purchase_price_usd if spec else None) or 30_000),
                                               key="cmp_buy"),
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
    st.caption("A setup you add joins the workload: saved scenarios, links and the bill on *Workload and bill* "
               "keep it, and it follows the SLO and scaling above while this session lasts.")
    if st.button("Add setup", key="cmp_add"):
        taken = [setup["name"] for setup in [*s["compare_setups"], *s["self_host"]]]
        label = unique_name(label, taken)
        s["self_host"] = [*s["self_host"], setup_spec(label, throughput, price, common, gpu=gpu, offer=offer)]
        s["cmp_added"] = [*s.get("cmp_added", []), label]

s["self_host"] = follow_settings(s["self_host"], s.get("cmp_added", []), common)
names = [setup["name"] for setup in s["compare_setups"]]
kept = st.multiselect("Self-host setups", names, default=names, key=f"cmp_kept_{len(names)}",
                      help="Reference setups for this session; the ones you add are listed below")
if yours := [setup["name"] for setup in s["self_host"]]:
    keep = st.multiselect("Your setups (kept with the workload; remove one here)", yours, default=yours,
                          key=f"cmp_yours_{'|'.join(yours)}")
    if keep != yours:
        s["self_host"] = [setup for setup in s["self_host"] if setup["name"] in keep]
        st.rerun()
rented_gpus = sorted({setup["gpu"] for setup in s["compare_setups"] if setup.get("gpu_offer")})
picked_offers = {}
with st.expander("GPU offers of the reference setups (price, source and age; a setup you added keeps its own)"):
    for column, gpu in zip(st.columns(max(len(rented_gpus), 1)), rented_gpus, strict=False):
        picked_offers[gpu] = pick_offer(column, gpu, gpu, key=f"cmp_offer_pick_{gpu}")
        column.caption(f"[{picked_offers[gpu].provider}]({picked_offers[gpu].source}) price "
                       f"{offer_age(picked_offers[gpu])}")


def with_offer(setup: dict) -> dict:
    """A rented setup at the offer picked for its GPU; owned and custom-priced setups keep their own price."""
    offer = picked_offers.get(setup.get("gpu", "")) if setup.get("gpu_offer") else None
    return setup if offer is None else {**setup, "gpu_offer": offer.id, "gpu_price_per_hour": offer.price_per_hour}


setups = [{**with_offer(setup), **common} for setup in s["compare_setups"] if setup["name"] in kept]
document = profile_document(s)
for setup in document["self_host"]:  # yours (added here, or from a scenario or link) and the bill's own
    setups.append({**setup, "name": unique_name(setup["name"], [other["name"] for other in setups])})
setups += [{**setup, "name": f"{setup['name']} · {other}", "mode": other} for other in also for setup in setups]
document |= {"self_host": setups, "calls_per_day_cv": s["calls_per_day_cv"], "output_tokens_cv": s["output_tokens_cv"]}
profile_json = json.dumps(document, sort_keys=True, default=str)
try:
    result, profile_json, left_out = estimate_leaving_out_setups(profile_json)
except InputError as error:
    show_input_error(error)
    st.stop()
if left_out is not None:  # the APIs are still compared; every tab below sees the profile without the setups
    setups = []
    st.warning(f"The self-host setups cannot be estimated, so they are left out: {left_out.field}: "
               f"{left_out.reason}", icon="⚠️")


result = with_api_bands(result, profile_json, s.get("prompt_distribution"))
table = options_table(result)

st.subheader("Every option, one table")
priced = table.dropna(subset=["cost_per_month"])
# APIs and self-hosted setups apart: a setup runs its own model, so "cheapest overall" set an 8B model on one GPU
# against 70B and 120B APIs; each side's cheapest is named with its model, and the reader weighs the two
for column, (label, rows) in zip(st.columns(2), (("Cheapest API per month", priced[priced["kind"] == "API"]),
                                                 ("Cheapest self-host per month",
                                                  priced[priced["kind"] != "API"])), strict=True):  # fmt: skip
    if rows.empty:
        column.metric(label, "–")
        column.caption("none priced: add a setup below, or pick models on *Workload and bill*")
        continue
    best = rows.iloc[0]
    column.metric(label, f"${best['cost_per_month']:,.0f}")
    column.caption(f"{best['option']} ({best['kind']}, basis: {best['basis']})"
                   + cost_range_phrase(best["range"]))  # a predicted cost is never shown bare
if not priced.empty and (priced["kind"] == "API").any() and (priced["kind"] != "API").any():
    st.caption("A self-hosted setup serves its own model, not the APIs' models: weigh the quality of the two models "
               "before their costs (add a setup of a model like the API's below).")
if caching := prompt_caching_note(s["cached_prompt_fraction"]):
    st.caption(caching)
if "band_note" in result:
    st.caption(result["band_note"])
shown = options_shown(table)  # money as text: a setup without a cost reads "SLO not met", never a grey "None"
order = ["option", "cost_per_month", "range", "basis", "cost_per_call", "cost_per_million_tokens", "kind", "replicas",
         "flags", "gpu_offer"]  # a predicted cost beside its range and its basis, in view at 1400 px
# as wide as the longest API id; a self-host name (model · GPUs · weights · basis) up to OPTION_MOST px, the money
# columns still in view at 1400 px (its whole name is in the basis notes below the table)
data_table(shown, hide_index=True, key="options_table", width="stretch", column_order=order,
           column_config=options_columns(shown, option_most=OPTION_MOST))
infeasible = [r["name"] for r in result["self_host"] if not r["meets_slo"]]
if infeasible:
    st.warning(f"No operating point meets the SLO for: {', '.join(infeasible)} (no cost shown).")
with st.expander("Basis and notes of every self-host figure"):
    for row in result["self_host"]:
        note = row["basis_note"] or row["throughput_source"] or ""
        st.markdown(f"- **{row['name']}**: {row['basis']}{' · ' + note if note else ''}"
                    + "".join(f"\n  - {w}" for w in row["warnings"]))  # fmt: skip

bars, volume, same, movers, claims, band, engine = st.tabs(
    ["Cost per month", "Against volume (break-even)", "Same weights: API or self-host", "What moves the answer",
     "Check a speed claim", "Bill band (P10–P99)", "Predicted against measured"],
    key="cmp_tab", on_change="rerun",  # only the open tab runs: nothing off screen is computed or drawn
)  # fmt: skip
with bars:
    if bars.open:
        st.altair_chart(cost_bars(priced, colour="kind"), key="cmp_bars")
with volume:
    if volume.open:
        api_models = table[table["kind"] == "API"]["option"].tolist()
        setup_names = [r["name"] for r in result["self_host"] if r["meets_slo"]]
        a, b = st.columns(2)
        against = a.selectbox("API model", api_models, key="cmp_break_even_model") if api_models else None
        chosen_setup = b.selectbox("Self-host setup", setup_names, key="cmp_break_even_setup") if setup_names else None
        curves = cost_curves(profile_json)
        if against and chosen_setup:
            shown = curves[curves["option"].isin([against, chosen_setup])]
            labels = {"calls_per_day": "calls per day", "cost_per_month": "US$ per month", "option": ""}
            figure = px.line(shown, x="calls_per_day", y="cost_per_month", color="option", log_x=True, log_y=True,
                             labels=labels, color_discrete_map=colour_map(shown["option"]))
            figure.add_vline(x=s["calls_per_day"], line_dash="dot")
            figure.add_annotation(x=np.log10(s["calls_per_day"]), y=0.02, yref="paper", text="today", showarrow=False,
                                  xanchor="left")
            high = float(curves["calls_per_day"].max())
            spans = break_even_spans(result, against, high)
            for span in spans[spans["self_host"] == chosen_setup].itertuples():
                figure.add_vrect(x0=span[2], x1=min(span[3], high), fillcolor="green", opacity=0.15, line_width=0)
            figure.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
            st.plotly_chart(figure, key="cmp_curves")
            words = break_even_table(result).set_index(["self_host", "api_model"])["break_even"]
            st.markdown(f"**{chosen_setup}** against **{against}**: {words[(chosen_setup, against)]} "
                        "(shaded; exact on the cost steps, searched to 1,000× today's volume).")  # fmt: skip
        evens = break_even_table(result)
        data_table(evens.pivot(index="self_host", columns="api_model", values="break_even"), key="cmp_evens",
                   width="stretch")  # fmt: skip
with same:
    if same.open:
        st.caption("One open model: every API that serves its weights beside the same weights on each GPU type you "
                   "can rent (its cheapest on-demand offer, the fewest GPUs that hold it, the engine of the nearest "
                   "published table), at your workload and the SLO and scaling above.")
        show_same_weights(profile_document(s), common, s["calls_per_day"], s.get("prompt_distribution"))
with movers:
    if movers.open:
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
                show_table(tornado, hide_index=True, key="cmp_tornado_table")
with claims:
    if claims.open:
        st.markdown("**The claim, as the vendor stated it** (leave a field empty or 0 where the vendor did not say)")
        a, b, c = st.columns(3)
        claim = a.number_input("Vendor's claim (tokens/s)", 1.0, 1e7, 14_000.0, key="cmp_claim",
                               help="Output tokens per second, as the vendor wrote it: per user or in total is what "
                                    "this check answers")  # fmt: skip
        claim_model = b.text_input("Model it was measured on", key="cmp_claim_model", placeholder="e.g. llama-3.1-8b")
        claim_gpu = c.selectbox("GPU", [NOT_SAID, *specs], key="cmp_claim_gpu")
        d, e, f = st.columns(3)
        stated = Claim(claim, claim_model, "" if claim_gpu == NOT_SAID else claim_gpu,
                       int(d.number_input("GPUs per replica (0: not said)", 0, 1024, 0, key="cmp_claim_gpus")),
                       int(e.number_input("Input tokens per request (0: not said)", 0, 10**7, 0,
                                          key="cmp_claim_input")),
                       int(f.number_input("Output tokens per request (0: not said)", 0, 10**7, 0,
                                          key="cmp_claim_output")))  # fmt: skip
        by_id = {p.id: p for p in profiles}
        closest = sorted(by_id, key=lambda i: len(claim_differences(stated, by_id[i])))  # stable: ties keep order
        described = [stated.model, stated.gpu, stated.gpus, stated.input_tokens, stated.output_tokens]
        if s.get("_claim_described") != described:  # what the vendor measured on changed: offer its closest
            s["_claim_described"], s["cmp_claim_profile"] = described, closest[0]
        chosen = st.selectbox("Against the profile", closest, format_func=lambda i: by_id[i].name,
                              key="cmp_claim_profile", help="The profile closest to what the claim names is picked "
                              "whenever that changes; pick another to compare against it")  # fmt: skip
        if chosen:
            chosen_profile = by_id[chosen]
            check = claim_check(claim, chosen_profile)
            check = check.dropna(subset=["per_user_tokens_per_s", "aggregate_tokens_per_s"])
            st.markdown(f"**{claim_sentence(stated, check, chosen_profile)}**")
            figure = px.line(check, x="aggregate_tokens_per_s", y="per_user_tokens_per_s", text="concurrency",
                             markers=True, log_x=True, log_y=True,
                             labels={"aggregate_tokens_per_s": "aggregate output tokens/s (one replica)",
                                     "per_user_tokens_per_s": "per-user tokens/s (1000 / TPOT)"})  # fmt: skip
            figure.update_traces(texttemplate="c=%{text}", textposition="top right")
            # lines without annotation_text: on log axes plotly places a line's own annotation off the chart
            figure.add_hline(y=claim, line_dash="dash", line_color="red")
            figure.add_vline(x=claim, line_dash="dot", line_color="red")
            figure.add_annotation(x=0.01, xref="paper", y=np.log10(claim), text="claim read as per-user speed",
                                  showarrow=False, xanchor="left", yanchor="top", font_color="red")
            figure.add_annotation(x=np.log10(claim), y=0.5, yref="paper", text="claim read as aggregate", textangle=-90,
                                  showarrow=False, xanchor="right", font_color="red")  # fmt: skip
            values = [*check["aggregate_tokens_per_s"], *check["per_user_tokens_per_s"], claim]
            low, high = np.log10(max(min(values), 1e-3)) - 0.2, np.log10(max(values)) + 0.2
            figure.update_xaxes(range=[low, high])
            figure.update_yaxes(range=[low, high])
            st.plotly_chart(figure, key="cmp_claim_chart")
            word = chosen_profile.basis
            if check.empty:
                st.info(f"*{chosen_profile.name}* reports no per-user speed (TPOT) to place the claim against.")
            else:
                top_user = check.loc[check["per_user_tokens_per_s"].idxmax()]
                top_total = check.loc[check["aggregate_tokens_per_s"].idxmax()]
                st.markdown(
                    f"{claim:,.0f} tokens/s is **{claim / top_user['per_user_tokens_per_s']:,.1f}×** the best {word} "
                    f"per-user speed ({top_user['per_user_tokens_per_s']:,.0f} tokens/s, at concurrency "
                    f"{top_user['concurrency']:g}) and "
                    f"**{claim / top_total['aggregate_tokens_per_s']:,.1f}×** the best "
                    f"{word} aggregate throughput ({top_total['aggregate_tokens_per_s']:,.0f} tokens/s, at concurrency "
                    f"{top_total['concurrency']:g}) of *{chosen_profile.name}* "
                    f"({word}: {chosen_profile.source or 'no source'})."
                )  # fmt: skip
            claim_offer = cheapest_offer(chosen_profile.hardware)
            spec = setup_spec("claim", {"run": chosen}, claim_offer.price_per_hour if claim_offer else 2.5, common,
                              gpu=chosen_profile.hardware, offer=claim_offer)  # fmt: skip
            try:
                readings = claim_readings_frame(profile_json, json.dumps(spec), claim)
            except InputError as error:  # a claim in tokens/s says nothing about calls that make no tokens
                show_input_error(error)
                st.stop()
            rented = (f"{offer_choice(claim_offer)} ({offer_age(claim_offer)})" if claim_offer
                      else "US$2.50/GPU-hour (no catalog offer)")
            st.markdown(f"What this workload needs on *{chosen_profile.name}*, rented at {rented}:")
            shown_readings = options_shown(readings, {"requests_per_s": "{:,.2f}",
                                                      "calls_per_day_per_replica": "{:,.0f}"})  # fmt: skip
            data_table(shown_readings, hide_index=True, key="cmp_claim_readings", width="stretch", column_config={
                "requests_per_s": st.column_config.TextColumn("requests/s per replica", alignment="right"),
                "calls_per_day_per_replica": st.column_config.TextColumn("calls/day per replica", alignment="right"),
                "replicas": st.column_config.TextColumn("replicas", alignment="right"),
                "cost_per_month": st.column_config.TextColumn("US$/month", alignment="right"),
            })  # fmt: skip
            costs = readings["cost_per_month"].dropna()
            if len(costs) > 1 and costs.nunique() == 1:
                st.caption(f"Every reading costs the same here: at {s['calls_per_day']:,} calls/day "
                           f"{count_of(int(readings['replicas'].iloc[0]), 'replica')} carry the workload either way. "
                           f"As {word}, one replica carries "
                           f"{readings['calls_per_day_per_replica'].iloc[0]:,.0f} calls/day at the peak; "
                           "the claim matters beyond that volume.")  # fmt: skip
            with st.expander("Every point of the table"):
                show_table(check, hide_index=True, key="cmp_claim_table")
with band:
    if band.open:
        options = priced["option"].tolist()
        chosen_option = st.selectbox("Option", options, key="cmp_band_model") if options else None
        v, o = st.columns(2)
        v.number_input("Day-to-day spread of calls per day (CV)", 0.0, 10.0, step=0.05, key="calls_per_day_cv",
                       help="Calls per day are drawn from a negative binomial around your forecast with this "
                            "coefficient of variation; 0.15 by default, since real traffic varies more from day "
                            "to day than independent arrivals would (weekdays, launches, incidents).")  # fmt: skip
        o.number_input("Call-to-call spread of output tokens (CV)", 0.0, 10.0, step=0.05, key="output_tokens_cv",
                       help="Each call's answer length is drawn from a gamma distribution around your output "
                            "tokens with this coefficient of variation (standard deviation / mean). 0.5 by "
                            "default is an assumption, not a measurement: set it from your logs.")  # fmt: skip
        if chosen_option:
            api_rows = {r["model"]: r for r in result["api"]}
            if chosen_option in api_rows:
                row = api_rows[chosen_option]
                simulated = api_row_band(profile_json, row, s.get("prompt_distribution"))
                drawn = f"Lengths: {simulated['lengths']}. Tokenizer: {simulated['tokenizer']}."
            else:
                row = next(r for r in result["self_host"] if r["name"] == chosen_option)
                drawn = "Self-host: volume moves an autoscaled or batch fleet; an always-on fleet is sized once."
                expected_error_json = json.dumps(row.get("expected_error") or {})
                simulated = self_host_band_json(profile_json, chosen_option, expected_error_json)
            monthly = simulated["monthly"]
            m0, m1, m2, m3 = st.columns(4)
            m0.metric("P10 per month", f"${monthly['p10']:,.0f}")
            m1.metric("P50 per month", f"${monthly['p50']:,.0f}")
            m2.metric("P90 per month", f"${monthly['p90']:,.0f}")
            m3.metric("P99 per month", f"${monthly['p99']:,.0f}")
            bills = pd.DataFrame({"US$ per month": simulated["monthly_bills"]})
            figure = px.histogram(bills, x="US$ per month", nbins=60)
            for label in ("p10", "p50", "p90", "p99"):
                figure.add_vline(x=monthly[label], line_dash="dash", annotation_text=label.upper())
            figure.add_vline(x=row["cost_per_month"], line_color="red", annotation_text="bill",
                             annotation_position="bottom right")
            st.plotly_chart(figure, key="cmp_band_chart")
            st.markdown(band_verdict(row["cost_per_month"], monthly, self_host=chosen_option not in api_rows))
            sources = ", ".join(simulated["sources"]) or "nothing varies: the band is the bill"
            st.caption(f"Varied: {sources}. {drawn} "
                       f"Each simulated month is {s['days_per_month']} independent days.")
with engine:
    if engine.open:
        sources = {setup["name"]: setup["throughput"] for setup in setups if "points" not in setup["throughput"]}
        picked = st.selectbox("Self-host setup", list(sources), key="cmp_engine_setup") if sources else None
        if picked:
            spec = sources[picked]
            by_id = {p.id: p for p in profiles}
            if "run" in spec and spec["run"] in by_id:
                chosen = by_id[spec["run"]]
                source, measured = chosen.id, chosen.points
                shape = (round(chosen.input_len), round(chosen.output_len)) if chosen.input_len and chosen.output_len \
                    else None  # fmt: skip
            else:
                r = spec["roofline"]
                source = f"roofline:{r['model']}@{r.get('gpus', 1)}x{r['gpu']}:{r.get('dtype', 'bfloat16')}"
                measured, shape = [], None
            workload_shape = (max(1, round(s["prompt_tokens"])), max(1, round(s["output_tokens"])))
            show_prediction(source, measured, shape, workload_shape, key="cmp_engine_chart")
