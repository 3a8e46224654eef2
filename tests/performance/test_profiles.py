"""Throughput profiles from bundled files, stored runs and roofline estimates, and the estimate built on them."""

import json
import subprocess
import sys

import pytest

from infercost.costmodel import ThroughputPoint
from infercost.errors import InputError
from infercost.estimate import estimate, run_loader
from infercost.performance.operating_points import effective_slo
from infercost.performance.predict import Load, predict_roofline
from infercost.performance.profiles import bundled_profiles, find_profile
from infercost.profile import parse_profile
from infercost.runner.scripted_server import Script, running


def test_bundled_profiles_carry_their_basis_and_source():
    profiles = bundled_profiles()
    assert profiles
    for profile in profiles:
        assert profile.basis in {"measured", "published"}
        assert profile.points and profile.id.startswith(f"{profile.basis}:")
        if profile.basis == "published":
            assert profile.source.startswith("http") and profile.as_of


def test_an_unknown_bundled_profile_names_the_known_ones():
    with pytest.raises(InputError, match="bundled:"):
        find_profile("published:nope")


def workload(throughput, **extra):
    spec = {"name": "setup", "gpu_price_per_hour": 2.0, "throughput": throughput} | extra
    return parse_profile({"calls_per_day": 50_000, "prompt_tokens": 100, "output_tokens": 20, "api_models": [],
                          "self_host": [spec]})  # fmt: skip


@pytest.mark.slow
def test_a_stored_sweep_becomes_the_estimates_measured_basis(tmp_path):
    db = tmp_path / "runs.db"
    with running(Script(ttft_ms=5, gap_us=2000)) as base_url:
        done = subprocess.run(
            [sys.executable, "-m", "infercost", "bench", "--backend", "openai", "--base-url", base_url, "--model", "m",
             "--concurrency", "1,4", "--requests", "8", "--warmup", "1", "--input-tokens", "100",
             "--output-tokens", "20",
             "--db", str(db), "--json"], capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bench = json.loads(done.stdout)
    result = estimate(workload({"run": bench["run_id"]}), load_run=run_loader(db))
    (row,) = result["self_host"]
    assert row["basis"] == "measured" and row["run_id"] == bench["run_id"]
    best = max(bench["levels"], key=lambda level: level["request_throughput"])
    assert row["operating_point"]["request_throughput"] == pytest.approx(best["request_throughput"])
    assert row["warnings"] == []  # measured at the workload's own shape


def test_a_roofline_estimate_says_it_is_one_and_what_calibrated_it():
    predicted = predict_roofline("llama-3.1-8b", "H100 SXM", 1, "bfloat16", 1000, 200)
    assert predicted.basis == "roofline" and "calibrated on published:" in predicted.notes[0]
    assert predicted.transfer == "gpu" and predicted.expected_error["request_throughput"]["n"] > 0
    throughputs = [p.request_throughput for p in predicted.points]
    assert throughputs == sorted(throughputs)  # more concurrency, more requests/s, up to memory
    row = estimate(workload({"roofline": {"model": "llama-3.1-8b", "gpu": "H100 SXM"}}))["self_host"][0]
    assert row["basis"] == "roofline" and row["run_id"] is None and row["basis_note"]


def test_a_roofline_on_a_gpu_as_people_write_it_is_priced_by_that_gpus_offer():
    """A workload's ``gpu: H100`` is the catalog's H100 SXM: its datasheet, and the offer its price came from."""
    from infercost.pricing import cheapest_offer

    offer = cheapest_offer("H100")
    assert offer is not None and offer.gpu == "H100 SXM"
    spec = workload({"roofline": {"model": "llama-3.1-8b", "gpu": "H100"}}, gpu_price_per_hour=offer.price_per_hour)
    row = estimate(spec)["self_host"][0]
    assert row["hardware"] == "H100 SXM" and row["gpu_offer"]["id"] == offer.id


def test_roofline_drops_concurrencies_whose_kv_cache_does_not_fit():
    small = predict_roofline("llama-3.1-70b", "L4", 8, "bfloat16", 8000, 1000)
    large = predict_roofline("llama-3.1-70b", "H200", 8, "bfloat16", 8000, 1000)
    assert max(p.level for p in small.points) < max(p.level for p in large.points)
    assert "levels that do not fit are left out" in " ".join(small.notes)


def test_a_request_longer_than_the_models_context_is_simulated_and_says_so():
    """A 400,000-token prompt on gpt-oss-20b (a 131,072-token context) was simulated without a word; engines serve
    past max_position_embeddings only with RoPE scaling they are told to use, so it is said, not refused."""
    long = predict_roofline("openai/gpt-oss-20b", "H200", 8, "mxfp4", 400_000, 100, Load([1]))
    assert any("over the model's context of 131,072" in note for note in long.notes) and long.points
    short = predict_roofline("openai/gpt-oss-20b", "H200", 8, "mxfp4", 100_000, 100, Load([1]))
    assert not any("model's context" in note for note in short.notes)
    # the estimate warns of it beside the API models' context windows, not only in the basis
    roofline = {"roofline": {"model": "gpt-oss-20b", "gpu": "L4", "gpus": 1, "dtype": "mxfp4"}}
    spec = parse_profile({"calls_per_day": 100, "prompt_tokens": 300_000, "output_tokens": 300, "api_models": [],
                          "self_host": [{"name": "long", "gpu_price_per_hour": 0.8, "throughput": roofline}]})
    row = estimate(spec)["self_host"][0]
    assert any("300,300 tokens a request is over the model's context of 131,072" in w for w in row["warnings"])


def test_levels_none_of_which_fit_are_one_line_naming_the_most_that_do():
    """Asked only for levels the KV cache cannot hold, or for requests longer than it holds at all, the answer was
    an empty table and exit 0: it names the field and the most that fit."""
    with pytest.raises(InputError, match="at most: ask for") as error:
        predict_roofline("openai/gpt-oss-20b", "H100", 1, "mxfp4", 1000, 300, Load([4096]))
    assert error.value.field == "concurrency"
    most = int(str(error.value.reason).split(" users of")[0].rsplit(", ", 1)[1].replace(",", ""))
    fits = predict_roofline("openai/gpt-oss-20b", "H100", 1, "mxfp4", 1000, 300, Load([most]))
    assert [p.level for p in fits.points] == [most]
    with pytest.raises(InputError, match="less than one request") as error:
        predict_roofline("openai/gpt-oss-20b", "L4", 1, "mxfp4", 400_000, 300)
    assert error.value.field == "gpus"  # what more GPUs cure: the same-weights search tries more


@pytest.mark.parametrize(("field", "value", "message"), [("gpu", "TPU v9", "no datasheet"),
                                                         ("model", "gpt-4o", "unknown architecture")])  # fmt: skip
def test_roofline_for_unknown_hardware_or_models_names_the_field(field, value, message):
    roofline = {"model": "llama-3.1-8b", "gpu": "H100 SXM"} | {field: value}
    with pytest.raises(InputError, match=message):
        estimate(workload({"roofline": roofline}))


def test_a_workloads_roofline_names_its_engine_release_and_a_bad_one_names_the_field():
    roofline = {"model": "deepseek-r1", "gpu": "B200", "gpus": 4, "dtype": "nvfp4", "engine": "sglang",
                "expert_parallel": 4}  # fmt: skip
    named = estimate(workload({"roofline": roofline | {"engine_version": "0.5.9"}}))["self_host"][0]
    unnamed = estimate(workload({"roofline": roofline}))["self_host"][0]
    assert (named["error_transfer"], unnamed["error_transfer"]) == ("shape", "any_release")
    with pytest.raises(InputError, match="engine_version"):
        workload({"roofline": roofline | {"engine_version": "0.5.9; rm -rf /"}})


def test_an_slo_statistic_a_table_lacks_is_checked_against_the_nearest_it_has():
    points = [ThroughputPoint(1, 1.0, latency_ms={"mean_ttft_ms": 50, "mean_itl_ms": 10})]
    slo, notes = effective_slo({"p95_ttft_ms": 100, "p95_tpot_ms": 20}, points)
    assert slo == {"mean_ttft_ms": 100, "mean_itl_ms": 20}
    assert len(notes) == 2 and "mean_itl_ms" in notes[1]
    exact, none = effective_slo({"mean_ttft_ms": 100}, points)
    assert exact == {"mean_ttft_ms": 100} and none == []


def nim_8b() -> str:
    return next(p.id for p in bundled_profiles() if "8b" in p.id and "1xh100-fp8-200in-1000out" in p.id)


def test_points_at_the_workloads_own_shape_are_used_as_published():
    row = estimate(workload({"run": nim_8b()}).model_copy(update={"prompt_tokens": 200, "output_tokens": 1000}))
    assert row["self_host"][0]["basis"] == "published"


def test_another_shape_is_carried_by_the_fitted_model_and_says_so():
    base = workload({"run": nim_8b()})
    short = estimate(base.model_copy(update={"prompt_tokens": 200, "output_tokens": 250}))["self_host"][0]
    long = estimate(base.model_copy(update={"prompt_tokens": 200, "output_tokens": 4000}))["self_host"][0]
    assert short["basis"] == long["basis"] == "fitted"
    assert "engine model calibrated on" in short["basis_note"]
    # a predicted cost carries the error of its kind of transfer, and the cost at that error's p10 and p90
    assert short["error_transfer"] == "shape" and "request_throughput" in short["expected_error"]
    low, high = short["cost_per_month_range"]
    assert low <= short["cost_per_month"] <= high
    # a quarter of the output: several times the requests per second; four times the output: fewer
    published = {p["concurrency"]: p["request_throughput"] for p in find_profile(nim_8b()).points}
    c = short["operating_point"]["concurrency"]
    assert short["operating_point"]["request_throughput"] > 2.5 * published[c]
    assert long["operating_point"]["request_throughput"] < published[long["operating_point"]["concurrency"]]


def test_a_stored_run_is_a_profile_at_the_lengths_the_server_counted():
    """The project's own server counts a 128-word prompt as ~650 tokens: the run measured 650, and a profile labelled
    128 made the engine model carry its points from the wrong shape (and the chart said "measured (128/16)")."""
    from infercost import store
    from infercost.performance.profiles import profile_from_run

    db = store.connect()
    try:
        run_id = store.create_run(db, backend="openai", model="m", config={}, hardware={"cpu": "test cpu"}, engine={},
                                  status="done")  # fmt: skip
        store.plan_levels(db, run_id, [(0, 0, "concurrency", 1), (1, 0, "concurrency", 4)])
        for idx, counted_in in ((0, 650 * 10), (1, 660 * 10)):
            store.finish_level(db, run_id, idx, 0, {"completed": 10, "request_throughput": 2.0,
                                                     "output_throughput": 32.0, "input_len": 128, "output_len": 16,
                                                     "total_input_tokens": counted_in, "total_output_tokens": 160})
        counted = profile_from_run(store.get_run(db, run_id))
        imported = store.create_run(db, backend="openai", model="m", config={}, hardware={}, engine={}, status="done")
        store.plan_levels(db, imported, [(0, 0, "concurrency", 1)])
        store.finish_level(db, imported, 0, 0, {"completed": 10, "request_throughput": 2.0, "input_len": 128,
                                                "output_len": 16})  # a run that counted no tokens keeps what it asked
        asked = profile_from_run(store.get_run(db, imported))
    finally:
        db.close()
    assert (counted.input_len, counted.output_len) == (655.0, 16.0)
    assert (asked.input_len, asked.output_len) == (128, 16)
