"""How long the Monte Carlo bill band takes, against one deterministic bill in the same run.

    python -m bench.montecarlo [--calls 100000] [--simulations 2000] [--repeats 5] [--calls-cv 0.15]

Prints the median time of ``bill_band`` for the given calls/day (the central-limit path above
DIRECT_CALLS_PER_DAY) and for just under DIRECT_CALLS_PER_DAY (every call drawn), each as a ratio against the
median time of one ``api_bill`` of the same workload, measured in the same run: first with the corpus's prompt and
output lengths, then with a fixed output length spread by ``--output-cv`` and a proxy tokenizer's error (a
systematic error, simulated at ERROR_LEVELS levels).
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from bench.whatif_grid import median_seconds
from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.montecarlo import DIRECT_CALLS_PER_DAY, bill_band
from infercost.costmodel.workload import Workload

PRICES = TokenPrices(2.5, 10.0, cached_input_per_mtok=1.25, long_context_threshold=200_000,
                     long_context_input_per_mtok=5.0, long_context_output_per_mtok=15.0)  # fmt: skip
# Per-record prompt and output lengths of a skewed corpus, as the corpus statistics would give them.
RNG = np.random.default_rng(0)
PROMPTS = np.round(RNG.lognormal(7, 1, 5_000))
OUTPUTS = np.round(RNG.lognormal(5.5, 0.7, 5_000))
PROXY_ERROR = {"p10": -0.05, "p50": 0.02, "p90": 0.12}  # a shape like the bundled English spread, for timing only


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=float, default=100_000)
    parser.add_argument("--simulations", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls-cv", type=float, default=0.15, help="day-to-day spread of calls per day")
    parser.add_argument("--output-cv", type=float, default=0.5, help="spread of a fixed output length")
    args = parser.parse_args()
    workload = Workload(calls_per_day=args.calls, prompt_tokens=float(PROMPTS.mean()),
                        output_tokens=float(OUTPUTS.mean()), retry_rate=0.05, truncation_rate=0.01)  # fmt: skip
    baseline_s = median_seconds(lambda: api_bill(workload, PRICES), args.repeats * 200)
    print(f"baseline, one deterministic api_bill: {baseline_s * 1e6:.1f} µs (median of {args.repeats * 200})")
    corpus = {"prompt_samples": PROMPTS, "output_samples": OUTPUTS}
    proxy = {"prompt_samples": PROMPTS, "output_cv": args.output_cv, "prompt_error": PROXY_ERROR}
    for calls, draws in ((c, d) for d in (corpus, proxy) for c in (args.calls, DIRECT_CALLS_PER_DAY - 1)):
        case = dataclasses.replace(workload, calls_per_day=calls)

        def band(case=case, draws=draws):
            return bill_band(case, PRICES, calls_cv=args.calls_cv, simulations=args.simulations, **draws)

        result = band()
        seconds = median_seconds(band, args.repeats)
        print(f"{calls:,.0f} calls/day x {args.simulations:,} simulations ({result.method}, "
              f"{result.calls_simulated:,} calls drawn): {seconds * 1e3:.1f} ms (median of {args.repeats}), "
              f"{seconds / baseline_s:,.0f}x one api_bill; monthly P10-P90 ${result.monthly.p10:,.0f}-"
              f"{result.monthly.p90:,.0f} around a bill of ${float(api_bill(case, PRICES).cost_per_month):,.0f} "
              f"({', '.join(result.sources)})")  # fmt: skip


if __name__ == "__main__":
    main()
