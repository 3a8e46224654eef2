"""The HTML report says where each self-host figure came from (the roofline's calibration, the fit's error...)."""

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
