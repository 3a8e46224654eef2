"""The price catalog's schema: every price is a fact with a source and a date.

API prices are US dollars per million tokens; GPU prices are US dollars per GPU-hour (a multi-GPU instance is
divided by its GPU count). Validation errors name the entry and the field.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from infercost.costmodel.api_bill import TokenPrices

Fidelity = Literal["exact", "proxy", "heuristic"]
# The formats a GPU's tensor (matrix) cores multiply natively, in the names the architecture module uses for weight
# dtypes. int4 is not among them: AWQ/GPTQ int4 kernels dequantize to 16-bit on every GPU here.
NativeDtype = Literal["float16", "bfloat16", "fp8", "int8", "mxfp6", "mxfp4", "nvfp4"]
FP4_DTYPES = frozenset({"mxfp4", "nvfp4"})
NonNegativePrice = Field(ge=0, le=10_000)
# A Hugging Face repository id, ``owner/name`` (the characters the Hub allows).
HF_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"
OptionalPrice = Field(default=None, ge=0, le=10_000)


class PriceTier(BaseModel):
    """One prompt-length tier past the first (Alibaba prices some models in three or more): a request whose prompt
    exceeds ``above_tokens`` pays this tier's rates for the whole request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    above_tokens: int = Field(gt=0, le=100_000_000)
    input_per_mtok: float = NonNegativePrice
    output_per_mtok: float = NonNegativePrice


class ApiPrice(BaseModel):
    """One API model's per-token prices (USD per 1M tokens)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    provider: str = Field(min_length=1, max_length=100)
    input_per_mtok: float = NonNegativePrice
    output_per_mtok: float = NonNegativePrice
    cached_input_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    cache_write_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    batch_input_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    batch_output_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    long_context_threshold: int | None = Field(default=None, gt=0)
    long_context_input_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    long_context_output_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    batch_cached_input_per_mtok: float | None = OptionalPrice
    thinking_output_per_mtok: float | None = OptionalPrice
    price_tiers: tuple[PriceTier, ...] = ()
    context_window: int | None = Field(default=None, gt=0)
    deprecation_date: dt.date | None = None
    successor: str | None = Field(default=None, min_length=1, max_length=200)
    litellm_key: str | None = Field(default=None, min_length=1, max_length=300)
    # The public checkpoint this offer serves (None: closed, or none known); SOURCES.md, "Open weights".
    open_weights: str | None = Field(default=None, max_length=200, pattern=HF_ID_PATTERN)
    tokenizer: str = Field(default="o200k_base", min_length=1)
    tokenizer_fidelity: Fidelity = "proxy"
    tokenizer_note: str = ""
    source: str = Field(min_length=1)
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _long_context_complete(self) -> ApiPrice:
        parts = (self.long_context_threshold, self.long_context_input_per_mtok, self.long_context_output_per_mtok)
        if any(p is not None for p in parts) and any(p is None for p in parts):
            raise ValueError(
                "long_context_threshold, long_context_input_per_mtok and long_context_output_per_mtok go together"
            )
        if (self.batch_input_per_mtok is None) != (self.batch_output_per_mtok is None):
            raise ValueError("batch_input_per_mtok and batch_output_per_mtok go together")
        starts = [tier.above_tokens for tier in self.price_tiers]
        if starts != sorted(set(starts)):
            raise ValueError("price_tiers must be in ascending order of above_tokens, each start once")
        if self.price_tiers and self.long_context_threshold is not None:
            raise ValueError("price_tiers and long_context_threshold are two ways to say one thing: use one")
        return self

    def token_prices(self) -> TokenPrices:
        """The plain numbers the cost engine takes."""
        return TokenPrices(
            input_per_mtok=self.input_per_mtok,
            output_per_mtok=self.output_per_mtok,
            cached_input_per_mtok=self.cached_input_per_mtok,
            cache_write_per_mtok=self.cache_write_per_mtok,
            batch_input_per_mtok=self.batch_input_per_mtok,
            batch_output_per_mtok=self.batch_output_per_mtok,
            long_context_threshold=self.long_context_threshold,
            long_context_input_per_mtok=self.long_context_input_per_mtok,
            long_context_output_per_mtok=self.long_context_output_per_mtok,
            batch_cached_input_per_mtok=self.batch_cached_input_per_mtok,
            thinking_output_per_mtok=self.thinking_output_per_mtok,
            prompt_tiers=tuple((t.above_tokens, t.input_per_mtok, t.output_per_mtok) for t in self.price_tiers),
        )


class GpuPrice(BaseModel):
    """One rented GPU offer (USD per GPU-hour)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    gpu: str = Field(min_length=1)
    provider: str = Field(min_length=1)
    price_per_hour: float = Field(gt=0, le=1_000)
    kind: Literal["on-demand", "spot", "reserved"]
    gpus_per_instance: int = Field(default=1, ge=1, le=64)
    source: str = Field(min_length=1)
    as_of: dt.date
    notes: str = ""


class GpuSpec(BaseModel):
    """A GPU's datasheet facts, for roofline estimates and owned-hardware costs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: str = Field(min_length=1)
    vendor: Literal["NVIDIA", "AMD"] = "NVIDIA"  # which engines run on it: TensorRT-LLM is NVIDIA's only
    memory_gb: float = Field(gt=0)
    memory_bandwidth_gbps: float = Field(gt=0)  # GB/s
    bf16_dense_tflops: float = Field(gt=0)
    fp8_dense_tflops: float | None = Field(default=None, gt=0)  # None: no FP8 tensor cores (A100 and older)
    fp4_dense_tflops: float | None = Field(default=None, gt=0)  # None: no FP4 tensor cores (before Blackwell)
    native_dtypes: tuple[NativeDtype, ...] = Field(min_length=1)
    native_dtypes_source: str = Field(min_length=1)  # URL of the page that lists the tensor cores' formats
    board_power_w: float = Field(gt=0)
    # GB/s between the GPUs of one server, both directions together: NVLink where the part has it, else its PCIe
    # slot. Tensor-parallel all-reduces cross it every layer. None: not known (no communication cost is modelled).
    interconnect_gbps: float | None = Field(default=None, gt=0)
    purchase_price_usd: float | None = Field(default=None, gt=0)
    source: str = Field(min_length=1)
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _dtypes_match_peaks(self) -> GpuSpec:
        """A peak rate and the dtype it is for come together: FP8 (FP4) TFLOPS without FP8 (an FP4 format) among
        the native dtypes, or the other way, is a datasheet typo that would price a dtype the GPU cannot run."""
        dtypes = set(self.native_dtypes)
        if len(dtypes) != len(self.native_dtypes):
            raise ValueError("native_dtypes lists a dtype twice")
        if "bfloat16" not in dtypes:
            raise ValueError("native_dtypes must include bfloat16 (bf16_dense_tflops is its peak)")
        if ("fp8" in dtypes) != (self.fp8_dense_tflops is not None):
            raise ValueError("fp8 in native_dtypes and fp8_dense_tflops go together")
        if bool(dtypes & FP4_DTYPES) != (self.fp4_dense_tflops is not None):
            raise ValueError("an FP4 format (mxfp4, nvfp4) in native_dtypes and fp4_dense_tflops go together")
        return self
