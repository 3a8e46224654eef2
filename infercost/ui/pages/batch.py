"""Batch jobs: a file of requests, its budget before sending, the job followed as it runs, the bill after.

Layout only: every number comes from ``infercost.batch``; a job runs in its own process (as from the CLI), so it
survives reruns, and a job started from the CLI shows here too.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import streamlit as st

from infercost import batch
from infercost.batch.background import (
    as_uploaded,
    default_out_dir,
    readable_input,
    save_upload,
    start_in_background,
    zip_outputs,
)
from infercost.errors import InputError
from infercost.numbers import money
from infercost.ui.cached import catalog_json, show_input_error
from infercost.ui.format import data_table, number

NO_PRICE = "(no pricing)"
BACKEND_NAMES = {"http": "OpenAI-compatible HTTP server", "transformers": "In process (transformers)"}
EXECUTOR_NAMES = {"local": "Local (this machine)", "ray": "Ray"}
RUNNING = ("running",)
RESUMABLE = ("created", "paused", "interrupted", "stopped_max_cost", "failed")


@st.cache_data(max_entries=2, show_spinner="Zipping the outputs…")
def outputs_zip(out_dir: str, files: tuple[str, ...]) -> bytes:
    """Built once per set of files (they never change once written), not on every refresh of the view."""
    return zip_outputs(out_dir)


def input_path() -> Path | None:
    if st.session_state["source"] == "Upload":
        upload = st.session_state.get("upload")  # the form's uploader, drawn before the button is pressed
        return save_upload(upload.name, upload.getvalue()) if upload is not None else None
    path = st.session_state["input_path"].strip()
    return readable_input(Path(path)) if path else None


def job_config() -> batch.JobConfig:
    """The form as the CLI's ``batch run`` options; ``create_job`` checks them as it checks the CLI's."""
    state = st.session_state
    if not state["model"].strip():
        raise InputError("model", "give the model name the server knows, or the model to load in process")
    in_process = state["backend"] == "transformers"
    return batch.JobConfig(
        base_url=None if in_process else state["base_url"].strip(), model=state["model"].strip(),
        out_dir=state["out_dir"].strip(), shard_size=int(state["shard_size"]), concurrency=int(state["concurrency"]),
        max_cost=float(state["max_cost"]) or None, field=state["field"].strip() or None,
        template=state["template"], max_tokens=int(state["max_tokens"]) or None, backend=state["backend"],
        executor=state["executor"], address=state["address"].strip() or None, actors=int(state["actors"]),
        gpus=bool(state["gpus"]))


def engine_form() -> None:
    """Where the records go: a server over HTTP, or a model run in process (locally, or in Ray actors)."""
    st.radio("Backend", batch.BACKENDS, key="backend", horizontal=True, format_func=lambda b: BACKEND_NAMES.get(b, b))
    in_process = st.session_state["backend"] == "transformers"
    left, right = st.columns(2)
    left.text_input("Base URL", key="base_url", value="http://127.0.0.1:8000/v1", disabled=in_process)
    right.text_input("Model", key="model", placeholder="random:tiny-llama" if in_process else None,
                     help="the server's model name (replaces each body's model); in process: random:<architecture> "
                          "or a model directory")  # fmt: skip
    left, right = st.columns(2)  # a row per pair: on a phone the columns stack and a pair stays together
    executor = left.selectbox("Executor", batch.EXECUTORS, key="executor",
                              format_func=lambda e: EXECUTOR_NAMES.get(e, e),
                              help="Ray: shards as Ray tasks; in process, the model in Ray actors")  # fmt: skip
    right.text_input("Ray address (empty: a local Ray instance)", key="address", disabled=executor != "ray")
    left, right = st.columns(2)
    left.number_input("Ray actors, each loading the model", key="actors", min_value=1, max_value=1024, value=1,
                      disabled=not in_process)  # fmt: skip
    right.checkbox("One GPU per actor", key="gpus", disabled=not in_process)


def new_job_form() -> None:
    st.radio("Input", ["Upload", "A path on this machine"], key="source", horizontal=True)
    if st.session_state["source"] == "Upload":
        st.file_uploader("OpenAI batch JSONL, or JSONL/CSV/Parquet/TXT records", key="upload",
                         type=["jsonl", "json", "ndjson", "csv", "tsv", "parquet", "txt"])
    else:
        st.text_input("Path", key="input_path", placeholder="/data/requests.jsonl",
                      help="a file in the app's upload folder, or anywhere on this machine if the app was started "
                           "with --allow-local-paths")
    engine_form()
    left, right = st.columns(2)
    prices = [NO_PRICE] + sorted(entry["id"] for entry in catalog_json())
    left.selectbox("Price as", prices, key="price", help="a catalog model's per-token prices, and its tokenizer")
    right.number_input("Cost cap, USD (0: none)", key="max_cost", min_value=0.0, value=0.0, step=1.0)
    left, right = st.columns(2)
    left.number_input("Concurrency", key="concurrency", min_value=1, max_value=1024, value=16)
    right.number_input("Records per shard", key="shard_size", min_value=1, max_value=1_000_000, value=1000)
    left, right = st.columns(2)
    left.text_input("Output folder", key="out_dir", value=str(default_out_dir()))
    right.number_input("max_tokens where a record sets none (0: leave unset)", key="max_tokens", min_value=0,
                       value=0)
    with st.expander("Plain records (JSONL/CSV/Parquet/TXT instead of an OpenAI batch file)"):
        st.text_input("Field holding the text", key="field")
        st.text_input("Prompt template", key="template", value="{text}")
    if st.button("Plan the budget", type="primary", key="plan"):
        plan_job()


def plan_job() -> None:
    path = None
    try:
        path = input_path()
        if path is None:
            raise InputError("input", "upload a file or give its path")
        price = st.session_state["price"]
        with st.spinner("Counting tokens…"):
            created = batch.create_job(path, job_config(), price=None if price == NO_PRICE else price)
        st.session_state["batch_job"] = created["job_id"]
    except InputError as error:
        upload = st.session_state.get("upload") if st.session_state["source"] == "Upload" else None
        show_input_error(as_uploaded(error, path, upload.name) if upload is not None and path is not None else error)


LINE_TEXT = {"cost (USD)": money, "duration (s)": lambda v: number(v, unit="s"),
             "throughput (records/s)": lambda v: number(v, unit="records/s")}  # fmt: skip


def line_text(line: str, value: float | None) -> str:
    """A budget line's figure with its unit, "–" where there is none (no pricing): never a grey None or -46.1968."""
    return LINE_TEXT.get(line, number)(value)


def budget_table(budget: dict) -> pd.DataFrame:
    rows = [("records", budget["records"]), ("input tokens", budget["input_tokens"]),
            ("output tokens", budget["output_tokens"]), ("retries", budget["retries"]),
            ("cost (USD)", budget["cost"]), ("duration (s)", budget["duration_s"])]
    return pd.DataFrame([{"line": line, "budget": line_text(line, value)} for line, value in rows])


def versus_table(rows: list[dict]) -> pd.DataFrame:
    """Budget against actual as text: each figure in its line's unit, the difference also as a percentage."""
    return pd.DataFrame([{
        "line": row["line"], **{key: line_text(row["line"], row[key]) for key in ("budget", "actual", "difference")},
        "difference (%)": "–" if row["difference_pct"] is None else f"{row['difference_pct']:+.1f}%",
        "why": row["why"] or "–"} for row in rows])  # fmt: skip


def controls(status: dict) -> None:
    job_id, state = status["job_id"], status["status"]
    left, middle, right, last = st.columns(4)
    if state in RESUMABLE and status["counts"]["pending"]:
        if left.button("Start" if state == "created" else "Resume", type="primary", key="start"):
            start(job_id)
    if state in RUNNING:
        if middle.button("Pause", key="pause"):
            batch.control_job(job_id, "pause")
        if right.button("Cancel", key="cancel"):
            batch.control_job(job_id, "cancel")
    if state not in RUNNING and status["counts"]["failed"]:
        if last.button("Retry failed", key="retry"):
            start(job_id, retry_failed=True)


def start(job_id: str, *, retry_failed: bool = False) -> None:
    """Start the job's own process and redraw only the job's view: a rerun of the whole page took 6 s on a busy
    machine before anything moved, on top of the process's own start."""
    start_in_background(job_id, retry_failed=retry_failed)
    st.session_state["batch_starting"] = (job_id, time.monotonic())
    st.rerun(scope="fragment")


STARTING_NOTE_S = 60  # the job's process says it runs within seconds; past this the note would mislead


def starting_note(status: dict) -> None:
    """Between Start and the job's process taking the job, say that it is starting (the progress bar stands still)."""
    job_id, since = st.session_state.get("batch_starting") or (None, 0.0)
    if job_id != status["job_id"] or status["status"] in RUNNING or time.monotonic() - since > STARTING_NOTE_S:
        return
    if status["status"] in RESUMABLE:
        st.info(f"Starting the job's own process (`python -m infercost batch resume {job_id}`) …",
                icon=":material/hourglass_top:")


@st.fragment(run_every=1.0)
def job_view() -> None:
    job_id = st.session_state.get("batch_job")
    if not job_id:
        return
    try:
        status = batch.job_status(job_id)
    except InputError as error:
        show_input_error(error)
        return
    counts = status["counts"]
    done = counts["ok"] + counts["failed"]
    st.subheader(f"{job_id}: {status['status']}")
    st.progress(done / max(1, counts["records"]), text=f"{done:,} of {counts['records']:,} records: "
                                                         f"{counts['ok']:,} ok, {counts['failed']:,} failed")
    budget_cost = status["budget"]["cost"]
    priced = budget_cost is not None
    a, b, c = st.columns(3)
    a.metric("Budget", f"${budget_cost:,.4f}" if priced else "-")
    b.metric("Spent", f"${status['spent']:,.4f}" if priced else "-")
    projected = status["projected_cost"]
    c.metric("Projected total", f"${projected:,.4f}" if priced and projected is not None else "-")
    starting_note(status)
    controls(status)
    for warning in status["budget"]["warnings"] + (status["actual"] or {}).get("warnings", []):
        st.warning(warning)
    st.caption(f"Pricing: {status['budget']['pricing']['basis']}. Outputs: {status['out_dir']} "
               f"({status['shards_written']} of {status['shards_total']} shards written).")
    if status["budget_vs_actual"]:
        data_table(versus_table(status["budget_vs_actual"]), hide_index=True, key="versus")
    else:
        data_table(budget_table(status["budget"]), hide_index=True, key="budget")
    if status["files"] and status["status"] not in RUNNING:
        st.download_button("Download outputs (zip)", outputs_zip(status["out_dir"], tuple(status["files"])),
                            file_name=f"{job_id}.zip", key="download")


@st.fragment(run_every=2.0)
def stored_jobs() -> None:
    jobs = batch.list_jobs()
    if not jobs:
        st.info("No batch jobs yet: plan one above, or run `python -m infercost batch run INPUT --base-url URL "
                "--model NAME --out DIR`.")
        return
    table = pd.DataFrame(jobs)
    for column in ("budget_cost", "actual_cost"):  # dollars to the cent, or to two digits below one (-> "$0.00067")
        table[column] = table[column].map(money)  # a job not yet run: "–"
    data_table(table, hide_index=True, key="jobs", column_config={
        "budget_cost": st.column_config.TextColumn("budget (US$)", alignment="right"),
        "actual_cost": st.column_config.TextColumn("actual (US$)", alignment="right")})
    ids = [job["job_id"] for job in jobs]
    current = st.session_state.get("batch_job")
    if current in ids:  # the job just planned (or picked) is the one followed: the picker shows it, never an older one
        st.session_state["follow"] = current
    st.selectbox("Follow job", ids, key="follow", on_change=follow_picked)
    if current not in ids:
        follow_picked()
        st.rerun()


def follow_picked() -> None:
    st.session_state["batch_job"] = st.session_state["follow"]


st.title("Batch jobs")
st.caption("An OpenAI batch file sent to any OpenAI-compatible server, or run by a model in process (locally or in "
           "Ray actors): the budget before, every record checkpointed as it completes (a stopped or killed job "
           "resumes), outputs per shard, and the bill beside the budget.")
with st.expander("New job", expanded=not st.session_state.get("batch_job")):
    new_job_form()
stored_jobs()
job_view()
