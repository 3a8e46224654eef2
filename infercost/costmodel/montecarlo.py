"""How uncertain the API bill is: a Monte Carlo over call lengths, retries and truncations.

The deterministic bill (``api_bill``) is the expectation. Real days differ: prompts and answers vary in length
(drawn from real per-record token counts, e.g. the corpus statistics), calls fail and are retried at random, and a
request over a model's long-context threshold pays long-context rates for the whole request. Each simulated call is
priced by ``api_bill`` itself, on a Workload whose fields are arrays with one element per call (the engine is
vectorized): ``calls_per_day`` holds the call's attempts, retries and truncations are already drawn, so they are
zero there. The price rules therefore exist once.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.workload import Workload
from infercost.errors import InputError

# Below this many calls/day every call of every simulated day is drawn (5,000 x 2,000 days take about a second on
# two cores; 20,000 took three); from it on, a day's sum of thousands of independent calls is normal to well within
# the band's width (its skewness falls as 1 / sqrt(calls)), so the central limit theorem draws the days.
DIRECT_CALLS_PER_DAY = 5_000
CLT_SAMPLE_CALLS = 200_000  # above it, this many calls estimate the per-call mean and variance
CHUNK_CALLS = 1_000_000  # calls priced per vectorized pass, to bound memory


@dataclass(frozen=True)
class Band:
    """US dollars: the mean and percentiles of a simulated bill."""

    mean: float
    p50: float
    p90: float
    p99: float


@dataclass(frozen=True, eq=False)
class BillBand:
    """The daily and monthly bill as bands, with how they were simulated and the simulated bills themselves."""

    daily: Band
    monthly: Band
    method: str  # "direct": every call drawn; "clt": per-call mean and variance, days by the central limit theorem
    simulations: int
    calls_simulated: int
    daily_bills: NDArray[np.float64]
    monthly_bills: NDArray[np.float64]


def _band(bills: NDArray[np.float64]) -> Band:
    p50, p90, p99 = np.percentile(bills, [50, 90, 99])
    return Band(float(np.mean(bills)), float(p50), float(p90), float(p99))


def _checked_samples(name: str, samples: ArrayLike | None) -> NDArray[np.float64] | None:
    """Per-record token counts: a non-empty list of finite numbers >= 0, or None for the workload's fixed length."""
    if samples is None:
        return None
    values = np.asarray(samples, dtype=float).ravel()
    if values.size == 0:
        raise InputError(name, "is empty: give at least one token count, or none to use the fixed length")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InputError(name, "must hold finite token counts >= 0")
    return values


def _draw_lengths(samples: NDArray[np.float64] | None, fixed: ArrayLike, n: int, rng: np.random.Generator) -> NDArray:
    """Lengths of n calls: resampled from the records with replacement, or the fixed length for every call."""
    return np.full(n, float(fixed)) if samples is None else rng.choice(samples, n)


def _draw_attempts(workload: Workload, n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Attempts of n calls: each attempt fails with probability r, at most k retries; a truncated call (probability
    t) is issued once more with retries of its own. The expectation is DESIGN.md's ``(1 + t) * sum(r**i, i=0..k)``."""
    r, k, t = float(workload.retry_rate), int(workload.max_retries), float(workload.truncation_rate)

    def tries() -> NDArray[np.int64]:
        failures = rng.geometric(1 - r, n) - 1  # failed attempts before the first success
        return 1 + np.minimum(failures, k)

    reissued = rng.random(n) < t
    return tries() + reissued * tries()


def call_costs(workload: Workload, prices: TokenPrices, prompt_samples: NDArray | None,
               output_samples: NDArray | None, n: int, rng: np.random.Generator) -> NDArray[np.float64]:  # fmt: skip
    """US dollars of n random calls, retries and re-issues included, each priced by ``api_bill`` on its own lengths
    (so a call over the long-context threshold pays long-context rates for the whole call)."""
    attempts = _draw_attempts(workload, n, rng)
    per_call = dataclasses.replace(
        workload,
        calls_per_day=attempts,  # the call's attempts, each billed in full
        prompt_tokens=_draw_lengths(prompt_samples, workload.prompt_tokens, n, rng),
        output_tokens=_draw_lengths(output_samples, workload.output_tokens, n, rng),
        retry_rate=0.0,
        truncation_rate=0.0,
    )
    return np.asarray(api_bill(per_call, prices).cost_per_day, dtype=float)


def _direct_days(workload: Workload, prices: TokenPrices, samples: tuple, simulations: int,
                 rng: np.random.Generator) -> NDArray[np.float64]:  # fmt: skip
    """Every call of every day drawn. A fractional calls_per_day N draws ceil(N) calls and scales by N / ceil(N),
    so fixed lengths give exactly the deterministic bill."""
    calls = float(workload.calls_per_day)
    n = math.ceil(calls)
    days_per_chunk = max(1, CHUNK_CALLS // n)
    bills = []
    for start in range(0, simulations, days_per_chunk):
        days = min(days_per_chunk, simulations - start)
        costs = call_costs(workload, prices, *samples, days * n, rng).reshape(days, n)
        bills.append(costs.sum(axis=1) * (calls / n))
    return np.concatenate(bills)


def _clt_days(workload: Workload, prices: TokenPrices, samples: tuple, simulations: int,
              rng: np.random.Generator) -> NDArray[np.float64]:  # fmt: skip
    """Central limit theorem: a day of N independent calls, each costing mean m and variance s^2, costs about
    Normal(N m, N s^2). m and s come from CLT_SAMPLE_CALLS simulated calls; at N >= DIRECT_CALLS_PER_DAY the
    sum's skewness (the per-call skewness / sqrt(N)) is small enough for the normal to give P99 to within a little."""
    costs = call_costs(workload, prices, *samples, CLT_SAMPLE_CALLS, rng)
    calls = float(workload.calls_per_day)
    return rng.normal(calls * costs.mean(), math.sqrt(calls) * costs.std(), simulations)


def _months(daily: NDArray[np.float64], days_per_month: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """A month is the sum of days_per_month independent days, each resampled from the simulated days; a fractional
    last day counts by its fraction, so the mean is exactly days_per_month times the daily mean in expectation."""
    whole = int(days_per_month)
    picks = rng.choice(daily, size=(daily.size, whole + 1))
    return picks[:, :whole].sum(axis=1) + (days_per_month - whole) * picks[:, whole]


def bill_band(workload: Workload, prices: TokenPrices, *, prompt_samples: ArrayLike | None = None,
              output_samples: ArrayLike | None = None, simulations: int = 2000, seed: int = 0) -> BillBand:  # fmt: skip
    """P50, P90 and P99 (and the mean) of the daily and monthly bill of one workload on one model.

    Without samples the lengths are the workload's fixed ones; with neither samples, retries nor truncations the
    band collapses onto ``api_bill``. The same seed gives the same band.
    """
    workload.validate()
    grid_fields = [f.name for f in dataclasses.fields(workload) if np.ndim(getattr(workload, f.name)) != 0]
    if grid_fields:
        raise InputError(grid_fields[0], "must be one number for a Monte Carlo band, not a grid")
    if not (isinstance(simulations, int) and simulations >= 100):
        raise InputError("simulations", f"must be a whole number >= 100 (a P99 needs it), got {simulations!r}")
    samples = (_checked_samples("prompt_samples", prompt_samples), _checked_samples("output_samples", output_samples))
    rng = np.random.default_rng(seed)
    direct = float(workload.calls_per_day) < DIRECT_CALLS_PER_DAY
    simulate = _direct_days if direct else _clt_days
    daily = simulate(workload, prices, samples, simulations, rng)
    monthly = _months(daily, float(workload.days_per_month), rng)
    calls_simulated = math.ceil(float(workload.calls_per_day)) * simulations if direct else CLT_SAMPLE_CALLS
    method = "direct" if direct else "clt"
    return BillBand(_band(daily), _band(monthly), method, simulations, calls_simulated, daily, monthly)
