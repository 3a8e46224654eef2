"""Roofline lower bounds: how fast a model *could* run on hardware, from bytes moved and FLOPs done.

Decoding one step reads every weight once plus each request's KV cache, so it is bound by memory bandwidth; prefill
does about 2 FLOPs per weight per token, so it is bound by peak compute. Comparing a measurement to these bounds
says how much of the hardware an engine used, and gives estimates for hardware nobody has measured yet.

Pure: plain numbers in, plain numbers out; no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infercost.errors import InputError
from infercost.performance.architecture import DTYPES, Architecture, from_config

# Bytes a weight moves: the 4-bit float formats carry their scales (MXFP4 one byte per 32 values, NVFP4 per 16).
DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "float16": 2, "bfloat16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
    "mxfp4": DTYPES["mxfp4"].bytes_per_value(), "nvfp4": DTYPES["nvfp4"].bytes_per_value(),
}
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class ModelShape:
    """The numbers of a decoder-only transformer that set its memory traffic and compute."""

    n_params: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_size: int
    vocab_size: int
    tie_word_embeddings: bool = False

    @property
    def matmul_params(self) -> int:
        """Weights read by every decode step: all but an untied input embedding, of which only a row per token is
        read (a tied embedding is read whole, as the output head)."""
        embedding = 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size
        return self.n_params - embedding


# Driver names (``NVIDIA H100 80GB HBM3``) to the catalog's GPU names, whose datasheet figures (bandwidth, peak
# FLOPs, with sources) live in the pricing catalog's gpu_specs.json. First match wins: specific patterns first.
GPU_NAME_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gh200",), "GH200"),
    (("h200",), "H200"),
    (("h100", "pcie"), "H100 PCIe"),
    (("h100", "nvl"), "H100 NVL"),
    (("h100",), "H100 SXM"),
    (("b200",), "B200"),
    (("a100", "40gb"), "A100 40GB"),
    (("a100", "pcie"), "A100 80GB PCIe"),
    (("a100",), "A100 80GB"),
    (("l40s",), "L40S"),
    (("l40",), "L40"),
    (("a10g",), "A10G"),
    (("a10",), "A10"),
    (("l4",), "L4"),
    (("4090",), "RTX 4090"),
    (("v100",), "V100"),
    (("t4",), "T4"),
)


def canonical_gpu_name(driver_name: str) -> str | None:
    """The catalog's name for a GPU as its driver reports it, or None for one we do not know."""
    lowered = driver_name.lower()
    for patterns, name in GPU_NAME_PATTERNS:
        if all(pattern in lowered for pattern in patterns):
            return name
    return None


def dtype_bytes(dtype: str) -> float:
    key = DTYPE_ALIASES.get(dtype, dtype)
    if key not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[key]


def weight_bytes(n_params: int, dtype: str) -> float:
    return n_params * dtype_bytes(dtype)


def kv_bytes_per_token(shape: ModelShape, dtype: str) -> float:
    """Keys and values of every layer for one token of context."""
    return 2 * shape.n_layers * shape.n_kv_heads * shape.head_dim * dtype_bytes(dtype)


def decode_step_seconds(shape: ModelShape, *, batch: int, context: float, dtype: str,
                        bandwidth_gbps: float, kv_dtype: str | None = None) -> float:
    """Lower bound of one decode step: weights once, plus ``batch`` KV caches of ``context`` tokens, at full
    bandwidth."""
    moved = (weight_bytes(shape.matmul_params, dtype)
             + batch * context * kv_bytes_per_token(shape, kv_dtype or dtype))
    return moved / (bandwidth_gbps * 1e9)


def decode_tokens_per_s(shape: ModelShape, *, batch: int, context: float, dtype: str,
                        bandwidth_gbps: float) -> float:
    """Aggregate output tokens/s bound at a batch size (one token per request per step)."""
    step = decode_step_seconds(shape, batch=batch, context=context, dtype=dtype, bandwidth_gbps=bandwidth_gbps)
    return batch / step


def prefill_seconds(shape: ModelShape, *, tokens: int, peak_tflops: float) -> float:
    """Lower bound of prefilling ``tokens`` prompt tokens: 2 FLOPs per weight per token at peak compute.

    Attention's own FLOPs are left out, which keeps it a lower bound.
    """
    return 2 * shape.matmul_params * tokens / (peak_tflops * 1e12)


def prefill_bound_seconds(shape: ModelShape, *, batch: int, input_len: int, dtype: str, bandwidth_gbps: float,
                          peak_tflops: float) -> float:
    """Lower bound of a batch's prefill: compute for all its tokens, but never less than reading the weights once
    (and writing the batch's KV caches)."""
    compute = prefill_seconds(shape, tokens=batch * input_len, peak_tflops=peak_tflops)
    memory = decode_step_seconds(shape, batch=batch, context=input_len, dtype=dtype, bandwidth_gbps=bandwidth_gbps)
    return max(compute, memory)


def roofline_pct(measured: float, roofline: float) -> float:
    """How much of the bound a measurement reached, in percent (rates: measured / bound)."""
    if roofline <= 0:
        raise ValueError("roofline must be positive")
    return 100.0 * measured / roofline


def model_shape(arch: Architecture) -> ModelShape:
    """The shape the engine model and the roofline use, for a dense attention model. Other kinds (MoE, Mamba
    hybrids) raise InputError naming ``model``: their step costs are not yet modelled."""
    if arch.kind != "dense":
        raise InputError("model", f"{arch.name} is a {arch.kind} model ({len(arch.moe_layers)} MoE layers): its "
                                  "throughput is not yet modelled, only dense models are; `models show` gives its "
                                  "memory")  # fmt: skip
    attention = arch.attention
    return ModelShape(n_params=arch.total_params, n_layers=arch.num_layers, n_heads=attention.num_heads,
                      n_kv_heads=attention.num_kv_heads, head_dim=attention.head_dim, hidden_size=arch.hidden_size,
                      vocab_size=arch.vocab_size, tie_word_embeddings=arch.tie_word_embeddings)  # fmt: skip


def model_shape_from_config(config: dict[str, Any]) -> ModelShape:
    """A shape from a Hugging Face ``config.json`` (any dense decoder ``architecture.from_config`` reads)."""
    return model_shape(from_config(config))


def count_params(config: dict[str, Any]) -> int:
    """Parameters of a decoder from its config (``architecture.Architecture.total_params``)."""
    return from_config(config).total_params
