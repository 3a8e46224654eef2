"""Issue 22's published tables as the loader sees them: MoE and vLLM/SGLang tables load with their engine kind and
layout, say why the engine model cannot simulate them yet, and change no calibration, reference or default list."""

import pytest

from infercost.errors import InputError
from infercost.performance.predict import predict_roofline
from infercost.performance.profiles import (
    _from_bundled,
    bundled_profiles,
    closed_loop_profiles,
    find_profile,
    observations,
    unpredictable_reason,
    validation_skips,
    validation_tables,
)

MI300X_SGLANG = "published:dstack-sglang-deepseek-r1-8xmi300x-fp8-random-3200in-800out"
H200_SGLANG_DP = "published:dstack-sglang-deepseek-r1-8xh200-fp8-random-3200in-800out"
AIC_LLAMA = "published:aic-trtllm-1.0.0rc3-llama-3.1-8b-instruct-1xh100-sxm-bf16-tp1-dp1-ep1-1024in-128out"


def test_a_moe_table_loads_with_its_engine_kind_and_layout():
    profile = find_profile(MI300X_SGLANG)
    assert (profile.model, profile.hardware, profile.engine_kind) == ("deepseek-ai/DeepSeek-R1", "MI300X", "sglang")
    assert (profile.tensor_parallel, profile.data_parallel, profile.expert_parallel) == (8, 1, 1)
    assert [p["concurrency"] for p in profile.points] == [4, 8, 16, 32, 64, 128]
    assert profile.points[0]["mean_ttft_ms"] == pytest.approx(1644.592794)
    dp = find_profile(H200_SGLANG_DP)  # --enable-dp-attention: attention data-parallel over the 8 GPUs
    assert (dp.tensor_parallel, dp.data_parallel, dp.gpus_per_replica) == (1, 8, 8)


def test_older_tables_get_their_engine_kind_from_the_engine_name():
    kinds = {p.engine_kind for p in bundled_profiles() if p.id.startswith("published:nim-")}
    assert kinds == {"trtllm"}
    assert find_profile("published:vultr-vllm-0.16-nemotron-nano-30b-2xb200-fp8-2048in-512out").engine_kind == "vllm"


def test_a_table_the_engine_model_cannot_simulate_says_why():
    waiting = "simulable, not in the calibration set yet (bundled for issue 22)"
    h200_vllm = find_profile("published:dstack-vllm-deepseek-r1-8xh200-fp8-random-3200in-800out")
    assert unpredictable_reason(h200_vllm) == waiting  # a MoE model the engine model now simulates
    assert unpredictable_reason(find_profile(MI300X_SGLANG)) == waiting  # the catalog has MI300X's datasheet
    assert unpredictable_reason(find_profile(H200_SGLANG_DP)) == waiting  # DP attention beside EP: one engine
    minimax = next(p for p in bundled_profiles() if "MiniMax" in p.model and p.closed_loop)
    assert unpredictable_reason(minimax) == waiting  # its config is bundled now (issue 21)
    assert "not in the calibration set" in unpredictable_reason(find_profile(AIC_LLAMA))
    assert unpredictable_reason(find_profile("published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-200out")) == ""


def test_held_out_tables_change_no_calibration_reference_or_default_list():
    held_out = {p.id for p in bundled_profiles() if not p.calibration_set}
    assert len(held_out) > 800 and AIC_LLAMA in held_out
    assert not held_out & {p.id for p in closed_loop_profiles()}
    assert not held_out & {t.id for t in validation_tables()}
    assert len(validation_tables()) == 73  # the calibrated NIM tables, as before issue 22's data
    # a roofline estimate still takes its reference from the calibrated tables, not an AIConfigurator table
    assert "aic-" not in " ".join(predict_roofline("llama-3.1-8b", "H100 SXM", 1, "fp8", 1000, 200).notes)


def test_the_skipped_tables_are_counted_per_reason():
    skipped = validation_skips()
    bundled_now = ("MiniMax-M2.5", "Qwen3.5-397B-A17B", "Kimi-K2.5", "GLM-5")  # issue 21 bundled their configs
    assert not [reason for reason in skipped if reason.startswith("unknown") and any(m in reason for m in bundled_now)]
    assert skipped["simulable, not in the calibration set yet (bundled for issue 22)"] >= 100
    held_out = sum(not p.calibration_set and not p.offline for p in bundled_profiles())
    assert sum(skipped.values()) >= held_out


@pytest.mark.parametrize("load", ["request_rate", "burst"])
def test_a_request_rate_or_burst_table_is_not_a_closed_loop(load):
    document = {"model": "meta-llama/Llama-3.1-8B-Instruct", "hardware": "H100 SXM", "engine": "vLLM 0.11.0",
                "dtype": "fp8", "load": load, "input_len": 1000, "output_len": 200,
                "points": [{"request_rate": 4.0, "request_throughput": 3.9, "output_throughput": 780.0}]}  # fmt: skip
    profile = _from_bundled("published", "rate", document)
    assert not profile.closed_loop and not profile.offline
    assert unpredictable_reason(profile) == f"{load} load is not a closed loop"
    with pytest.raises(InputError, match="no closed-loop points"):
        observations(profile)


def test_an_unknown_id_lists_the_calibrated_tables_and_counts_the_rest():
    with pytest.raises(InputError, match=r"bundled: .*and \d+ held out of calibration") as error:
        find_profile("published:nope")
    assert "aic-" not in str(error.value) and len(str(error.value)) < 20_000


def test_held_out_tables_come_after_the_calibrated_ones():
    """Code that takes the first suitable bundled profile (batch pricing, the bench) keeps its old pick."""
    order = [p.calibration_set for p in bundled_profiles()]
    assert order == sorted(order, reverse=True) and order[0] and not order[-1]
