"""The offline cross-GPU check: TensorRT-LLM's perf-overview throughput of a GPU relative to H100 at the same shape,
predicted from H100 closed-loop calibrations (nothing fitted on the perf-overview numbers)."""

import math
from dataclasses import replace

import numpy as np
import pytest

from infercost.performance.calibrate import (
    Calibration,
    offline_engine,
    offline_requests,
    predict_concurrency,
    predict_offline,
)
from infercost.performance.profiles import engine_setup, find_profile, offline_tables, validation_tables
from infercost.performance.validation import REFERENCE_GPU, offline_ratio_summary, offline_ratios

NIM_8B_FP8 = "published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out"
THETA = np.array([0.3, 1.5, 2.0, 2.0, 0.01, 2.0, 1.0, 1.0])  # engine.FEATURES


@pytest.fixture(scope="module")
def setup():
    return engine_setup(find_profile(NIM_8B_FP8))


def _with_kv(setup, tokens):
    return replace(setup, engine=replace(setup.engine, kv_capacity_tokens=tokens))


@pytest.mark.parametrize(
    ("kv_tokens", "shape", "max_batch", "max_tokens"),
    [
        (100 * 2000, (1000, 1000), 128, 2048),  # 100 requests: up to a multiple of 32; 200 tokens: the 2048 floor
        (10 * 2000, (1000, 1000), 64, 2048),  # at least 64
        (300 * 2176, (2048, 128), 384, 5120),  # 300 -> 384 (128s); 300 * (1 + 16) = 5100 -> 5120 (512s)
        (10**9, (64, 64), 4096, 8192),  # the GPU holds ~7700 requests (the setup caps the KV cache): 4096; 4096 * 2
        (400 * 2016, (2000, 16), 512, 32768),  # 400 * (1 + 125) tokens: capped at 32768
    ],
)
def test_the_offline_engine_follows_trtllm_bench_tuning(setup, kv_tokens, shape, max_batch, max_tokens):
    engine = offline_engine(_with_kv(setup, kv_tokens), *shape)
    assert (engine.max_batch, engine.max_batched_tokens) == (max_batch, max_tokens)


def test_offline_throughput_is_the_full_engine_and_grows_with_kv_cache(setup):
    calibration = Calibration(THETA, 0)
    small, large = _with_kv(setup, 64 * 2000), _with_kv(setup, 512 * 2000)
    offline = predict_offline(large, calibration, 1000, 1000)
    assert offline.output_throughput > predict_offline(small, calibration, 1000, 1000).output_throughput
    assert offline.output_throughput >= 0.99 * predict_concurrency(large, calibration, 64, 1000, 1000).output_throughput


@pytest.mark.parametrize(("shape", "requests"), [((128, 128), 30000), ((20000, 2000), 1000), ((1024, 2048), 1500)])
def test_the_offline_dataset_has_the_performance_overviews_size(shape, requests):
    assert offline_requests(*shape) == requests  # 1024/2048 is not listed: 1000/2000 (3000 tokens) is nearest


def test_offline_throughput_is_the_dataset_over_its_makespan(setup):
    """trtllm-bench divides the dataset's output by first start to last end: with fewer requests the ramp-up and the
    drain weigh more, and the figure falls."""
    calibration = Calibration(THETA, 0)
    large = _with_kv(setup, 512 * 2000)
    few, many = (predict_offline(large, calibration, 1000, 1000, requests=n).output_throughput for n in (600, 6000))
    assert few < 0.97 * many


def test_offline_an_fp8_cache_is_read_at_its_own_width(setup):
    """NIM's FP8 engines decode no faster per token of context than its FP16 ones; trtllm-bench's read the cache at
    FP8 width: offline, an FP8 calibration's KV coefficient is halved, never below the roofline."""
    from infercost.performance.calibrate import _offline_coefficients

    assert setup.kv_dtype == "fp8"
    assert _offline_coefficients(setup, THETA)[2] == 1.0  # 2.0 / 2
    assert _offline_coefficients(setup, THETA * [1, 1, 0.6, 1, 1, 1, 1, 1])[2] == 1.0  # the roofline floor
    fp16 = replace(setup, dtype="float16", kv_dtype=None)
    assert (_offline_coefficients(fp16, THETA) == THETA).all()


@pytest.fixture(scope="module")
def offline_result():
    tables = offline_tables()
    return tables, *offline_ratios(tables, validation_tables())


def test_the_offline_ratio_covers_h200_a100_and_l40s_and_skips_nothing_silently(offline_result):
    tables, ratios, skipped = offline_result
    summary = offline_ratio_summary(ratios, skipped)
    assert all(math.isfinite(summary[key]) for key in ("median_abs", "p90_abs", "max_abs"))
    assert {"H200", "A100 80GB", "L40S"} <= {gpu for gpu, row in summary["by_gpu"].items() if row["n"] > 0}
    # every point on a non-reference GPU is either scored or counted under a reason
    targets = sum(len(t.output_throughput) for t in tables if t.gpu != REFERENCE_GPU)
    assert summary["n"] + sum(skipped.values()) == targets
    assert any("pipeline" in reason for reason in skipped) and any("fp4" in reason for reason in skipped)
    assert summary["met"]  # within 10% / 25%
