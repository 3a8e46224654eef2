"""The workload profile document (``estimate PROFILE``): its schema, defaults and validation.

A profile describes prompts in tokens, or in characters of a language, or as sample texts; the estimate then
counts each model's prompt with that model's own tokenizer.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from infercost.errors import InputError, from_pydantic
from infercost.performance.engine import RELEASE_PATTERN

LATENCY_METRICS = tuple(
    f"{stat}_{metric}_ms"
    for metric in ("ttft", "tpot", "itl", "e2el")
    for stat in ("mean", "median", "p90", "p95", "p99")
)



def bounded(low: float, high: float, why: str, *, above: bool = False) -> Any:
    """A finite float within physical bounds; the message says the bounds and why they are there.

    Every number a profile gives ends up multiplied or divided into replica counts and money; bounding each one at
    the edge keeps every figure finite (no ``Infinity`` in JSON, no 300-digit replica count, no OverflowError).
    """

    def check(value: float) -> float:
        if value < low or (above and value == low) or value > high:
            raise ValueError(f"must be {'above' if above else 'at least'} {low:g} and at most {high:g} ({why})")
        return value

    return Annotated[float, Field(allow_inf_nan=False), AfterValidator(check)]


MS_PER_DAY = 86_400_000.0
LatencyMs = bounded(0, MS_PER_DAY, "a latency over a day is not a measurement")
LatencyLimitMs = bounded(0, MS_PER_DAY, "an SLO over a day is no limit", above=True)
RequestsPerS = bounded(0, 1e7, "requests/s of one replica; 0 means it served none")
TokensPerS = bounded(0, 1e9, "output tokens/s of one replica")
Concurrency = bounded(0, 1e6, "requests in flight on one replica", above=True)
MIN_VOLUME = 1e-3  # calls a day, tokens or characters per call: smaller and nonzero is a typo or a denormal
MIN_REQUESTS_PER_S = 1e-6  # one request in 11.6 days: slower than that is not a measured throughput


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Point(BaseModel):
    """One operating point; latency metrics use vLLM's names (``p95_ttft_ms`` ...)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    concurrency: Concurrency
    request_throughput: RequestsPerS
    output_throughput: TokensPerS | None = None

    @field_validator("request_throughput")
    @classmethod
    def _measurable(cls, value: float) -> float:
        if 0 < value < MIN_REQUESTS_PER_S:
            raise ValueError(f"a throughput above 0 must be at least {MIN_REQUESTS_PER_S:g} requests/s "
                             "(one request in 11.6 days)")
        return value

    @model_validator(mode="after")
    def _latency_fields_are_numbers(self) -> Point:
        for name, value in (self.model_extra or {}).items():
            if name in LATENCY_METRICS and not _is_latency(value):
                raise ValueError(f"{name} must be a finite number of ms from 0 to {MS_PER_DAY:g}")
        return self

    def latency_ms(self) -> dict[str, float]:
        return {k: float(v) for k, v in (self.model_extra or {}).items() if k in LATENCY_METRICS and v is not None}


class Roofline(_Strict):
    """A setup nobody measured: a roofline bound for this model on this GPU, corrected by the nearest measurement."""

    model: str = Field(min_length=1)
    gpu: str = Field(min_length=1)
    dtype: Literal["bfloat16", "float16", "fp8", "int8", "int4", "mxfp4", "nvfp4"] = "bfloat16"
    gpus: int = Field(default=1, ge=1, le=64)
    engine: Literal["vllm", "sglang", "trtllm"] | None = None  # None: the engine its calibration was measured on
    engine_version: str | None = Field(default=None, pattern=f"^{RELEASE_PATTERN}$")  # None: any release's tables
    tensor_parallel: int | None = Field(default=None, ge=1, le=64)  # None: the GPUs over data_parallel
    expert_parallel: int = Field(default=1, ge=1, le=64)
    data_parallel: int = Field(default=1, ge=1, le=64)


class Throughput(_Strict):
    """Points given inline, the id of a stored or bundled run, or a roofline estimate."""

    points: list[Point] | None = None
    run: str | None = None
    roofline: Roofline | None = None
    input_len: int | None = Field(default=None, gt=0)
    output_len: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_source(self) -> Throughput:
        if sum((bool(self.points), bool(self.run), self.roofline is not None)) != 1:
            raise ValueError('give one of "points" (a non-empty list), "run" (a run id) or "roofline"')
        return self


def _is_latency(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= MS_PER_DAY \
        and math.isfinite(value)


class SelfHost(_Strict):
    name: str = Field(min_length=1)
    # the weights it serves (a Hugging Face id or a bundled name); None: the roofline's or the run's model
    model: str | None = Field(default=None, min_length=1)
    gpu: str = ""
    gpu_price_per_hour: float = Field(gt=0, le=1000)
    gpu_offer: str | None = None  # id of the catalog GPU offer the price came from (``prices --json``), if any
    gpus_per_replica: int = Field(default=1, ge=1, le=1024)
    throughput: Throughput
    slo: dict[str, LatencyLimitMs] = Field(default_factory=dict)
    peak_to_average: float = Field(default=2.0, ge=1, le=100)
    target_utilization: float = Field(default=0.8, ge=0.01, le=1)
    mode: Literal["always_on", "autoscaled", "offline_batch"] = "always_on"
    tokenizer: str = "llama3"
    # autoscaled: 24 hourly weights of the day's load (any scale; None: a diurnal curve from peak_to_average)
    load_shape: list[float] | None = Field(default=None, min_length=24, max_length=24)
    min_replicas: int = Field(default=1, ge=0, le=100_000)  # autoscaled: replicas kept even when idle
    max_replicas: int | None = Field(default=None, ge=1, le=100_000)  # autoscaled: demand above it is unserved
    cold_start_minutes: float = Field(default=10.0, ge=0, le=1440)  # a starting replica is billed, serves nothing
    billing_increment_minutes: int = Field(default=60, ge=1, le=1440)  # provider bills whole increments, >= one
    deadline_hours: float = Field(default=24.0, gt=0, le=24)  # offline_batch: the day's volume done within this

    @field_validator("mode", mode="before")
    @classmethod
    def _elastic_is_autoscaled(cls, mode: Any) -> Any:
        """Profiles written before scaling modes said "elastic"; it means autoscaled."""
        return "autoscaled" if mode == "elastic" else mode

    @field_validator("load_shape")
    @classmethod
    def _a_day_of_weights(cls, weights: list[float] | None) -> list[float] | None:
        if weights is not None and (any(not 0 <= w < 1e12 for w in weights) or sum(weights) <= 0):
            raise ValueError("24 finite weights >= 0 with a positive sum, one per hour")
        return weights

    @field_validator("billing_increment_minutes")
    @classmethod
    def _whole_increments_a_day(cls, minutes: int) -> int:
        if (60 % minutes if minutes <= 60 else 1440 % minutes or minutes % 60):
            raise ValueError("must divide an hour (1, 5, 15, 30, 60 ...) or be whole hours dividing a day (120 ...)")
        return minutes

    @model_validator(mode="after")
    def _replica_bounds(self) -> SelfHost:
        if self.max_replicas is not None and self.max_replicas < max(self.min_replicas, 1):
            raise ValueError(f"max_replicas ({self.max_replicas}) must be at least min_replicas ({self.min_replicas})")
        return self

    @field_validator("slo")
    @classmethod
    def _known_metrics(cls, slo: dict[str, float]) -> dict[str, float]:
        for metric in slo:
            if metric not in LATENCY_METRICS:
                raise ValueError(f"unknown SLO metric {metric!r}; use one of {', '.join(LATENCY_METRICS)}")
        return slo


class PriceOverride(BaseModel):
    """A catalog entry, partial: fields not given come from the catalog entry of the same id, if any."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    id: str = Field(min_length=1)


class Profile(_Strict):
    name: str = "workload"
    calls_per_day: float = Field(gt=0, le=1e12)  # and at least MIN_CALLS_PER_DAY (``_volumes_that_count``)
    prompt_tokens: float | None = Field(default=None, ge=0, le=1e8)
    prompt_chars: float | None = Field(default=None, ge=0, le=1e9)
    language: str | None = None
    prompt_samples: list[str] | None = None
    # mean prompt tokens of a counted corpus, per tokenizer: used for models with that tokenizer (prompt_tokens: others)
    prompt_tokens_by_tokenizer: dict[str, float] | None = None
    output_tokens: float = Field(ge=0, le=1e8)
    reasoning_tokens: float = Field(default=0, ge=0, le=1e8)
    retry_rate: float = Field(default=0.0, ge=0, lt=1)
    max_retries: int = Field(default=3, ge=0, le=100)
    truncation_rate: float = Field(default=0.0, ge=0, le=1)
    cached_prompt_fraction: float = Field(default=0.0, ge=0, le=1)
    cache_write_fraction: float = Field(default=0.0, ge=0, le=1)
    batch: bool = False
    days_per_month: float = Field(default=30, gt=0, le=31)
    # day-to-day spread of calls per day (coefficient of variation) for the bill band; overdispersed by default
    calls_per_day_cv: float = Field(default=0.15, ge=0, le=10)
    # call-to-call spread of output tokens (std / mean) for the bill band: an assumption to replace with your logs'
    output_tokens_cv: float = Field(default=0.5, ge=0, le=10)
    api_models: list[str] | None = None
    prices: list[PriceOverride] = Field(default_factory=list)
    self_host: list[SelfHost] = Field(default_factory=list)

    @field_validator("calls_per_day", "prompt_tokens", "prompt_chars", "output_tokens", "reasoning_tokens")
    @classmethod
    def _volumes_that_count(cls, value: float | None, info: Any) -> float | None:
        """A volume is 0 or at least a thousandth (of a call a day, of a token per call): a denormal such as
        5e-324 calls a day makes the day's tokens underflow to 0 while a GPU is still billed for it."""
        if value is not None and 0 < value < MIN_VOLUME:
            raise ValueError(f"must be 0 or at least {MIN_VOLUME:g}" if info.field_name != "calls_per_day" else
                             f"must be at least {MIN_VOLUME:g} (one call in about three years)")
        return value

    @model_validator(mode="after")
    def _one_prompt_description(self) -> Profile:
        given = [self.prompt_tokens is not None, self.prompt_chars is not None, bool(self.prompt_samples)]
        if sum(given) != 1:
            raise ValueError(
                'give exactly one of "prompt_tokens", "prompt_chars" (with "language") or "prompt_samples"'
            )
        if self.prompt_tokens_by_tokenizer is not None and (
            self.prompt_tokens is None or not all(0 <= v <= 1e8 for v in self.prompt_tokens_by_tokenizer.values())
        ):
            raise ValueError('"prompt_tokens_by_tokenizer" needs "prompt_tokens", and counts from 0 to 1e8')
        if self.prompt_chars is not None and not self.language:
            raise ValueError('"prompt_chars" needs "language" (e.g. "en", "zh-Hans", "code")')
        if self.cached_prompt_fraction + self.cache_write_fraction > 1:
            raise ValueError("cached_prompt_fraction + cache_write_fraction must not exceed 1")
        names = [setup.name for setup in self.self_host]
        if len(set(names)) != len(names):
            raise ValueError(f"self_host names must differ; {sorted({n for n in names if names.count(n) > 1})} repeat")
        return self


def parse_profile(document: Any, *, name: str = "profile") -> Profile:
    """Validate a profile document; the error names the field (``self_host.0.slo`` ...)."""
    if not isinstance(document, dict):
        raise InputError(name, "a profile is a JSON/YAML object")
    try:
        return Profile(**document)
    except ValidationError as error:
        raise from_pydantic(error) from None
    except TypeError as error:  # e.g. keys that are not strings
        raise InputError(name, str(error)) from None


def new_entry_defaults(today: dt.date | None = None) -> dict[str, Any]:
    """Provenance for a price the profile adds without naming one: it is the person's own figure, dated today."""
    return {"provider": "custom", "source": "workload profile", "as_of": (today or dt.date.today()).isoformat()}


def unique_name(name: str, taken: Collection[str]) -> str:
    """Setups and scenarios are told apart by name in every table and chart: ``name (2)`` where it is taken."""
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} ({n})", n + 1
    return candidate
