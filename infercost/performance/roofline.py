"""Roofline lower bounds: how fast a model *could* run on hardware, from bytes moved and FLOPs done.

Decoding one step reads every weight once plus each request's KV cache, so it is bound by memory bandwidth; prefill
does about 2 FLOPs per weight per token, so it is bound by peak compute. Comparing a measurement to these bounds
says how much of the hardware an engine used, and gives estimates for hardware nobody has measured yet.

Pure: plain numbers in, plain numbers out; no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "float16": 2, "bfloat16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
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


# Driver names (``NVIDIA H100 80GB HBM3``, ``AMD Instinct MI300X``) to the catalog's GPU names, whose datasheet figures
# (bandwidth, peak FLOPs, native dtypes, with sources) live in the pricing catalog's gpu_specs.json. First match wins,
# and a pattern is a substring, so one that is inside another name comes after it: "gb200" before "b200", "gh200" and
# "h200" before "h20", "l40s" before "l40".
GPU_NAME_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gh200",), "GH200"),
    (("gb300",), "GB300"),
    (("gb200",), "GB200"),
    (("h200",), "H200"),
    (("h20",), "H20"),
    (("h100", "pcie"), "H100 PCIe"),
    (("h100", "nvl"), "H100 NVL"),
    (("h100",), "H100 SXM"),
    (("b300",), "B300"),
    (("b200",), "B200"),
    (("rtx pro 6000", "server"), "RTX PRO 6000 Blackwell Server"),
    (("mi300x",), "MI300X"),
    (("mi325x",), "MI325X"),
    (("mi355x",), "MI355X"),
    (("a100", "pcie", "40gb"), "A100 40GB PCIe"),
    (("a100", "40gb"), "A100 40GB"),
    (("a100", "pcie"), "A100 80GB PCIe"),
    (("a100",), "A100 80GB"),
    (("l40s",), "L40S"),
    (("l40",), "L40"),
    (("l20",), "L20"),
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


def model_shape_from_config(config: dict[str, Any]) -> ModelShape:
    """A shape from a Hugging Face ``config.json`` (llama, qwen2, mistral style); parameters counted from it."""
    text = config.get("text_config") or config
    hidden = int(text["hidden_size"])
    heads = int(text["num_attention_heads"])
    kv_heads = int(text.get("num_key_value_heads") or heads)
    head_dim = int(text.get("head_dim") or hidden // heads)
    shape = dict(n_layers=int(text["num_hidden_layers"]), n_heads=heads, n_kv_heads=kv_heads, head_dim=head_dim,
                 hidden_size=hidden, vocab_size=int(text["vocab_size"]),
                 tie_word_embeddings=bool(text.get("tie_word_embeddings", False)))
    return ModelShape(n_params=count_params(text), **shape)


def count_params(config: dict[str, Any]) -> int:
    """Parameters of a llama-style decoder: attention (with qwen2's q/k/v biases), gated MLP, RMSNorms, embeddings."""
    hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
    heads = int(config["num_attention_heads"])
    kv_heads = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    has_qkv_bias = bool(config.get("attention_bias")) or config.get("model_type") == "qwen2"
    attention = hidden * q_out + 2 * hidden * kv_out + q_out * hidden
    attention += (q_out + 2 * kv_out) if has_qkv_bias else 0
    mlp = 3 * hidden * int(config["intermediate_size"])
    per_layer = attention + mlp + 2 * hidden  # two RMSNorms
    embeddings = int(config["vocab_size"]) * hidden * (1 if config.get("tie_word_embeddings") else 2)
    return layers * per_layer + hidden + embeddings  # + final norm
