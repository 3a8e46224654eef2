"""calculate_metrics: vLLM's meanings on hand-made records whose answers are known."""

from __future__ import annotations

import pytest

from infercost.runner.metrics import calculate_metrics, combine_repeats


def record(t0: float, ttft: float, gaps: list[float], n_out: int, *, status: str = "ok", session: int = 0,
           n_in: int = 10) -> dict:
    t_first = t0 + ttft
    return {"t0": t0, "t_first": t_first, "t_last": t_first + sum(gaps), "itl": gaps, "n_in": n_in,
            "n_out": n_out, "n_out_expected": n_out, "status": status, "session": session}


def test_ttft_tpot_itl_e2el() -> None:
    # 5 tokens in 3 chunks: TPOT divides by tokens, ITL lists chunk gaps
    summary = calculate_metrics([record(0.0, 0.100, [0.020, 0.020], 5)])
    assert summary["mean_ttft_ms"] == pytest.approx(100)
    assert summary["mean_tpot_ms"] == pytest.approx(40 / 4)
    assert summary["mean_itl_ms"] == pytest.approx(20)
    assert summary["mean_e2el_ms"] == pytest.approx(140)
    assert summary["median_user_tokens_per_s"] == pytest.approx(100)


def test_throughputs_divide_by_first_send_to_last_completion() -> None:
    records = [record(0.0, 0.1, [0.1], 2, n_in=10), record(0.5, 0.1, [0.4], 2, n_in=30)]  # ends at 0.2 and 1.0
    summary = calculate_metrics(records)
    assert summary["duration"] == pytest.approx(1.0)
    assert summary["request_throughput"] == pytest.approx(2.0)
    assert summary["output_throughput"] == pytest.approx(4.0)
    assert summary["total_token_throughput"] == pytest.approx(44.0)
    assert summary["mean_concurrency"] == pytest.approx((0.2 + 0.5) / 1.0)


def test_failures_are_counted_by_kind_and_excluded_from_latencies() -> None:
    failed = {"t0": 0.0, "t_first": None, "t_last": None, "itl": [], "n_in": None, "n_out": None,
              "status": "timeout", "session": 0}
    summary = calculate_metrics([record(0.0, 0.1, [0.1], 2), failed])
    assert (summary["completed"], summary["failed"], summary["failures"]) == (1, 1, {"timeout": 1})
    assert summary["mean_ttft_ms"] == pytest.approx(100)


def test_a_resumed_level_does_not_count_the_time_it_was_down() -> None:
    before = record(0.0, 0.1, [0.9], 2, session=0)  # 0 .. 1.0
    after = record(5000.0, 0.1, [0.9], 2, session=1)  # another process, hours later
    assert calculate_metrics([before, after])["duration"] == pytest.approx(2.0)


def test_goodput_counts_requests_meeting_every_slo() -> None:
    records = [record(0.0, 0.1, [0.1], 2), record(0.0, 0.5, [0.1], 2)]
    assert calculate_metrics(records, slo_ms={"ttft": 200})["request_goodput"] == pytest.approx(1 / 0.6)


def test_output_length_mismatch_is_reported() -> None:
    short = {**record(0.0, 0.1, [0.1], 2), "n_out_expected": 8}
    assert calculate_metrics([short])["output_len_mismatch"] == 1


def test_repeats_give_the_median_and_the_spread() -> None:
    combined = combine_repeats([{"x": 1.0, "model": "m"}, {"x": 5.0, "model": "m"}, {"x": 2.0, "model": "m"}])
    assert combined["x"] == 2.0 and combined["spread"]["x"] == [1.0, 5.0] and combined["model"] == "m"
