"""Every table on every page (and every tab of Compare) reads cleanly in AppTest, as a newcomer first opens it: a
cell without a value shows a dash, never Streamlit's grey "None", and no number is drawn as a raw float
(``53.82131324004306`` tokens/s) unless the page says how to format it.

The Prices page is the one exception to the second rule: it shows the catalog's figures exactly as published
($0.075 per 1M tokens, $2.4638 per GPU-hour), which is what a person checks a price against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest import PAGES, run_page

COMPARE_TABS = ["Cost per month", "Against volume (break-even)", "Same weights: API or self-host",
                "What moves the answer", "Check a speed claim", "Bill band (P10–P99)", "Predicted against measured"]
EXACT_FIGURES = {"prices.py"}
VIEWS = [(page.name, None) for page in sorted(PAGES.glob("*.py")) if page.name not in ("__init__.py", "compare.py")]
VIEWS += [("compare.py", tab) for tab in COMPARE_TABS]


def opened(page: str, tab: str | None) -> AppTest:
    """The page with Compare's ``tab`` open (only the open tab runs)."""
    return run_page(page, timeout_s=180, **({"cmp_tab": tab} if tab else {}))


def raw_floats(values) -> list[float]:
    """Values a table would draw to their last bit (53.82131324004306, 0.0004871999999999999) rather than to their
    precision: more than four significant digits after the point."""
    return [v for v in values if abs(v - round(v, 2)) > 1e-9 and float(f"{v:.4g}") != v][:3]


@pytest.mark.parametrize(("page", "tab"), VIEWS, ids=[f"{p}{'-' + t if t else ''}" for p, t in VIEWS])
def test_no_table_shows_a_grey_none_or_a_raw_float(page, tab):
    at = opened(page, tab)
    problems = []
    for frame in at.dataframe:
        data, proto = frame.value, frame.proto
        config = json.loads(proto.columns or "{}")
        shown = [c for c in (list(proto.column_order) or list(data.columns)) if c in data.columns]
        styled = proto.arrow_data.HasField("styler")  # a Styler formats its own cells (and says what a gap reads)
        for column in shown:
            values = data[column]
            if values.isna().any() and not proto.placeholder and not styled:
                problems.append(f"{proto.id or 'a table'}: {column} draws {values.isna().sum()} missing as None")
            formatted = (config.get(column) or {}).get("type_config", {}).get("format")
            if values.dtype.kind == "f" and not formatted and not styled and page not in EXACT_FIGURES:
                if raw := raw_floats(values.dropna()):
                    problems.append(f"{column} shows raw floats {raw}")
    assert not problems, problems


STORED_VIEWS = [("benchmark.py", None), ("scenarios.py", None), ("compare.py", "Check a speed claim"),
                ("compare.py", "Predicted against measured"), ("bill.py", None), ("batch.py", None)]


@pytest.mark.parametrize(("page", "tab"), STORED_VIEWS, ids=[f"{p}{'-' + t if t else ''}" for p, t in STORED_VIEWS])
def test_tables_of_stored_runs_and_scenarios_read_cleanly_too(page, tab, tmp_path):
    """A person's own runs, scenarios and batch jobs, where a table has a row for each: a run whose level has no TTFT,
    a scenario with and without a self-host setup, a planned batch job."""
    from infercost import store
    from tests.ui.test_runs_reach_pages import finished_run

    finished_run()
    db = store.connect()
    try:
        store.save_scenario(db, "plain", {"calls_per_day": 1000, "prompt_tokens": 500, "output_tokens": 100,
                                          "api_models": ["gpt-4o-mini"]})  # fmt: skip
        store.save_scenario(db, "with a setup", {"calls_per_day": 250_000, "prompt_tokens": 800, "output_tokens": 300,
                                                 "api_models": ["gpt-4o"], "self_host": [
                                                     {"name": "8b", "gpu": "H100 SXM", "gpu_price_per_hour": 2.5,
                                                      "throughput": {"roofline": {"model": "llama-3.1-8b",
                                                                                  "gpu": "H100 SXM"}}}]})  # fmt: skip
    finally:
        db.close()
    planned_batch_job(tmp_path)
    test_no_table_shows_a_grey_none_or_a_raw_float(page, tab)


def planned_batch_job(tmp_path: Path) -> str:
    """A job planned (its budget counted and priced), nothing sent: the Batch page lists it and follows it."""
    from infercost import batch
    from tests.batch.conftest import write_batch_file

    source = write_batch_file(tmp_path / "requests.jsonl", 101, seed=101)  # a budget of $0.0006730499999999999
    config = batch.JobConfig(base_url="http://127.0.0.1:9/v1", model="m", out_dir=str(tmp_path / "out"))
    return batch.create_job(source, config, price="gpt-4o-mini")["job_id"]
