"""The performance model against points drawn from a known ground truth, with and without noise."""

import dataclasses
import re

import numpy as np
import pytest

from infercost.errors import InputError
from infercost.performance.perfmodel import (
    MeasuredPoint,
    fit_performance_model,
    holdout_errors,
    summarize_holdout,
)

SHAPES = [(128, 128), (512, 256), (2048, 128), (1024, 512)]  # (input_len, output_len)
CONCURRENCIES = [1, 4, 16, 64]


def truth(c, input_len, output_len, noise=1.0):
    """An engine whose step reads weights (8 ms), a little per sequence and each KV cache; prefills queue.
    ``noise`` slows (or speeds) the whole point, as a slower run would: latencies up, throughput down."""
    step_ms = 8 + 0.05 * c + 0.00002 * c * (input_len + output_len / 2)
    ttft_ms = 5 + 0.02 * input_len + 0.002 * (c - 1) * input_len
    throughput = c * 1000 / (ttft_ms + (output_len - 1) * step_ms)
    return MeasuredPoint(c, input_len, output_len, throughput / noise, ttft_ms * noise, step_ms * noise,
                         p95_ttft_ms=1.5 * ttft_ms, p95_tpot_ms=1.2 * step_ms)  # fmt: skip


def noisy_points(seed=0, shapes=SHAPES, concurrencies=CONCURRENCIES):
    """Each point off by up to ±2%, as repeated measurements are."""
    rng = np.random.default_rng(seed)
    return [truth(c, i, o, rng.uniform(0.98, 1.02)) for c in concurrencies for i, o in shapes]


@pytest.mark.parametrize("c, input_len, output_len", [(32, 4096, 256), (8, 256, 1024), (2, 3000, 64)])
def test_the_fit_predicts_shapes_it_never_saw(c, input_len, output_len):
    model = fit_performance_model(noisy_points())
    predicted, expected = model.predict(c, input_len, output_len), truth(c, input_len, output_len)
    assert model.assumptions == []
    assert predicted.request_throughput == pytest.approx(expected.request_throughput, rel=0.04)
    assert predicted.mean_ttft_ms == pytest.approx(expected.mean_ttft_ms, rel=0.04)
    assert predicted.mean_tpot_ms == pytest.approx(expected.mean_tpot_ms, rel=0.04)
    assert predicted.output_throughput == pytest.approx(predicted.request_throughput * output_len)


def test_p95s_scale_with_the_measured_tail_ratio():
    predicted = fit_performance_model(noisy_points()).predict(32, 4096, 256)
    assert predicted.p95_ttft_ms == pytest.approx(1.5 * predicted.mean_ttft_ms, rel=0.03)
    assert predicted.p95_tpot_ms == pytest.approx(1.2 * predicted.mean_tpot_ms, rel=0.03)
    point = predicted.as_throughput_point()
    assert point.latency_ms["p95_tpot_ms"] == predicted.p95_tpot_ms and point.concurrency == 32


def test_one_input_length_assumes_prefill_proportional_to_it():
    model = fit_performance_model(noisy_points(shapes=[(512, 128), (512, 512)]))
    assert model.assumptions == [
        "prefill time taken as proportional to input length (the points do not separate a fixed part)"
    ]
    assert model.predict(16, 512, 256).mean_ttft_ms == pytest.approx(truth(16, 512, 256).mean_ttft_ms, rel=0.04)


def test_one_token_shape_assumes_the_per_sequence_cost_is_kv_reads():
    model = fit_performance_model(noisy_points(shapes=[(512, 256)]))
    assert any("proportional to context" in text for text in model.assumptions)
    predicted = model.predict(64, 512, 256)  # the measured shape still comes out right
    assert predicted.request_throughput == pytest.approx(truth(64, 512, 256).request_throughput, rel=0.04)


def test_a_single_point_lists_every_assumption_and_still_predicts_itself():
    point = truth(8, 512, 256)
    model = fit_performance_model([point])
    assert len(model.assumptions) == 4
    assert model.predict(8, 512, 256).request_throughput == pytest.approx(point.request_throughput)


def test_a_missing_latency_follows_from_littles_law():
    points = [dataclasses.replace(p, mean_ttft_ms=None) for p in noisy_points()]
    predicted = fit_performance_model(points).predict(32, 4096, 256)
    assert predicted.mean_ttft_ms == pytest.approx(truth(32, 4096, 256).mean_ttft_ms, rel=0.04)
    assert predicted.request_throughput == pytest.approx(truth(32, 4096, 256).request_throughput, rel=0.04)


def test_throughput_below_littles_law_is_carried_as_efficiency():
    points = [dataclasses.replace(p, request_throughput=p.request_throughput * 0.9) for p in noisy_points()]
    predicted = fit_performance_model(points).predict(32, 4096, 256)
    assert predicted.request_throughput == pytest.approx(0.9 * truth(32, 4096, 256).request_throughput, rel=0.04)


def test_holdout_errors_are_exact_without_noise_and_small_with_it():
    exact = summarize_holdout(holdout_errors([truth(c, i, o) for c in CONCURRENCIES for i, o in SHAPES]))
    assert max(exact.max_abs_error.values()) < 1e-9
    noisy = holdout_errors(noisy_points())
    summary = summarize_holdout(noisy)
    assert summary.points == len(noisy) == 16
    assert set(summary.median_abs_error) == {"request_throughput", "mean_ttft_ms", "mean_tpot_ms"}
    assert 0 < summary.median_abs_error["request_throughput"] < 0.03
    assert summary.max_abs_error["request_throughput"] >= summary.median_abs_error["request_throughput"]


def test_holdout_error_is_relative_to_the_measured_value():
    error = holdout_errors(noisy_points())[5]
    measured = error.point.request_throughput
    assert error.request_throughput == pytest.approx((error.predicted.request_throughput - measured) / measured)


@pytest.mark.parametrize("change, field", [
    ({"concurrency": 0}, "points[1].concurrency"),
    ({"input_len": -5}, "points[1].input_len"),
    ({"output_len": 0.5}, "points[1].output_len"),
    ({"request_throughput": float("nan")}, "points[1].request_throughput"),
    ({"mean_ttft_ms": None, "mean_tpot_ms": None}, "points[1].mean_tpot_ms"),
    ({"mean_tpot_ms": None, "mean_ttft_ms": 1e9}, "points[1].request_throughput"),
])  # fmt: skip
def test_bad_points_name_the_field(change, field):
    points = noisy_points()[:3]
    points[1] = dataclasses.replace(points[1], **change)
    with pytest.raises(InputError, match=f"^{re.escape(field)}:"):
        fit_performance_model(points)


def test_no_points_and_bad_shapes_are_refused():
    with pytest.raises(InputError, match="^points:"):
        fit_performance_model([])
    with pytest.raises(InputError, match="^points:"):
        holdout_errors([truth(1, 128, 128)])
    with pytest.raises(InputError, match="^concurrency:"):
        fit_performance_model(noisy_points()).predict(0, 128, 128)
