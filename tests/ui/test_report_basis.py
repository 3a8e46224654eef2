"""The HTML report says where each self-host figure came from (the roofline's calibration, the fit's error...)."""

import re

from infercost.estimate import estimate, run_loader
from infercost.profile import parse_profile
from infercost.report import render_report

PROFILE = {"calls_per_day": 1000, "prompt_tokens": 500, "output_tokens": 200, "api_models": ["gpt-4o-mini"],
           "self_host": [{"name": "8b-on-h100", "gpu_price_per_hour": 2.5,
                          "throughput": {"roofline": {"model": "llama-3.1-8b", "gpu": "H100 SXM"}}}]}  # fmt: skip


def test_the_html_report_keeps_the_basis_note_of_a_self_host_figure():
    document = estimate(parse_profile(PROFILE), load_run=run_loader())
    note = document["self_host"][0]["basis_note"]
    assert note  # the roofline's calibration, the fit's error...
    assert note in render_report(document, "html").replace("&#x27;", "'")


def test_no_report_reads_none_or_nan_where_a_row_has_no_value():
    # An API row has no replicas and an infeasible setup no cost: a blank or "-", never the words None or nan.
    infeasible = {**PROFILE["self_host"][0], "name": "too-strict", "slo": {"p95_ttft_ms": 1, "p95_tpot_ms": 1}}
    document = estimate(parse_profile({**PROFILE, "self_host": [*PROFILE["self_host"], infeasible]}),
                        load_run=run_loader())  # fmt: skip
    both = {"a": document, "b": document}  # two scenarios: the comparison table too
    for fmt in ("markdown", "csv", "html"):
        text = render_report(both, fmt)
        assert not re.search(r"\bNone\b|\bnan\b|\bNaN\b", text), fmt
