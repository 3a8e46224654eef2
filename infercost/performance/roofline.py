"""Roofline lower bounds: how fast a model *could* run on hardware, from bytes moved and FLOPs done.

Decoding one step reads every weight once plus each request's KV cache, so it is bound by memory bandwidth; prefill
does about 2 FLOPs per weight per token, so it is bound by peak compute. Comparing a measurement to these bounds
says how much of the hardware an engine used, and gives estimates for hardware nobody has measured yet.

Pure: plain numbers in, plain numbers out; no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infercost.performance.architecture import DTYPES, Architecture, from_config

# Bytes a weight moves: the 4-bit float formats carry their scales (MXFP4 one byte per 32 values, NVFP4 per 16).
DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "float16": 2, "bfloat16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
    "mxfp4": DTYPES["mxfp4"].bytes_per_value(), "nvfp4": DTYPES["nvfp4"].bytes_per_value(),
}
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class ModelShape:
    """The numbers of a decoder that set its memory traffic and compute (built from an ``Architecture`` by
    ``model_shape``). Defaults describe a dense GQA model whose every layer attends to the whole context."""

    n_params: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_size: int
    vocab_size: int
    tie_word_embeddings: bool = False
    # Mixture of experts: the routed experts of every MoE layer together; a token goes through ``experts_per_token``
    # of ``num_experts`` in each. Their bytes are read per step as the experts the step's tokens route to.
    routed_expert_params: int = 0
    num_experts: int = 0
    experts_per_token: int = 0
    moe_layers: int = 0
    expert_width: int = 0  # the width routed tokens are sent to their experts in (Nemotron 3's latent; 0: hidden)
    # What attention caches and computes where it is not plain GQA over every layer: values per token of the
    # full-attention layers (MLA: its latent and rope key), of the windowed layers (each holding at most ``window``),
    # and FLOPs one token spends per cached token over all layers (0: from the heads).
    kv_values_per_token: float = 0  # DeepSeek-V4's compressed branches: fractions of a value a token
    window_kv_values_per_token: int = 0
    window: int = 0
    attention_flops_per_pair: float = 0
    window_attention_flops_per_pair: int = 0
    decode_attention_flops_per_pair: float = 0  # a decoding token's, where it differs (MLA decodes absorbed)
    # Sparse attention (DeepSeek-V3.2, GLM-5, DeepSeek-V4): of the full layers' values and FLOPs per cached token,
    # those spent only on the entries an indexer picks, which cover at most ``sparse_reach`` tokens of context
    sparse_reach: int = 0
    picked_kv_values_per_token: float = 0
    picked_attention_flops_per_pair: float = 0
    picked_decode_attention_flops_per_pair: float = 0
    kv_shards: int = 0  # parts tensor parallelism can split a token's cache into (0: its KV heads; MLA's latent: 1)
    kept_params: int = 0  # parameters a quantized checkpoint keeps in 16 bits (its modules_to_not_convert)
    kept_matmul_params: int = 0  # of those, the ones every step reads
    vision_params: int = 0  # a multimodal checkpoint's vision tower: in memory, not read for text
    lookup_params: int = 0  # per-layer input embeddings (Gemma 4), a position table: in memory, a row per token read
    state_bytes_per_sequence: float = 0  # Mamba2 / Gated DeltaNet layers' fixed state: every step updates it
    indexer_layers: int = 0  # sparse-attention layers running an indexer of their own (``engine.INDEXER_STEP_SHARE``)

    @property
    def kind(self) -> str:
        """``moe`` or ``dense``: the model kind the held-out errors are measured and looked up by."""
        return "moe" if self.num_experts else "dense"

    @property
    def matmul_params(self) -> int:
        """Weights read by every decode step: all but an untied input embedding and per-layer input embeddings, of
        which only a row per token is read (a tied embedding is read whole, as the output head)."""
        embedding = 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size
        return self.n_params - embedding - self.vision_params - self.lookup_params

    @property
    def dense_matmul_params(self) -> int:
        """Weights every step reads whole, whatever its tokens: all but the routed experts."""
        return self.matmul_params - self.routed_expert_params

    @property
    def active_matmul_params(self) -> int:
        """Weights one token computes with: the dense part and ``k`` of the ``n`` routed experts of each layer."""
        if not self.num_experts:
            return self.matmul_params
        return self.dense_matmul_params + self.routed_expert_params * self.experts_per_token // self.num_experts

    def experts_read(self, tokens: float) -> float:
        """Share of the routed experts a step of ``tokens`` tokens reads: each token picks ``k`` of ``n`` in a layer,
        so an expert goes unread with probability ``(1 - k/n) ** tokens`` (routing taken as uniform); one token
        reads ``k / n`` of them, a prefill of thousands all of them."""
        if not self.num_experts or tokens <= 0:
            return 0.0
        return 1.0 - (1.0 - self.experts_per_token / self.num_experts) ** tokens

    @property
    def full_kv_values(self) -> int:
        """Values one token adds to the cache of the full-attention layers."""
        if self.kv_values_per_token or self.window_kv_values_per_token:
            return self.kv_values_per_token
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim

    def unpicked(self, context: float) -> float:
        """Tokens of a ``context``-token sequence its sparse layers' attention does not read (0 within their
        reach, or without sparse layers)."""
        return max(context - self.sparse_reach, 0.0) if self.sparse_reach else 0.0

    @property
    def kv_head_shards(self) -> int:
        """Parts tensor parallelism can split a token's cache into: its KV heads, or one for MLA's latent, which
        every head reads whole."""
        return self.kv_shards or self.n_kv_heads

    @property
    def attention_flops(self) -> int:
        """FLOPs a token spends per cached token in the full-attention layers."""
        if self.attention_flops_per_pair or self.window_attention_flops_per_pair:
            return self.attention_flops_per_pair
        return 4 * self.n_layers * self.n_heads * self.head_dim

    @property
    def decode_attention_flops(self) -> int:
        """The same for a decoding token (MLA: over its latent, as its decode kernels run it)."""
        return self.decode_attention_flops_per_pair or self.attention_flops


def dtype_bytes(dtype: str) -> float:
    key = DTYPE_ALIASES.get(dtype, dtype)
    if key not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[key]


def weight_bytes(n_params: int, dtype: str, kept_params: int = 0) -> float:
    """Bytes of ``n_params`` weights at ``dtype``, of which ``kept_params`` stay 16-bit (a quantized checkpoint's
    unconverted modules)."""
    kept = min(kept_params, n_params) if dtype_bytes(dtype) < 2 else 0
    return (n_params - kept) * dtype_bytes(dtype) + kept * 2


def kv_bytes_per_token(shape: ModelShape, dtype: str) -> float:
    """Cached keys and values one token adds in the layers that attend to the whole context."""
    return shape.full_kv_values * dtype_bytes(dtype)


def kv_bytes_per_sequence(shape: ModelShape, context: float, dtype: str) -> float:
    """Cache one sequence of ``context`` tokens holds: full layers all of it, windowed layers their window."""
    window = min(context, shape.window) if shape.window else context
    return (context * shape.full_kv_values + window * shape.window_kv_values_per_token) * dtype_bytes(dtype)


def decode_step_seconds(shape: ModelShape, *, batch: int, context: float, dtype: str,
                        bandwidth_gbps: float, kv_dtype: str | None = None) -> float:
    """Lower bound of one decode step: weights once, plus ``batch`` KV caches of ``context`` tokens (a sparse
    layer's: the entries its indexer picks), at full bandwidth."""
    read = context * shape.full_kv_values - shape.unpicked(context) * shape.picked_kv_values_per_token
    moved = weight_bytes(shape.matmul_params, dtype) + batch * read * dtype_bytes(kv_dtype or dtype)
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
    """The engine model's view of an architecture: what a step reads and computes, and what a sequence caches."""
    attention = arch.attention
    layers = [layer for layer in arch.layers if layer.mixer == "attention"]
    full = [arch.layer_attention(layer) for layer in layers if layer.window is None]
    windowed = [arch.layer_attention(layer) for layer in layers if layer.window is not None]
    cached = arch.cache_layers()  # a layer reusing another's cache attends over it, and adds nothing to it
    # DeepSeek-V4's compressed branches: every layer's window is the windowed part, the branches the whole-context one
    compressed_flops = sum(arch.layer_attention(layer).compressed_flops_per_context_token(layer.compress, layer.indexed)
                           for layer in layers)  # fmt: skip
    indexers = arch.index_flops()
    parts = arch.params_by_part()
    kept = set(arch.quantization.keep_unquantized) if arch.quantization else set()
    kept_params = sum(parts.get(part, 0) for part in kept)
    unread = {"embedding"} if not arch.tie_word_embeddings else set()
    experts = arch.experts if arch.moe_layers else None
    return ModelShape(
        n_params=arch.total_params, n_layers=arch.num_layers, n_heads=attention.num_heads,
        n_kv_heads=attention.num_kv_heads, head_dim=attention.head_dim, hidden_size=arch.hidden_size,
        vocab_size=arch.vocab_size, tie_word_embeddings=arch.tie_word_embeddings,
        routed_expert_params=parts["experts"], num_experts=experts.num_experts if experts else 0,
        experts_per_token=experts.top_k if experts else 0, moe_layers=len(arch.moe_layers),
        expert_width=experts.latent if experts else 0,
        kv_values_per_token=arch.growing_kv_values(),
        window_kv_values_per_token=sum(arch.layer_attention(layer).kv_values_per_token()
                                       for layer in cached if layer.window is not None),
        window=max((layer.window or 0 for layer in layers), default=0),
        attention_flops_per_pair=sum(a.flops_per_context_token() for a in full) + compressed_flops + indexers,
        window_attention_flops_per_pair=sum(a.flops_per_context_token() for a in windowed),
        decode_attention_flops_per_pair=sum(a.decode_flops_per_context_token() for a in full) + compressed_flops
        + indexers,
        sparse_reach=arch.sparse_reach(), picked_kv_values_per_token=arch.picked_kv_values(),
        picked_attention_flops_per_pair=arch.picked_attention_flops(),
        picked_decode_attention_flops_per_pair=arch.picked_attention_flops(decode=True),
        kv_shards=min(arch.layer_attention(layer).kv_shards() for layer in cached) if cached else attention.kv_shards(),
        kept_params=kept_params, kept_matmul_params=kept_params - sum(parts.get(p, 0) for p in kept & unread),
        vision_params=arch.vision_params, lookup_params=parts["per_layer_embedding"] + parts["position_embedding"],
        state_bytes_per_sequence=arch.state_bytes_per_sequence(), indexer_layers=arch.indexer_layers(),
    )  # fmt: skip


def model_shape_from_config(config: dict[str, Any]) -> ModelShape:
    """A shape from a Hugging Face ``config.json`` (any decoder ``architecture.from_config`` reads)."""
    return model_shape(from_config(config))


def count_params(config: dict[str, Any]) -> int:
    """Parameters of a decoder from its config (``architecture.Architecture.total_params``)."""
    return from_config(config).total_params
