"""The engine model's options a person sets on ``throughput``: ranges on every point, an offline batch, the engine,
and a prompt share found in the prefix cache."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from infercost.errors import InputError
from infercost.performance.calibrate import Prediction
from infercost.performance.predict import UNMEASURED_ERROR, Load, one_sided_notes, point_range, predict_roofline
from infercost.performance.validation import held_out_coverage

LLAMA_8B = ("meta-llama/Llama-3.1-8B-Instruct", "H100 SXM", 1, "fp8")


def _throughput(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "infercost", "throughput", *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_every_point_carries_a_range_around_its_prediction() -> None:
    result = _throughput("roofline:meta-llama/Llama-3.1-8B-Instruct@1xH100 SXM:fp8", "--input-tokens", "1000",
                         "--output-tokens", "300", "--concurrency", "1,8", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["engine"] == "tensorrt-llm"
    assert payload["parallel"] == {"tensor_parallel": 1, "expert_parallel": 1, "data_parallel": 1}
    for point in payload["points"]:
        for figure in ("output_throughput", "mean_ttft_ms", "mean_tpot_ms"):
            low, high = point["range"][figure]
            assert 0 < low < high
            assert low <= point[figure] * 1.3 and high >= point[figure] / 1.3


def test_a_range_is_the_measured_value_under_the_transfers_p10_and_p90_error() -> None:
    point = Prediction("concurrency", 1, 100, 100, 2.0, 200.0, 50.0, 60.0, 10.0, 11.0, 1000.0, 1100.0)
    error = {"request_throughput": {"p10": -0.2, "p90": 0.25}, "mean_ttft_ms": {"p10": -0.5, "p90": 0.0}}
    ranges = point_range(point, error)
    assert ranges["output_throughput"] == pytest.approx([160.0, 250.0])  # 200 / 1.25, 200 / 0.8
    assert ranges["mean_ttft_ms"] == pytest.approx([50.0, 100.0])
    unmeasured = 1 + UNMEASURED_ERROR["p90"], 1 + UNMEASURED_ERROR["p10"]
    assert ranges["mean_tpot_ms"] == pytest.approx([10.0 / unmeasured[0], 10.0 / unmeasured[1]])  # wide, not absent


def test_a_range_on_one_side_of_its_figure_is_said_in_words() -> None:
    error = {"request_throughput": {"p10": -0.2, "p90": 0.25}, "mean_ttft_ms": {"p10": -0.8, "p90": -0.5},
             "mean_tpot_ms": {"p10": 0.1, "p90": 0.6}}  # fmt: skip
    notes = one_sided_notes(error)
    assert len(notes) == 2
    assert notes[0].startswith("mean TTFT:") and "above the figure" in notes[0] and "2 to 5 times" in notes[0]
    assert notes[1].startswith("mean TPOT:") and "below the figure" in notes[1] and "0.62 to 0.91 times" in notes[1]


@pytest.mark.parametrize("engine", ["sglang", "vllm", "trtllm"])
def test_a_figure_outside_its_own_range_comes_with_a_note(engine: str) -> None:
    """Found by a random sweep of ``throughput``: Llama-3.1-70B under SGLang, calibrated on NIM, predicted a 10 ms
    TTFT with a range of 19-80 ms and said nothing of it."""
    result = _throughput("roofline:llama-3.1-70b@4xGB300:fp8", "--input-tokens", "128", "--output-tokens", "1000",
                         "--concurrency", "1,8", "--engine", engine, "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    for figure, words in (("output_throughput", "throughput"), ("mean_ttft_ms", "mean TTFT"),
                          ("mean_tpot_ms", "mean TPOT")):  # fmt: skip
        outside = {not (point["range"][figure][0] <= point[figure] <= point["range"][figure][1])
                   for point in payload["points"]}  # fmt: skip
        noted = any(note.startswith(f"{words}:") for note in payload["notes"])
        assert outside == {noted}, (figure, payload["notes"])


def test_coverage_is_taken_on_setups_the_range_was_not_measured_on() -> None:
    rng = np.random.default_rng(0)
    steady = rng.normal(0, 0.1, 300)
    groups = [("a",)] * 100 + [("b",)] * 100 + [("c",)] * 100
    assert held_out_coverage(steady, groups) == pytest.approx(0.8, abs=0.06)
    shifted = np.concatenate([steady[:200], steady[200:] + 1.0])  # one setup the others say nothing about
    assert held_out_coverage(shifted, groups) < 0.6


def test_an_offline_batch_is_predicted_with_its_makespan() -> None:
    result = _throughput("roofline:meta-llama/Llama-3.1-8B-Instruct@1xH100 SXM:fp8", "--input-tokens", "1000",
                         "--output-tokens", "200", "--concurrency", "1", "--offline", "400", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    offline = [p for p in json.loads(result.stdout)["points"] if "requests" in p]
    assert len(offline) == 1 and offline[0]["requests"] == 400
    assert offline[0]["makespan_s"] == pytest.approx(400 / offline[0]["request_throughput"])
    single = next(p for p in json.loads(result.stdout)["points"] if p.get("concurrency") == 1)
    assert offline[0]["output_throughput"] > 5 * single["output_throughput"]


def test_a_cached_prompt_share_shortens_ttft_on_an_engine_that_caches_prefixes() -> None:
    cold = predict_roofline(*LLAMA_8B, 4000, 200, Load([1, 16]), engine="vllm")
    warm = predict_roofline(*LLAMA_8B, 4000, 200, Load([1, 16], cached_prompt_fraction=0.75), engine="vllm")
    alone_before, alone_after = cold.points[0], warm.points[0]
    assert alone_after.mean_ttft_ms < 0.6 * alone_before.mean_ttft_ms  # a quarter of the prompt to prefill
    for before, after in zip(cold.points, warm.points, strict=True):
        assert after.mean_ttft_ms < before.mean_ttft_ms
        assert after.request_throughput > before.request_throughput
    assert warm.cached_prompt_fraction == 0.75
    assert any("prefix cache" in note for note in warm.notes)


def test_request_lengths_spread_as_a_benchmark_drew_them_are_the_loads_and_said() -> None:
    """``--length-spread``: a roofline setup's requests spread as InferenceX's benchmark draws them unless told
    (``DEFAULT_LENGTH_SPREAD``); told 0, every request alike, its users stay in step and prefill in waves (higher TTFT
    at a load whose wave fits in one step), and the answer says which. A bundled InferenceX table is predicted at its
    own benchmark's spread unless told otherwise."""
    from infercost.performance.predict import DEFAULT_LENGTH_SPREAD, predict_source

    alike = predict_roofline(*LLAMA_8B, 2000, 200, Load([16], length_spread=0.0), engine="vllm")
    spread = predict_roofline(*LLAMA_8B, 2000, 200, Load([16]), engine="vllm")
    assert alike.length_spread == 0 and spread.length_spread == DEFAULT_LENGTH_SPREAD == pytest.approx(1 / 9, 1e-3)
    assert spread.points[0].mean_ttft_ms < 0.8 * alike.points[0].mean_ttft_ms
    assert any("closed-loop request lengths spread evenly over 0.89 to 1.11" in note for note in spread.notes)
    assert not any("request lengths spread" in note for note in alike.notes)
    assert spread.as_dict()["length_spread"] == DEFAULT_LENGTH_SPREAD and alike.as_dict()["length_spread"] == 0
    table = "published:ix-vllm-unversioned-gpt-oss-120b-1xb200-fp4-tp1-dp1-ep1-1024in-1024out-config150"
    own = predict_source(table, 1024, 1024, Load([16]))
    told = predict_source(table, 1024, 1024, Load([16], length_spread=0.0))
    assert own.length_spread == pytest.approx(0.1111) and told.length_spread == 0
    assert own.points[0].mean_ttft_ms != told.points[0].mean_ttft_ms


def test_a_ttft_correction_fitted_on_users_in_step_is_carried_to_users_out_of_step_at_its_fewest_users() -> None:
    """NIM's Llama-3.3-70B sweep was measured with every request alike (genai-perf), its users in step: its TTFT
    correction lowers the simulated waves of prompts. A roofline setup's requests spread (``DEFAULT_LENGTH_SPREAD``)
    and arrive one by one; the lowering carried to them made TTFT fall as users came (220, 177, 89, 72 ms at 1, 2,
    4 and 8 users on one H100). Told to send every request alike, the setup takes the correction whole."""
    from dataclasses import replace

    from infercost.performance.calibrate import Calibration
    from infercost.performance.predict import calibrate_profile
    from infercost.performance.profiles import bundled_profiles

    levels = [1, 2, 4, 8, 16]
    spread = predict_roofline("llama-3.1-70b", "H100 SXM", 1, "fp8", 2000, 300, Load(levels))
    ttft = [point.mean_ttft_ms for point in spread.points]
    assert [point.level for point in spread.points] == levels
    assert all(later >= 0.95 * earlier for earlier, later in itertools.pairwise(ttft)), ttft
    assert ttft[2] > 1.2 * ttft[0]
    reference = next(p for p in bundled_profiles()
                     if p.id == "published:nim-1.8.0-llama-3.3-70b-instruct-2xh100-fp8-5000in-500out")
    _, calibration, _, _ = calibrate_profile(reference)
    assert calibration.length_spread == 0 and calibration.at_spread(0.0) is calibration
    carried = calibration.at_spread(1 / 9)
    assert carried.ttft_users == (calibration.ttft_users[0],) * 2 and calibration.ttft_users[1] > 100
    stored = Calibration.from_json(replace(calibration, length_spread=1 / 9).to_json())  # a stored run keeps it
    assert stored.length_spread == 1 / 9 and stored.ttft_users == calibration.ttft_users


def test_an_engine_without_a_prefix_cache_prefills_the_whole_prompt_and_says_so() -> None:
    cold = predict_roofline(*LLAMA_8B, 4000, 200, Load([4]), engine="trtllm")
    warm = predict_roofline(*LLAMA_8B, 4000, 200, Load([4], cached_prompt_fraction=0.75), engine="trtllm")
    assert warm.points[0].mean_ttft_ms == pytest.approx(cold.points[0].mean_ttft_ms)
    assert any("prefix cache is off" in note for note in warm.notes)


def test_another_engine_than_the_measured_one_compounds_the_measured_move_between_engines() -> None:
    """Llama-3.1-70B is calibrated on NIM (TensorRT-LLM), and no SGLang table of it is bundled; asked for SGLang, its
    range is the GPU transfer's error and the held-out tables' move between engines (dense, to SGLang), compounded:
    wider than either alone."""
    from infercost.performance.expected_error import compounded, held_out_error

    llama_70b = ("meta-llama/Llama-3.1-70B-Instruct", "H100 SXM", 4, "fp8")
    kept = predict_roofline(*llama_70b, 1000, 300, Load([8]))
    moved = predict_roofline(*llama_70b, 1000, 300, Load([8]), engine="sglang")
    assert kept.engine == "tensorrt-llm" and kept.transfer != "engine"
    assert moved.engine == "sglang" and moved.transfer == "engine"
    between = held_out_error("dense", "sglang", "engine")["request_throughput"]
    assert moved.expected_error == compounded(kept.expected_error, held_out_error("dense", "sglang", "engine"))
    both = moved.expected_error["request_throughput"]
    assert both["p10"] < between["p10"] and both["p90"] > between["p90"]
    low, high = moved.as_dict()["points"][0]["range"]["output_throughput"]
    value = moved.points[0].output_throughput
    assert low == pytest.approx(value / (1 + both["p90"])) and high == pytest.approx(value / (1 + both["p10"]))
    assert any("move between engines" in note for note in moved.notes)


def test_a_moe_model_measured_under_another_engine_only_is_predicted_from_the_asked_engines_priors() -> None:
    """MiniMax-M2.5's bundled tables are all vLLM's. Asked under SGLang, rescheduling vLLM's fitted step costs was
    measured further off (held out, MoE under SGLang from another engine: throughput median 43%) than SGLang's MoE
    priors alone (15%), on every metric: the priors answer, their error is the range, and the answer says why."""
    from infercost.performance.expected_error import held_out_error, priors_beat_another_engine

    assert priors_beat_another_engine("moe", "sglang") and not priors_beat_another_engine("dense", "sglang")
    for metric in ("request_throughput", "mean_ttft_ms", "mean_tpot_ms"):
        assert (held_out_error("moe", "sglang", "model")[metric]["median_abs"]
                < held_out_error("moe", "sglang", "engine")[metric]["median_abs"])  # fmt: skip
    minimax = ("minimax-m2.5", "H200", 4, "fp8")
    kept = predict_roofline(*minimax, 1000, 300, Load([8]))
    moved = predict_roofline(*minimax, 1000, 300, Load([8]), engine="sglang")
    assert kept.engine == "vllm" and kept.transfer != "model"
    assert moved.engine == "sglang" and moved.transfer == "model"
    assert moved.expected_error == held_out_error("moe", "sglang", "model")
    assert moved.notes[0].lower().startswith("measured under vllm") and "MoE model under sglang" in moved.notes[0]
    assert moved.notes[0].endswith("under vllm its tables calibrate it")
    assert not any("scheduled as" in note for note in moved.notes)
    assert moved.points[0].output_throughput != kept.points[0].output_throughput


def test_a_moe_model_moved_to_another_engine_computes_at_its_speed_and_says_so() -> None:
    """GLM-5's bundled tables are all SGLang's; asked under TensorRT-LLM (whose MoE priors lose to another engine's
    calibration), SGLang's fitted step costs are rescheduled, their compute at TensorRT-LLM's speed (the engines'
    MoE compute priors: 2.2x the roofline against 3.9x), and the answer says by how much. A dense model's compute
    stays as fitted."""
    from infercost.performance.engine import ENGINE_PRESETS

    glm = ("glm-5", "B200", 8, "fp8")
    moved = predict_roofline(*glm, 1024, 1024, Load([16]), engine="tensorrt-llm")
    assert moved.engine == "tensorrt-llm" and moved.transfer == "engine"
    speed = ENGINE_PRESETS["tensorrt-llm"].moe_compute_prior / ENGINE_PRESETS["sglang"].moe_compute_prior
    assert any("measured on sglang, scheduled as tensorrt-llm" in note and f"compute {speed:.2f}x as long" in note
               for note in moved.notes)  # fmt: skip
    dense = predict_roofline("llama-3.1-70b", "H200", 4, "fp8", 1024, 1024, Load([16]), engine="sglang")
    assert dense.transfer == "engine" and not any("compute" in note and "as long" in note for note in dense.notes)


def test_the_text_answer_of_an_engine_transfer_says_its_compounded_error() -> None:
    """A compounded error has quantiles, not a median |error|: the text answer crashed on it (KeyError
    'median_abs') where the JSON was fine."""
    done = subprocess.run([sys.executable, "-m", "infercost", "throughput", "roofline:llama-3.1-70b@4xMI300X:bf16",
                           "--engine", "sglang", "--input-tokens", "1000", "--output-tokens", "300",
                           "--concurrency", "1,16"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "expected error (engine transfer): requests/s off by" in done.stdout and "at the median" in done.stdout


def test_two_independent_errors_compound_in_log_space() -> None:
    """By hand: medians multiply; the distances from median to each quantile add in quadrature."""
    import math

    from infercost.performance.expected_error import compounded

    a = {"m": {"p10": -0.2, "p50": 0.0, "p90": 0.25}}
    b = {"m": {"p10": math.expm1(-0.3), "p50": 0.1, "p90": math.expm1(0.5)}}
    both = compounded(a, b)["m"]
    center = math.log(1.1)
    assert both["p50"] == pytest.approx(0.1)
    assert both["p10"] == pytest.approx(math.expm1(center - math.hypot(math.log(0.8), -0.3 - center)))
    assert both["p90"] == pytest.approx(math.expm1(center + math.hypot(math.log(1.25), 0.5 - center)))
    assert compounded(a, {}) == {}  # one move not measured: nothing to compound, the range says it is unknown


@pytest.mark.parametrize(("args", "field"), [
    (["--engine", "tgi"], "engine"),
    (["--offline", "0"], "offline"),
    (["--cached-prompt-fraction", "1.5"], "cached_prompt_fraction"),
    (["--length-spread", "1"], "length_spread"),
    (["--length-spread", "-0.1"], "length_spread"),
    (["--data-parallel", "0"], "data_parallel"),  # 0 was taken for "not given" and ran one engine
    (["--concurrency", "1.5"], "concurrency"),
    (["--expert-parallel", "0"], "expert_parallel"),
])  # fmt: skip
def test_bad_options_get_one_line_naming_the_field(args: list[str], field: str) -> None:
    result = _throughput("roofline:meta-llama/Llama-3.1-8B-Instruct@1xH100 SXM:fp8", "--input-tokens", "100",
                         "--output-tokens", "10", *args, "--json")  # fmt: skip
    assert result.returncode == 2
    assert field in result.stderr and "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_engine_is_refused_for_a_source_measured_on_its_own_engine() -> None:
    from infercost.performance.predict import predict_source

    with pytest.raises(InputError, match="engine"):
        predict_source("published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-2000in-2000out", 100, 10,
                       engine="vllm")  # fmt: skip


def test_a_rate_above_capacity_says_so_and_shows_no_latency_it_cannot_have() -> None:
    """A saturated open loop's queue grows for as long as requests come: its mean TTFT over the simulated run was
    the run's length (125 million ms at 2 requests/s on one L4), printed as if the setup had it."""
    result = _throughput("roofline:qwen3-8b@1xL4:bf16", "--input-tokens", "8000", "--output-tokens", "2000",
                         "--concurrency", "1", "--rate", "0.004,2", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    light, heavy = (p for p in payload["points"] if "rate" in p)
    assert light["saturated"] is False and light["mean_ttft_ms"] > 0 and light["range"]["mean_ttft_ms"]
    assert heavy["saturated"] is True and heavy["request_throughput"] > 0 and heavy["range"]["output_throughput"]
    assert heavy["mean_ttft_ms"] is None and heavy["mean_tpot_ms"] is None and heavy["range"]["mean_ttft_ms"] is None
    assert "saturated" not in payload["points"][0]  # a closed loop never is
    assert any(note.startswith("saturated at 2 requests/s") for note in payload["notes"])
    text = _throughput("roofline:qwen3-8b@1xL4:bf16", "--input-tokens", "8000", "--output-tokens", "2000",
                       "--rate", "2")  # fmt: skip
    assert text.returncode == 0 and "saturated at 2 requests/s" in text.stdout, text.stderr


def test_the_kv_cache_dtype_is_the_answers_and_sizes_the_cache() -> None:
    """Issue 22 item 10's --kv-dtype: vLLM and SGLang keep a natively FP8 checkpoint's cache (DeepSeek-R1's) in
    bfloat16 unless told otherwise; at 16 bits half the tokens fit and each is read at twice the bytes."""
    def run(*extra: str) -> dict:
        result = _throughput("roofline:deepseek-r1@8xH200:fp8", "--engine", "vllm", "--input-tokens", "8000",
                             "--output-tokens", "1000", "--concurrency", "16,128", *extra, "--json")  # fmt: skip
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    default, sixteen = run(), run("--kv-dtype", "bf16")
    assert default["kv_dtype"] == "fp8" and sixteen["kv_dtype"] == "bfloat16"
    assert [p["concurrency"] for p in default["points"]] == [16, 128]
    assert [p["concurrency"] for p in sixteen["points"]] == [16]  # 128 x 9,000 tokens fit only at 8 bits
    assert sixteen["points"][0]["mean_tpot_ms"] > default["points"][0]["mean_tpot_ms"]
    assert any("holds" in note and "tokens" in note for note in sixteen["notes"])
    for bad, field in (("int4", "kv_dtype"), ("mxfp4", "kv_dtype")):
        refused = _throughput("roofline:deepseek-r1@8xH200:fp8", "--kv-dtype", bad, "--input-tokens", "10",
                              "--output-tokens", "10")  # fmt: skip
        assert refused.returncode == 2 and refused.stderr.strip().startswith(f"error: {field}:"), refused.stderr
        assert "\n" not in refused.stderr.strip()
    measured = _throughput("published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out", "--kv-dtype", "fp8",
                           "--input-tokens", "10", "--output-tokens", "10")  # fmt: skip
    assert measured.returncode == 2 and "error: kv_dtype:" in measured.stderr


def test_a_self_host_cost_carries_the_same_notes_as_its_prediction() -> None:
    """The Compare page's basis of a self-host figure: what ``throughput`` says of the prediction, the notes on its
    ranges too."""
    from infercost.performance.operating_points import predicted_points
    from infercost.performance.predict import predict_source

    predicted = predict_source("roofline:llama-3.1-70b@4xH100 SXM:fp8", 500, 200, engine="sglang")
    _, basis = predicted_points(predicted)
    assert predicted.every_note[len(predicted.notes):], "expected a note on the SGLang TTFT range"
    assert all(note in basis.note for note in predicted.every_note)


def test_a_rate_above_capacity_serves_what_a_full_batch_serves_and_no_range_passes_the_rate() -> None:
    """gpt-oss-20b on one H100 under vLLM (a batch of 1,024): 600 simulated arrivals at 300 requests/s were all
    admitted into one batch and finished together, and the throughput read off their finishes was the rate itself,
    300 requests/s (90,000 tokens/s) from a GPU whose full batch serves about 60; at 1,000 requests/s, 700. An
    open loop above capacity keeps the batch full, so it serves what a closed loop of a full batch does. And a
    served rate cannot pass the offered one, so no range does either."""
    load = Load([1024], rates=[10, 300, 1000])
    predicted = predict_roofline("openai/gpt-oss-20b", "H100", 1, "mxfp4", 1000, 300, load)
    full, *rates = predicted.points
    light, heavy, heaviest = rates
    assert not light.saturated and heavy.saturated and heaviest.saturated
    for point in (heavy, heaviest):
        assert point.request_throughput == pytest.approx(full.request_throughput, rel=0.05)
        assert point.output_throughput == pytest.approx(full.output_throughput, rel=0.05)
    payload = predicted.as_dict()
    for point in payload["points"][1:]:
        assert point["range"]["request_throughput"][1] <= point["rate"] * (1 + 1e-9)
        assert point["range"]["output_throughput"][1] <= point["rate"] * 300 * (1 + 1e-9)
    assert any(f"serves about {full.request_throughput:.3g} requests/s at most" in note for note in payload["notes"])
    # 15% over what a full batch serves: the 600 simulated arrivals end before the batch fills, so neither a growing
    # queue nor a shortfall shows in them (it served 70 requests/s at 70 where a full batch serves 61)
    over = predict_roofline("openai/gpt-oss-20b", "H100", 1, "mxfp4", 1000, 300,
                            Load([1], rates=[1.15 * full.request_throughput])).points[1]  # fmt: skip
    assert over.saturated and over.request_throughput == pytest.approx(full.request_throughput, rel=0.05)


def test_a_level_over_the_ceiling_is_told_one_ceiling() -> None:
    """A million users were told "1 to 100000", then 5,000 users "at most 4,096": the shared level parser's bound
    and throughput's own. Both now say throughput's."""
    for level in ("1000000", "5000"):
        result = _throughput("roofline:meta-llama/Llama-3.1-8B-Instruct@1xH100 SXM:fp8", "--input-tokens", "100",
                             "--output-tokens", "10", "--concurrency", level)  # fmt: skip
        assert result.returncode == 2 and "from 1 to 4096" in result.stderr, result.stderr
