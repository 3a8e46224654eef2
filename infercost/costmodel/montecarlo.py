"""How uncertain the bill is: a Monte Carlo over call volume, call lengths, retries and truncations.

The deterministic bill (``api_bill``) is the expectation. Real days differ: the number of calls changes from day to
day (negative binomial around the forecast, ``calls_cv``), prompts and answers vary in length (drawn from real
per-record token counts of *this model's* tokenizer, e.g. the corpus statistics), calls fail and are retried at
random, and a request over a model's long-context threshold pays long-context rates for the whole request. Each
simulated call is priced by ``api_bill`` itself, on a Workload whose fields are arrays with one element per call
(the engine is vectorized): ``calls_per_day`` holds the call's attempts, retries and truncations are already drawn,
so they are zero there. The price rules therefore exist once.

Two more things move a real bill: answers are not all the workload's mean length (``output_cv`` draws each call's
output from a gamma distribution with that mean and spread, where no per-record output lengths are given), and a
prompt counted with a *proxy* tokenizer (a public one standing in for a private one) is off by an unknown factor
that is the same for every call of the corpus (``prompt_error``: quantiles of that relative error, one draw per
simulated month, at ERROR_LEVELS equally likely levels).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from infercost.costmodel.api_bill import TokenPrices, api_bill
from infercost.costmodel.scaling import gpu_hours_at
from infercost.costmodel.selfhost import SelfHostSetup, ThroughputPoint, operating_point
from infercost.costmodel.workload import Workload
from infercost.errors import InputError

# Below this many calls/day every call of every simulated day is drawn (5,000 x 2,000 days take about a second on
# two cores; 20,000 took three); from it on, a day's sum of thousands of independent calls is normal to well within
# the band's width (its skewness falls as 1 / sqrt(calls)), so the central limit theorem draws the days.
DIRECT_CALLS_PER_DAY = 5_000
CLT_SAMPLE_CALLS = 200_000  # above it, this many calls estimate the per-call mean and variance
CHUNK_CALLS = 1_000_000  # calls priced per vectorized pass, to bound memory
# A systematic error (the proxy tokenizer's) is simulated at this many equally likely levels, each a tenth of the
# simulated days and months; each level's per-call mean comes from CLT_SAMPLE_CALLS / ERROR_LEVEL_SHARE calls, so
# the band costs ERROR_LEVELS / ERROR_LEVEL_SHARE times the calls it costs without the error (two times).
ERROR_LEVELS = 10
ERROR_LEVEL_SHARE = 5


@dataclass(frozen=True)
class Band:
    """US dollars: the mean and percentiles of a simulated bill."""

    mean: float
    p50: float
    p90: float
    p99: float
    p10: float = 0.0


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
    sources: tuple[str, ...] = ()  # what varied, in words, for the page to say


def _band(bills: NDArray[np.float64]) -> Band:
    p10, p50, p90, p99 = np.percentile(bills, [10, 50, 90, 99])
    return Band(float(np.mean(bills)), float(p50), float(p90), float(p99), float(p10))


def draw_calls_per_day(mean: float, cv: float, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Calls on n days: negative binomial with the forecast mean and coefficient of variation ``cv``.

    Daily traffic is overdispersed (weekdays and weekends, launches, incidents move it more than independent
    arrivals would), which a negative binomial captures with one parameter: variance ``mean + mean**2 / r``, here
    ``r = mean**2 / (cv**2 mean**2 - mean)``. A cv below Poisson's own ``1 / sqrt(mean)`` draws Poisson; 0 draws none.
    """
    if cv == 0:
        return np.full(n, float(mean))
    variance = (cv * mean) ** 2
    if variance <= mean:
        return rng.poisson(mean, n).astype(float)
    size = mean**2 / (variance - mean)
    return rng.negative_binomial(size, size / (size + mean), n).astype(float)


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


@dataclass(frozen=True, eq=False)
class Lengths:
    """How a call's lengths are drawn: per-record token counts (resampled), else the workload's fixed lengths, an
    output length spread around its mean by ``output_cv``, and the prompt scaled by ``prompt_scale`` (a level of the
    proxy tokenizer's error)."""

    prompts: NDArray[np.float64] | None = None
    outputs: NDArray[np.float64] | None = None
    output_cv: float = 0.0
    prompt_scale: float = 1.0


def _draw_lengths(samples: NDArray[np.float64] | None, fixed: ArrayLike, n: int, rng: np.random.Generator,
                  cv: float = 0.0) -> NDArray:  # fmt: skip
    """Lengths of n calls: resampled from the records with replacement, else the fixed length for every call, or,
    with a spread ``cv``, gamma-distributed around it (positive, right-skewed like real answer lengths, mean kept)."""
    if samples is not None:
        return rng.choice(samples, n)
    if cv == 0 or float(fixed) == 0:
        return np.full(n, float(fixed))
    return rng.gamma(1 / cv**2, float(fixed) * cv**2, n)


def _draw_attempts(workload: Workload, n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Attempts of n calls: each attempt fails with probability r, at most k retries; a truncated call (probability
    t) is issued once more with retries of its own. The expectation is DESIGN.md's ``(1 + t) * sum(r**i, i=0..k)``."""
    r, k, t = float(workload.retry_rate), int(workload.max_retries), float(workload.truncation_rate)

    def tries() -> NDArray[np.int64]:
        failures = rng.geometric(1 - r, n) - 1  # failed attempts before the first success
        return 1 + np.minimum(failures, k)

    reissued = rng.random(n) < t
    return tries() + reissued * tries()


def call_costs(workload: Workload, prices: TokenPrices, lengths: Lengths, n: int,
               rng: np.random.Generator) -> NDArray[np.float64]:  # fmt: skip
    """US dollars of n random calls, retries and re-issues included, each priced by ``api_bill`` on its own lengths
    (so a call over the long-context threshold pays long-context rates for the whole call)."""
    attempts = _draw_attempts(workload, n, rng)
    prompts = _draw_lengths(lengths.prompts, workload.prompt_tokens, n, rng)
    per_call = dataclasses.replace(
        workload,
        calls_per_day=attempts,  # the call's attempts, each billed in full
        prompt_tokens=prompts * lengths.prompt_scale if lengths.prompt_scale != 1 else prompts,
        output_tokens=_draw_lengths(lengths.outputs, workload.output_tokens, n, rng, lengths.output_cv),
        retry_rate=0.0,
        truncation_rate=0.0,
    )
    return np.asarray(api_bill(per_call, prices).cost_per_day, dtype=float)


def _direct_days(workload: Workload, prices: TokenPrices, lengths: Lengths, calls: NDArray[np.float64],
                 rng: np.random.Generator, pool_calls: int = CLT_SAMPLE_CALLS) -> NDArray[np.float64]:  # fmt: skip
    """Every call of every day drawn. A fractional day of N calls draws ceil(N) calls and scales by N / ceil(N), so
    fixed lengths give exactly the deterministic bill. Beyond ``pool_calls`` calls in all, each call is drawn from
    ``pool_calls`` calls priced once (resampling a large iid sample of calls is drawing calls; pricing ten million
    was three quarters of a second, resampling them a fifth)."""
    counts = np.ceil(calls).astype(np.int64)
    scale = np.divide(calls, counts, out=np.zeros_like(calls), where=counts > 0)
    pool = call_costs(workload, prices, lengths, pool_calls, rng) if counts.sum() > pool_calls else None
    bills = np.zeros(calls.size)
    start = 0
    while start < calls.size:
        stop = start + max(1, int(np.searchsorted(np.cumsum(counts[start:]), CHUNK_CALLS, side="right")))
        chunk = counts[start:stop]
        total = int(chunk.sum())
        costs = call_costs(workload, prices, lengths, total, rng) if pool is None else pool[
            rng.integers(0, pool.size, total)]
        drawn = chunk > 0  # a day with no calls costs nothing (reduceat cannot sum an empty slice)
        sums = np.zeros(chunk.size)
        if drawn.any():
            sums[drawn] = np.add.reduceat(costs, (np.cumsum(chunk) - chunk)[drawn])
        bills[start:stop] = sums * scale[start:stop]
        start = stop
    return bills


def _clt_days(workload: Workload, prices: TokenPrices, lengths: Lengths, calls: NDArray[np.float64],
              rng: np.random.Generator, pool_calls: int = CLT_SAMPLE_CALLS) -> NDArray[np.float64]:  # fmt: skip
    """Central limit theorem: a day of N independent calls, each costing mean m and variance s^2, costs about
    Normal(N m, N s^2). m and s come from ``pool_calls`` simulated calls; at N >= DIRECT_CALLS_PER_DAY the
    sum's skewness (the per-call skewness / sqrt(N)) is small enough for the normal to give P99 to within a little."""
    costs = call_costs(workload, prices, lengths, pool_calls, rng)
    return rng.normal(calls * costs.mean(), np.sqrt(calls) * costs.std())


def _months(daily: NDArray[np.float64], days_per_month: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """A month is the sum of days_per_month independent days, each resampled from the simulated days; a fractional
    last day counts by its fraction, so the mean is exactly days_per_month times the daily mean in expectation."""
    whole = int(days_per_month)
    picks = rng.choice(daily, size=(daily.size, whole + 1))
    return picks[:, :whole].sum(axis=1) + (days_per_month - whole) * picks[:, whole]


def bill_band(workload: Workload, prices: TokenPrices, *, prompt_samples: ArrayLike | None = None,
              output_samples: ArrayLike | None = None, calls_cv: float = 0.0, output_cv: float = 0.0,
              prompt_error: Mapping[str, float] | None = None, simulations: int = 2000,
              seed: int = 0) -> BillBand:  # fmt: skip
    """P10, P50, P90 and P99 (and the mean) of the daily and monthly bill of one workload on one model.

    ``prompt_samples`` must be counted with this model's own tokenizer, or with a proxy whose error ``prompt_error``
    gives (``{"p10", "p50", "p90"}`` of ``proxy count / own count - 1`` turned around: the own count is the proxy's
    times ``1 + error``). ``output_cv`` spreads a fixed output length call by call. Without samples the lengths are
    the workload's fixed ones; with neither samples, spreads, errors, retries, truncations nor volume variation
    (``calls_cv`` 0) the band collapses onto ``api_bill``. The same seed gives the same band.
    """
    for name, value in (("calls_cv", calls_cv), ("output_cv", output_cv)):
        if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 10):
            raise InputError(name, f"must be a number in [0, 10], got {value!r}")
    workload.validate()
    grid_fields = [f.name for f in dataclasses.fields(workload) if np.ndim(getattr(workload, f.name)) != 0]
    if grid_fields:
        raise InputError(grid_fields[0], "must be one number for a Monte Carlo band, not a grid")
    if not (isinstance(simulations, int) and simulations >= 100):
        raise InputError("simulations", f"must be a whole number >= 100 (a P99 needs it), got {simulations!r}")
    lengths = Lengths(_checked_samples("prompt_samples", prompt_samples),
                      _checked_samples("output_samples", output_samples), float(output_cv))
    errors = _checked_errors(prompt_error)
    rng = np.random.default_rng(seed)
    direct = float(workload.calls_per_day) < DIRECT_CALLS_PER_DAY
    simulate = _direct_days if direct else _clt_days
    strata = (np.arange(ERROR_LEVELS) + 0.5) / ERROR_LEVELS  # equally likely levels, each at its stratum's middle
    levels = np.zeros(1) if errors is None else relative_error_at(errors, strata)
    pool_calls = CLT_SAMPLE_CALLS if levels.size == 1 else CLT_SAMPLE_CALLS // ERROR_LEVEL_SHARE
    daily_parts, monthly_parts = [], []
    for error, days in zip(levels, np.array_split(np.arange(simulations), levels.size), strict=True):
        calls = draw_calls_per_day(float(workload.calls_per_day), calls_cv, days.size, rng)
        level = dataclasses.replace(lengths, prompt_scale=1 + float(error))
        daily_parts.append(simulate(workload, prices, level, calls, rng, pool_calls))
        monthly_parts.append(_months(daily_parts[-1], float(workload.days_per_month), rng))
    daily, monthly = np.concatenate(daily_parts), np.concatenate(monthly_parts)
    calls_simulated = math.ceil(float(workload.calls_per_day)) * simulations if direct else pool_calls * levels.size
    method = "direct" if direct else "clt"
    return BillBand(_band(daily), _band(monthly), method, simulations, calls_simulated, daily, monthly,
                    band_sources(workload, lengths, calls_cv, errors))


def _checked_errors(quantiles: Mapping[str, float] | None) -> dict[str, float] | None:
    """A relative error's p10 <= p50 <= p90, each a finite number above -0.9; None or all zero: no error."""
    if not quantiles:
        return None
    try:
        values = {key: float(quantiles[key]) for key in ("p10", "p50", "p90")}
    except (KeyError, TypeError, ValueError):
        raise InputError("prompt_error", "needs p10, p50 and p90 as numbers") from None
    if not all(math.isfinite(v) and -0.9 < v <= 10 for v in values.values()) or not (
        values["p10"] <= values["p50"] <= values["p90"]
    ):
        raise InputError("prompt_error", f"must hold p10 <= p50 <= p90, each in (-0.9, 10], got {values}")
    return None if not any(values.values()) else values


def band_sources(workload: Workload, lengths: Lengths, calls_cv: float,
                 errors: Mapping[str, float] | None = None) -> tuple[str, ...]:  # fmt: skip
    """What the band varies, in words; nothing listed means the band is the deterministic bill."""
    prompts, outputs = lengths.prompts, lengths.outputs
    spread = lengths.output_cv and float(workload.output_tokens) > 0
    sources = [f"calls per day (negative binomial, CV {calls_cv:.0%})" if calls_cv else "",
               f"prompt lengths ({prompts.size:,} records)" if prompts is not None else "",
               f"output lengths ({outputs.size:,} records)" if outputs is not None else
               f"output lengths (gamma, CV {lengths.output_cv:.0%})" if spread else "",
               f"the proxy tokenizer's error ({errors['p10']:+.0%} to {errors['p90']:+.0%}, P10–P90)"
               if errors else "",
               "retries per call" if float(workload.retry_rate) > 0 else "",
               "truncations per call" if float(workload.truncation_rate) > 0 else ""]  # fmt: skip
    return tuple(source for source in sources if source)


def relative_error_at(quantiles: Mapping[str, float], u: ArrayLike) -> NDArray[np.float64]:
    """The relative error at probability u, from its p10, p50 and p90: the inverse CDF through those three points,
    continued with the same slopes beyond them, and kept above -0.9 (an error cannot make a count negative)."""
    p10, p50, p90 = (float(quantiles[key]) for key in ("p10", "p50", "p90"))
    u = np.asarray(u, dtype=float)
    lower = p50 + (u - 0.5) / 0.4 * (p50 - p10)
    upper = p50 + (u - 0.5) / 0.4 * (p90 - p50)
    return np.maximum(np.where(u < 0.5, lower, upper), -0.9)


THROUGHPUT_ERRORS = ("request_throughput", "output_throughput")  # the first a basis measured stands for both


def points_at_error(points: Sequence[ThroughputPoint], error: Mapping[str, Mapping[str, float]],
                    u: float) -> list[ThroughputPoint]:  # fmt: skip
    """The points as they would be measured if the prediction erred as its error at probability ``u`` does (a
    predicted value is ``measured × (1 + error)``): throughput at ``u``, latencies at ``1 - u``, because a prediction
    too fast in one is too fast in the others. ``u`` = 0.9 gives the points of the p90 (pessimistic) cost, 0.1 those
    of the p10; a metric without a measured error is left as predicted."""
    throughput = next((q for key in THROUGHPUT_ERRORS if (q := error.get(key))), None)
    requests_factor = 1.0 + float(relative_error_at(throughput, u)) if throughput else 1.0
    latency_factors = {}  # one per latency metric, not per point: a band asks this hundreds of times
    for name in {name for p in points for name in p.latency_ms}:
        quantiles = error.get(name) or error.get(name.replace("p95_", "mean_"))
        latency_factors[name] = 1.0 + float(relative_error_at(quantiles, 1.0 - u)) if quantiles else 1.0
    return [ThroughputPoint(p.concurrency, p.request_throughput / requests_factor,
                            None if p.output_throughput is None else p.output_throughput / requests_factor,
                            {name: value / latency_factors[name] for name, value in p.latency_ms.items()})
            for p in points]  # fmt: skip


def draw_relative_errors(quantiles: Mapping[str, float], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """n relative errors drawn from their p10, p50 and p90 (``relative_error_at`` of uniform draws)."""
    return relative_error_at(quantiles, rng.random(n))


def self_host_band(setup: SelfHostSetup, attempts_per_day: float, *, days_per_month: float, calls_cv: float = 0.0,
                   expected_error: Mapping[str, Mapping[str, float]] | None = None, simulations: int = 2000,
                   seed: int = 0) -> BillBand:  # fmt: skip
    """The monthly self-host cost as a band: day-to-day volume and, where given, the prediction's error.

    ``expected_error`` holds quantiles of each metric's relative error ``predicted / actual - 1``: a throughput
    predicted 10% too high is really predicted / 1.1. One error per simulated month (it is the basis's, not a day's)
    moves every point as ``points_at_error`` does, throughput and latencies together, and the fleet runs at the
    operating point that then meets the SLO: the rule of the P10–P90 range beside the cost (an always-on fleet's
    band has that range's ends for its P10 and P90). A month in which no point would meet the SLO runs at the
    lowest load (it misses the SLO; ``sources`` says how often). An always-on fleet is sized once for the forecast,
    so only the error moves it; autoscaled and batch fleets follow each day's volume.
    """
    point = operating_point(setup.points, setup.slo)
    if point is None:
        raise InputError("slo", "no operating point meets the SLO, so there is no self-host cost to simulate")
    rng = np.random.default_rng(seed)
    errors = expected_error if expected_error and any(expected_error.values()) else None
    draws = rng.random(simulations) if errors else np.full(simulations, 0.5)
    q, missed = np.empty(simulations), 0
    for index, u in enumerate(draws):
        points = points_at_error(setup.points, errors, float(u)) if errors else setup.points
        month_point = operating_point(points, setup.slo)
        if month_point is None:  # erring so, nothing meets the SLO: the fleet runs at its lowest load
            month_point, missed = min(points, key=lambda p: p.concurrency), missed + 1
        q[index] = month_point.request_throughput
    whole = math.ceil(days_per_month)
    calls = draw_calls_per_day(attempts_per_day, calls_cv, simulations * whole, rng).reshape(simulations, whole)
    if setup.mode == "always_on":
        calls = np.full_like(calls, attempts_per_day)
    hours = np.stack([gpu_hours_at(setup, q_month, day_calls)[0] for q_month, day_calls in zip(q, calls, strict=True)])
    daily = hours * setup.gpu_price_per_hour
    monthly = daily.mean(axis=1) * days_per_month
    sources = tuple(s for s in (f"calls per day (negative binomial, CV {calls_cv:.0%})"
                                if calls_cv and setup.mode != "always_on" else "",
                                "throughput and latency prediction error" if errors else "",
                                f"no point meets the SLO in {missed / simulations:.0%} of months (run at the lowest "
                                "load)" if missed else "") if s)  # fmt: skip
    return BillBand(_band(daily.ravel()), _band(monthly), "direct", simulations, 0, daily.ravel(), monthly, sources)
