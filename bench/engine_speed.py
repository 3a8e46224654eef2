"""How long the engine model takes to predict a 10-level sweep (the issue's bound: under 50 ms).

    python -m bench.engine_speed [--repeats 7]

Times ``predict_concurrency`` over concurrency 1, 2, 5, 10, 25, 50, 100, 150, 200, 250 at three token shapes, for
an 8B setup on an H100 and a MoE one (DeepSeek-R1 in FP8 on eight B200s, its experts spread over them: latent
attention, routed-expert reads and the busiest GPU's share each step), their requests' lengths spread as a roofline
setup's are unless asked (``predict.DEFAULT_LENGTH_SPREAD``: users out of step, so more steps than a closed loop of
requests alike simulates), median of the repeats; and, in the same run,
a fixed pure-Python baseline (a million-step loop) so the figure can be read as a ratio on a shared, noisy machine.
Then the first answer of a roofline that ranks and calibrates on held-out setups (Llama-3.1-8B under SGLang on
8x H100), with their stored calibrations (``data/held_out_calibrations.json``) against fitting them afresh.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from infercost.performance.calibrate import PRIOR, Calibration, predict_concurrency
from infercost.performance.engine import ENGINE_PRESETS
from infercost.performance.predict import DEFAULT_LENGTH_SPREAD
from infercost.performance.profiles import engine_hardware, engine_setup, find_profile, setup_for

LEVELS = (1, 2, 5, 10, 25, 50, 100, 150, 200, 250)
SHAPES = ((200, 1000), (2000, 200), (7000, 1000))


def _baseline_ms() -> float:
    started = time.perf_counter()
    total = 0
    for i in range(1_000_000):
        total += i
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    dense = replace(engine_setup(find_profile("published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out")),
                    length_spread=DEFAULT_LENGTH_SPREAD)  # fmt: skip
    moe = replace(setup_for("deepseek-r1", engine_hardware("B200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"]),
                  expert_parallel=8, length_spread=DEFAULT_LENGTH_SPREAD)  # fmt: skip
    calibration = Calibration(PRIOR, 0)
    baseline = statistics.median(_baseline_ms() for _ in range(args.repeats))
    print(f"baseline (1M-step Python loop): {baseline:.1f} ms")
    for name, setup in (("Llama-3-8B, 1x H100", dense), ("DeepSeek-R1, 8x B200 EP8", moe)):
        for input_len, output_len in SHAPES:
            times = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                for level in LEVELS:
                    predict_concurrency(setup, calibration, level, input_len, output_len)
                times.append((time.perf_counter() - started) * 1000)
            median = statistics.median(times)
            print(f"{name:<25} {input_len:>5} in / {output_len:>5} out: 10-level sweep {median:6.1f} ms "
                  f"({median / baseline:.2f}x the baseline)")
    stored, fitted = _first_answer_ms(stored=True), _first_answer_ms(stored=False)
    print(f"first roofline answer on held-out setups: {stored:,.0f} ms with the stored calibrations, {fitted:,.0f} ms "
          f"fitting them ({fitted / stored:.0f}x)")
    return 0


def _first_answer_ms(*, stored: bool) -> float:
    """One roofline prediction with every per-process cache of held-out calibrations emptied (the held-out tables
    themselves stay read: both ways pay for them alike); without ``stored``, as if the file were stale."""
    from infercost.performance import expected_error, predict

    predict.held_out_tables()
    for cached in (predict._calibrated_held_out, predict._misfit, expected_error.stored_held_out_calibrations):
        cached.cache_clear()
    keep = predict.stored_held_out_calibrations
    predict.stored_held_out_calibrations = keep if stored else dict  # an empty store: every setup fitted
    try:
        started = time.perf_counter()
        predict.predict_roofline("llama-3.1-8b", "H100", 8, "bfloat16", 1000, 300, predict.Load([1]),
                                 engine="sglang")  # fmt: skip
        return (time.perf_counter() - started) * 1000
    finally:
        predict.stored_held_out_calibrations = keep


if __name__ == "__main__":
    raise SystemExit(main())
