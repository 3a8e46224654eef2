"""The *Same weights* view of Compare: one open model's API offers beside its self-hosted setups, one table, one chart.

The figures come from ``infercost.same_weights`` (the setups) and the estimate (the costs), so the view, the CLI's
``same_weights`` and the reports agree to the cent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from infercost.compare import prompt_caching_note, same_weights_sentence, same_weights_table
from infercost.errors import InputError
from infercost.report import EXTENSIONS, MEDIA_TYPES, render_report
from infercost.ui.cached import (
    band_curves,
    cost_curves,
    open_model_choices,
    same_weights_json,
    show_input_error,
    with_api_bands,
)
from infercost.ui.format import colour_map, data_table, fit_legend, options_columns, options_shown

DEFAULT_MODEL = "openai/gpt-oss-120b"
SHOWN_SETUPS = 3  # the chart draws the cheapest few setups at first; the rest are a pick away


def show_same_weights(document: Mapping[str, Any], common: Mapping[str, Any], calls_per_day: float,
                      prompt_distribution: Mapping[str, Sequence[float]] | None = None) -> None:  # fmt: skip
    """Pick an open model; see every API offer of it and its predicted setups on each GPU type, and the answer. The
    API offers' ranges are their bill bands drawn as on the rest of Compare (the corpus's lengths where loaded)."""
    models = open_model_choices()
    if not models:
        st.info("No catalog offer serves weights with a bundled config.")
        return
    ids = [m["hf_id"] for m in models]
    offers = {m["hf_id"]: m["offers"] for m in models}
    model = st.selectbox("Open model", ids, index=ids.index(DEFAULT_MODEL) if DEFAULT_MODEL in ids else 0,
                         key="cmp_same_model", format_func=lambda i: f"{i} · {offers[i]} API offers",
                         help="Checkpoints an API in the catalog serves and infercost has the config of (the "
                              "Models page lists every bundled architecture)")  # fmt: skip
    try:
        view = same_weights_json(json.dumps({**document, "self_host": []}, sort_keys=True, default=str), model,
                                 json.dumps(dict(common), sort_keys=True, default=str))  # fmt: skip
    except InputError as error:
        show_input_error(error)
        return
    result = with_api_bands(view["result"], view["profile_json"], prompt_distribution)
    matches = view["matches"]
    st.markdown(same_weights_sentence(result, model))
    if caching := prompt_caching_note(float(document.get("cached_prompt_fraction") or 0)):
        st.caption(caching)
    table = same_weights_table(result, matches)
    _show_table(table)
    _show_chart(view["profile_json"], result, table, matches, calls_per_day)
    by_reason: dict[str, list[str]] = {}
    for skipped in view["skipped"]:
        by_reason.setdefault(skipped["reason"], []).append(skipped["gpu"])
    for reason, gpus in by_reason.items():  # one line per reason: eight GPUs too small for a model say it once
        st.caption(f"Not set up on {', '.join(gpus)}: {reason}.")
    _downloads(result, model)


def _show_table(table: pd.DataFrame) -> None:
    shown = options_shown(table)
    order = ["option", "weights", "cost_per_month", "range", "basis", "cost_per_million_tokens", "kind", "replicas",
             "gpu_offer", "flags"]  # a cost beside its range and its basis, in view at 1400 px
    weights = st.column_config.TextColumn("weights", help="exact: the same checkpoint; same_architecture: another "
                                          "checkpoint of its shapes (a base or a fine-tune): the same speed, not the "
                                          "same answers")  # fmt: skip
    data_table(shown, hide_index=True, key="cmp_same_table", width="stretch", column_order=order,
               column_config=options_columns(shown) | {"weights": weights})


def _show_chart(profile_json: str, result: dict[str, Any], table: pd.DataFrame, matches: Mapping[str, str],
                calls_per_day: float) -> None:  # fmt: skip
    """Cost per month against calls/day: API offers as lines, setups as steps inside their P10–P90 band, and the
    volumes where each setup starts to cost no more than the cheapest API offer marked."""
    hosts = table[table["kind"] != "API"].dropna(subset=["cost_per_month"])["option"].tolist()
    if not hosts and table[table["kind"] == "API"].empty:
        return
    names = table["option"].tolist()
    picked = st.multiselect("Self-host setups on the chart", hosts, default=hosts[:SHOWN_SETUPS],
                            key=f"cmp_same_setups_{hash(tuple(hosts))}")  # fmt: skip
    curves, bands = cost_curves(profile_json), band_curves(profile_json)
    colours = colour_map(names)
    figure = go.Figure()
    for row in result["api"]:  # another checkpoint of the architecture dotted: the same speed, not the same model
        line = curves[curves["option"] == row["model"]]
        dash = "solid" if matches.get(row["model"]) == "exact" else "dot"
        figure.add_trace(go.Scatter(x=line["calls_per_day"], y=line["cost_per_month"], mode="lines",
                                    name=row["model"], line={"color": colours[row["model"]], "dash": dash},
                                    hovertemplate="%{x:,.0f} calls/day: $%{y:,.0f}/month"))  # fmt: skip
    cheapest = min(result["api"], key=lambda r: r["cost_per_month"], default=None)
    for name in picked:
        _add_setup(figure, name, curves, bands, colours[name])
        if cheapest is not None:
            _mark_break_even(figure, result, name, cheapest)
    figure.add_vline(x=calls_per_day, line_dash="dot", annotation_text="today", annotation_position="top left")
    figure.update_xaxes(type="log", title_text="calls per day")
    figure.update_yaxes(type="log", title_text="US$ per month")
    st.plotly_chart(fit_legend(figure, len(result["api"]) + 2 * len(picked)), key="cmp_same_chart")
    st.caption("Shaded: each setup's P10–P90, the cost if the prediction erred as its kind of transfer did on "
               "held-out tables. ◆: where the setup starts to cost no more than the cheapest API offer"
               + (f" ({cheapest['model']})" if cheapest else "") + ".")


def _add_setup(figure: go.Figure, name: str, curves: pd.DataFrame, bands: pd.DataFrame, colour: str) -> None:
    band = bands[bands["option"] == name]
    if not band.empty:
        figure.add_trace(go.Scatter(x=band["calls_per_day"], y=band["high"], mode="lines", line={"width": 0},
                                    line_shape="hv", showlegend=False, hoverinfo="skip"))  # fmt: skip
        figure.add_trace(go.Scatter(x=band["calls_per_day"], y=band["low"], mode="lines", line={"width": 0},
                                    line_shape="hv", fill="tonexty", fillcolor=_translucent(colour),
                                    name=f"{name} P10–P90", hoverinfo="skip"))  # fmt: skip
    steps = curves[curves["option"] == name]
    figure.add_trace(go.Scatter(x=steps["calls_per_day"], y=steps["cost_per_month"], mode="lines", name=name,
                                line={"color": colour, "width": 2.5},
                                hovertemplate="%{x:,.0f} calls/day: $%{y:,.0f}/month"))  # fmt: skip


def _mark_break_even(figure: go.Figure, result: dict[str, Any], name: str, api: Mapping[str, Any]) -> None:
    row = next(r for r in result["self_host"] if r["name"] == name)
    regions = next((o["break_even"] for o in row.get("same_weights", []) if o["model"] == api["model"]), [])
    per_call = api["cost_per_month"] / float(result["profile"]["calls_per_day"])
    starts = [start for start, _ in regions if start and start > 0][:20]  # the first windows; slivers beyond are noise
    if starts:
        figure.add_trace(go.Scatter(x=starts, y=[s * per_call for s in starts], mode="markers", showlegend=False,
                                    marker={"symbol": "diamond", "size": 10, "color": "black"},
                                    hovertemplate=f"{name} costs no more than {api['model']} from "
                                                  "%{x:,.0f} calls/day<extra></extra>"))  # fmt: skip


def _translucent(colour: str, alpha: float = 0.18) -> str:
    """A #rrggbb colour as rgba with ``alpha``: a band under its line, not over the others."""
    value = colour.lstrip("#")
    if len(value) != 6:
        return f"rgba(120,120,120,{alpha})"
    red, green, blue = (int(value[i: i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red},{green},{blue},{alpha})"


def _downloads(result: dict[str, Any], model: str) -> None:
    """The same table, and each setup's offers with break-even, as a report to file."""
    short = model.rsplit("/", 1)[-1]
    document = {f"same weights: {short}": result}
    for column, fmt in zip(st.columns(3), ("markdown", "html", "csv"), strict=True):
        # no key: a cmp_ key is kept across pages, and Streamlit refuses to set a download button's value
        column.download_button(f"Report ({fmt})", render_report(document, fmt),
                               file_name=f"same-weights-{short}.{EXTENSIONS[fmt]}", mime=MEDIA_TYPES[fmt])

