"""A decoder model's architecture, read from its Hugging Face ``config.json``: what it weighs, what its KV cache
costs, and what a token computes.

One reader for every model, the way ``transformers.PretrainedConfig`` reads them: each *concept* (experts, latent
attention, windows, Mamba mixers, tied embeddings) is read from the fields that carry it, whatever the model. The only
per-model knowledge is what a config does not say because ``transformers`` hard-codes it in the model's class (Qwen2's
q/k/v biases, Qwen3's q/k norms, Llama-4's shared expert); it lives in ``_CLASS_DEFAULTS``, keyed by ``model_type``.

Pure: a dict in, numbers out; no I/O (``infercost.performance.models`` finds configs on disk or on the Hub).

Formulas (``h`` hidden size, ``L`` layers, ``V`` vocabulary, ``b(d)`` bytes per value of dtype ``d``):

- Attention, GQA/MQA/MHA: ``h * (n_q + 2 n_kv) * d_head + n_q * d_head * h`` (+ biases, q/k norms, sinks).
- Attention, MLA (DeepSeek): ``h * r_q + r_q * n_q * (d_nope + d_rope)`` (or ``h * n_q * (d_nope + d_rope)`` without
  ``q_lora_rank``) ``+ h * (r_kv + d_rope) + r_kv * n_q * (d_nope + d_v) + n_q * d_v * h`` (+ the two LoRA norms).
- MLP, gated: ``3 h I``; ``relu2`` (Nemotron-H) and older decoders' (GPT-2, Falcon, Phi): ``2 h I`` (+ biases). A
  MoE layer: ``E`` routed experts of ``3 h I_moe`` each (in a latent width, Nemotron 3), a router ``h E``, shared
  experts ``3 h I_shared``. Active per token: the router, the shared experts and ``k`` of the ``E`` routed experts.
- DeepSeek-V4 and Llama-Nemotron's pruned layers: ``Attention.params`` / ``compressor_params`` and ``_nas_blocks``.
- Mamba2 mixer: ``in_proj h (2 d_in + 2 g N + H) + conv (d_in + 2 g N) K + out_proj d_in h`` (+ ``A``, ``D``, ``dt``,
  its norm), with ``d_in = H * d_mamba``. Gated DeltaNet (Qwen3.5): ``h (C + n_v d_v + 2 n_v) + C K + n_v d_v h`` (+
  ``dt_bias``, ``A_log``, its norm), ``C = 2 n_k d_k + n_v d_v``; a state of ``C (K - 1) + n_v d_k d_v`` per sequence.
- Gemma 4: a full-attention layer may have heads of its own size and count (``global_head_dim``,
  ``num_global_key_value_heads``; no ``v_proj`` where keys are values, both still cached); the last
  ``num_kv_shared_layers`` layers reuse an earlier layer's cache (no k/v weights, no cache); per-layer input
  embeddings add a table ``V_ple x L d_ple`` (looked up, like the embedding) and ``3 h d_ple`` of matmuls a layer.
- Total = embeddings ``V h`` + output head ``V h`` (none when tied) + every layer + norms. MTP layers
  (``num_nextn_predict_layers``) are counted apart: the served model does not run them unless it speculates.
- KV cache per token and layer: ``2 n_kv d_head b(kv)`` (GQA), ``(r_kv + d_rope) b(kv)`` (MLA, plus DeepSeek-V3.2's
  indexer key ``d_index``); a windowed layer holds ``min(context, window)`` tokens; a Mamba layer a fixed state
  ``(d_in + 2 g N)(K - 1) + H d_mamba N`` values per sequence.
- FLOPs per token at context ``c``: ``2 * active matmul parameters`` (the input embedding is a lookup) plus, per
  attention layer, ``2 n_q (d_qk + d_v) * min(c, window)``.
- Weight bytes: matmul weights at the dtype's bytes per value plus its scales (``DTYPES``); embeddings, head, router
  and norms stay 16-bit, as quantized checkpoints ship them; a checkpoint's ``modules_to_not_convert`` keeps more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from infercost.errors import InputError


@dataclass(frozen=True)
class Dtype:
    """A weight or cache number format: bytes per value, and the scales a quantized tensor carries with it."""

    name: str
    value_bytes: float
    scale_bytes: float = 0.0  # bytes of one scale (and zero point)
    group: int = 0  # values sharing one scale; 0: none (or per-tensor, negligible)
    quantized: bool = True  # False: a 16/32-bit float, also what unquantized parts are kept in

    def bytes_per_value(self, group: int | None = None) -> float:
        size = group or self.group
        return self.value_bytes + (self.scale_bytes / size if size else 0.0)


DTYPES: dict[str, Dtype] = {
    "float32": Dtype("float32", 4, quantized=False),
    "bfloat16": Dtype("bfloat16", 2, quantized=False),
    "float16": Dtype("float16", 2, quantized=False),
    "fp8": Dtype("fp8", 1),  # per-tensor scale; a checkpoint's weight_block_size adds one fp32 scale per block
    "int8": Dtype("int8", 1),  # per-channel scales: negligible
    "int4": Dtype("int4", 0.5, scale_bytes=2.5, group=128),  # AWQ/GPTQ: fp16 scale + 4-bit zero point per group
    "mxfp4": Dtype("mxfp4", 0.5, scale_bytes=1, group=32),  # OCP MX: E2M1 values, one E8M0 scale per 32
    "nvfp4": Dtype("nvfp4", 0.5, scale_bytes=1, group=16),  # E2M1 values, one E4M3 scale per 16 (+ fp32 per tensor)
}
DTYPE_ALIASES = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16", "auto": "",
                 "float8": "fp8", "fp8_e4m3": "fp8", "e4m3": "fp8", "w4a16": "int4", "awq": "int4", "gptq": "int4",
                 "mxfp4_moe": "mxfp4"}  # fmt: skip  ("fp4" alone is ambiguous: MXFP4 or NVFP4)
UNQUANTIZED = "bfloat16"  # what embeddings, head, router and norms are kept in beside quantized matmuls

# What a config does not say because transformers hard-codes it in the model class.
_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen2": {"qkv_bias": True},
    "qwen2_moe": {"qkv_bias": True},
    "qwen3": {"qk_norm": True},
    "qwen3_moe": {"qk_norm": True},
    # Gemma3TextConfig's defaults: google/gemma-3-*-it configs name only what differs from them.
    "gemma3_text": {"qk_norm": True, "norms_per_layer": 4, "tie_word_embeddings": True, "vocab_size": 262208,
                    "head_dim": 256, "num_attention_heads": 8, "num_key_value_heads": 4, "sliding_window": 4096,
                    "sliding_window_pattern": 6, "max_position_embeddings": 131072},
    "gemma2": {"norms_per_layer": 4, "tie_word_embeddings": True},
    "gemma": {"tie_word_embeddings": True},
    "llama4_text": {"n_shared_experts": 1, "no_rope_layer_interval": 4, "qk_norm": False},  # use_qk_norm: weightless
    "gpt_oss": {"attention_sinks": True, "expert_bias": True, "router_bias": True},
    "glm4_moe": {"router_bias": True, "o_bias": False},  # e_score_correction_bias; attention_bias is q/k/v only
    "glm_moe_dsa": {"router_bias": True},
    "minimax_m2": {"router_bias": True},  # use_routing_bias: e_score_correction_bias
    "qwen3_5_moe_text": {"qk_norm": True, "shared_expert_gate": True},
    "qwen3_next": {"qk_norm": True, "shared_expert_gate": True, "attn_output_gate": True},
    "qwen3_5_text": {"qk_norm": True},
    "deepseek_v3": {"router_bias": True},
    "deepseek_v32": {"router_bias": True},
    "deepseek_v4": {"router_bias": True},  # none in its first (hash-routed) layers: 256 values each
    "kimi_k2": {"router_bias": True},
    "kimi_linear": {"router_bias": True},  # e_score_correction_bias (noaux_tc), a buffer in transformers
    "nemotron_h": {"router_bias": True},
    "ernie4_5_moe": {"router_bias": True},  # moe_statics.e_score_correction_bias
    "afmoe": {"qk_norm": True, "attn_output_gate": True, "norms_per_layer": 4, "router_bias": True},  # expert_bias
    # Older decoders whose MLP is two matrices (up, activation, down) with biases, LayerNorms with a bias, and
    # (GPT-2, GPT-Neo, OPT, BigCode) a learned position table; their configs name none of it
    "starcoder2": {"gated_mlp": False, "norm_bias": True},  # use_bias: attention and MLP
    "phi": {"gated_mlp": False, "mlp_bias": True, "attention_bias": True, "norm_bias": True, "norms_per_layer": 1,
            "lm_head_bias": True},  # one LayerNorm before its parallel attention and MLP
    "gpt_neox": {"gated_mlp": False, "mlp_bias": True, "attention_bias": True, "norm_bias": True},
    "opt": {"gated_mlp": False, "mlp_bias": True, "attention_bias": True, "norm_bias": True,
            "learned_positions": True, "position_offset": 2},
    "falcon": {"gated_mlp": False, "norm_bias": True, "mlp_ratio": 4},  # norms, KV heads: _norms_per_layer, _attention
    "apertus": {"gated_mlp": False, "qk_norm": True, "mlp_activation_params": 2},  # xIELU's alpha_p and alpha_n
    "gpt2": {"gated_mlp": False, "mlp_bias": True, "attention_bias": True, "norm_bias": True,
             "learned_positions": True, "mlp_ratio": 4},
    "gpt_bigcode": {"gated_mlp": False, "mlp_bias": True, "attention_bias": True, "norm_bias": True,
                    "learned_positions": True, "mlp_ratio": 4},
    "gpt_neo": {"gated_mlp": False, "mlp_bias": True, "o_bias": True, "norm_bias": True, "learned_positions": True,
                "mlp_ratio": 4},
    "gptj": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True, "norms_per_layer": 1, "lm_head_bias": True,
             "mlp_ratio": 4},
    "codegen": {"gated_mlp": False, "mlp_bias": True, "norm_bias": True, "norms_per_layer": 1,
                "lm_head_bias": True, "mlp_ratio": 4},
    # Gemma4TextConfig's: a full layer's heads are global_head_dim wide; the router carries a scale over its input and
    # one per expert (taken as its bias: one value per expert), and the expert block three norms of its own
    "gemma4_text": {"qk_norm": True, "norms_per_layer": 4, "tie_word_embeddings": True, "vocab_size": 262144,
                    "global_head_dim": 512, "sliding_window": 512, "sliding_window_pattern": 6,
                    "hidden_size_per_layer_input": 256, "router_bias": True, "router_scale": True,
                    "expert_block_norms": 3, "max_position_embeddings": 131072},
}

# The parts a quantized checkpoint stores in its dtype (the rest stay 16-bit).
_MATMUL_PARTS = ("attention", "mlp", "per_layer_input", "experts", "shared_experts", "mamba", "linear_attention")
_EXPERT_FIELDS = ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")  # the last: ERNIE-4.5's
_TOPK_FIELDS = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk", "moe_k",
                "top_k_experts")  # fmt: skip


@dataclass(frozen=True)
class Layer:
    """One decoder layer: its token mixer and its feed-forward part."""

    mixer: str  # "attention" | "mamba" | "linear_attention" (Gated DeltaNet) | "linear" (one h x h matrix) | "none"
    ffn: str  # "dense" | "moe" | "linear" (one h x h matrix) | "none"
    window: int | None = None  # tokens a windowed attention layer keeps (sliding or chunked); None: all
    window_kind: str = "full"  # "full" | "sliding" | "chunked"
    attention: Attention | None = None  # its own where it differs (Gemma 4, MiMo-V2, Llama-Nemotron, GLM-5.2)
    shares_kv: bool = False  # reuses an earlier layer's keys and values: no k/v weights, no cache of its own
    mlp_intermediate: int = 0  # this layer's dense MLP width where it differs from the model's (0: the model's)
    compress: int = 0  # DeepSeek-V4: tokens per entry of the compressed branch beside its window (0: none)
    indexed: bool = False  # DeepSeek-V4: that branch is sparse (an indexer picks the entries a query reads)
    hash_routed: bool = False  # DeepSeek-V4's first MoE layers: experts picked by token id (the same work)


@dataclass(frozen=True)
class Attention:
    """The model's attention (a layer may have its own: ``Layer.attention``)."""

    kind: str  # "mha" | "gqa" | "mqa" | "mla" | "compressed" (DeepSeek-V4)
    num_heads: int
    num_kv_heads: int  # MLA: the heads its latent expands to (num_heads)
    head_dim: int  # GQA: per head for q, k and v; MLA: d_nope + d_rope (the q/k dot-product size)
    v_head_dim: int
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    # DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5: MLA; DeepSeek-V4's compressed branches): an indexer with a
    # key of its own per token scores every cached token or entry, and attention reads the ``index_topk`` it picks
    index_head_dim: int = 0
    index_n_heads: int = 0
    index_topk: int = 0
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    qk_norm_whole: bool = False  # MiniMax-M2's qk_norm_type "per_layer": one norm over all heads, not one per head
    output_gate: bool = False  # Qwen3.5's attn_output_gate: q_proj also yields a sigmoid gate per head
    sinks: bool = False
    k_eq_v: bool = False  # Gemma 4's full layers: the key projection is also the value (no v_proj; both cached)
    # DeepSeek-V4 ("compressed"): one KV head whose key is its value (one vector cached), a grouped low-rank output
    # projection, and beside each layer's sliding window a compressed branch (``Layer.compress``), sparse in some
    o_groups: int = 0
    o_lora_rank: int = 0

    def params(self, hidden: int, shares_kv: bool = False) -> int:
        """Parameters of one layer's attention (``shares_kv``: a layer reusing another's keys and values keeps its
        query, output and query norm only)."""
        n, d = self.num_heads, self.head_dim
        if self.kind == "compressed":  # q_a, its norm, q_b; kv and its norm; the grouped o_a, o_b; sinks
            r_q, r_o = self.q_lora_rank or 0, self.o_lora_rank
            return hidden * r_q + r_q + r_q * n * d + hidden * d + d + n * d * r_o + self.o_groups * r_o * hidden + n
        if self.kind == "mla":
            rope, nope, r_kv = self.qk_rope_head_dim or 0, self.qk_nope_head_dim or 0, self.kv_lora_rank or 0
            q = (hidden * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * n * (nope + rope)
                 if self.q_lora_rank else hidden * n * (nope + rope))  # fmt: skip
            kv = hidden * (r_kv + rope) + r_kv + r_kv * n * (nope + self.v_head_dim)
            indexer = 0
            if self.index_head_dim:  # wq_b, wk, k_norm (LayerNorm), weights_proj
                di, hi = self.index_head_dim, self.index_n_heads
                indexer = (self.q_lora_rank or hidden) * hi * di + hidden * di + 2 * di + hidden * hi
            return q + kv + n * self.v_head_dim * hidden + indexer
        q_out, k_out, v_out = n * d, self.num_kv_heads * d, self.num_kv_heads * self.v_head_dim
        kv_out = 0 if shares_kv else k_out + (0 if self.k_eq_v else v_out)
        total = hidden * (q_out + kv_out) + n * self.v_head_dim * hidden + (hidden * q_out if self.output_gate else 0)
        total += (q_out + kv_out) if self.qkv_bias else 0
        total += hidden if self.o_bias else 0
        if self.qk_norm:
            keys = 0 if shares_kv else 1
            total += q_out + keys * k_out if self.qk_norm_whole else (1 + keys) * d
        return total + (n if self.sinks else 0)

    def kv_values_per_token(self) -> int:
        """Cached values per token in one layer: keys and values (GQA), MLA's latent plus its rope key, DeepSeek-V4's
        one vector (its window's; its compressed branch: ``compressed_values_per_token``)."""
        if self.kind == "mla":
            return (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0) + self.index_head_dim
        if self.kind == "compressed":
            return self.head_dim
        return self.num_kv_heads * (self.head_dim + self.v_head_dim)

    def compressor_params(self, hidden: int, ratio: int, indexed: bool) -> int:
        """DeepSeek-V4's compressor of one entry per ``ratio`` tokens (kv and gate projections, a position bias per
        slot, a norm); a sparse layer's (``indexed``) compresses two overlapping series and runs an indexer with a
        compressor of its own, a query projection from q's LoRA and a weight per indexer head."""
        if not ratio:
            return 0
        d, width = self.head_dim, (2 if indexed else 1) * self.head_dim
        total = 2 * hidden * width + ratio * width + d
        if indexed:
            di, ni = self.index_head_dim, self.index_n_heads
            total += 2 * hidden * 2 * di + ratio * 2 * di + di + (self.q_lora_rank or 0) * ni * di + hidden * ni
        return total

    def compressed_values_per_token(self, ratio: int, indexed: bool) -> float:
        """Values a token adds to a compressed branch: an entry of ``head_dim`` (and the indexer's key) per
        ``ratio`` tokens."""
        return (self.head_dim + (self.index_head_dim if indexed else 0)) / ratio if ratio else 0

    def compressed_flops_per_context_token(self, ratio: int, indexed: bool) -> float:
        """FLOPs a token spends per cached token on a compressed branch: attention over its entries, and a sparse
        layer's indexer scoring every entry (its attention then reads only the ``index_topk`` picked: the part
        ``Architecture.picked_attention_flops`` counts)."""
        if not ratio:
            return 0
        return (self.flops_per_context_token() + (self.index_flops_per_context_token() if indexed else 0)) / ratio

    def index_flops_per_context_token(self) -> int:
        """FLOPs a sparse layer's indexer spends scoring one cached token or entry (DeepSeek-V3.2: 64 heads of 128,
        6% of its absorbed attention's per token; past its 2,048 picks it scores every token and attends to none)."""
        return 2 * self.index_n_heads * self.index_head_dim

    def kv_shards(self) -> int:
        """Parts tensor parallelism can split a token's cache into: one per KV head, one for MLA's latent (shared
        by every head, so every GPU of a tensor-parallel group keeps all of it)."""
        return 1 if self.kind in ("mla", "compressed") else self.num_kv_heads

    def flops_per_context_token(self) -> int:
        """FLOPs one new token spends on each cached token in one layer: q.k and the weighted sum of v."""
        return 2 * self.num_heads * (self.head_dim + self.v_head_dim)

    def decode_flops_per_context_token(self) -> int:
        """The same for a decoding token. MLA decodes absorbed (FlashMLA, and vLLM's, SGLang's and TensorRT-LLM's MLA
        decode kernels): the up-projections are folded into q and the output, so each head's q.k spans the latent
        and its rope key and its weighted sum the latent, 3.4x the expanded form's FLOPs for DeepSeek-V3
        (2 x 128 x (512 + 64 + 512) against 2 x 128 x (192 + 128)), which makes long-context decode compute-bound
        where the expanded count has it read-bound. Prefill runs expanded."""
        if self.kind == "mla":
            r_kv = self.kv_lora_rank or 0
            return 2 * self.num_heads * (2 * r_kv + (self.qk_rope_head_dim or 0))
        return self.flops_per_context_token()


@dataclass(frozen=True)
class Experts:
    """The mixture-of-experts part of a MoE layer."""

    num_experts: int  # routed experts
    top_k: int  # routed experts a token goes through
    expert_intermediate: int  # per routed expert
    num_shared: int = 0
    shared_intermediate: int = 0  # all shared experts together
    gated: bool = True
    expert_bias: bool = False
    router_bias: bool = False
    shared_gate: bool = False  # Qwen3.5's shared_expert_gate: one sigmoid weight per token for the shared expert
    router_scale: bool = False  # Gemma 4: a learned scale over the router's input, one per hidden unit
    latent: int = 0  # Nemotron 3's LatentMoE: routed experts work in this width, projected to and from the hidden size
    norms: int = 0  # norms the expert block adds to a layer (Gemma 4: 3, around experts run beside its dense MLP)

    def expert_params(self, hidden: int) -> int:
        """Parameters of one routed expert (in the latent width where experts have one)."""
        matrices, width = 3 if self.gated else 2, self.latent or hidden
        bias = (matrices - 1) * self.expert_intermediate + width if self.expert_bias else 0
        return matrices * width * self.expert_intermediate + bias

    def shared_params(self, hidden: int) -> int:
        """The shared experts, and the projections into and out of a latent expert width (every token runs them)."""
        return (3 if self.gated else 2) * hidden * self.shared_intermediate + 2 * hidden * self.latent

    def router_params(self, hidden: int, hash_routed: bool = False) -> int:
        """The router's weights, its bias (none where experts are picked by token id: DeepSeek-V4's first layers)
        and scales."""
        bias = self.num_experts if self.router_bias and not hash_routed else 0
        scales = hidden * (int(self.shared_gate) + int(self.router_scale))
        return hidden * self.num_experts + bias + scales


@dataclass(frozen=True)
class Mamba:
    """A Mamba2 mixer (Nemotron-H, Granite-4.0-H): a fixed state per sequence instead of a KV cache."""

    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int
    state_dtype: str = UNQUANTIZED

    @property
    def inner(self) -> int:
        return self.num_heads * self.head_dim

    def params(self, hidden: int) -> int:
        conv_dim = self.inner + 2 * self.n_groups * self.state_size
        in_proj = hidden * (2 * self.inner + 2 * self.n_groups * self.state_size + self.num_heads)
        conv = conv_dim * self.conv_kernel + conv_dim  # weights + bias
        return in_proj + conv + 3 * self.num_heads + self.inner + self.inner * hidden  # A, D, dt_bias; norm; out

    def state_bytes(self) -> float:
        """Bytes one sequence keeps per layer: the convolution's last K-1 inputs and the SSM state
        (``_state_bytes``)."""
        conv_dim = self.inner + 2 * self.n_groups * self.state_size
        return _state_bytes(conv_dim * (self.conv_kernel - 1), self.num_heads * self.head_dim * self.state_size,
                            self.state_dtype)  # fmt: skip


@dataclass(frozen=True)
class LinearAttention:
    """A Gated DeltaNet mixer (Qwen3-Next, Qwen3.5 ``linear_attention`` layers), or Kimi Delta Attention (Kimi-Linear:
    the same delta rule, its decay per channel): like Mamba, a fixed state per sequence instead of a KV cache."""

    num_k_heads: int
    num_v_heads: int
    k_head_dim: int
    v_head_dim: int
    conv_kernel: int
    state_dtype: str = UNQUANTIZED
    gate_rank: int = 0  # Kimi Delta Attention: its output gate and per-channel decay each a rank-r pair (r: head_dim)

    @property
    def conv_dim(self) -> int:
        return 2 * self.num_k_heads * self.k_head_dim + self.num_v_heads * self.v_head_dim

    def params(self, hidden: int) -> int:
        """Gated DeltaNet: in_proj_qkv, in_proj_z (the output gate), in_proj_b and in_proj_a (the decay), the
        depthwise conv (no bias), dt_bias and A_log per head; Kimi Delta Attention: q, k, v and b, the output gate
        and the decay through rank-r pairs (g_a, g_b; f_a, f_b), dt_bias per channel; both then the gated norm over
        a value head and out_proj."""
        value = self.num_v_heads * self.v_head_dim
        if self.gate_rank:
            in_proj = hidden * (self.conv_dim + self.num_v_heads) + 2 * self.gate_rank * (hidden + value)
            decay = value + self.num_v_heads
        else:
            in_proj, decay = hidden * (self.conv_dim + value + 2 * self.num_v_heads), 2 * self.num_v_heads
        return in_proj + self.conv_dim * self.conv_kernel + decay + self.v_head_dim + value * hidden

    def state_bytes(self) -> float:
        """Bytes one sequence keeps per layer: the convolution's last K-1 inputs and the delta rule's state, a
        ``k_head_dim x v_head_dim`` matrix per value head (``_state_bytes``)."""
        return _state_bytes(self.conv_dim * (self.conv_kernel - 1),
                            self.num_v_heads * self.k_head_dim * self.v_head_dim, self.state_dtype)  # fmt: skip


def _state_bytes(conv_values: int, state_values: int, state_dtype: str) -> float:
    """A recurrent layer's per-sequence bytes as vLLM and SGLang keep them: the convolution's inputs in the model's
    16 bits, the recurrent state in ``state_dtype`` (the config's ``mamba_ssm_dtype``; Kimi's KDA state always fp32,
    vLLM's ``MambaStateDtypeCalculator.kda_state_dtype``)."""
    return conv_values * DTYPES[UNQUANTIZED].value_bytes + state_values * DTYPES[state_dtype].value_bytes


@dataclass(frozen=True)
class Quantization:
    """How the checkpoint stores its weights, from ``quantization_config``."""

    dtype: str  # a DTYPES key
    block: tuple[int, int] | None = None  # fp8 weight_block_size
    group: int | None = None  # int4 group size
    keep_unquantized: tuple[str, ...] = ()  # parts kept 16-bit: "attention", "router", "embedding", "lm_head", ...


@dataclass(frozen=True)
class Architecture:
    """A decoder-only model as its config describes it. Build one with ``from_config``.

    ``layers`` says, per layer, which mixer and feed-forward it has and its attention window; ``moe_layers`` and
    ``attention_layers`` index them; ``experts`` (routed count, top-k, per-expert and shared widths) and
    ``attention`` (kind, heads, MLA ranks) carry what a step-cost model needs. Parameter counts are exact for the
    decoder's tensors (embeddings, head, norms, biases: equal to what transformers builds from the same config); a
    multimodal config's vision tower is an estimate (``vision_params``), in the total but not in what a token runs.
    """

    name: str
    model_type: str
    hidden_size: int
    vocab_size: int
    layers: tuple[Layer, ...]
    attention: Attention
    dense_intermediate: int  # a dense layer's MLP width (0: none)
    experts: Experts | None = None
    mamba: Mamba | None = None
    linear_attention: LinearAttention | None = None
    tie_word_embeddings: bool = False
    gated_mlp: bool = True
    mlp_bias: bool = False
    mlp_activation_params: int = 0  # a learned activation's own (Apertus' xIELU: 2 a layer)
    norms_per_layer: int = 2
    norm_bias: bool = False  # LayerNorm (a weight and a bias) rather than RMSNorm (a weight)
    lm_head_bias: bool = False
    position_embeddings: int = 0  # rows of a learned position table (GPT-2, OPT): looked up, like the embedding
    max_position_embeddings: int = 0
    checkpoint_dtype: str = UNQUANTIZED  # torch_dtype / dtype
    quantization: Quantization | None = None
    mtp_layers: int = 0  # DeepSeek's multi-token-prediction layers, not run when serving without speculation
    vision_params: int = 0
    # Gemma 4's per-layer input embeddings (PLE): a second table, ``per_layer_input_size`` values per layer for each
    # of ``per_layer_vocab_size`` tokens, looked up like the embedding, projected into every layer
    per_layer_input_size: int = 0
    per_layer_vocab_size: int = 0
    hyper_connections: int = 0  # DeepSeek-V4's hc_mult: residual streams mixed in and out of every block
    fields: Mapping[str, Any] = field(default_factory=dict)  # the config fields this was read from

    # --- structure -------------------------------------------------------------------------------------------------

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def kind(self) -> str:
        """``dense``, ``moe``, ``hybrid`` (Mamba layers beside attention) or ``hybrid-moe``."""
        base = "hybrid" if self.mamba or self.linear_attention else ""
        if self.experts and self.moe_layers:
            return f"{base}-moe" if base else "moe"
        return base or "dense"

    @property
    def moe_layers(self) -> tuple[int, ...]:
        return tuple(i for i, layer in enumerate(self.layers) if layer.ffn == "moe")

    @property
    def attention_layers(self) -> tuple[int, ...]:
        return tuple(i for i, layer in enumerate(self.layers) if layer.mixer == "attention")

    @property
    def default_dtype(self) -> str:
        """The dtype the checkpoint ships in: its quantization's, else its ``torch_dtype``."""
        return self.quantization.dtype if self.quantization else self.checkpoint_dtype

    # --- parameters -----------------------------------------------------------------------------------------------

    def dense_mlp_params(self, intermediate: int = 0) -> int:
        width, matrices = intermediate or self.dense_intermediate, 3 if self.gated_mlp else 2
        bias = (matrices - 1) * width + self.hidden_size if self.mlp_bias else 0
        return matrices * self.hidden_size * width + bias + self.mlp_activation_params

    @property
    def attention_kind(self) -> str:
        """The kind of attention most of its attention layers run (Llama-Nemotron's config names none: its blocks
        are GQA)."""
        kinds = [self.layer_attention(layer).kind for layer in self.layers if layer.mixer == "attention"]
        return max(set(kinds), key=kinds.count) if kinds else self.attention.kind

    def layer_attention(self, layer: Layer) -> Attention:
        """The attention a layer runs: its own where it has one (Gemma 4's full layers), the model's otherwise."""
        return layer.attention or self.attention

    def params_by_part(self) -> dict[str, int]:
        """Every parameter, by the part it belongs to; the parts are what quantization treats differently."""
        h, n_layers, per_layer = self.hidden_size, len(self.layers), self.per_layer_input_size
        names = ("embedding", "position_embedding", "per_layer_embedding", "lm_head", "attention", "mlp",
                 "per_layer_input", "experts", "shared_experts", "router", "mamba", "linear_attention",
                 "hyper_connections", "norms", "vision")
        parts = dict.fromkeys(names, 0)
        parts["embedding"] = self.vocab_size * h
        head_bias = self.vocab_size if self.lm_head_bias else 0
        parts["lm_head"] = (0 if self.tie_word_embeddings else self.vocab_size * h) + head_bias
        parts["position_embedding"] = self.position_embeddings * h
        norms = 1  # the final one, and each layer's: norms_per_layer where it has both parts, half where one
        for layer in self.layers:
            norms += self.norms_per_layer * ((layer.mixer != "none") + (layer.ffn != "none")) // 2
            parts["attention"] += h * h if layer.mixer == "linear" else 0  # Llama-Nemotron's pruned to one matrix
            parts["mlp"] += h * h if layer.ffn == "linear" else 0
            if layer.mixer == "attention":
                attention = self.layer_attention(layer)
                parts["attention"] += attention.params(h, layer.shares_kv) + attention.compressor_params(
                    h, layer.compress, layer.indexed)  # fmt: skip
            elif layer.mixer == "mamba" and self.mamba:
                parts["mamba"] += self.mamba.params(h)
            elif layer.mixer == "linear_attention" and self.linear_attention:
                parts["linear_attention"] += self.linear_attention.params(h)
            if layer.ffn == "dense":
                parts["mlp"] += self.dense_mlp_params(layer.mlp_intermediate)
            elif layer.ffn == "moe" and self.experts:
                parts["experts"] += self.experts.num_experts * self.experts.expert_params(h)
                parts["shared_experts"] += self.experts.shared_params(h)
                parts["router"] += self.experts.router_params(h, layer.hash_routed)
                norms += self.experts.norms
        if per_layer:  # the table; the projection into every layer's input and each layer's gate and projection
            parts["per_layer_embedding"] = self.per_layer_vocab_size * n_layers * per_layer
            parts["per_layer_input"] = h * n_layers * per_layer + n_layers * 2 * h * per_layer
            norms += n_layers  # each layer's norm after its per-layer input (and one over the projection, below)
        if self.hyper_connections:  # two a layer (attention, MLP) and one at the head: each a projection of the
            streams = self.hyper_connections  # streams to the weights that collapse, expand and mix them, and scales
            mixes = (2 + streams) * streams
            parts["hyper_connections"] = (n_layers * 2 * (mixes * streams * h + mixes + 3)
                                          + streams * streams * h + streams + 1)  # fmt: skip
        parts["norms"] = (norms * h + per_layer) * (2 if self.norm_bias else 1)
        parts["vision"] = self.vision_params
        return parts

    @property
    def total_params(self) -> int:
        """Every parameter the checkpoint loads: embeddings, head and a multimodal config's vision tower included,
        MTP layers not (``mtp_layers``)."""
        return sum(self.params_by_part().values())

    @property
    def active_params(self) -> int:
        """Parameters one text token goes through, embeddings and head included: all but the routed experts it is
        not sent to (``k`` of ``E``) and the vision tower."""
        parts = self.params_by_part()
        routed = parts["experts"]
        routed_active = routed * self.experts.top_k // self.experts.num_experts if self.experts and routed else 0
        return sum(parts.values()) - routed + routed_active - parts["vision"]

    @property
    def lookup_params(self) -> int:
        """Weights of which a step reads a row per token: an untied input embedding, per-layer input embeddings, a
        learned position table."""
        parts = self.params_by_part()
        untied = 0 if self.tie_word_embeddings else parts["embedding"]
        return untied + parts["per_layer_embedding"] + parts["position_embedding"]

    @property
    def matmul_params(self) -> int:
        """Weights a decode step reads whole: all but the lookups (``lookup_params``) and a vision tower."""
        return self.total_params - self.vision_params - self.lookup_params

    @property
    def active_matmul_params(self) -> int:
        return self.active_params - self.lookup_params

    # --- bytes ----------------------------------------------------------------------------------------------------

    def weight_bytes(self, dtype: str | None = None) -> float:
        """Bytes of the weights at ``dtype`` (default: the checkpoint's own): matmul weights in it with its scales,
        embeddings, head, router and norms in 16 bits (and what the checkpoint's quantization keeps unquantized)."""
        name = normalize_dtype(dtype) if dtype else self.default_dtype
        spec = DTYPES[name]
        own = self.quantization if self.quantization and self.quantization.dtype == name else None
        keep = set(own.keep_unquantized) if own else set()
        per_value = spec.bytes_per_value(own.group if own else None)
        if own and own.block and name == "fp8":
            per_value = spec.value_bytes + 4 / (own.block[0] * own.block[1])  # one fp32 scale per block
        plain = DTYPES[self.checkpoint_dtype if not DTYPES[self.checkpoint_dtype].quantized else UNQUANTIZED]
        plain_bytes = spec.value_bytes if not spec.quantized else plain.value_bytes
        total = 0.0
        for part, count in self.params_by_part().items():
            quantizable = part in _MATMUL_PARTS and part not in keep
            total += count * (per_value if quantizable or not spec.quantized else plain_bytes)
        return total

    def kv_bytes_per_token(self, kv_dtype: str | None = None) -> float:
        """Bytes one token adds to the cache of the layers whose cache grows without bound: full attention, and
        DeepSeek-V4's compressed branches (a fraction of an entry a token)."""
        per_value = DTYPES[normalize_dtype(kv_dtype) if kv_dtype else self.default_kv_dtype()].value_bytes
        return self.growing_kv_values() * per_value

    def growing_kv_values(self) -> float:
        """Values one token adds to the caches that grow with the context (``kv_bytes_per_token``'s)."""
        return sum((self.layer_attention(layer).kv_values_per_token() if layer.window is None else 0)
                   + self.layer_attention(layer).compressed_values_per_token(layer.compress, layer.indexed)
                   for layer in self.cache_layers())  # fmt: skip

    def cache_layers(self) -> tuple[Layer, ...]:
        """The attention layers that keep a KV cache of their own (not those reusing another layer's)."""
        return tuple(layer for layer in self.layers if layer.mixer == "attention" and not layer.shares_kv)

    def state_bytes_per_sequence(self) -> float:
        """Bytes of the fixed state a sequence keeps however long it is: each Mamba2, Gated DeltaNet or Kimi Delta
        Attention layer's convolution inputs (16-bit) and recurrent state (Qwen3.5's and Kimi's in fp32)."""
        total = 0.0
        for layer in self.layers:
            if layer.mixer == "mamba" and self.mamba:
                total += self.mamba.state_bytes()
            elif layer.mixer == "linear_attention" and self.linear_attention:
                linear = self.linear_attention
                total += linear.state_bytes()
        return total

    def kv_bytes_per_sequence(self, context: int, kv_dtype: str | None = None) -> float:
        """Cache bytes of one sequence of ``context`` tokens: full layers hold all of them, windowed layers at most
        their window, Mamba layers their fixed state."""
        per_value = DTYPES[normalize_dtype(kv_dtype) if kv_dtype else self.default_kv_dtype()].value_bytes
        total = self.state_bytes_per_sequence()
        for layer in self.cache_layers():
            attention = self.layer_attention(layer)
            tokens = context if layer.window is None else min(context, layer.window)
            total += tokens * attention.kv_values_per_token() * per_value
            total += context * attention.compressed_values_per_token(layer.compress, layer.indexed) * per_value
        return total

    def default_kv_dtype(self, dtype: str | None = None) -> str:
        """The KV cache's dtype when none is asked for: FP8 beside FP8 or NVFP4 weights (as those checkpoints are
        served: NVIDIA's NVFP4 ones name ``kv_cache_quant_algo: FP8``), the checkpoint's 16-bit float otherwise
        (attention never reads 4-bit or integer keys)."""
        if dtype and normalize_dtype(dtype) in ("fp8", "nvfp4"):
            return "fp8"
        return self.checkpoint_dtype if not DTYPES[self.checkpoint_dtype].quantized else UNQUANTIZED

    def flops_per_token(self, context: int = 0) -> float:
        """FLOPs of one token at ``context`` tokens already cached: 2 per active matmul weight, plus attention over
        the cached tokens each attention layer sees (windows capped, sparse layers at the entries picked)."""
        attention = sum((min(context, layer.window) if layer.window is not None else context)
                        * self.layer_attention(layer).flops_per_context_token()
                        + context * self.layer_attention(layer).compressed_flops_per_context_token(layer.compress,
                                                                                                   layer.indexed)
                        for layer in self.layers if layer.mixer == "attention")  # fmt: skip
        reach = self.sparse_reach()
        unpicked = max(context - reach, 0) * self.picked_attention_flops() if reach else 0.0
        if reach and context > reach:  # past it, the picks are attended in MLA's absorbed form (engine.StepCost)
            unpicked -= reach * (self.picked_attention_flops(decode=True) - self.picked_attention_flops())
        return 2 * self.active_matmul_params + attention + context * self.index_flops() - unpicked

    def over_context(self, tokens: float) -> str | None:
        """What to say where a request is longer than the model's context: engines serve past it only with RoPE
        scaling they are told to use (Qwen3's YaRN takes 32K to 128K), so it is priced, and said."""
        context = self.max_position_embeddings
        if not context or tokens <= context:
            return None
        return (f"{tokens:,.0f} tokens a request is over the model's context of {context:,} "
                "(max_position_embeddings): served only with RoPE scaling the engine is told to use (e.g. YaRN)")

    def layer_reach(self, layer: Layer) -> int:
        """Tokens of context a sparse layer's attention reads at most: the ``index_topk`` entries its indexer picks,
        each a token (DeepSeek-V3.2, GLM-5; GLM-5.2's layers sharing a pick included) or ``compress`` of them
        (DeepSeek-V4's sparse branches: 512 x 4 = 2,048 for Flash); 0 where attention reads the whole context."""
        attention = self.layer_attention(layer)
        if layer.indexed:
            return attention.index_topk * layer.compress
        return attention.index_topk if attention.kind == "mla" and layer.window is None else 0

    def sparse_reach(self) -> int:
        """The longest context any sparse layer's attention reads (``layer_reach``; one value for every bundled
        model); 0 without sparse layers."""
        return max((self.layer_reach(layer) for layer in self.layers if layer.mixer == "attention"), default=0)

    def picked_kv_values(self) -> float:
        """Of ``growing_kv_values``, those a sparse layer reads only for the entries its indexer picks: MLA's latent
        and rope key, DeepSeek-V4's compressed entries; the indexers' own keys are scored for every token."""
        total = 0.0
        for layer in self.cache_layers():
            attention = self.layer_attention(layer)
            if layer.indexed:
                total += attention.head_dim / layer.compress
            elif self.layer_reach(layer):
                total += attention.kv_values_per_token() - attention.index_head_dim
        return total

    def picked_attention_flops(self, decode: bool = False) -> float:
        """Of the FLOPs a token spends per cached token, those a sparse layer spends only on the entries its
        indexer picks (attention proper; the indexer scores every entry), for a prompt token or, MLA decoding
        absorbed, a decoding one."""
        total = 0.0
        for layer in self.layers:
            if layer.mixer != "attention" or not self.layer_reach(layer):
                continue
            attention = self.layer_attention(layer)
            if layer.indexed:
                total += attention.flops_per_context_token() / layer.compress
            else:
                total += attention.decode_flops_per_context_token() if decode else attention.flops_per_context_token()
        return total

    def index_flops(self) -> float:
        """FLOPs DeepSeek Sparse Attention's indexers spend per token per cached token (DeepSeek-V4's are in its
        compressed branches' count)."""
        return sum(self.layer_attention(layer).index_flops_per_context_token() for layer in self.layers
                   if layer.mixer == "attention" and not layer.indexed and self.layer_reach(layer))  # fmt: skip

    def indexer_layers(self) -> int:
        """Layers that run an indexer of their own each step (DeepSeek Sparse Attention's, DeepSeek-V4's sparse
        branches; not GLM-5.2's layers that reuse another's pick): each adds its chain of small kernels to a step."""
        return sum(1 for layer in self.layers if layer.mixer == "attention" and self.layer_reach(layer)
                   and (layer.indexed or self.layer_attention(layer).index_head_dim))  # fmt: skip

    def sparse_attention_note(self, tokens: float) -> str | None:
        """What to say where a request is longer than its sparse layers' attention reads (``sparse_reach``): past
        it a step reads the indexer's key of every token and the latent of the picks only, as the simulation does."""
        reach = self.sparse_reach()
        if not reach or tokens <= reach:
            return None
        return (f"its sparse layers attend to {reach:,} of a request's {tokens:,.0f} tokens, those their indexer "
                "picks (scoring every one), as simulated here")

    def summary(self) -> dict[str, Any]:
        """The headline facts, JSON-able."""
        return {"model": self.name, "model_type": self.model_type, "kind": self.kind,
                "attention": self.attention_kind, "layers": self.num_layers, "total_params": self.total_params,
                "active_params": self.active_params, "default_dtype": self.default_dtype,
                "max_context": self.max_position_embeddings}  # fmt: skip


# --- reading a config ---------------------------------------------------------------------------------------------


def normalize_dtype(dtype: str) -> str:
    """A dtype as people write it (``bf16``, ``FP8``) to a ``DTYPES`` key; InputError naming ``dtype`` otherwise."""
    key = str(dtype).strip().lower().replace("torch.", "")
    key = DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        raise InputError("dtype", f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}")
    return key


def text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The decoder's fields: a multimodal config's ``text_config`` (Llama-4, Gemma-3) over the top-level ones it
    inherits (``torch_dtype``, ``quantization_config``, ``tie_word_embeddings``)."""
    inner = config.get("text_config") or config.get("llm_config")
    if not isinstance(inner, Mapping):
        return dict(config)
    inherited = {k: v for k, v in config.items() if k in ("torch_dtype", "dtype", "quantization_config",
                                                          "tie_word_embeddings")}  # fmt: skip
    return {**inherited, **inner}


def from_config(config: Mapping[str, Any], name: str = "") -> Architecture:
    """The architecture a Hugging Face ``config.json`` (as a dict) describes. InputError naming the missing or bad
    field when the config lacks what its kind needs."""
    if not isinstance(config, Mapping):
        raise InputError("config", "a config.json must be a JSON object")
    text = text_config(config)
    cfg = _Fields(text, _CLASS_DEFAULTS.get(str(text.get("model_type", "")), {}))
    _refuse_unread_layouts(cfg)
    hidden = cfg.int("hidden_size", "d_model", "n_embd")
    pattern = _hybrid_pattern(cfg)
    n_layers = cfg.int("num_hidden_layers", "num_layers", "n_layer", default=len(pattern) if pattern else None)
    attention = _attention(cfg, hidden)
    experts = _experts(cfg)
    mamba = _mamba(cfg, hidden)
    linear = _linear_attention(cfg)
    max_context = cfg.int("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions", default=0)
    # Granite-4.0-H's config.json names its Mamba2 layers "mamba"; transformers reads them back as
    # "linear_attention", as Qwen3.5's Gated DeltaNet layers are named: which one it is, the config's fields say
    recurrent = "mamba" if linear is None and mamba is not None else "linear_attention"
    types = _layer_types(cfg, n_layers)
    layers = _layers(cfg, n_layers, experts is not None, max_context, pattern, types, recurrent)
    dense_intermediate = cfg.int("intermediate_size_mlp", *_dense_mlp_fields(text, experts), "intermediate_size",
                                 "ffn_dim", "n_inner", "ffn_hidden_size", default=0)  # fmt: skip
    dense_intermediate = dense_intermediate or cfg.int("mlp_ratio", default=0) * hidden  # GPT-2's n_inner null: 4h
    layers = _compressed_layers(cfg, _layer_overrides(cfg, layers, types, attention, dense_intermediate), types)
    layers = _shared_indexers(cfg, _nas_blocks(cfg, layers, attention, hidden), attention)
    layers = _sliding_layer_attention(cfg, layers, attention)
    if mamba is None and any(layer.mixer == "mamba" for layer in layers):
        raise InputError("config.mamba_num_heads", "a hybrid pattern names Mamba layers but the config has no "
                                                   "mamba_num_heads / mamba_head_dim / ssm_state_size")
    if linear is None and any(layer.mixer == "linear_attention" for layer in layers):
        raise InputError("config.linear_num_value_heads", "layer_types names linear_attention layers but the config "
                                                          "has no linear_num_key_heads / linear_num_value_heads")
    gated = bool(cfg.get("gated_mlp", default=True)) and str(cfg.get("mlp_hidden_act", "hidden_act",
                                                                      default="silu")) != "relu2"  # fmt: skip
    if experts and not gated:
        experts = Experts(**{**experts.__dict__, "gated": False})
    vision = config.get("vision_config") if config is not text else None
    return Architecture(
        name=name or str(config.get("_name_or_path") or text.get("model_type") or "custom"),
        model_type=str(text.get("model_type") or config.get("model_type") or ""),
        hidden_size=hidden, vocab_size=cfg.int("vocab_size", "padded_vocab_size"), layers=layers,
        attention=attention, dense_intermediate=dense_intermediate,
        experts=experts, mamba=mamba, linear_attention=linear,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", default=False)),
        gated_mlp=gated, mlp_bias=bool(cfg.get("mlp_bias", "use_bias", "bias", default=False)),
        mlp_activation_params=cfg.int("mlp_activation_params", default=0), norms_per_layer=_norms_per_layer(cfg),
        norm_bias=bool(cfg.get("norm_bias", default=False)), lm_head_bias=bool(cfg.get("lm_head_bias", default=False)),
        position_embeddings=(cfg.int("max_position_embeddings", "n_positions") + cfg.int("position_offset", default=0)
                             if cfg.get("learned_positions") else 0),
        max_position_embeddings=max_context,
        checkpoint_dtype=_checkpoint_dtype(cfg), quantization=_quantization(cfg.get("quantization_config"),
                                                                          cfg.get("expert_dtype")),
        mtp_layers=int(cfg.get("num_nextn_predict_layers", default=0) or 0),
        vision_params=_vision_params(vision, hidden) if isinstance(vision, Mapping) else 0,
        per_layer_input_size=_per_layer_input_size(cfg),
        per_layer_vocab_size=cfg.int("vocab_size_per_layer_input", "vocab_size", "padded_vocab_size"),
        hyper_connections=cfg.int("hc_mult", default=0),
        fields=cfg.used,
    )  # fmt: skip


def _norms_per_layer(cfg: _Fields) -> int:
    """Norms a layer carries: two (before attention and before the MLP) unless its class says otherwise; Falcon's
    config says it (one before its parallel attention and MLP; in its new architecture, ``num_ln_in_parallel_attn``)."""
    if cfg.get("new_decoder_architecture"):
        return cfg.int("num_ln_in_parallel_attn", default=2)
    return 1 if cfg.get("parallel_attn") else cfg.int("norms_per_layer", default=2)


def _dense_mlp_fields(text: Mapping[str, Any], experts: Experts | None) -> tuple[str, ...]:
    """Granite's MoE configs without experts (Granite-4.0-H-Micro) run only their shared MLP as a layer's
    feed-forward, ``shared_intermediate_size`` wide (``intermediate_size`` is then an unused expert width)."""
    return ("shared_intermediate_size",) if experts is None and str(text.get("model_type", "")).startswith(
        "granitemoe") else ()  # fmt: skip


class _Fields:
    """A config's fields with the class defaults behind them, remembering which ones were read (``used``)."""

    def __init__(self, values: Mapping[str, Any], defaults: Mapping[str, Any], where: str = "config") -> None:
        self.values, self.defaults, self.used = values, defaults, {}
        self.where = where  # how an error names a field: config.x, or in a nested dict config.parent.x

    def get(self, *names: str, default: Any = None) -> Any:
        for key in names:
            if self.values.get(key) is not None:
                self.used[key] = self.values[key]
                return self.values[key]
            if self.defaults.get(key) is not None:
                return self.defaults[key]
        return default

    def int(self, *names: str, default: int | None = None) -> int:
        value = self.get(*names, default=default)
        if value is None:
            raise InputError(f"{self.where}.{names[0]}", "missing; a decoder config needs it")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
            given = next((n for n in names if self.values.get(n) is not None or self.defaults.get(n) is not None),
                         names[0])  # the name the config used  # fmt: skip
            raise InputError(f"{self.where}.{given}", f"must be a whole number ≥ 0, got {value!r}")
        return int(value)


def _attention(cfg: _Fields, hidden: int) -> Attention:
    heads = cfg.int("num_attention_heads", "n_head", "num_heads")
    if heads == 0:
        raise InputError("config.num_attention_heads", "must be positive")
    bias = bool(cfg.get("attention_bias", "use_bias", "bias", default=False))  # StarCoder2's, Falcon's names
    common = dict(qkv_bias=bias or bool(cfg.get("qkv_bias", default=False)),
                  o_bias=bool(cfg.get("o_bias", default=bias)),  # GLM-4.5: attention_bias is on q, k and v only
                  qk_norm=bool(cfg.get("qk_norm", "use_qk_norm", default=False)),
                  qk_norm_whole=cfg.get("qk_norm_type", default="") == "per_layer",
                  output_gate=bool(cfg.get("attn_output_gate", default=False)),
                  sinks=bool(cfg.get("attention_sinks", default=False)))  # fmt: skip
    if cfg.get("o_lora_rank") is not None:  # DeepSeek-V4: one KV head of head_dim, its key its value
        return Attention("compressed", heads, 1, cfg.int("head_dim"), cfg.int("head_dim"),
                         q_lora_rank=cfg.int("q_lora_rank"), index_head_dim=cfg.int("index_head_dim", default=0),
                         index_n_heads=cfg.int("index_n_heads", default=0), o_groups=cfg.int("o_groups", default=1),
                         o_lora_rank=cfg.int("o_lora_rank"), index_topk=cfg.int("index_topk", default=0),
                         sinks=True)  # fmt: skip
    if cfg.get("kv_lora_rank") is not None:
        rope, nope = cfg.int("qk_rope_head_dim"), cfg.int("qk_nope_head_dim")
        return Attention("mla", heads, heads, rope + nope, cfg.int("v_head_dim"),
                         q_lora_rank=cfg.int("q_lora_rank", default=0) or None, kv_lora_rank=cfg.int("kv_lora_rank"),
                         qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                         index_head_dim=cfg.int("index_head_dim", default=0),
                         index_n_heads=cfg.int("index_n_heads", default=0),
                         index_topk=cfg.int("index_topk", default=0) if cfg.get("index_head_dim") else 0,
                         **common)  # fmt: skip
    kv_heads = cfg.int("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num", default=heads)
    if cfg.get("multi_query") and not cfg.get("new_decoder_architecture"):  # Falcon-7B, BigCode: one KV head
        kv_heads = 1
    head_dim = cfg.int("head_dim", "attention_head_dim", default=hidden // heads)
    plain = Attention("mha", heads, heads, head_dim, cfg.int("v_head_dim", default=head_dim), **common)
    return _with_kv_heads(plain, kv_heads, "num_key_value_heads")


def _with_kv_heads(attention: Attention, kv_heads: int, field_name: str, **changes: Any) -> Attention:
    """The attention with ``kv_heads`` KV heads, its kind following (MHA, GQA, MQA), and ``changes``; InputError
    naming ``field_name`` where they do not divide its query heads."""
    if not kv_heads or attention.num_heads % kv_heads:
        raise InputError(f"config.{field_name}", f"{kv_heads} does not divide {attention.num_heads} attention heads")
    kind = "mha" if kv_heads == attention.num_heads else "mqa" if kv_heads == 1 else "gqa"
    return replace(attention, num_kv_heads=kv_heads, kind=kind, **changes)


def _experts(cfg: _Fields) -> Experts | None:
    """The routed experts, where a config has any. Gemma 4's (``enable_moe_block``) run beside the layer's dense
    MLP, which is then a shared expert ``intermediate_size`` wide."""
    beside_mlp = cfg.get("enable_moe_block")
    if not cfg.get(*_EXPERT_FIELDS) or beside_mlp is False or cfg.get("is_moe") is False:  # the last: Doge's
        return None
    n = cfg.int(*_EXPERT_FIELDS)  # a list (ERNIE-4.5-VL's text and vision experts) is one line naming the field
    top_k = cfg.int(*_TOPK_FIELDS)
    size = cfg.int("moe_intermediate_size", "intermediate_size")
    shared = cfg.int("n_shared_experts", "num_shared_experts", "moe_num_shared_experts", default=0)
    shared_size = cfg.int("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                          "shared_intermediate_size", *(("intermediate_size",) if beside_mlp else ()),
                          default=0)  # Granite's shared_intermediate_size; Gemma 4's dense MLP  # fmt: skip
    shared_total = shared_size * max(shared, 1) if shared_size else shared * size
    if top_k > int(n):
        raise InputError(f"config.{_TOPK_FIELDS[0]}", f"{top_k} experts per token but only {n} experts")
    return Experts(int(n), top_k, size, num_shared=shared or (1 if shared_size else 0),
                   shared_intermediate=shared_total, expert_bias=bool(cfg.get("expert_bias", default=False)),
                   router_bias=bool(cfg.get("router_bias", default=False)),
                   shared_gate=bool(cfg.get("shared_expert_gate", default=False)),
                   router_scale=bool(cfg.get("router_scale", default=False)),
                   norms=cfg.int("expert_block_norms", default=0),
                   latent=cfg.int("moe_latent_size", default=0))  # fmt: skip


def _nas_blocks(cfg: _Fields, layers: tuple[Layer, ...], attention: Attention, hidden: int) -> tuple[Layer, ...]:
    """Llama-Nemotron's layers as its architecture search left them (DeciLM's ``block_configs``, model_type
    nemotron-nas): a layer's attention has its own KV heads (``n_heads_in_group`` query heads to one), or is gone
    (``no_op``) or one hidden x hidden matrix (``replace_with_linear``); its MLP has its own width (``ffn_mult``:
    ``2/3 ffn_mult h`` rounded up to a multiple of 256, as vLLM and TensorRT-LLM size it), or is gone or one matrix."""
    blocks = cfg.get("block_configs")
    if not isinstance(blocks, list):
        return layers
    if len(blocks) != len(layers):
        raise InputError("config.block_configs", f"lists {len(blocks)} layers, the model has {len(layers)}")
    out = []
    for layer, block in zip(layers, blocks, strict=True):
        attn, ffn = block.get("attention") or {}, block.get("ffn") or {}
        if attn.get("sparsify") or attn.get("num_sink_tokens"):
            raise InputError("config.block_configs", "names sparsified or sink attention, which this reader does not "
                                                     "size: not simulated rather than simulated wrong")  # fmt: skip
        own, mixer = None, "none" if attn.get("no_op") else "linear" if attn.get("replace_with_linear") else "attention"
        if mixer == "attention":
            group = int(attn.get("n_heads_in_group") or 1)
            if attention.num_heads % group:
                raise InputError("config.block_configs", f"n_heads_in_group {group} does not divide "
                                                         f"{attention.num_heads} attention heads")  # fmt: skip
            own = _with_kv_heads(attention, attention.num_heads // group, "block_configs")
        ffn_kind = "none" if ffn.get("no_op") else "linear" if ffn.get("replace_with_linear") else "dense"
        width = -(-int(2 * float(ffn.get("ffn_mult") or 0) * hidden / 3) // 256) * 256 if ffn_kind == "dense" else 0
        window = attn.get("window_length")
        out.append(replace(layer, mixer=mixer, ffn=ffn_kind, attention=own, mlp_intermediate=width,
                           window=int(window) if window else layer.window,
                           window_kind="sliding" if window else layer.window_kind))  # fmt: skip
    return tuple(out)


def _sliding_layer_attention(cfg: _Fields, layers: tuple[Layer, ...], attention: Attention) -> tuple[Layer, ...]:
    """MiMo-V2-Flash's sliding-window layers have attention of their own (``swa_num_key_value_heads``,
    ``swa_head_dim``, ``swa_v_head_dim``), and sinks on one kind of layer or the other
    (``add_swa_attention_sink_bias``, ``add_full_attention_sink_bias``)."""
    if cfg.get("swa_num_key_value_heads") is None or attention.kind == "mla":
        return layers
    sliding = _with_kv_heads(attention, cfg.int("swa_num_key_value_heads"), "swa_num_key_value_heads",
                             head_dim=cfg.int("swa_head_dim", default=attention.head_dim),
                             v_head_dim=cfg.int("swa_v_head_dim", default=attention.v_head_dim),
                             sinks=bool(cfg.get("add_swa_attention_sink_bias", default=attention.sinks)))  # fmt: skip
    full = replace(attention, sinks=bool(cfg.get("add_full_attention_sink_bias", default=attention.sinks)))
    return tuple(replace(layer, attention=sliding if layer.window_kind == "sliding" else full)
                 if layer.mixer == "attention" else layer for layer in layers)  # fmt: skip


def _shared_indexers(cfg: _Fields, layers: tuple[Layer, ...], attention: Attention) -> tuple[Layer, ...]:
    """GLM-5.2's sparse-attention layers that reuse the previous full layer's top-k pick (``indexer_types`` "shared",
    or its ``index_topk_pattern`` of F and S, or every ``index_topk_freq``-th layer from ``index_skip_topk_offset``,
    as transformers lists them) have no indexer of their own: no weights, no indexer key cached."""
    if not attention.index_head_dim:
        return layers
    types = cfg.get("indexer_types")
    pattern = cfg.get("index_topk_pattern")
    if not isinstance(types, list):
        if isinstance(pattern, str | list):
            types = [{"F": "full", "S": "shared"}.get(c, c) for c in pattern]
        else:
            freq = max(cfg.int("index_topk_freq", default=1), 1)
            offset = cfg.int("index_skip_topk_offset", default=2)
            types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(len(layers))]
    _refuse_unknown("indexer_types", types, ("full", "shared"))
    own = replace(attention, index_head_dim=0, index_n_heads=0)
    return tuple(replace(layer, attention=own) if kind == "shared" and layer.mixer == "attention" else layer
                 for layer, kind in zip(layers, types, strict=False))  # fmt: skip


def _per_layer_input_size(cfg: _Fields) -> int:
    """Gemma 4's per-layer input width: its class's default (256) where the config has no such field, none where it
    says null (Gemma 4 31B's)."""
    if "hidden_size_per_layer_input" in cfg.values and cfg.values["hidden_size_per_layer_input"] is None:
        return 0
    return cfg.int("hidden_size_per_layer_input", default=0)


def _layer_overrides(cfg: _Fields, layers: tuple[Layer, ...], types: list[str] | None, attention: Attention,
                     dense_intermediate: int) -> tuple[Layer, ...]:  # fmt: skip
    """Where Gemma 4's layers differ from the model's attention and MLP: a full-attention layer's own head size and
    KV heads (``global_head_dim``, and ``num_global_key_value_heads`` where its keys are its values,
    ``attention_k_eq_v``; or the ``per_layer_config`` transformers 5 saves instead), and the last
    ``num_kv_shared_layers`` layers, which reuse an earlier layer's cache (no k/v weights, no cache of their own)
    and run an MLP twice as wide where ``use_double_wide_mlp`` says so."""
    saved = cfg.get("per_layer_config")
    global_dim = cfg.get("global_head_dim")
    k_eq_v = bool(cfg.get("attention_k_eq_v", default=False))
    shared = cfg.int("num_kv_shared_layers", default=0)
    if not (isinstance(saved, Mapping) or global_dim or k_eq_v or shared) or attention.kind == "mla":
        return layers
    if shared >= len(layers):
        raise InputError("config.num_kv_shared_layers", f"{shared} of {len(layers)} layers: one at least must "
                                                        "keep the cache the others reuse")  # fmt: skip
    types = types or []
    per_layer = {int(k): v for k, v in saved.items()} if isinstance(saved, Mapping) else {}
    global_kv = cfg.get("num_global_key_value_heads") if k_eq_v else None
    wide = 2 * dense_intermediate if cfg.get("use_double_wide_mlp", default=False) else 0
    out = []
    for i, layer in enumerate(layers):
        full = i < len(types) and types[i] == "full_attention"
        if isinstance(saved, Mapping):
            spec = per_layer.get(i) or {}
        else:
            spec = {"head_dim": global_dim, "num_key_value_heads": global_kv} if full and global_dim else {}
        head_dim = int(spec.get("head_dim") or attention.head_dim)
        kv_heads = int(spec.get("num_key_value_heads") or attention.num_kv_heads)
        own = None
        if layer.mixer == "attention" and (spec or (full and k_eq_v)):
            own = _with_kv_heads(attention, kv_heads, "num_global_key_value_heads", head_dim=head_dim,
                                 v_head_dim=head_dim, k_eq_v=full and k_eq_v)  # fmt: skip
        reuses = i >= len(layers) - shared > 0
        out.append(replace(layer, attention=own, shares_kv=reuses, mlp_intermediate=wide if reuses else 0))
    return tuple(out)


def _mamba(cfg: _Fields, hidden: int) -> Mamba | None:
    """Nemotron-H's names, or Granite-4.0-H's (``mamba_n_heads``; a ``mamba_d_head`` of "auto" splits
    ``mamba_expand`` times the hidden size among the heads)."""
    if cfg.get("mamba_num_heads", "mamba_n_heads") is None:
        return None
    heads = cfg.int("mamba_num_heads", "mamba_n_heads")
    if cfg.get("mamba_head_dim", "mamba_d_head") in (None, "auto"):
        head_dim = cfg.int("mamba_expand", default=2) * hidden // max(heads, 1)
    else:
        head_dim = cfg.int("mamba_head_dim", "mamba_d_head")
    state_dtype = str(cfg.get("mamba_ssm_cache_dtype", default=UNQUANTIZED))
    return Mamba(heads, head_dim, cfg.int("ssm_state_size", "mamba_d_state"),
                 cfg.int("n_groups", "mamba_n_groups", default=1), cfg.int("conv_kernel", "mamba_d_conv", default=4),
                 normalize_dtype(state_dtype) if state_dtype.lower() in DTYPES else UNQUANTIZED)  # fmt: skip


_KIMI_LINEAR = "kimi_linear"  # the model type whose Kimi Delta Attention layers are sized (others' are refused)


def _linear_attention(cfg: _Fields) -> LinearAttention | None:
    if cfg.get("model_type") == _KIMI_LINEAR:  # its checkpoint keeps them in a dict, transformers in linear_* fields
        listed = cfg.get("linear_attn_config")
        if isinstance(listed, Mapping):
            kda, names = _Fields(listed, {}, "config.linear_attn_config"), ("num_heads", "head_dim",
                                                                             "short_conv_kernel_size")
        else:
            kda, names = cfg, ("linear_num_heads", "linear_head_dim", "linear_conv_kernel_dim")
        heads, head_dim, kernel = (kda.int(name, default=default) for name, default in zip(names, (32, 128, 4),
                                                                                            strict=True))
        return LinearAttention(heads, heads, head_dim, head_dim, kernel, "float32", gate_rank=head_dim)
    if cfg.get("linear_num_value_heads") is None:
        return None
    state_dtype = str(cfg.get("mamba_ssm_dtype", default=UNQUANTIZED))  # Qwen3.5 keeps the recurrent state in fp32
    return LinearAttention(cfg.int("linear_num_key_heads"), cfg.int("linear_num_value_heads"),
                           cfg.int("linear_key_head_dim"), cfg.int("linear_value_head_dim"),
                           cfg.int("linear_conv_kernel_dim", default=4),
                           normalize_dtype(state_dtype) if state_dtype.lower() in DTYPES else UNQUANTIZED)


_PATTERN = {"M": ("mamba", "none"), "*": ("attention", "none"), "-": ("none", "dense"), "E": ("none", "moe")}


def _layers(cfg: _Fields, n_layers: int, has_experts: bool, max_context: int, pattern: str | None,
            types: list[str] | None, recurrent: str) -> tuple[Layer, ...]:  # fmt: skip
    """Each layer's mixer, feed-forward and window, by the first rule the config carries (``pattern``: Nemotron-H's,
    ``_hybrid_pattern``; ``types``: ``_layer_types``; ``recurrent``: the mixer a layer type of "mamba" or
    "linear_attention" is). A window as long as the model's context (phi-4's 16,384) is no window."""
    if pattern:  # Nemotron-H: one character per layer
        if len(pattern) != n_layers or set(pattern) - set(_PATTERN):
            raise InputError("config.hybrid_override_pattern", f"needs {n_layers} characters of M, *, - or E")
        return tuple(Layer(*_PATTERN[c]) for c in pattern)
    moe = _moe_layer_set(cfg, n_layers) if has_experts else set()
    windows = [(None, "full") if w is not None and max_context and w >= max_context else (w, kind)
               for w, kind in _windows(cfg, n_layers, types)]  # fmt: skip
    mixers = [recurrent if isinstance(types, list) and types[i] in ("linear_attention", "mamba") else "attention"
              for i in range(n_layers)]  # fmt: skip
    return tuple(Layer(mixers[i], "moe" if i in moe else "dense", *windows[i]) for i in range(n_layers))


# Fields that say a model's layers are laid out in a way this reader does not size; read without them, each of these
# came out as a plain attention stack (Jamba's Mamba-1 layers, Falcon-H1's Mamba2 beside attention in every layer).
_UNREAD_LAYOUTS = {
    "attn_layer_period": "Jamba's and Zamba's Mamba-1 layers between attention layers",
    "attn_layer_indices": "Bamba's Mamba2 layers around its attention layers",
    "mamba_d_ssm": "Falcon-H1's Mamba2 heads beside attention in every layer",
    "attn_type_list": "MiniMax-01's lightning-attention layers",
    "block_types": "RecurrentGemma's recurrent blocks",
    "attn_res_block_size": "Kimi-K3's block attention residuals (and its full-rank delta-attention gates and "
                           "latent experts)",
    "linear_attn_config": "delta-attention layers of a model other than Kimi-Linear (model_type kimi_linear), "
                          "whose weights transformers has nothing to check against",
}
_RECURRENT_TYPES = ("mamba", "mamba2", "falcon_mamba", "rwkv", "rwkv5", "rwkv6", "rwkv7", "xlstm")


def _refuse_unread_layouts(cfg: _Fields) -> None:
    """InputError naming the field where a config describes layers this reader would otherwise read as attention:
    not simulated rather than simulated wrong."""
    model_type = str(cfg.get("model_type", default=""))
    if model_type in _RECURRENT_TYPES:
        raise InputError("config.model_type", f"{model_type} is a recurrent model without attention layers, which "
                                              "this reader does not size")  # fmt: skip
    for name, layout in _UNREAD_LAYOUTS.items():
        if name == "attn_type_list" and 0 not in (cfg.values.get(name) or [0]):
            continue  # MiniMax-M2's lists every layer as softmax attention (1): no lightning layer to size
        if name == "linear_attn_config" and model_type == _KIMI_LINEAR:
            continue  # Kimi-Linear's Kimi Delta Attention layers: sized (``_linear_attention``)
        if name in cfg.values:  # Bamba's default, null, makes every layer Mamba
            raise InputError(f"config.{name}", f"{layout}: a layout this reader does not size, so it is not "
                                               "simulated rather than simulated wrong")  # fmt: skip


def _refuse_unknown(field_name: str, listed: list[Any], known: Iterable[str]) -> None:
    """InputError naming the field where a per-layer list names a kind of layer this reader does not size."""
    unknown = sorted({str(t) for t in listed} - set(known))
    if unknown:
        raise InputError(f"config.{field_name}", f"names {', '.join(unknown)} layers, which this reader does not "
                                                 "size: not simulated rather than simulated wrong")  # fmt: skip


# transformers 5 saves Nemotron-H's pattern as a list of block names (save_pretrained, to_dict)
_BLOCK_CHARACTERS = {"linear_attention": "M", "mamba": "M", "full_attention": "*", "attention": "*", "mlp": "-",
                     "moe": "E"}  # fmt: skip


def _hybrid_pattern(cfg: _Fields) -> str | None:
    """Nemotron-H's ``hybrid_override_pattern``, or the same read off the ``layers_block_type`` list a config saved
    by transformers 5 carries instead (with no ``num_hidden_layers``: the list's length is the count). Zamba's
    "hybrid" blocks (Mamba beside a shared attention block) are refused, not read as something else."""
    pattern = cfg.get("hybrid_override_pattern")
    blocks = cfg.get("layers_block_type")
    if pattern or not isinstance(blocks, list):
        return pattern
    _refuse_unknown("layers_block_type", blocks, _BLOCK_CHARACTERS)
    return "".join(_BLOCK_CHARACTERS[b] for b in blocks)


# The layer types this reader sizes: attention over the whole context (DeepSeek-V3.2's "indexed" layers and GLM-5.2's
# "deepseek_sparse_attention" ones are MLA with the indexer its fields give), within a window or chunk, Gated
# DeltaNet, Mamba2, DeepSeek-V4's window with a compressed branch beside it (sparse, or heavily compressed). Any other
# (LFM's convolutions) is refused: read as full attention, each was priced wrong.
_COMPRESSED_TYPES = {"compressed_sparse_attention": True, "heavily_compressed_attention": False}  # sparse (indexed)?
_LAYER_TYPES = ("full_attention", "attention", "indexed_attention", "deepseek_sparse_attention", "sliding_attention",
                "chunked_attention", "linear_attention", "mamba", *_COMPRESSED_TYPES)  # fmt: skip
# mlp_layer_types: is the layer's MLP routed? (DeepSeek-V4's first layers route by token id: the same experts' work)
_MLP_LAYER_TYPES = {"dense": False, "sparse": True, "moe": True, "hash_moe": True}


def _layer_types(cfg: _Fields, n_layers: int) -> list[str] | None:
    """``layer_types`` where the config lists them; Qwen3-Next's config.json gives only ``full_attention_interval``
    (every 4th layer full attention, the rest Gated DeltaNet), from which transformers lists them."""
    types = cfg.get("layer_types")
    interval = cfg.get("full_attention_interval")
    if types is None and interval and cfg.get("linear_num_value_heads") is not None:
        return ["full_attention" if (i + 1) % int(interval) == 0 else "linear_attention" for i in range(n_layers)]
    pattern = cfg.get("hybrid_layer_pattern")
    if types is None and isinstance(pattern, list):  # MiMo-V2-Flash: 0 full attention, 1 sliding window
        return ["sliding_attention" if kind else "full_attention" for kind in pattern]
    ratios = cfg.get("compress_ratios")
    if types is None and isinstance(ratios, list):  # DeepSeek-V4's config.json: 0 window only, else its rate,
        sparse_rate = _compress_rates(cfg)["compressed_sparse_attention"]  # the MTP layer's last (not served)
        return ["sliding_attention" if not r else "compressed_sparse_attention" if r == sparse_rate
                else "heavily_compressed_attention" for r in ratios[:n_layers]]  # fmt: skip
    kda = cfg.get("linear_attn_config")
    if types is None and isinstance(kda, Mapping):  # Kimi-Linear's: layers numbered from 1, by kind
        full, linear = set(kda.get("full_attn_layers") or ()), set(kda.get("kda_layers") or ())
        if full | linear != set(range(1, n_layers + 1)) or full & linear:
            raise InputError("config.linear_attn_config", f"full_attn_layers and kda_layers must number each of the "
                                                          f"{n_layers} layers once, from 1")  # fmt: skip
        return ["full_attention" if i + 1 in full else "linear_attention" for i in range(n_layers)]
    if isinstance(types, list):
        _refuse_unknown("layer_types", types, _LAYER_TYPES)
    return types


def _moe_layer_set(cfg: _Fields, n_layers: int) -> set[int]:
    """Which layers are MoE: a per-layer list (``mlp_layer_types``, as transformers 5 lists them), an explicit
    list, Llama-4's interleave step, DeepSeek's dense first layers and frequency, Qwen-MoE's sparse step and
    MLP-only layers; every layer otherwise (Mixtral, gpt-oss)."""
    per_layer = cfg.get("mlp_layer_types")
    if isinstance(per_layer, list):
        _refuse_unknown("mlp_layer_types", per_layer, _MLP_LAYER_TYPES)
        return {i for i, kind in enumerate(per_layer) if _MLP_LAYER_TYPES[kind]}
    explicit = cfg.get("moe_layers")
    if isinstance(explicit, list):
        return {int(i) for i in explicit}
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list):  # a per-layer 0/1 mask
        return {i for i, on in enumerate(freq) if on}
    step = cfg.get("interleave_moe_layer_step")
    if step:
        return set(range(int(step) - 1, n_layers, int(step)))
    if cfg.get("moe_layer_start_index") is not None:  # ERNIE-4.5: every interval-th layer from start to end
        start, end = cfg.int("moe_layer_start_index"), cfg.int("moe_layer_end_index", default=n_layers - 1)
        interval = cfg.int("moe_layer_interval", default=1) or 1
        return {i for i in range(start, min(end, n_layers - 1) + 1) if (i + 1) % interval == 0}
    first_dense = int(cfg.get("first_k_dense_replace", "num_dense_layers", default=0) or 0)  # the last: AFMoE's
    freq = int(freq or 1)
    sparse_step = int(cfg.get("decoder_sparse_step", default=1) or 1)
    mlp_only = set(cfg.get("mlp_only_layers", default=[]) or [])
    return {i for i in range(n_layers)
            if i >= first_dense and i % freq == 0 and (i + 1) % sparse_step == 0 and i not in mlp_only}  # fmt: skip


def _compress_rates(cfg: _Fields) -> dict[str, int]:
    """DeepSeek-V4's tokens per compressed entry, per layer type: ``compress_rates`` (as transformers saves them),
    ``compress_rate_csa`` / ``compress_rate_hca``, else its class's 4 and 128."""
    rates = cfg.get("compress_rates")
    rates = dict(rates) if isinstance(rates, Mapping) else {}
    return {"compressed_sparse_attention": int(rates.get("compressed_sparse_attention")
                                               or cfg.int("compress_rate_csa", default=4)),
            "heavily_compressed_attention": int(rates.get("heavily_compressed_attention")
                                                or cfg.int("compress_rate_hca", default=128))}  # fmt: skip


def _compressed_layers(cfg: _Fields, layers: tuple[Layer, ...], types: list[str] | None) -> tuple[Layer, ...]:
    """DeepSeek-V4: every layer attends within its sliding window, and its compressed layers also to one entry per
    ``compress`` tokens of everything before (a sparse layer's indexer picking ``index_topk`` of them)."""
    if not types or not any(t in _COMPRESSED_TYPES for t in types):
        return layers
    rates = _compress_rates(cfg)
    mlp_types = cfg.get("mlp_layer_types")
    hashed = ([t == "hash_moe" for t in mlp_types] if isinstance(mlp_types, list)
              else [i < cfg.int("num_hash_layers", default=0) for i in range(len(layers))])  # fmt: skip
    return tuple(replace(layer, compress=rates.get(t, 0), indexed=_COMPRESSED_TYPES.get(t, False),
                         hash_routed=hashed[i] and layer.ffn == "moe")
                 for i, (layer, t) in enumerate(zip(layers, types, strict=True)))  # fmt: skip


def _windows(cfg: _Fields, n_layers: int, types: list[str] | None) -> list[tuple[int | None, str]]:
    """Per layer ``(window, kind)``: its layer type where the config lists them (``_layer_types``), else the
    model's own rule."""
    sliding = cfg.get("sliding_window")
    chunk = cfg.get("attention_chunk_size")
    full: tuple[int | None, str] = (None, "full")
    if isinstance(types, list):
        if len(types) != n_layers:
            raise InputError("config.layer_types", f"lists {len(types)} layers, the model has {n_layers}")
        kinds = {"sliding_attention": (sliding, "sliding"), "chunked_attention": (chunk, "chunked"),
                 **dict.fromkeys(_COMPRESSED_TYPES, (sliding, "sliding"))}  # fmt: skip
        out = [kinds.get(t, full) for t in types]
        if any(w is None and k != "full" for w, k in out):
            raise InputError("config.sliding_window", "layer_types names windowed layers but gives no window size")
        return out
    if chunk:  # Llama-4: RoPE layers attend within chunks, the NoPE layers (every 4th by default) see everything
        no_rope = cfg.get("no_rope_layers") or [int((i + 1) % int(cfg.get("no_rope_layer_interval", default=4)) != 0)
                                                for i in range(n_layers)]  # fmt: skip
        return [(int(chunk), "chunked") if no_rope[i] else full for i in range(n_layers)]
    pattern = cfg.get("sliding_window_pattern")
    if sliding and pattern:  # Gemma-2/3: every pattern-th layer is global
        return [full if (i + 1) % int(pattern) == 0 else (int(sliding), "sliding") for i in range(n_layers)]
    if sliding and cfg.get("use_sliding_window", default=True):  # Mistral-7B v0.1; Qwen2 from max_window_layers
        first = int(cfg.get("max_window_layers", default=0) or 0) if "use_sliding_window" in cfg.values else 0
        return [(int(sliding), "sliding") if i >= first else full for i in range(n_layers)]
    return [full] * n_layers


def _checkpoint_dtype(cfg: _Fields) -> str:
    value = str(cfg.get("torch_dtype", "dtype", default=UNQUANTIZED)).lower().replace("torch.", "")
    key = DTYPE_ALIASES.get(value, value)
    return key if key in DTYPES and not DTYPES[key].quantized else UNQUANTIZED


_KEEP_PATTERNS = {"attn": "attention", "router": "router", "embed": "embedding", "lm_head": "lm_head",
                  "shared_expert": "shared_experts", "mlp\\.(gate": "mlp"}  # the last: compressed-tensors' regex


def _quantization(qc: Any, expert_dtype: Any = None) -> Quantization | None:
    """The checkpoint's own storage from ``quantization_config`` (fp8 with block scales, MXFP4, NVFP4, AWQ/GPTQ).
    A checkpoint whose experts are stored smaller than the rest (DeepSeek-V4's FP4 experts beside FP8 attention,
    ``expert_dtype``; a compressed-tensors checkpoint's lowest-bit group) is taken at its experts' dtype: they are
    nearly all of its weights."""
    expert = str(expert_dtype or (qc.get("expert_dtype") if isinstance(qc, Mapping) else "") or "").lower()
    if expert in ("fp4", "mxfp4", "nvfp4"):  # DeepSeek's own FP4 is E2M1 with a power-of-two scale per 32: MXFP4
        return Quantization("nvfp4" if expert == "nvfp4" else "mxfp4")
    if not isinstance(qc, Mapping):
        return None
    method = str(qc.get("quant_method", "")).lower()
    algo = str(qc.get("quant_algo", "") or "").lower()
    bits = qc.get("bits") or qc.get("w_bit")
    groups = qc.get("config_groups")
    weights: Mapping[str, Any] = {}
    if method == "compressed-tensors" and isinstance(groups, Mapping) and groups:  # Kimi-K2.5's INT4 experts
        weights = min((group.get("weights") or {} for group in groups.values()),
                      key=lambda w: w.get("num_bits") or 16)  # fmt: skip
        bits = weights.get("num_bits")
        if weights.get("type") == "float":
            algo = {4: "nvfp4", 8: "fp8"}.get(bits, algo)
            bits = None
    group = qc.get("group_size") or weights.get("group_size")
    if method == "mxfp4":
        dtype = "mxfp4"
    elif "nvfp4" in (method, algo) or "fp4" in algo:
        dtype = "nvfp4"
    elif method == "fp8" or "fp8" in algo:
        dtype = "fp8"
    elif method in ("awq", "gptq", "autoround") or bits:
        dtype = "int4" if int(bits or 4) == 4 else "int8"
    else:
        return None
    block = qc.get("weight_block_size")
    keep = {part for module in qc.get("modules_to_not_convert") or qc.get("ignore") or []
            for pattern, part in _KEEP_PATTERNS.items() if pattern in str(module)}  # fmt: skip
    return Quantization(dtype, tuple(int(b) for b in block) if block else None,  # type: ignore[arg-type]
                        int(group) if group else None, tuple(sorted(keep)))


def _vision_params(vision: Mapping[str, Any], text_hidden: int) -> int:
    """A ViT tower's parameters, approximately (layers, patch embedding, projector into the decoder): part of what
    the checkpoint loads, never of what a text token computes."""
    def first(*names: str) -> int:  # SigLIP / Llama-4 names, Qwen3-VL's ``depth``, Kimi-K2.5's ``vt_`` ones
        return next((int(vision[n]) for n in names if isinstance(vision.get(n), int)), 0)

    hidden, inter = first("hidden_size", "vt_hidden_size"), first("intermediate_size", "vt_intermediate_size")
    layers, patch = first("num_hidden_layers", "depth", "vt_num_hidden_layers"), first("patch_size")
    out = first("vision_output_dim", "out_hidden_size") or hidden
    adapter = int(vision.get("projector_input_dim") or 0) * int(vision.get("projector_output_dim") or 0)
    tower = layers * (4 * hidden * hidden + 2 * hidden * inter + 4 * hidden) + 3 * patch * patch * hidden
    return tower + adapter + out * text_hidden if tower else 0


def regular_token_ids(config: Mapping[str, Any]) -> tuple[int, int]:
    """The ``[low, high)`` ids of ordinary text tokens, so a random prompt holds no special token: special ids at the
    top of the vocabulary (Llama-3, Qwen) end the range, ones at the bottom (Mistral, Gemma) start it."""
    text = text_config(config)
    vocab = int(text.get("vocab_size") or _CLASS_DEFAULTS.get(str(text.get("model_type")), {})["vocab_size"])
    specials = []
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        value = text.get(key, config.get(key))
        specials += value if isinstance(value, list) else [value] if isinstance(value, int) else []
    low = max([s + 1 for s in specials if s < vocab / 2], default=0)
    high = min([s for s in specials if s >= vocab / 2], default=vocab)
    return low, high


def fit(arch: Architecture, *, memory_gb: float, gpus: int, dtype: str | None, kv_dtype: str | None, context: int,
         runtime_gb_per_gpu: float = 0.0, headroom: float = 1.0) -> dict[str, Any]:
    """Whether the weights fit on ``gpus`` GPUs of ``memory_gb`` each, and how many sequences of ``context`` tokens
    the memory left (after weights and ``runtime_gb_per_gpu`` per GPU, times ``headroom``) holds."""
    free = (memory_gb - runtime_gb_per_gpu) * 1e9 * gpus - arch.weight_bytes(dtype)
    per_sequence = arch.kv_bytes_per_sequence(context, kv_dtype)
    sequences = math.floor(free * headroom / per_sequence) if free > 0 and per_sequence > 0 else 0
    return {"gpus": gpus, "weights_fit": free > 0, "max_sequences": max(0, sequences)}
