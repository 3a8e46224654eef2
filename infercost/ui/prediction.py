"""The engine model's predicted curve beside the measured points, for the Compare and Benchmark pages."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from infercost.errors import InputError
from infercost.performance.expected_error import error_phrase
from infercost.performance.predict import Load, predict_source

PANELS = (("output_throughput", "output tokens/s"), ("mean_ttft_ms", "mean TTFT (ms)"),
          ("mean_tpot_ms", "mean TPOT (ms)"))  # fmt: skip


@st.cache_data(show_spinner="Running the engine model…")
def predicted(source: str, input_len: int, output_len: int, concurrencies: tuple[int, ...] | None) -> dict[str, Any]:
    """The prediction as a plain document (cached: the same source and shape always give the same curve)."""
    return predict_source(source, input_len, output_len, Load(concurrencies)).as_dict()


def prediction_figure(
    measured: list[dict[str, Any]], measured_shape: str, curves: dict[str, dict[str, Any]]
) -> go.Figure:
    """Throughput, TTFT and TPOT against concurrency: measured points as markers, each predicted curve a line."""
    figure = make_subplots(rows=1, cols=3, subplot_titles=[title for _, title in PANELS])
    for column, (metric, _) in enumerate(PANELS, start=1):
        points = [p for p in measured if p.get(metric) is not None and p.get("concurrency")]
        figure.add_trace(go.Scatter(x=[p["concurrency"] for p in points], y=[p[metric] for p in points],
                                    mode="markers", marker={"size": 9, "color": "#1f77b4"},
                                    name=f"measured ({measured_shape})", legendgroup="measured",
                                    showlegend=column == 1), row=1, col=column)  # fmt: skip
        for (label, curve), dash, color in zip(curves.items(), ("solid", "dash"), ("#1f77b4", "#d62728"), strict=False):
            line = [p for p in curve["points"] if "concurrency" in p]
            figure.add_trace(go.Scatter(x=[p["concurrency"] for p in line], y=[p[metric] for p in line],
                                        mode="lines", line={"dash": dash, "color": color}, name=label,
                                        legendgroup=label, showlegend=column == 1), row=1, col=column)  # fmt: skip
        figure.update_xaxes(type="log", title_text="concurrency", row=1, col=column)
    figure.update_layout(height=360, margin={"t": 40, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return figure


def show_prediction(source: str, measured: list[dict[str, Any]], measured_shape: tuple[int, int] | None,
                    workload_shape: tuple[int, int], key: str) -> None:  # fmt: skip
    """The curve at the measured shape (how well the model fits) and at the workload's (what sizing uses)."""
    levels = tuple(sorted({int(p["concurrency"]) for p in measured if p.get("concurrency")})) or None
    curves = {}
    try:
        if measured_shape:
            own = predicted(source, *measured_shape, levels)
            curves[f"engine model at {measured_shape[0]:,}/{measured_shape[1]:,}"] = own
        work = predicted(source, *workload_shape, levels)
        curves[f"predicted at {workload_shape[0]:,}/{workload_shape[1]:,}"] = work
    except InputError as error:
        st.info(f"No prediction for {source}: {error}")
        return
    shape_label = f"{measured_shape[0]:,}/{measured_shape[1]:,}" if measured_shape else "no shape"
    st.plotly_chart(prediction_figure(measured, shape_label, curves), key=key)
    error = work["expected_error"].get("request_throughput")
    transfer = "" if work["transfer"] == "none" else f" · {work['transfer']} transfer"  # none: nothing to transfer from
    basis = f"**{work['basis']}**{transfer}"
    if error:
        st.caption(f"{basis}: requests/s {error_phrase(error)} on bundled tables held out · "
                   + " · ".join(work["notes"]))  # fmt: skip
    else:
        st.caption(f"{basis}: expected error not measured · " + " · ".join(work["notes"]))
