"""How the app shows numbers and colours: one formatter for every table and text, one colour per option id.

Raw floats (15143.7984 calls/day) read as noise; each number is shown to the precision it carries. Charts give each
model or setup the same colour on every page of a session, and never give two options one colour in a chart
(Streamlit's theme cycles ten).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, MutableMapping
from typing import Any

import pandas as pd
import plotly.colors
import streamlit as st

from infercost.estimate import SLO_NOT_MET
from infercost.numbers import is_money

PALETTE = [*plotly.colors.qualitative.Plotly, *plotly.colors.qualitative.Dark24, *plotly.colors.qualitative.Light24]
COLOURS_KEY = "_option_colours"  # session key: option id -> colour, assigned on first sight
NO_VALUE = "–"  # what a table shows where a row has no value


def number(value: float | int | None, *, unit: str = "") -> str:
    """A number as a person reads it: thousands separated, decimals only where they mean something."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    magnitude = abs(value)
    if magnitude >= 100 or float(value).is_integer():
        text = f"{value:,.0f}"
    elif magnitude >= 1:
        text = f"{value:,.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip()


def count_text(values: pd.Series) -> pd.Series:
    """Whole counts as text ("3"), "–" where a row has none (an API has no replicas): a table draws a missing number
    as a grey "None", which reads like a value."""
    return values.map(lambda value: "–" if pd.isna(value) else f"{value:,.0f}")


MONEY_TEXT = {"cost_per_month": "${:,.2f}", "cost_per_call": "${:.5f}", "cost_per_million_tokens": "${:.3f}"}


def options_shown(table: pd.DataFrame, numbers: dict[str, str] | None = None) -> pd.DataFrame:
    """An options table (``compare.options_table``, or the scenarios' comparison) as a person reads it: money as
    text, "SLO not met" where a self-host setup has no cost, "–" for its other figures and for a count or a text a
    row does not have. ``numbers`` formats other figures of the table the same way ({column: "{:,.2f}"}).

    A number column draws a missing value as a grey "None", which reads like a value or a bug; the only rows without a
    monthly cost are setups that no operating point serves within the SLO, and they say so.
    """
    shown = table.copy()
    infeasible = table["cost_per_month"].isna()
    for column, shape in MONEY_TEXT.items():
        if column in shown:
            missing = SLO_NOT_MET if column == "cost_per_month" else "–"
            shown[column] = table[column].map(lambda v, m=missing, f=shape: m if pd.isna(v) else f.format(v))
    for column, shape in {"gpu_hours_per_day": "{:,.1f}", **(numbers or {})}.items():
        if column in shown:
            shown[column] = table[column].where(~infeasible).map(
                lambda v, f=shape: "–" if pd.isna(v) else f.format(v))  # fmt: skip
    if "replicas" in shown:
        shown["replicas"] = count_text(table["replicas"].where(~infeasible))  # 0 replicas read as "free"
    for column in shown.columns:  # a text a row does not have (an API's basis, a setup's tokenizer fidelity)
        if shown[column].dtype == object or pd.api.types.is_string_dtype(shown[column]):
            shown[column] = shown[column].fillna("–")
    return shown


def text_width_px(texts: Iterable[str], *, least: int = 75) -> int:
    """A column width that shows the longest of these texts whole: Streamlit sizes an unset width from the first
    rows only, so a long value further down is cut. About 8 px a character at the table's font, plus padding."""
    return max([least, *(len(text) * 8 + 24 for text in texts)])


# A multiselect scrolls its tags inside a box 155 px high: on a phone (390 px) six models wrap to six rows and the
# sixth is cut. The box grows with its tags instead (structural selectors: Streamlit's class names are hashes).
EVERY_TAG_CSS = """<style>
[data-testid="stMultiSelect"] .react-aria-ComboBox > div { max-height: none !important; }
</style>"""


def show_every_tag() -> None:
    """Let every multiselect on the page show all its tags, however many rows they wrap to."""
    st.html(EVERY_TAG_CSS)


def id_column(label: str, ids: Iterable[str], *, most: int | None = None, help: str | None = None) -> Any:
    """A column of model ids or option names as wide as the longest (at most ``most`` px), pinned so it stays in
    view when the table scrolls sideways: Streamlit's own width cut "deepinfra/llama-4-maverick-17b-128e-instruct-fp8"
    at 1400 px."""
    width = text_width_px(ids)
    return st.column_config.TextColumn(label, width=width if most is None else min(width, most), pinned=True,
                                       help=help)  # fmt: skip


def number_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """A column format for every numeric column: dollars for money, thousands separators for the rest."""
    config: dict[str, Any] = {}
    for column in frame.columns:
        if not pd.api.types.is_float_dtype(frame[column]) or not isinstance(column, str):
            continue
        if is_money(column):
            config[column] = st.column_config.NumberColumn(format="$%.6f" if "per_call" in column else "dollar")
        else:
            config[column] = st.column_config.NumberColumn(format="localized")
    return config


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Floats rounded to what they carry (whole numbers from 100 up, two decimals from 1), money left exact."""
    tidied = frame.copy()
    for column in tidied.columns:
        if pd.api.types.is_float_dtype(tidied[column]) and not (isinstance(column, str) and is_money(column)):
            values = tidied[column]
            rounded = values.where(values.abs() < 1, values.round(2))  # from 1: two decimals
            tidied[column] = rounded.where(values.abs() < 100, values.round(0))  # from 100: whole numbers
    return tidied


def data_table(frame: Any, **kwargs: Any) -> Any:
    """``st.dataframe`` with a dash where a cell has no value: Streamlit draws a missing value as a grey "None",
    which reads like a value or a bug (177 of the catalog's 650 models have no cached-input price)."""
    kwargs.setdefault("placeholder", NO_VALUE)
    return st.dataframe(frame, **kwargs)


def show_table(frame: pd.DataFrame, *, column_config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """``data_table`` with every number formatted; a page's own column settings win."""
    config = number_columns(frame) | (column_config or {})
    return data_table(tidy(frame), column_config=config, **kwargs)


def colour_map(options: Iterable[Any], state: MutableMapping[str, Any] | None = None) -> dict[str, str]:
    """One colour per option id for this session: the same on every chart and page, distinct within a chart."""
    assigned: dict[str, str] = (st.session_state if state is None else state).setdefault(COLOURS_KEY, {})
    wanted = list(dict.fromkeys(map(str, options)))
    for option in wanted:
        if option not in assigned:
            used = set(assigned.values())
            assigned[option] = next((c for c in PALETTE if c not in used), PALETTE[len(assigned) % len(PALETTE)])
    return {option: assigned[option] for option in wanted}


def fit_legend(figure: Any, entries: int | None = None) -> Any:
    """The legend below the plot, across its width, so long option names are never cut off at the right edge."""
    rows = max(1, math.ceil((entries or 0) / 3))
    figure.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.18, "xanchor": "left", "x": 0,
                                 "title": None},
                         margin={"b": 40 + 22 * rows}, height=420 + 22 * rows)  # fmt: skip
    return figure


# Labels up to 400 px on a wide screen, a third of the chart on a phone: at 390 px the labels took the whole width
# and left the bars none (a cut label keeps its whole text in the tooltip).
BAR_LABEL_LIMIT = "min(400, containerSize()[0] / 3)"
# A chart's legend in one row on a wide screen, three entries a row on a phone: one row ran off its right edge there.
LEGEND_COLUMNS = "containerSize()[0] < 600 ? 3 : 0"


def cost_bars(frame: pd.DataFrame, *, value: str = "cost_per_month", label: str = "option",
              colour: str | None = None, title: str = "US$ per month") -> Any:
    """Horizontal bars, cheapest on top, drawn with Vega-Lite (Streamlit's own charts).

    The first chart a page shows is drawn this way: Plotly's script takes seconds to load in a new tab, Vega-Lite's a
    fraction of that; Plotly stays for the charts behind a tab, which load only when the tab is opened.
    """
    import altair as alt

    colours = colour_map(frame[colour]) if colour else None
    encoding: dict[str, Any] = {
        "x": alt.X(value, title=title),
        "y": alt.Y(label, sort="x", title=None, axis=alt.Axis(labelLimit=alt.ExprRef(BAR_LABEL_LIMIT))),
        "tooltip": [label, alt.Tooltip(value, format="$,.2f"), *([colour] if colour else []),
                    # a predicted self-host cost is never shown without its P10–P90 and its basis
                    *([alt.Tooltip("range", title="P10–P90")] if "range" in frame else []),
                    *(["basis"] if "basis" in frame else [])],
    }
    if colours:
        encoding["color"] = alt.Color(colour, scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                                      legend=alt.Legend(orient="bottom", title=None,
                                                        columns=alt.ExprRef(LEGEND_COLUMNS)))  # fmt: skip
    return alt.Chart(frame).mark_bar().encode(**encoding).properties(height=alt.Step(24))  # a readable row per option


def options_columns(shown: pd.DataFrame, *, option_most: int | None = None) -> dict[str, Any]:
    """Column settings of an options table as ``options_shown`` gives it: ids (up to ``option_most`` px) and money
    as wide as their longest value (a fixed width cut model ids and "$1,937–3,874"), money right-aligned, the range
    and flags explained."""
    text = st.column_config.TextColumn
    money = {"cost_per_month": "US$/month", "cost_per_call": "US$/call", "cost_per_million_tokens": "US$/1M tok"}
    columns = {name: text(label, width=text_width_px(shown[name]), alignment="right")
               for name, label in money.items() if name in shown}  # fmt: skip
    return columns | {
        "option": id_column("option", shown["option"], most=option_most),
        "range": text("P10–P90", width=text_width_px(shown["range"]),
                      help="The cost if the prediction erred as its measured p10 and p90"),
        "kind": text("kind", width=text_width_px(shown["kind"])),  # what tells the scaling modes apart
        "replicas": text("replicas", width="small", alignment="right"),
        "flags": text("⚠ check", width="medium", help="What decides whether to trust the row"),
        "gpu_offer": text("GPU offer", width="medium"),
        "basis": text("basis", width="medium"),
    }
