"""The API bill: tokens per day times each model's prices (DESIGN.md, "Cost semantics").

Price modifiers compose as factors on the regular rates: long context scales every input-side rate (regular,
cached, cache write) by ``long_context_input / input`` and the output rate by ``long_context_output / output``;
the batch tier scales them the same way by its own rates. Providers that publish both (Gemini, Claude) price
cached and long-context tokens this way, and one rule keeps every combination defined.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from infercost.costmodel.workload import Number, TokenVolumes, Workload, token_volumes

PER_MTOK = 1e6


@dataclass(frozen=True)
class TokenPrices:
    """One model's prices in US dollars per million tokens; optional tiers are None where not offered."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None
    batch_input_per_mtok: float | None = None
    batch_output_per_mtok: float | None = None
    long_context_threshold: int | None = None
    long_context_input_per_mtok: float | None = None
    long_context_output_per_mtok: float | None = None
    # Cached input in a batch job where the provider prices it on its own (Gemini 2.5/3.1: the standard cached rate).
    batch_cached_input_per_mtok: float | None = None
    # Alibaba bills a request in thinking mode (reasoning tokens > 0) at a higher output rate, for all its output.
    thinking_output_per_mtok: float | None = None
    # Prompt-length tiers past the first, ascending: (above prompt tokens, input, output); the whole request pays them.
    prompt_tiers: tuple[tuple[int, float, float], ...] = ()


@dataclass(frozen=True)
class ApiBill:
    """What one model costs for one workload, with the token volumes it was computed from."""

    volumes: TokenVolumes
    cost_per_day: Number
    cost_per_month: Number
    cost_per_call: Number
    cost_per_million_tokens: Number
    warnings: list[str] = field(default_factory=list)


def _ratio(tier: float | None, regular: float) -> float:
    """How much a tier scales a regular rate; 1 where the tier is absent (or the regular rate is free)."""
    if tier is None:
        return 1.0
    return tier / regular if regular else 1.0


def _rate_factors(workload: Workload, prices: TokenPrices) -> tuple[Number, Number]:
    """(input-side factor, output factor) from the long-context and batch tiers that apply."""
    p = prices
    input_factor: Number = np.ones_like(np.asarray(workload.prompt_tokens, dtype=float))
    output_factor: Number = np.ones_like(input_factor)
    if p.long_context_threshold is not None:
        is_long = np.asarray(workload.prompt_tokens) > p.long_context_threshold
        input_factor = np.where(is_long, _ratio(p.long_context_input_per_mtok, p.input_per_mtok), 1.0)
        output_factor = np.where(is_long, _ratio(p.long_context_output_per_mtok, p.output_per_mtok), 1.0)
    for above_tokens, tier_input, tier_output in p.prompt_tiers:
        in_tier = np.asarray(workload.prompt_tokens) > above_tokens
        input_factor = np.where(in_tier, _ratio(tier_input, p.input_per_mtok), input_factor)
        output_factor = np.where(in_tier, _ratio(tier_output, p.output_per_mtok), output_factor)
    if workload.batch:
        input_factor = input_factor * _ratio(p.batch_input_per_mtok, p.input_per_mtok)
        output_factor = output_factor * _ratio(p.batch_output_per_mtok, p.output_per_mtok)
    return input_factor, output_factor


def cost_per_day(volumes: TokenVolumes, workload: Workload, prices: TokenPrices) -> Number:
    """US dollars per day: each token class at its rate, all scaled by the tiers that apply."""
    p = prices
    input_factor, output_factor = _rate_factors(workload, p)
    cached_rate = p.input_per_mtok if p.cached_input_per_mtok is None else p.cached_input_per_mtok
    write_rate = p.input_per_mtok if p.cache_write_per_mtok is None else p.cache_write_per_mtok
    cached_cost = volumes.cached_input_tokens_per_day * cached_rate * input_factor
    if workload.batch and p.batch_cached_input_per_mtok is not None:  # its own rate: undo the batch factor
        undo_batch = _ratio(p.batch_input_per_mtok, p.input_per_mtok)
        cached_cost = volumes.cached_input_tokens_per_day * p.batch_cached_input_per_mtok * input_factor / undo_batch
    uncached = volumes.input_tokens_per_day - volumes.cached_input_tokens_per_day - volumes.cache_write_tokens_per_day
    input_cost = (uncached * p.input_per_mtok + volumes.cache_write_tokens_per_day * write_rate) * input_factor
    input_cost = input_cost + cached_cost
    output_rate: Number = p.output_per_mtok
    if p.thinking_output_per_mtok is not None:
        thinking = np.asarray(workload.reasoning_tokens, dtype=float) > 0
        output_rate = np.where(thinking, p.thinking_output_per_mtok, p.output_per_mtok)
    output_cost = volumes.output_tokens_per_day * output_rate * output_factor
    return (input_cost + output_cost) / PER_MTOK


def bill_warnings(workload: Workload, prices: TokenPrices, *, context_window: int | None = None) -> list[str]:
    """What a person should know about how this bill was priced (one workload, not a grid)."""
    w, p = workload, prices
    notes = []
    if w.batch and p.batch_input_per_mtok is None:
        notes.append("no batch tier: priced at regular rates")
    if p.long_context_threshold is not None and float(w.prompt_tokens) > p.long_context_threshold:
        notes.append(
            f"long context: {float(w.prompt_tokens):,.0f} prompt tokens exceed {p.long_context_threshold:,}; "
            "the whole request is priced at long-context rates"
        )
    if p.thinking_output_per_mtok is not None and float(w.reasoning_tokens) > 0:
        notes.append(f"thinking mode: all output priced at ${p.thinking_output_per_mtok:g} per 1M tokens")
    tiers_passed = [above for above, _, _ in p.prompt_tiers if float(w.prompt_tokens) > above]
    if tiers_passed:
        notes.append(f"prompt tier: prompts over {tiers_passed[-1]:,} tokens pay that tier's rates for the whole "
                     "request")
    if float(w.cached_prompt_fraction) > 0 and p.cached_input_per_mtok is None:
        notes.append("no cached-input price: cached tokens priced as regular input")
    if float(w.cache_write_fraction) > 0 and p.cache_write_per_mtok is None:
        notes.append("no cache-write price: cache writes priced as regular input")
    tokens_per_call = float(w.prompt_tokens) + float(w.output_tokens) + float(w.reasoning_tokens)
    if context_window is not None and tokens_per_call > context_window:
        notes.append(f"{tokens_per_call:,.0f} tokens per call exceed the context window of {context_window:,}")
    return notes


def api_bill(workload: Workload, prices: TokenPrices, *, context_window: int | None = None) -> ApiBill:
    """The bill per day, month, call and million tokens; arrays in, arrays out (warnings only for scalars)."""
    volumes = token_volumes(workload)
    per_day = cost_per_day(volumes, workload, prices)
    total_tokens = volumes.total_tokens_per_day
    per_mtok = np.divide(per_day * PER_MTOK, total_tokens, out=np.zeros_like(per_day), where=total_tokens > 0)
    scalar = np.ndim(per_day) == 0
    return ApiBill(
        volumes=volumes,
        cost_per_day=per_day,
        cost_per_month=per_day * np.asarray(workload.days_per_month, dtype=float),
        cost_per_call=per_day / np.asarray(workload.calls_per_day, dtype=float),
        cost_per_million_tokens=per_mtok,
        warnings=bill_warnings(workload, prices, context_window=context_window) if scalar else [],
    )
