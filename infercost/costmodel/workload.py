"""A workload and the tokens it sends per day (DESIGN.md, "Cost semantics").

Fields may be numbers or numpy arrays of the same shape: the same formulas then evaluate a whole what-if grid
at once. ``validate()`` is for one workload described by a person.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import ArrayLike, NDArray

from infercost.errors import InputError

Number = float | NDArray[np.float64]


@dataclass(frozen=True)
class Workload:
    """What a product sends to a model each day, per call in tokens."""

    calls_per_day: ArrayLike
    prompt_tokens: ArrayLike
    output_tokens: ArrayLike
    reasoning_tokens: ArrayLike = 0
    retry_rate: ArrayLike = 0.0
    max_retries: ArrayLike = 3
    truncation_rate: ArrayLike = 0.0
    cached_prompt_fraction: ArrayLike = 0.0
    cache_write_fraction: ArrayLike = 0.0
    batch: bool = False
    days_per_month: ArrayLike = 30

    def validate(self) -> Workload:
        """Raise InputError naming the first field a person must fix; return self."""
        for name, low, high, low_open in _RANGES:
            value = getattr(self, name)
            bad = np.asarray(value < low if not low_open else value <= low) | np.asarray(value > high)
            if np.any(bad) or np.any(np.isnan(np.asarray(value, dtype=float))):
                bracket = "(" if low_open else "["
                raise InputError(name, f"must be in {bracket}{low:g}, {high:g}], got {value!r}")
        if np.any(np.asarray(self.max_retries) != np.floor(np.asarray(self.max_retries))):
            raise InputError("max_retries", f"must be a whole number, got {self.max_retries!r}")
        if np.any(np.asarray(self.retry_rate) >= 1):
            raise InputError("retry_rate", f"must be below 1 (every attempt fails at 1), got {self.retry_rate!r}")
        if np.any(np.asarray(self.cached_prompt_fraction) + np.asarray(self.cache_write_fraction) > 1):
            raise InputError("cache_write_fraction", "cached_prompt_fraction + cache_write_fraction must not exceed 1")
        return self


MAX_CALLS_PER_DAY = 1e12  # the most a workload may have; what-if axes stop here too

# (field, lowest, highest, lowest excluded): generous bounds that still catch typos and absurd values.
_RANGES = (
    ("calls_per_day", 0, MAX_CALLS_PER_DAY, True),
    ("prompt_tokens", 0, 1e8, False),
    ("output_tokens", 0, 1e8, False),
    ("reasoning_tokens", 0, 1e8, False),
    ("retry_rate", 0, 1, False),
    ("max_retries", 0, 100, False),
    ("truncation_rate", 0, 1, False),
    ("cached_prompt_fraction", 0, 1, False),
    ("cache_write_fraction", 0, 1, False),
    ("days_per_month", 0, 31, True),
)
WORKLOAD_FIELDS = tuple(f.name for f in fields(Workload))


def attempts_per_call(retry_rate: ArrayLike, max_retries: ArrayLike) -> Number:
    """Expected attempts per call, ``sum(r**i for i in 0..k)``: every attempt is billed in full.

    The closed form of the geometric sum; at r = 0 it is exactly 1.
    """
    r = np.asarray(retry_rate, dtype=float)
    k = np.asarray(max_retries, dtype=float)
    return (1 - r ** (k + 1)) / (1 - r)


@dataclass(frozen=True)
class TokenVolumes:
    """Tokens a workload sends per day; exact expectations, not rounded."""

    attempts_per_day: Number
    input_tokens_per_day: Number  # all prompt tokens, cached or not
    cached_input_tokens_per_day: Number  # read from the provider's prompt cache
    cache_write_tokens_per_day: Number  # written to the prompt cache
    output_tokens_per_day: Number  # visible output plus reasoning

    @property
    def total_tokens_per_day(self) -> Number:
        return self.input_tokens_per_day + self.output_tokens_per_day


def token_volumes(workload: Workload) -> TokenVolumes:
    """Calls issued include one re-issue per truncated call; each is retried as ``attempts_per_call`` says."""
    w = workload
    calls_issued = np.asarray(w.calls_per_day, dtype=float) * (1 + np.asarray(w.truncation_rate, dtype=float))
    attempts = calls_issued * attempts_per_call(w.retry_rate, w.max_retries)
    input_tokens = attempts * np.asarray(w.prompt_tokens, dtype=float)
    output_tokens = attempts * (np.asarray(w.output_tokens, dtype=float) + np.asarray(w.reasoning_tokens, dtype=float))
    return TokenVolumes(
        attempts_per_day=attempts,
        input_tokens_per_day=input_tokens,
        cached_input_tokens_per_day=input_tokens * np.asarray(w.cached_prompt_fraction, dtype=float),
        cache_write_tokens_per_day=input_tokens * np.asarray(w.cache_write_fraction, dtype=float),
        output_tokens_per_day=output_tokens,
    )
