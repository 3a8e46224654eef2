"""The GPU profile script, run in its CPU mode on a tiny model: it writes a measured profile the catalog can load."""

import json

import pytest

from bench import gpu_profile

POINT_FIELDS = {"concurrency", "request_throughput", "output_throughput", "total_token_throughput", "mean_ttft_ms",
                "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms", "roofline_pct"}


def test_cpu_mode_writes_a_measured_profile(tmp_path, capsys):
    out = tmp_path / "profile.json"
    status = gpu_profile.main(["--device", "cpu", "--model", "random:tiny-llama", "--batches", "1,3",
                               "--input-len", "8", "--output-len", "5", "--repeats", "2",
                               "--bandwidth-gbps", "20", "--peak-tflops", "0.5", "--out", str(out)])
    assert status == 0
    profile = json.loads(out.read_text())
    assert profile["schema_version"] == 1 and profile["basis"] == "measured" and profile["run_id"] is None
    assert (profile["engine"], profile["gpus_per_replica"], profile["dtype"]) == ("transformers", 1, "fp32")
    assert (profile["input_len"], profile["output_len"]) == (8, 5)
    assert profile["fingerprint"]["engine"]["n_params"] == 598336
    assert [p["concurrency"] for p in profile["points"]] == [1, 3]
    for point in profile["points"]:
        assert POINT_FIELDS <= point.keys()
        assert point["output_throughput"] == pytest.approx(5 * point["request_throughput"])
        assert point["total_token_throughput"] == pytest.approx(13 * point["request_throughput"])
        assert point["p95_tpot_ms"] >= point["median_tpot_ms"] > 0
        expected = 100 * point["decode_tokens_per_s"] / point["roofline_decode_tokens_per_s"]
        assert point["roofline_pct"] == pytest.approx(expected)
    assert "% roofline" in capsys.readouterr().out


def test_percentile_interpolates_like_numpy():
    assert gpu_profile.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert gpu_profile.percentile([10.0, 20.0], 95) == pytest.approx(19.5)
    assert gpu_profile.percentile([7.0], 95) == 7.0
