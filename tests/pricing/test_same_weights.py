"""The same weights side by side: a self-host setup lists every API offer of the weights it serves, priced as the API
rows are, and ready-made setups put an open model on every GPU type where it fits."""

import json
import re

import pytest

from infercost.errors import InputError
from infercost.estimate import estimate
from infercost.performance.predict import predict_roofline
from infercost.pricing import bundled_api_prices, bundled_gpu_prices, cheapest_offer
from infercost.pricing.open_weights import offers_of_weights
from infercost.profile import parse_profile
from infercost.same_weights import open_models, ready_made_setups, same_weights_profile

WORKLOAD = {"calls_per_day": 50_000, "prompt_tokens": 1200, "output_tokens": 300}
ROOFLINE = {"roofline": {"model": "gpt-oss-120b", "gpu": "H100 SXM", "dtype": "mxfp4"}}
GPT_OSS_ON_H100 = {"name": "gpt-oss on one H100", "gpu": "H100 SXM", "gpu_price_per_hour": 2.5, "throughput": ROOFLINE}


def _estimate(document):
    return estimate(parse_profile(document))


def test_a_roofline_setup_lists_every_offer_of_its_weights_at_the_api_rows_costs():
    offers = [price.id for _, price in offers_of_weights("openai/gpt-oss-120b", bundled_api_prices()).offers]
    result = _estimate(WORKLOAD | {"api_models": offers, "self_host": [GPT_OSS_ON_H100]})
    row = result["self_host"][0]
    assert row["model"] == "openai/gpt-oss-120b"
    listed = row["same_weights"]
    exact = [o for o in listed if o["match"] == "exact"]
    assert len(exact) >= 4 and {o["model"] for o in listed} == set(offers)
    api = {r["model"]: r for r in result["api"]}
    for offer in listed:  # the very figures of the API rows, to the cent
        assert offer["cost_per_month"] == api[offer["model"]]["cost_per_month"]
        assert offer["cost_per_million_tokens"] == api[offer["model"]]["cost_per_million_tokens"]
        assert offer["break_even"] == row["break_even"][offer["model"]]
    assert [o["cost_per_month"] for o in listed] == sorted(o["cost_per_month"] for o in listed)


def test_offers_outside_the_profiles_api_models_are_priced_the_same_way():
    """A profile that names no API models still sees the offers of its setup's weights, priced as API rows would."""
    alone = _estimate(WORKLOAD | {"self_host": [GPT_OSS_ON_H100]})["self_host"][0]["same_weights"]
    named = _estimate(WORKLOAD | {"api_models": [o["model"] for o in alone], "self_host": [GPT_OSS_ON_H100]})
    assert alone == named["self_host"][0]["same_weights"]


def test_a_setup_names_its_weights_and_a_fine_tune_of_the_architecture_is_marked():
    setup = GPT_OSS_ON_H100 | {"model": "openai/gpt-oss-safeguard-120b"}
    listed = _estimate(WORKLOAD | {"self_host": [setup]})["self_host"][0]["same_weights"]
    matches = {o["model"]: o["match"] for o in listed}
    assert matches["groq/gpt-oss-120b"] == "same_architecture"


def test_unknown_weights_are_one_line_naming_the_setup():
    setup = GPT_OSS_ON_H100 | {"model": "acme/not-a-model-7b"}
    with pytest.raises(InputError) as raised:
        _estimate(WORKLOAD | {"self_host": [setup]})
    assert raised.value.field == "model" and "gpt-oss on one H100" in raised.value.reason
    assert "\n" not in raised.value.reason


def test_unknown_weights_exit_2_in_the_cli(cli, tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(WORKLOAD | {"self_host": [GPT_OSS_ON_H100 | {"model": "acme/nothing"}]}))
    done = cli("estimate", str(profile), "--json")
    assert done.code == 2 and "model" in done.stderr and "acme/nothing" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_weights_no_api_serves_list_nothing():
    setup = {**GPT_OSS_ON_H100, "throughput": {"roofline": {"model": "qwen3-0.6b", "gpu": "H100 SXM"}}}
    row = _estimate(WORKLOAD | {"self_host": [setup]})["self_host"][0]
    assert row["model"] == "Qwen/Qwen3-0.6B" and isinstance(row["same_weights"], list)


@pytest.mark.parametrize("model", ["openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B",
                                   "meta-llama/Llama-3.1-8B-Instruct"])  # fmt: skip
def test_ready_made_setups_take_the_fewest_gpus_and_the_cheapest_on_demand_offer(model):
    setups, skipped = ready_made_setups(model, prompt_tokens=1200, output_tokens=300)
    assert setups, skipped
    for setup in setups:
        assert setup.offer == cheapest_offer(setup.gpu, bundled_gpu_prices())
        assert setup.spec["gpu_offer"] == setup.offer.id and setup.spec["gpus_per_replica"] == setup.gpus
        if setup.gpus > 1:  # half as many GPUs cannot hold it (the engine model refuses)
            with pytest.raises(InputError):
                predict_roofline(model, setup.gpu, setup.gpus // 2, setup.dtype, 1200, 300)
    tried = {s.gpu for s in setups} | {s.gpu for s in skipped}
    rented = {o.gpu for o in bundled_gpu_prices() if o.kind == "on-demand"}
    assert tried <= rented and all(s.reason for s in skipped)


def test_gpt_oss_fits_one_h100_at_its_own_mxfp4():
    setups, _ = ready_made_setups("openai/gpt-oss-120b", prompt_tokens=1200, output_tokens=300)
    h100 = next(s for s in setups if s.gpu == "H100 SXM")
    assert (h100.gpus, h100.dtype) == (1, "mxfp4")


def test_deepseek_v3_does_not_fit_eight_80gb_gpus_and_says_why():
    setups, skipped = ready_made_setups("deepseek-ai/DeepSeek-V3", prompt_tokens=1200, output_tokens=300)
    assert "H100 SXM" not in {s.gpu for s in setups}
    reason = next(s.reason for s in skipped if s.gpu == "H100 SXM")
    assert re.fullmatch(r"its weights \(6\d\d GB at fp8\) leave no room for a KV cache on 8 of them", reason), reason


def test_the_view_profile_prices_the_offers_and_the_setups_together():
    view = same_weights_profile(WORKLOAD, "openai/gpt-oss-120b", bundled_api_prices(),
                                {"slo": {"p95_ttft_ms": 3000}})  # fmt: skip
    result = _estimate(view.document)
    assert {r["model"] for r in result["api"]} == set(view.matches)
    assert all(r["model"] == "openai/gpt-oss-120b" for r in result["self_host"])
    tokenizers = {r["tokenizer"] for r in result["api"] if view.matches[r["model"]] == "exact"}
    assert {s["tokenizer"] for s in view.document["self_host"]} <= tokenizers  # both sides bill the same tokens


def test_open_models_are_served_and_bundled():
    found = {m.hf_id: m for m in open_models(bundled_api_prices())}
    for model in ("openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-235B-A22B"):
        assert model in found or any(m.architecture == found[next(iter(found))].architecture for m in found.values())
    assert found["openai/gpt-oss-120b"].offers >= 4


def test_reports_carry_each_setups_offers_and_the_weights_column():
    from infercost.report import render_report

    result = _estimate(WORKLOAD | {"self_host": [GPT_OSS_ON_H100]})
    markdown = render_report(result, "markdown")
    assert "Same weights as gpt-oss on one H100" in markdown and "groq/gpt-oss-120b" in markdown
    html = render_report(result, "html")
    assert "Same weights as gpt-oss on one H100" in html
    csv_text = render_report(_estimate(WORKLOAD | {"api_models": ["groq/gpt-oss-120b"],
                                                   "self_host": [GPT_OSS_ON_H100]}), "csv")  # fmt: skip
    header, *rows = csv_text.splitlines()
    assert "weights" in header.split(",") and sum("openai/gpt-oss-120b" in row for row in rows) == 2


def test_estimate_same_weights_flag_sets_up_every_gpu(cli, tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(WORKLOAD | {"self_host": [GPT_OSS_ON_H100 | {"slo": {"p95_ttft_ms": 5000}}]}))
    payload = cli("estimate", str(profile), "--same-weights", "openai/gpt-oss-120b", "--json").json()
    assert len(payload["self_host"]) >= 5 and all(r["model"] == "openai/gpt-oss-120b" for r in payload["self_host"])
    assert all(s["slo"] == {"p95_ttft_ms": 5000} for s in payload["profile"]["self_host"])
    assert {r["model"] for r in payload["api"]} == {o["model"] for o in payload["self_host"][0]["same_weights"]}
    text = cli("estimate", str(profile), "--same-weights", "openai/gpt-oss-120b")
    assert text.code == 0 and "API offers of openai/gpt-oss-120b" in text.stdout
    bad = cli("estimate", str(profile), "--same-weights", "acme/nothing-here")
    assert bad.code == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_a_price_override_naming_the_weights_joins_the_view():
    mine = {"id": "our-gpt-oss-deal", "provider": "Acme", "input_per_mtok": 0.01, "output_per_mtok": 0.02,
            "source": "https://example.com/deal", "as_of": "2026-11-30", "open_weights": "openai/gpt-oss-120b"}
    view = same_weights_profile(WORKLOAD | {"prices": [mine]}, "openai/gpt-oss-120b", bundled_api_prices())
    assert view.matches["our-gpt-oss-deal"] == "exact"
    result = _estimate(view.document)
    assert min(result["api"], key=lambda r: r["cost_per_month"])["model"] == "our-gpt-oss-deal"
