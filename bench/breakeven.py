"""How long exact break-even regions take, against a brute-force scan of the same cost curves in the same run.

    python -m bench.breakeven [--repeats 5] [--scan-points 2000]

For each bundled throughput profile (always on, the app's default SLO, its GPU's cheapest on-demand offer) it finds
the regions against every catalog model exactly (``self_host_step_cost`` once, then one solve per model) and by a
log-spaced scan of both curves (what a grid search costs, and it can still miss a window narrower than its step).
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.whatif_grid import median_seconds
from infercost.compare import api_cost_at, self_host_cost_at
from infercost.costmodel.breakeven import break_even_regions, self_host_step_cost
from infercost.estimate import resolve_setup
from infercost.performance.profiles import bundled_profiles
from infercost.pricing import bundled_api_prices
from infercost.profile import parse_profile
from infercost.ui.setups import DEFAULT_SLO, rented_price


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scan-points", type=int, default=2_000)
    args = parser.parse_args()
    catalog = bundled_api_prices()
    for throughput in (p for p in bundled_profiles() if p.calibration_set):  # not the thousand held-out tables
        setup = {"name": "s", "throughput": {"run": throughput.id}, "slo": DEFAULT_SLO,
                 "gpu_price_per_hour": rented_price(throughput.hardware)[0]}
        profile = parse_profile({"calls_per_day": 100_000, "prompt_tokens": 1200, "output_tokens": 300,
                                 "retry_rate": 0.05, "self_host": [setup]})
        resolved = resolve_setup(profile, profile.self_host[0], 0, None)
        per_call = [api_cost_at(profile, price)(1.0) for price in catalog]
        attempts = float(resolved.volumes.attempts_per_day) / profile.calls_per_day

        def exact(resolved=resolved, per_call=per_call, attempts=attempts, profile=profile):
            step = self_host_step_cost(resolved.setup, attempts, profile.days_per_month, 1e8)
            return [break_even_regions(c, step) for c in per_call]

        def scan(resolved=resolved, per_call=per_call, profile=profile):
            grid = np.geomspace(1, 1e8, args.scan_points)
            cost = np.array([self_host_cost_at(profile, resolved)(float(n)) for n in grid])
            return [cost <= c * grid for c in per_call]

        windows = sum(len(r) for r in exact())
        exact_s, scan_s = median_seconds(exact, args.repeats), median_seconds(scan, args.repeats)
        print(f"{throughput.id}: exact {exact_s * 1e3:.1f} ms, scan of {args.scan_points:,} points "
              f"{scan_s * 1e3:.1f} ms ({scan_s / exact_s:,.1f}x the exact); {windows} windows over "
              f"{len(catalog)} models")  # fmt: skip


if __name__ == "__main__":
    main()
