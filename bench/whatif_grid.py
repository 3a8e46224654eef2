"""How fast the cost engine prices a what-if grid of 10,000 workload variants.

    python -m bench.whatif_grid [--variants 10000] [--repeats 7]

Prints the vectorized grid's median time, its time per variant, and the ratio against a baseline measured in the
same run: the same variants priced one at a time through the same engine (a Python loop of scalar bills).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from infercost.costmodel import TokenPrices, Workload, api_bill, whatif_costs

PRICES = TokenPrices(2.5, 10.0, cached_input_per_mtok=1.25, long_context_threshold=200_000,
                     long_context_input_per_mtok=5.0, long_context_output_per_mtok=15.0)  # fmt: skip
BASE = Workload(calls_per_day=100_000, prompt_tokens=1200, output_tokens=300, retry_rate=0.05,
                cached_prompt_fraction=0.3)


def median_seconds(function, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    side = int(round(args.variants**0.5))
    axes = {"calls_per_day": np.geomspace(1e3, 1e7, side), "prompt_tokens": np.linspace(100, 300_000, side)}
    variants = side * side

    grid_s = median_seconds(lambda: whatif_costs(BASE, axes, PRICES), args.repeats)
    pairs = [(c, p) for c in axes["calls_per_day"] for p in axes["prompt_tokens"]]

    def one_at_a_time() -> None:
        for calls, prompt in pairs:
            api_bill(Workload(calls_per_day=calls, prompt_tokens=prompt, output_tokens=300, retry_rate=0.05,
                              cached_prompt_fraction=0.3), PRICES)  # fmt: skip

    loop_s = median_seconds(one_at_a_time, max(1, args.repeats // 3))
    print(f"variants: {variants:,}")
    print(f"vectorized grid: {grid_s * 1e3:.2f} ms (median of {args.repeats}), "
          f"{grid_s / variants * 1e9:.0f} ns per variant")
    print(f"baseline, one bill at a time: {loop_s * 1e3:.1f} ms, {loop_s / variants * 1e6:.1f} µs per variant")
    print(f"speed-up of the grid over the baseline: {loop_s / grid_s:.0f}x")


if __name__ == "__main__":
    main()
