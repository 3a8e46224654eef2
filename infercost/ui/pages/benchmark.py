"""Benchmark: measure an engine (a URL, or a random model in process), then compare stored runs."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from infercost import store
from infercost.errors import InputError
from infercost.runner.backends import BackendOptions
from infercost.runner.jobs import BenchJob, comparison_rows
from infercost.runner.soak import MIN_WINDOWS
from infercost.runner.sweep import SweepConfig, parse_levels, run_summary
from infercost.runner.sweep_registry import IN_PROCESS, SWEEPS, RunningSweep
from infercost.ui.format import colour_map, data_table, show_table
from infercost.ui.prediction import show_prediction

TARGETS = {"OpenAI-compatible URL": "openai", "In process (transformers)": "transformers"}
LATENCIES = ("ttft", "tpot")


def config_from_form() -> SweepConfig:
    state = st.session_state
    backend = TARGETS[state["bench_target"]]
    options = BackendOptions(model=state["bench_model"].strip(), base_url=state["bench_base_url"].strip() or None,
                             api=state["bench_api"], api_key_env=state["bench_api_key_env"].strip(),
                             device="cpu" if backend == "transformers" and state["bench_cpu_only"] else "auto")
    if not options.model:
        raise InputError("model", "give the model name the server knows, or random:<architecture>")
    soak = {"duration_s": float(state["bench_duration_s"]), "window_s": float(state["bench_window_s"]),
            "requests": None} if state["bench_soak"] else {"requests": int(state["bench_requests"])}  # fmt: skip
    return SweepConfig(backend=backend, options=options, levels=parse_levels(state["bench_concurrency"]),
                       input_tokens=int(state["bench_input_tokens"]), output_tokens=int(state["bench_output_tokens"]),
                       **soak)


def soak_form() -> None:
    """The CLI's ``--duration`` and ``--windows``: each level held for a time, summarised per window, tested for drift.
    (A toggle, not an expander: the form already sits in one, and Streamlit does not nest them.)"""
    soak = st.toggle("Soak: hold each level for a duration and test the speed for drift", key="bench_soak",
                     help="as bench --duration S --windows W: latency per window and a Mann-Kendall drift test")
    if not soak:
        return
    left, right = st.columns(2)
    duration = left.number_input("Seconds per level", key="bench_duration_s", min_value=1.0, max_value=86_400.0,
                                 value=600.0, step=60.0, help="stop sending new requests after this long")
    window = right.number_input("Window (s)", key="bench_window_s", min_value=0.1, max_value=86_400.0, value=60.0,
                                step=10.0, help="summarise each level per window of this many seconds")
    windows = int(duration // window)
    note = (f"{windows} windows per level; the drift test needs at least {MIN_WINDOWS}." if windows < MIN_WINDOWS
            else f"{windows} windows per level. Requests per level: as many as fit in the duration.")
    st.caption(note)


def sweep_form() -> None:
    st.radio("Target", list(TARGETS), key="bench_target", horizontal=True)
    in_process = TARGETS[st.session_state["bench_target"]] == "transformers"
    # a row of two per pair: on a phone the columns stack, and a pair (input and output tokens) stays together
    left, right = st.columns(2)
    left.text_input("Base URL", key="bench_base_url", value="http://127.0.0.1:8000/v1", disabled=in_process)
    right.text_input("Model", key="bench_model", value="random:tiny-llama" if in_process else "",
                     help="the server's model name, or random:<architecture> / a model directory in process")
    left, right = st.columns(2)
    left.selectbox("API", ["completions", "chat"], key="bench_api", disabled=in_process)
    right.text_input("API key environment variable", key="bench_api_key_env", value="OPENAI_API_KEY",
                     disabled=in_process,
                     help="the key is read from this variable and never stored")
    left, right = st.columns(2)
    left.text_input("Concurrency (batch sizes in process)", key="bench_concurrency", value="1,5,20,50")
    right.number_input("Requests per level", key="bench_requests", min_value=1, max_value=100_000, value=20,
                       disabled=bool(st.session_state.get("bench_soak")), help="a soak sends for its duration instead")
    left, right = st.columns(2)
    left.number_input("Input tokens", key="bench_input_tokens", min_value=1, max_value=1_000_000, value=128)
    right.number_input("Output tokens", key="bench_output_tokens", min_value=1, max_value=100_000, value=64)
    st.checkbox("In process: CPU only", key="bench_cpu_only", value=True, disabled=not in_process)
    soak_form()
    target = IN_PROCESS if in_process else st.session_state["bench_base_url"].strip().rstrip("/")
    busy = SWEEPS.busy(target)
    if st.button("Start sweep", type="primary", key="start", disabled=busy,
                 help="A sweep against this target is running: follow or cancel it below." if busy else None):
        try:
            entry = SWEEPS.start(BenchJob(config_from_form()))
        except InputError as error:
            st.error(f"Please check **{error.field}**: {error.reason}", icon="⚠️")
        else:
            st.session_state["bench_job"], st.session_state["bench_sweep"] = entry.job, entry.id
            st.session_state.setdefault("bench_seen", []).append(entry.id)
            st.rerun()  # draw the form again, its Start button now disabled


def progress_line(entry: RunningSweep) -> str:
    p = entry.job.progress
    return (f"{entry.target}: level {p.level}/{p.levels}, load {p.load:g}, {p.phase}: "
            f"{p.done}/{p.planned or '?'} requests, {p.failed} failed")


@st.fragment(run_every=1.0)
def job_status() -> None:
    """Every sweep running in this app, whoever started it (before or after a reload), and how each one seen ended."""
    own_id = st.session_state.get("bench_sweep")
    seen: list[str] = st.session_state.setdefault("bench_seen", [])
    for entry in SWEEPS.running():
        if entry.id not in seen:
            seen.append(entry.id)
        st.progress(entry.job.fraction, text=progress_line(entry))
        if st.button("Cancel", key="cancel" if entry.id == own_id else f"cancel_{entry.id}"):
            entry.job.cancel.set()
    ended = [entry for entry in map(SWEEPS.find, seen) if entry is not None and not entry.running]
    for entry in ended:
        job = entry.job
        if job.error:
            st.error(f"The sweep against {entry.target} stopped: {job.error}", icon="⚠️")
        else:
            st.success(f"Run {job.run_id} {'cancelled' if job.cancel.is_set() else 'done'}: stored below.")
    shown: list[str] = st.session_state.setdefault("bench_shown", [])
    if any(entry.id not in shown for entry in ended):  # redraw the whole page once, so the run really is below
        shown += [entry.id for entry in ended if entry.id not in shown]
        st.rerun()


def stored_runs() -> None:
    db = store.connect()
    try:
        runs = store.list_runs(db)
    finally:
        db.close()
    if not runs:
        st.info("No stored runs yet: start a sweep above, or `python -m infercost bench ...` / `runs import`.")
        return
    table = pd.DataFrame(runs)[["id", "created_at", "status", "source", "backend", "model", "levels_done",
                                "requests"]]
    data_table(table, hide_index=True)
    ids = [run["id"] for run in runs]
    chosen = st.multiselect("Runs to compare", ids, default=ids[:1], key="compare_runs")
    for run_id in chosen:  # a shape the server did not honour: the run is not of the shape it is labelled with
        for warning in run_summary(None, run_id)["warnings"]:
            st.warning(f"Run {run_id}: {warning}.", icon="⚠️")
    if chosen:
        plots(pd.DataFrame(comparison_rows(None, chosen)))
        engine_model(chosen)
        diagnosis_panel(chosen)


def engine_model(chosen: list[str]) -> None:
    """The engine model calibrated on a run, drawn beside its points, and carried to a token shape of your choice."""
    from infercost.performance.profiles import find_profile

    st.subheader("Engine model against a run")
    left, middle, right = st.columns(3)
    run_id = left.selectbox("Run", chosen, key="engine_run")
    try:
        profile = find_profile(run_id)
    except InputError as error:
        st.info(str(error))
        return
    if not (profile.input_len and profile.output_len):
        st.info("This run does not say the token shape it was measured at, so the engine model cannot be fitted.")
        return
    shape = (round(profile.input_len), round(profile.output_len))
    target = (int(middle.number_input("Predict at input tokens", 1, 2_000_000, shape[0], key="engine_input")),
              int(right.number_input("and output tokens", 1, 2_000_000, shape[1], key="engine_output")))  # fmt: skip
    show_prediction(run_id, profile.points, shape, target, key="engine_chart")


def plots(frame: pd.DataFrame) -> None:
    if frame.empty:
        st.info("These runs have no finished level yet.")
        return
    colours = colour_map(frame["run"])
    left, right = st.columns(2)
    left.plotly_chart(px.line(frame, x="load", y="output_throughput", color="run", markers=True,
                              color_discrete_map=colours,
                              labels={"load": "concurrency", "output_throughput": "output tokens/s (all users)"},
                              title="Throughput against concurrency"), key="plot_throughput")
    right.plotly_chart(px.line(frame, x="output_throughput", y="median_user_tokens_per_s", color="run",
                               color_discrete_map=colours,
                               markers=True, hover_data=["load"], title="Per-user speed against aggregate throughput",
                               labels={"output_throughput": "output tokens/s (all users)",
                                       "median_user_tokens_per_s": "tokens/s per user (median)"}),
                       key="plot_tradeoff")
    for metric in LATENCIES:
        columns = [c for c in (f"p50_{metric}_ms", f"p95_{metric}_ms", f"p99_{metric}_ms") if frame[c].notna().any()]
        if not columns:
            continue
        long = frame.melt(id_vars=["run", "load"], value_vars=columns, var_name="percentile", value_name="ms")
        st.plotly_chart(px.line(long, x="load", y="ms", color="run", line_dash="percentile", markers=True,
                                color_discrete_map=colours,
                                title=f"{metric.upper()} percentiles against concurrency",
                                labels={"load": "concurrency"}), key=f"plot_{metric}")
    show_table(frame, hide_index=True)


# -- Diagnosis and soak (issue 12) ---------------------------------------------------------------------------------


def diagnosis_panel(chosen: list[str]) -> None:
    """``diagnose`` for one run, step by step in the article's order, and its latency over time if it was soaked."""
    from infercost.runner.diagnose import diagnose_run

    st.subheader("Diagnosis")
    left, right = st.columns(2)
    run_id = left.selectbox("Run", chosen, key="diagnose_run")
    against = right.text_input("Against a claim or run (optional)", key="diagnose_against",
                               help="a published:/measured: id, or another run id").strip()
    try:
        report = diagnose_run(None, run_id, against or None)
    except InputError as error:
        st.error(f"Please check **{error.field}**: {error.reason}", icon="⚠️")
        return
    for number, step in enumerate(report["steps"], 1):
        st.markdown(f"**{number}. {step['title']}**")
        st.markdown("\n".join([f"- {note}" for note in step["found"]]
                               + [f"- *could not check:* {note}" for note in step["could_not_check"]]))
    latency_over_time(run_summary(None, run_id)["levels"])


def latency_over_time(levels: list[dict]) -> None:
    """P50/P95 TPOT and TTFT per window, one line per level, with each level's drift verdict."""
    rows = [{"load": f"load {level.get('concurrency') or level.get('batch_size') or level.get('rate'):g}",
             "t_s": (w["t_start_s"] + w["t_end_s"]) / 2, **{k: w[k] for k in ("p50_tpot_ms", "p95_tpot_ms",
                                                                            "p50_ttft_ms", "p95_ttft_ms")}}
            for level in levels for w in level.get("over_time") or []]
    if not rows:
        st.caption("Not a soak run: turn on Soak above (or bench with --duration and --windows) to see latency over "
                   "time.")
        return
    frame = pd.DataFrame(rows)
    for metric in ("tpot", "ttft"):
        long = frame.melt(id_vars=["load", "t_s"], value_vars=[f"p50_{metric}_ms", f"p95_{metric}_ms"],
                          var_name="percentile", value_name="ms")
        st.plotly_chart(px.line(long, x="t_s", y="ms", color="load", line_dash="percentile", markers=True,
                                labels={"t_s": "seconds into the level"},
                                title=f"{metric.upper()} over time"), key=f"plot_over_time_{metric}")
    verdicts = [{"load": level.get("concurrency"), **level["drift"]} for level in levels if level.get("drift")]
    show_table(pd.DataFrame(verdicts), hide_index=True)


st.title("Benchmark")
st.caption("Measure an engine with vLLM's meanings (TTFT, TPOT, ITL, E2EL); every request is stored as it "
           "completes. Per-user speed and aggregate throughput always come together, at the concurrency measured.")
with st.expander("Run a sweep", expanded=True):
    sweep_form()
    job_status()
st.subheader("Stored runs")
stored_runs()
