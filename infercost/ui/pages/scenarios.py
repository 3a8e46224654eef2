"""What-if scenarios: save the form under a name, load, copy, rename, delete, compare side by side, share and export."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import closing
from urllib.parse import urlencode

import pandas as pd
import plotly.express as px
import streamlit as st

from infercost.errors import InputError
from infercost.report import EXTENSIONS, FORMATS, MEDIA_TYPES, render_report
from infercost.scenarios import (
    apply_query_params,
    compare_scenarios,
    load_into_state,
    profile_to_query,
    scenario_file,
)
from infercost.store import (
    Store,
    connect,
    delete_scenario,
    describe,
    duplicate_scenario,
    list_scenarios,
    rename_scenario,
    save_scenario,
)
from infercost.ui.cached import banded_estimate_json, catalog_json, show_input_error
from infercost.ui.format import colour_map, data_table, fit_legend, options_shown, text_width_px
from infercost.ui.state import WORKLOAD_DEFAULTS, init_state, profile_document

FLASH = "scenario_flash"  # a message that survives the rerun after a change to the list
SHOWN = ["scenario", "option", "kind", "cost_per_month", "cost_per_month_p10_p90", "basis", "cost_per_call",
         "cost_per_million_tokens", "fidelity", "price_as_of"]  # fmt: skip
MONEY = {  # text (options_shown): a setup without a cost reads "SLO not met", not a grey "None"
    "cost_per_month": st.column_config.TextColumn("US$/month", alignment="right"),
    "cost_per_month_p10_p90": st.column_config.TextColumn("P10–P90", help="The cost if the prediction erred as its "
                                                          "measured p10 and p90"),
    "cost_per_call": st.column_config.TextColumn("US$/call", alignment="right"),
    "cost_per_million_tokens": st.column_config.TextColumn("US$/1M tokens", alignment="right"),
}


def database() -> closing[Store]:
    return closing(connect())


def change(action: Callable[[Store], object], message: str) -> None:
    """Run a store action; on success keep the message for the rerun that shows the new list."""
    try:
        with database() as db:
            action(db)
    except InputError as error:
        show_input_error(error)
        return
    st.session_state[FLASH] = message
    st.rerun()


def summary_row(scenario: dict) -> dict:
    """What tells saved scenarios apart at a glance."""
    profile = scenario["profile"]
    shown = {key: profile.get(key) for key in ("calls_per_day", "prompt_tokens", "output_tokens", "retry_rate")}
    return {"name": scenario["name"], **shown, "models": len(profile.get("api_models") or []),
            "self-host setups": len(profile.get("self_host") or []), "notes": scenario["notes"],
            "updated": scenario["updated_at"]}  # fmt: skip


def profile_json(profile: dict) -> str:
    return json.dumps(profile, sort_keys=True, default=str)


def file_stem(name: str) -> str:
    """A scenario name as a file name: no slashes or spaces that a download would mangle."""
    return re.sub(r"[^\w.-]+", "-", name).strip("-.") or "scenario"


def downloads(document: dict, stem: str, key: str) -> None:
    """One download button per report format."""
    stem = file_stem(stem)
    for column, fmt in zip(st.columns(len(FORMATS)), FORMATS, strict=True):
        column.download_button(f"Report ({fmt})", render_report(document, fmt), file_name=f"{stem}.{EXTENSIONS[fmt]}",
                               mime=MEDIA_TYPES[fmt], key=f"{key}_{fmt}")  # fmt: skip


def load_scenario(profile: dict, name: str) -> None:
    """A callback, so the form's fields (the scenario name among them) are set before their widgets are drawn."""
    load_into_state(st.session_state, profile)
    st.session_state[FLASH] = f"Loaded {name!r}: open Workload and bill to see its bill."


def follow_saved_list(state, names: list[str]) -> None:
    """When the saved list changes, the picker keeps the picks that still exist and offers two where it had fewer.

    A widget's ``default`` is read once, so a default of "the first two" went stale as scenarios were saved.
    """
    if state.get("_compare_names_of") == names:
        return
    kept = [name for name in state.get("compare_names", []) if name in names]
    state["compare_names"] = kept if len(kept) >= 2 else list(dict.fromkeys([*kept, *names]))[:2]
    state["_compare_names_of"] = names


catalog = catalog_json()
yours = [entry["id"] for entry in st.session_state.get("price_overrides", [])]
init_state(st.session_state, list(dict.fromkeys([entry["id"] for entry in catalog] + yours)))
try:
    apply_query_params(st.session_state, st.query_params, WORKLOAD_DEFAULTS)  # a shared link opened on this page
except InputError as error:
    show_input_error(error)

st.title("Scenarios")
st.caption("Save the workload form under a name, change one thing, and compare. Scenarios live in "
           f"{describe()}; share one as a link or a file.")  # fmt: skip
if message := st.session_state.pop(FLASH, None):
    st.success(message)

current = profile_document(st.session_state)
with st.container(border=True):
    st.subheader("The current form")
    left, right = st.columns([1, 2])
    # the profile's own name field: the report, the link and the file say what the scenario is saved as
    name = left.text_input("Scenario name", key="name")
    notes = right.text_input("Notes", key="scenario_notes", placeholder="what this scenario assumes")
    replaces = "Saving under an existing name replaces that scenario's profile (its notes stay unless given)."
    if st.button("Save scenario", key="save_scenario", type="primary", help=replaces):
        scenario = {**current, "name": name.strip()}
        change(lambda db: save_scenario(db, name.strip(), scenario, notes=notes or None), f"Saved {name.strip()!r}.")
    try:
        st.download_button("Scenario file (JSON)", scenario_file(current), file_name=f"{file_stem(name)}.json",
                           mime="application/json", key="download_scenario_file",
                           help="A profile file: python -m infercost estimate FILE reads it as it is.")  # fmt: skip
        downloads(banded_estimate_json(profile_json(current)), name or "report", "download_current")
    except InputError as error:
        show_input_error(error)
    query = profile_to_query(current)
    base = (st.context.url or "http://127.0.0.1:8501/scenarios").removesuffix("/scenarios") + "/"
    st.markdown("**Share as a link** (opens the app with this form filled in)")
    st.code(f"{base}?{urlencode(query)}", language=None)
    if st.button("Put it in the address bar", key="share_in_url"):
        st.query_params.from_dict(query)

with database() as db:
    saved = list_scenarios(db)
names = [scenario["name"] for scenario in saved]

st.subheader("Saved scenarios")
if not saved:
    st.info("No saved scenarios yet: name the current form above and save it.")
    st.stop()
data_table(pd.DataFrame([summary_row(s) for s in saved]), hide_index=True, key="scenario_table")
chosen = st.selectbox("Scenario", names, key="scenario_selected")
profile = next(s["profile"] for s in saved if s["name"] == chosen)
load, copy, rename, delete = st.columns(4)
load.button("Load into the form", key="load_scenario", on_click=load_scenario, args=(profile, chosen))
new_name = copy.text_input("New name", key="scenario_new_name", placeholder=f"{chosen} (copy)")
if copy.button("Duplicate", key="duplicate_scenario"):
    target = new_name or f"{chosen} (copy)"
    change(lambda db: duplicate_scenario(db, chosen, target), f"Copied {chosen!r} to {target!r}.")
if rename.button("Rename to the new name", key="rename_scenario", disabled=not new_name):
    change(lambda db: rename_scenario(db, chosen, new_name), f"Renamed {chosen!r} to {new_name!r}.")
if delete.button("Delete", key="delete_scenario"):
    change(lambda db: delete_scenario(db, chosen), f"Deleted {chosen!r}.")
st.download_button("Scenario file (JSON)", json.dumps(profile, indent=2, ensure_ascii=False) + "\n",
                   file_name=f"{file_stem(chosen)}.json", mime="application/json",
                   key="download_saved_file")  # fmt: skip

st.subheader("Compare side by side")
follow_saved_list(st.session_state, names)
picked = st.multiselect("Scenarios to compare", names, key="compare_names")
if len(picked) < 2:
    st.info("Pick two or more scenarios.")
    st.stop()
estimates = {}
for scenario in picked:
    try:
        saved_profile = next(s["profile"] for s in saved if s["name"] == scenario)
        estimates[scenario] = banded_estimate_json(profile_json(saved_profile))
    except InputError as error:
        show_input_error(error)
comparison = compare_scenarios(estimates)
shown = options_shown(comparison[SHOWN])
widths = {column: {**MONEY[column], "width": text_width_px(shown[column])} for column in MONEY}  # never cut a value
data_table(shown, hide_index=True, column_config=widths, key="comparison_table")
bars = comparison.dropna(subset=["cost_per_month"])
figure = px.bar(bars, x="option", y="cost_per_month", color="scenario", barmode="group",
                color_discrete_map=colour_map(bars["scenario"]),
                labels={"cost_per_month": "US$ per month", "option": ""})  # fmt: skip
fit_legend(figure, bars["scenario"].nunique())
st.plotly_chart(figure, key="comparison_chart")
downloads(estimates, "comparison", "download_comparison")
