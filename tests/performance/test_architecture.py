"""The architecture reader: parameters, weight bytes, KV cache and FLOPs from a config.json, checked by hand, against
published counts, and against what transformers itself builds from the same config."""

from __future__ import annotations

import copy

import pytest

from infercost.errors import InputError
from infercost.performance.architecture import DTYPES, from_config, regular_token_ids
from infercost.performance.models import bundled_config, bundled_models


def built_params(model) -> int:
    """What transformers builds: its parameters, and the router's correction bias it keeps as a buffer (a weight in
    the checkpoint, and counted here)."""
    buffers = sum(b.numel() for key, b in model.named_buffers() if "e_score_correction_bias" in key)
    return sum(p.numel() for p in model.parameters()) + buffers


def arch(name: str):
    return bundled_models()[name].architecture()


# --- hand-computed ----------------------------------------------------------------------------------------------


def test_dense_llama_3_1_8b_by_hand():
    h, inter, layers, vocab, kv_heads, head = 4096, 14336, 32, 128256, 8, 128
    attention = h * h * 2 + h * kv_heads * head * 2  # q and o; k and v
    per_layer = attention + 3 * h * inter + 2 * h  # gated MLP, two RMSNorms
    total = layers * per_layer + h + 2 * vocab * h  # final norm, untied embedding and head
    a = arch("llama-3.1-8b")
    assert a.total_params == a.active_params == total == 8_030_261_248
    assert a.kv_bytes_per_token("bfloat16") == 2 * layers * kv_heads * head * 2
    assert a.kv_bytes_per_sequence(1000, "fp8") == 1000 * 2 * layers * kv_heads * head
    assert a.weight_bytes("bfloat16") == 2 * total
    assert a.flops_per_token(0) == 2 * (total - vocab * h)  # the input embedding is a lookup
    assert a.flops_per_token(1000) - a.flops_per_token(0) == layers * 1000 * 2 * 32 * (head + head)


def test_moe_mixtral_8x7b_by_hand():
    h, inter, layers, vocab, experts, top_k = 4096, 14336, 32, 32000, 8, 2
    attention = 2 * h * h + 2 * h * 1024
    expert = 3 * h * inter
    per_layer = attention + experts * expert + h * experts + 2 * h  # experts, router, norms
    total = layers * per_layer + h + 2 * vocab * h
    a = arch("mixtral-8x7b")
    assert a.kind == "moe" and a.moe_layers == tuple(range(layers))
    assert a.total_params == total
    assert a.active_params == total - layers * (experts - top_k) * expert


def test_mla_deepseek_v3_by_hand():
    h, layers, dense_layers, heads, vocab = 7168, 61, 3, 128, 129280
    q_lora, kv_lora, nope, rope, v = 1536, 512, 128, 64, 128
    attention = (h * q_lora + q_lora + q_lora * heads * (nope + rope)  # q_a, its norm, q_b
                 + h * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v)  # kv_a (with the rope key), norm, kv_b
                 + heads * v * h)  # o
    dense_mlp = 3 * h * 18432
    moe = 256 * 3 * h * 2048 + 3 * h * 2048 + h * 256 + 256  # routed, one shared, router and its bias
    norms = 2 * h * layers + h
    total = layers * attention + dense_layers * dense_mlp + (layers - dense_layers) * moe + norms + 2 * vocab * h
    a = arch("deepseek-v3")
    assert a.attention.kind == "mla" and a.moe_layers == tuple(range(3, 61)) and a.mtp_layers == 1
    assert a.total_params == total
    assert a.active_params == total - (layers - dense_layers) * (256 - 8) * 3 * h * 2048
    assert a.kv_bytes_per_token("bfloat16") == layers * (kv_lora + rope) * 2  # the latent and the rope key only
    # its checkpoint: FP8 matmuls with one fp32 scale per 128x128 block, the rest bf16
    parts = a.params_by_part()
    matmuls = parts["attention"] + parts["mlp"] + parts["experts"] + parts["shared_experts"]
    assert a.default_dtype == "fp8"
    assert a.weight_bytes() == pytest.approx(matmuls * (1 + 4 / 128**2) + (total - matmuls) * 2)


def test_mla_prefills_expanded_and_decodes_over_its_latent():
    from infercost.performance.roofline import model_shape

    heads, layers, kv_lora, nope, rope, v = 128, 61, 512, 128, 64, 128
    shape = model_shape(arch("deepseek-v3"))
    assert shape.attention_flops == layers * 2 * heads * ((nope + rope) + v)  # q.k over 192, weights over v
    # absorbed (FlashMLA and the engines' MLA decode): q.k over the latent and the rope key, weights over the latent
    assert shape.decode_attention_flops == layers * 2 * heads * (2 * kv_lora + rope)
    dense = model_shape(arch("llama-3.1-8b"))
    assert dense.decode_attention_flops == dense.attention_flops


def test_windowed_gpt_oss_20b_by_hand():
    h, layers, heads, kv_heads, head, vocab, experts, inter = 2880, 24, 64, 8, 64, 201088, 32, 2880
    q, kv = heads * head, kv_heads * head
    attention = h * q + q + 2 * (h * kv + kv) + q * h + h + heads  # biased q, k, v, o and one sink per head
    expert = h * 2 * inter + 2 * inter + inter * h + h  # gate_up and down, with biases
    per_layer = attention + experts * expert + h * experts + experts + 2 * h  # router with bias, norms
    total = layers * per_layer + h + 2 * vocab * h
    a = arch("gpt-oss-20b")
    assert a.total_params == total
    assert [layer.window for layer in a.layers[:4]] == [128, None, 128, None]
    per_token_layer = 2 * kv_heads * head * 2  # bf16 keys and values
    assert a.kv_bytes_per_token() == 12 * per_token_layer  # the full-attention half
    assert a.kv_bytes_per_sequence(8192) == 12 * 8192 * per_token_layer + 12 * 128 * per_token_layer
    assert a.kv_bytes_per_sequence(100) == 24 * 100 * per_token_layer  # shorter than the window: every layer grows
    # MXFP4 experts (4 bits + one byte per 32), everything else 16-bit, as the checkpoint ships
    assert a.default_dtype == "mxfp4"
    routed = layers * experts * expert
    assert a.weight_bytes() == pytest.approx(routed * (0.5 + 1 / 32) + (total - routed) * 2)


# --- published counts -------------------------------------------------------------------------------------------

# (model, total, active, precision of the published active figure, source). Totals must be within 1%; active counts
# within 1% or a unit of their precision, where that is looser (publishers round or cut: 3.35B is Qwen's "3.3B"),
# counted with the input embedding or
# without it (publishers differ: OpenAI's 5.13B and NVIDIA's 3.2B leave it out, DeepSeek does not say).
PUBLISHED = [
    ("gpt-oss-120b", 116.83e9, 5.13e9, 0.01e9, "OpenAI, gpt-oss-120b & gpt-oss-20b model card, table 1"),
    ("gpt-oss-20b", 20.91e9, 3.61e9, 0.01e9, "OpenAI, gpt-oss model card, table 1"),
    ("deepseek-v3", 671e9, 37e9, 1e9, "DeepSeek-V3 technical report (arXiv 2412.19437): 671B, 37B activated"),
    ("deepseek-r1", 671e9, 37e9, 1e9, "DeepSeek-R1 model card: 671B total, 37B activated"),
    ("deepseek-v3.2", 671e9, 37e9, 1e9, "DeepSeek-V3.2 model card (V3 architecture with DSA)"),
    ("kimi-k2", 1.03e12, 32e9, 0.01e12, "Kimi-K2 model card: 32B activated, 1T total; Hub metadata 1.03T"),
    ("qwen3-0.6b", 0.6e9, None, 0.1e9, "Qwen3-0.6B model card: 0.6B"),
    ("qwen3-8b", 8.2e9, None, 0.1e9, "Qwen3-8B model card: 8.2B"),
    ("qwen3-14b", 14.8e9, None, 0.1e9, "Qwen3-14B model card: 14.8B"),
    ("qwen3-32b", 32.8e9, None, 0.1e9, "Qwen3-32B model card: 32.8B"),
    ("qwen3-30b-a3b", 30.5e9, 3.3e9, 0.1e9, "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"),
    ("qwen3-235b-a22b", 235e9, 22e9, 1e9, "Qwen3-235B-A22B model card: 235B total, 22B activated"),
    ("qwen3-coder-480b-a35b", 480e9, 35e9, 1e9, "Qwen3-Coder-480B-A35B-Instruct model card"),
    ("qwen2.5-7b", 7.61e9, None, 0.01e9, "Qwen2.5-7B-Instruct model card: 7.61B"),
    ("qwen2.5-72b", 72_706_203_648, None, 1, "safetensors total in a public report of the checkpoint"),
    ("llama-3.1-8b", 8_030_261_248, None, 1, "Hugging Face safetensors metadata, meta-llama/Llama-3.1-8B"),
    ("llama-3.1-70b", 70.6e9, None, 0.1e9, "Hugging Face safetensors metadata: 70.6B"),
    ("llama-3.1-405b", 406e9, None, 1e9, "Hugging Face safetensors metadata: 406B"),
    ("llama-3.2-1b", 1.24e9, None, 0.01e9, "Hugging Face safetensors metadata: 1.24B"),
    ("llama-3.2-3b", 3_212_749_824, None, 1, "safetensors total in a public report of Llama-3.2-3B-Instruct"),
    ("llama-4-scout", 109e9, 17e9, 1e9, "Llama 4 model card: 17B active, 109B total"),
    ("llama-4-maverick", 400e9, 17e9, 1e9, "Llama 4 model card: 17B active, 400B total"),
    ("mistral-7b-v0.1", 7.3e9, None, 0.1e9, "Mistral AI, Mistral 7B announcement: 7.3B"),
    ("mistral-7b-v0.3", 7.3e9, None, 0.1e9, "Mistral AI, Mistral 7B announcement: 7.3B (v0.3 adds 768 tokens)"),
    ("gemma-3-27b", 27_432_062_576, None, 1, "keras-team/keras-hub gemma3_presets.py (00d9f10): gemma3_instruct_27b, "
                                             "vision+text, 27,432,062,576 (its vocabulary 262144, ours 262208)"),
    ("mixtral-8x7b", 46.7e9, 12.9e9, 0.1e9, "Mistral AI, Mixtral of experts: 46.7B total, 12.9B per token"),
    ("mixtral-8x22b", 141e9, 39e9, 1e9, "Mistral AI, Mixtral 8x22B announcement: 141B, 39B active"),
    ("phi-4", 14.7e9, None, 0.1e9, "Hugging Face safetensors metadata, microsoft/phi-4: 14.7B"),
    ("nemotron-h-56b", 56e9, None, 1e9, "NVIDIA Nemotron-H-56B-Base-8K model card: 56B"),
    ("nemotron-3-nano-30b-a3b", 31.6e9, 3.2e9, 0.1e9,
     "NVIDIA Nemotron 3 Nano model card: 31.6B total, 3.2B active (3.6B with embeddings)"),
    ("glm-5", 744e9, 40e9, 1e9, "zai-org/GLM-5 model card: 744B parameters (40B active)"),
    ("kimi-k2.5", 1.03e12, 32e9, 1e9, "Kimi-K2.5 model card: 1T total, 32B activated, MoonViT 400M; Kimi-K2's 1.03T "
                                      "Hub metadata (kimi-k2 above) is its text model"),
    ("minimax-m2.5", 229e9, 10e9, 1e9, "MiniMax-M2.5 on Hugging Face: 229B parameters, 10B activated (chatforest.com "
                                       "review of M2.5, read 2026-12-03)"),
    ("qwen3.5-397b-a17b", 397e9, 17e9, 1e9, "Qwen3.5-397B-A17B model card: 397B total, 17B activated"),
    ("qwen3.5-122b-a10b", 122e9, 10e9, 1e9, "its name and model card: 122B total, 10B activated"),
    ("qwen3.5-35b-a3b", 35e9, 3e9, 1e9, "its name and model card: 35B total, 3B activated"),
    ("qwen3.5-27b", 27e9, None, 1e9, "its name and model card: 27B"),
    ("deepseek-v4-flash", 284e9, 13e9, 1e9, "DeepSeek-V4 release (2026-04-24): V4-Flash 284B total, 13B activated"),
    ("deepseek-v4-pro", 1.6e12, 49e9, 1e9, "DeepSeek-V4 release (2026-04-24): V4-Pro 1.6T total, 49B activated"),
    ("llama-3.3-nemotron-super-49b", 49.9e9, None, 0.1e9, "Hugging Face safetensors metadata, "
                                                         "nvidia/Llama-3_3-Nemotron-Super-49B-v1: 49.9B"),
    ("nemotron-3-super-120b-a12b", 120e9, 12e9, 1e9, "its name and model card: 120B total, 12B active"),
    ("nemotron-3-ultra-550b-a55b", 550e9, 55e9, 1e9, "its name and model card: 550B total, 55B active"),
]  # fmt: skip
# published to two figures: "1.6T" (1.573T rounds to it), "27B" (27.33B with its vision tower)
_TOTAL_PRECISION = {"deepseek-v4-pro": 0.05e12, "qwen3.5-27b": 0.5e9}


def _close(ours: float, published: float, precision: float) -> bool:
    return abs(ours - published) <= max(0.01 * published, precision)


@pytest.mark.parametrize("name, total, active, precision, source", PUBLISHED)
def test_totals_match_published_counts(name, total, active, precision, source):
    a = arch(name)
    assert abs(a.total_params - total) <= max(0.01 * total, _TOTAL_PRECISION.get(name, 0)), \
        f"{name}: {a.total_params:,} vs {total:,.0f} ({source})"
    if active is not None:
        without_embedding = a.active_params - a.vocab_size * a.hidden_size
        assert _close(a.active_params, active, precision) or _close(without_embedding, active, precision), source


def test_every_bundled_model_has_a_published_count():
    assert {row[0] for row in PUBLISHED} == set(bundled_models())


# --- the same config read by transformers -----------------------------------------------------------------------

# Kimi-K2's config names its own model_type (remote code); its class is DeepseekV3ForCausalLM. Kimi-K2.5 wraps that
# text model (text_config) in remote multimodal code: its text model is built.
_TRANSFORMERS_TYPE = {"kimi_k2": "deepseek_v3"}
_TEXT_MODEL_ONLY = {"kimi_k25"}
_VISION_KEYS = ("vision", "visual", "multi_modal_projector")  # Gemma-3's and Llama-4's classes build their towers


@pytest.mark.parametrize("name", sorted(bundled_models()))
def test_parameter_count_equals_what_transformers_builds(name):
    """transformers builds the model on the meta device (no memory): its tensors must be exactly what we count.
    The router's correction bias is a buffer there and a tensor in the checkpoint; a vision tower (an estimate here) is
    left out of both."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    config = copy.deepcopy(bundled_config(name))
    if config["model_type"] == "nemotron-nas":
        pytest.skip("DeciLM is remote code only: test_llama_nemotron_blocks_are_built_from_transformers_llama_layers")
    if config["model_type"] in _TEXT_MODEL_ONLY:
        config = config["text_config"]
    config["model_type"] = _TRANSFORMERS_TYPE.get(config["model_type"], config["model_type"])
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config))
    built = sum(p.numel() for key, p in model.named_parameters() if not any(v in key for v in _VISION_KEYS))
    built += sum(b.numel() for key, b in model.named_buffers() if "e_score_correction_bias" in key)
    a = arch(name)
    assert built == a.total_params - a.vision_params


# ibm-granite/granite-4.0-h-small's config.json, the fields that size it: 36 Mamba2 layers and 4 attention layers
# (one in ten), every one with 72 experts (10 a token) and a shared one; its model card: 32B total, 9B active.
GRANITE_4_H_SMALL = {
    "model_type": "granitemoehybrid", "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_local_experts": 72, "num_experts_per_tok": 10, "intermediate_size": 768,
    "shared_intermediate_size": 1536, "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_d_state": 128,
    "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "tie_word_embeddings": True, "vocab_size": 100352,
    "layer_types": (["mamba"] * 9 + ["attention"]) * 4, "position_embedding_type": "nope",
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
}  # fmt: skip
# the same family without experts (Granite-4.0-H-Micro's kind): a layer's feed-forward is its shared MLP alone
GRANITE_4_H_DENSE = {**GRANITE_4_H_SMALL, "hidden_size": 2048, "num_hidden_layers": 8, "num_attention_heads": 16,
                     "num_key_value_heads": 4, "num_local_experts": 0, "num_experts_per_tok": 0,
                     "shared_intermediate_size": 8192, "intermediate_size": 512, "mamba_n_heads": 64,
                     "mamba_d_head": "auto", "layer_types": (["mamba"] * 3 + ["attention"]) * 2}  # fmt: skip


@pytest.mark.parametrize("config", [GRANITE_4_H_SMALL, GRANITE_4_H_DENSE], ids=["moe", "dense"])
def test_granite_4_hybrids_count_their_mamba_layers_and_shared_mlp_as_transformers_builds_them(config):
    """Granite-4.0-H names its Mamba2 layers "mamba" in layer_types and its Mamba sizes its own way (mamba_n_heads,
    mamba_d_state): read as attention layers, granite-4.0-h-small came out a 29.3B-parameter MoE model of 5.9B
    active with a KV cache of 160 KiB a token, ten times its own. transformers reads the same file's layer types
    back as "linear_attention" and "full_attention", which must mean the same."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    a = from_config(config)
    assert a.total_params == sum(p.numel() for p in model.parameters())
    assert len(a.attention_layers) == config["layer_types"].count("attention")
    assert a.kv_bytes_per_token("bfloat16") == len(a.attention_layers) * 2 * config["num_key_value_heads"] * 128 * 2
    respelled = {**config, "layer_types": ["linear_attention" if t == "mamba" else "full_attention"
                                           for t in config["layer_types"]]}  # fmt: skip
    assert from_config(respelled).layers == a.layers
    if config is GRANITE_4_H_SMALL:
        assert a.kind == "hybrid-moe" and round(a.total_params / 1e9) == 32 and round(a.active_params / 1e9) == 9


# Qwen/Qwen3-Next-80B-A3B-Instruct's config.json, the fields that size it: no layer_types, only
# full_attention_interval (every 4th layer full attention, the others Gated DeltaNet); its model card: 80B total.
QWEN3_NEXT = {
    "model_type": "qwen3_next", "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 48,
    "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "linear_value_head_dim": 128, "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "full_attention_interval": 4, "partial_rotary_factor": 0.25, "max_position_embeddings": 262144,
    "vocab_size": 151936, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_qwen3_next_places_its_full_attention_layers_by_its_interval_as_transformers_does():
    """Without layer_types every layer was read as full attention: 48 layers of KV cache for Qwen3-Next's 12, and
    none of its Gated DeltaNet weights (79.04B where transformers builds 79.67B)."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(QWEN3_NEXT)))
    a = from_config(QWEN3_NEXT)
    assert a.total_params == sum(p.numel() for p in model.parameters())
    assert a.attention_layers == tuple(range(3, 48, 4)) and a.kind == "hybrid-moe"
    assert a.kv_bytes_per_token("bfloat16") == 12 * 2 * 2 * 256 * 2


# Gemma 4's config.json text_config, the fields that size it (google/gemma-4-E2B-it, -E4B-it, -31B-it, -26B-A4B-it):
# full-attention layers with heads of their own size (global_head_dim) and, where keys are values, KV heads of their
# own; per-layer input embeddings (E2B, E4B); the last num_kv_shared_layers layers reusing an earlier layer's cache,
# E2B's with a double-wide MLP; the 26B-A4B's 128 experts (8 a token) beside every layer's dense MLP.
_GEMMA_4_E2B = {
    "model_type": "gemma4_text", "hidden_size": 1536, "num_hidden_layers": 35, "intermediate_size": 6144,
    "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256, "global_head_dim": 512,
    "num_global_key_value_heads": None, "attention_k_eq_v": False, "sliding_window": 512, "vocab_size": 262144,
    "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 20,
    "use_double_wide_mlp": True, "enable_moe_block": False, "max_position_embeddings": 131072,
    "tie_word_embeddings": True, "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
}  # fmt: skip
_GEMMA_4_E4B = {**_GEMMA_4_E2B, "hidden_size": 2560, "num_hidden_layers": 42, "intermediate_size": 10240,
                "num_key_value_heads": 2, "num_kv_shared_layers": 18, "use_double_wide_mlp": False,
                "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 7}  # fmt: skip
_GEMMA_4_31B = {**_GEMMA_4_E4B, "hidden_size": 5376, "num_hidden_layers": 60, "intermediate_size": 21504,
                "num_attention_heads": 32, "num_key_value_heads": 16, "num_global_key_value_heads": 4,
                "attention_k_eq_v": True, "sliding_window": 1024, "hidden_size_per_layer_input": 0,
                "num_kv_shared_layers": 0, "max_position_embeddings": 262144,
                "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10}  # fmt: skip
_GEMMA_4_26B_A4B = {**_GEMMA_4_31B, "hidden_size": 2816, "num_hidden_layers": 30, "intermediate_size": 2112,
                    "num_attention_heads": 16, "num_key_value_heads": 8, "num_global_key_value_heads": 2,
                    "enable_moe_block": True, "num_experts": 128, "top_k_experts": 8, "moe_intermediate_size": 704,
                    "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 5}  # fmt: skip


@pytest.mark.parametrize("config", [_GEMMA_4_E2B, _GEMMA_4_E4B, _GEMMA_4_31B, _GEMMA_4_26B_A4B],
                         ids=["e2b", "e4b", "31b", "26b-a4b"])  # fmt: skip
def test_gemma_4_layers_of_their_own_are_counted_and_cached_as_transformers_builds_them(config):
    """Read as a Gemma-3-like stack (one head size, no per-layer embeddings, every layer caching), transformers'
    default Gemma 4 came out 42% under what it builds, and E2B's KV cache counted its 20 layers that reuse another's.
    Now the parameters are exact, a token's cache is what the built full-attention layers that keep one project
    (k_proj, keys and values cached both where keys are values), and a transformers-saved copy (per_layer_config)
    reads the same."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    a = from_config(config)
    assert a.total_params == sum(p.numel() for p in model.parameters())
    attentions = [layer.self_attn for layer in model.model.layers]
    keeping = [at for at in attentions if not at.is_kv_shared_layer]
    cached_full = sum(2 * at.k_proj.out_features for at in keeping if not at.is_sliding)
    assert a.kv_bytes_per_token("bfloat16") == 2 * cached_full
    assert len(a.cache_layers()) == len(keeping)
    saved = AutoConfig.for_model(**copy.deepcopy(config)).to_dict()
    assert "per_layer_config" in saved and "global_head_dim" not in saved
    assert (from_config(saved).total_params, from_config(saved).layers) == (a.total_params, a.layers)


def test_gemma_4_published_sizes_and_what_a_step_reads():
    """Google's model cards: 31B 30.7B parameters; 26B-A4B 25.2B of which 3.8B active. E2B's per-layer embedding
    table (2.3B of its 4.6B text parameters) is looked up a row per token, not read whole by every step."""
    from infercost.performance.roofline import model_shape

    assert round(from_config(_GEMMA_4_31B).total_params / 1e8) == 307
    moe = from_config(_GEMMA_4_26B_A4B)
    assert (round(moe.total_params / 1e8), round(moe.active_params / 1e8), moe.kind) == (252, 38, "moe")
    e2b = from_config(_GEMMA_4_E2B)
    table = 262144 * 35 * 256
    assert e2b.params_by_part()["per_layer_embedding"] == table
    assert e2b.matmul_params == e2b.total_params - table  # tied: the embedding is read whole, as the head
    shape = model_shape(e2b)
    assert shape.matmul_params == e2b.matmul_params and shape.n_params == e2b.total_params
    assert shape.kv_values_per_token == 3 * 2 * 1 * 512  # 3 of the 7 full layers keep a cache: 15 of 35 layers do


@pytest.mark.parametrize(("model_type", "changes"), [
    ("starcoder2", {}), ("starcoder2", {"use_bias": False}), ("phi", {}), ("gpt_neox", {}), ("opt", {}),
    ("falcon", {}), ("falcon", {"multi_query": False, "parallel_attn": False, "bias": True}),
    ("falcon", {"new_decoder_architecture": True, "num_kv_heads": 8, "num_attention_heads": 64, "hidden_size": 8192}),
    ("apertus", {}), ("gpt2", {}), ("gpt_bigcode", {}), ("gpt_neo", {}), ("gptj", {}), ("codegen", {}),
    ("afmoe", {}),
])  # fmt: skip
def test_older_and_non_gated_decoders_are_counted_as_transformers_builds_them(model_type, changes):
    """Every MLP was counted as three matrices (gated), so the two-matrix MLPs of StarCoder2 (+37%), Phi-2 (+28%),
    GPT-NeoX (+32%), OPT (+21%) and Apertus (+27%) came out too large, and GPT-2-era configs (an MLP 4x the hidden
    size where n_inner is null) 46-62% too small; Falcon-7B's single KV head was read as 71 (-58%). AFMoE's first
    dense layer (num_dense_layers) and gated attention were missed (+2.1%). Exact now, transformers' default config
    of each, and Falcon's other layouts."""
    torch = pytest.importorskip("torch")
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

    config = CONFIG_MAPPING[model_type](**changes).to_dict()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    assert from_config(config).total_params == sum(p.numel() for p in model.parameters())


def test_a_learned_position_table_is_looked_up_not_read_by_every_step():
    """GPT-2's position table (1,024 x 768) is in memory, but a step reads a row of it per token, as it does the
    embedding's; one falcon-7b's KV head caches 2 x 64 values a token and layer."""
    from transformers import CONFIG_MAPPING

    gpt2 = from_config(CONFIG_MAPPING["gpt2"]().to_dict())
    assert gpt2.params_by_part()["position_embedding"] == 1024 * 768 and gpt2.max_position_embeddings == 1024
    assert gpt2.matmul_params == gpt2.total_params - 1024 * 768  # tied: the embedding is read whole, as the head
    falcon = from_config(CONFIG_MAPPING["falcon"]().to_dict())
    assert falcon.attention.kind == "mqa" and falcon.kv_bytes_per_token("bfloat16") == 32 * 2 * 64 * 2


# deepseek-ai/DeepSeek-V4-Flash's config.json, the fields that size it (as nvidia/DeepSeek-V4-Flash-NVFP4 and
# AIConfigurator's copy carry it): compress_ratios per layer (its last, 44th, the MTP layer's), FP4 experts.
DEEPSEEK_V4_FLASH = {
    "model_type": "deepseek_v4", "num_hidden_layers": 43, "compress_ratios": [0, 0] + [4, 128] * 20 + [4, 0],
    "num_hash_layers": 3, "hidden_size": 4096, "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512,
    "q_lora_rank": 1024, "o_groups": 8, "o_lora_rank": 1024, "index_head_dim": 128, "index_n_heads": 64,
    "index_topk": 512, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 6,
    "moe_intermediate_size": 2048, "hc_mult": 4, "sliding_window": 128, "vocab_size": 129280,
    "tie_word_embeddings": False, "max_position_embeddings": 1048576, "num_nextn_predict_layers": 1,
    "qk_rope_head_dim": 64, "expert_dtype": "fp4", "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}  # fmt: skip


@pytest.mark.parametrize("saved", [False, True], ids=["published", "saved-by-transformers"])
def test_deepseek_v4_compressed_attention_is_counted_and_cached_as_it_is_built(saved):
    """DeepSeek-V4 was refused (its compressed attention types). Its parameters are what transformers builds (its
    three hash-routed layers without the others' router correction bias), 13.8B active (its card: 284B, 13B); a
    token caches one 512-wide vector in each layer's 128-token window, and beyond it an entry per 4 tokens (with a
    128-wide indexer key) in the 21 sparse layers and per 128 in the 20 heavily compressed ones."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    built_config = AutoConfig.for_model(**copy.deepcopy(DEEPSEEK_V4_FLASH))
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(built_config)
    built = built_params(model)
    a = from_config(built_config.to_dict() if saved else DEEPSEEK_V4_FLASH)
    assert a.total_params == built and a.kind == "moe" and a.attention.kind == "compressed"
    assert [layer.hash_routed for layer in a.layers] == [True] * 3 + [False] * 40
    assert round(a.total_params / 1e8) == 2843 and round(a.active_params / 1e9) == 14
    sparse, heavy = [i for i, t in enumerate(built_config.layer_types) if t == "compressed_sparse_attention"], [
        i for i, t in enumerate(built_config.layer_types) if t == "heavily_compressed_attention"]  # fmt: skip
    assert (len(sparse), len(heavy)) == (21, 20)
    assert [layer.compress for layer in a.layers] == [4 if i in sparse else 128 if i in heavy else 0
                                                      for i in range(43)]  # fmt: skip
    per_token = 21 * (512 + 128) / 4 + 20 * 512 / 128  # fp8: a byte a value
    assert a.kv_bytes_per_token("fp8") == per_token
    assert a.kv_bytes_per_sequence(100_000, "fp8") == 43 * 128 * 512 + 100_000 * per_token
    assert a.default_dtype == "mxfp4"  # FP4 experts beside FP8 attention: the experts are nearly all of it


def test_deepseek_v4_steps_read_its_window_and_whole_compressed_branches():
    """The engine model's view: each layer's window is the windowed part (one vector a token), the compressed
    branches the whole-context part, of which a sparse layer's attention reads only the 512 entries its indexer
    picks (2,048 tokens' worth) while the indexer scores them all."""
    from infercost.performance.roofline import model_shape

    a = from_config(DEEPSEEK_V4_FLASH)
    shape = model_shape(a)
    assert (shape.window, shape.window_kv_values_per_token) == (128, 43 * 512)
    assert shape.kv_values_per_token == 21 * 640 / 4 + 20 * 4 and shape.kv_head_shards == 1
    assert shape.window_attention_flops_per_pair == 43 * 4 * 64 * 512
    assert shape.attention_flops == 21 * (4 * 64 * 512 + 2 * 64 * 128) / 4 + 20 * 4 * 64 * 512 / 128
    assert shape.sparse_reach == 512 * 4 and shape.picked_kv_values_per_token == 21 * 512 / 4
    picked = 21 * 4 * 64 * 512 / 4  # attention over the picked entries, prompt and decode alike
    assert shape.picked_attention_flops_per_pair == shape.picked_decode_attention_flops_per_pair == picked
    assert a.flops_per_token(9000) - a.flops_per_token(8000) == pytest.approx(
        (shape.attention_flops - shape.picked_attention_flops_per_pair) * 1000)  # past the picks: indexers, heavy


def test_deepseek_sparse_attention_reads_the_latent_of_the_picked_tokens_and_every_indexer_key() -> None:
    """DeepSeek-V3.2 and GLM-5 (DSA): MLA whose indexer picks the 2,048 cached tokens a query attends to; every
    layer caches the latent and rope key (576 values, read for the picks) and an indexer key (128, scored for all)."""
    from infercost.performance.roofline import model_shape

    v32 = model_shape(arch("deepseek-v3.2"))
    assert v32.sparse_reach == 2048 and v32.full_kv_values == 61 * (576 + 128)
    assert v32.picked_kv_values_per_token == 61 * 576
    assert v32.picked_decode_attention_flops_per_pair == 61 * 2 * 128 * (2 * 512 + 64)
    assert v32.decode_attention_flops == v32.picked_decode_attention_flops_per_pair + 61 * 2 * 64 * 128
    assert model_shape(arch("deepseek-v3")).sparse_reach == 0
    assert arch("deepseek-v3.2").sparse_attention_note(2048) is None
    assert "attend to 2,048 of a request's 9,000 tokens" in arch("deepseek-v3.2").sparse_attention_note(9000)
    assert arch("deepseek-v3").sparse_attention_note(9000) is None


def test_llama_nemotron_blocks_are_built_from_transformers_llama_layers():
    """Llama-3.3-Nemotron-Super-49B was read as a 23.6B model without MLPs (its config has no intermediate_size, only
    block_configs) and with 64 KV heads in all 80 layers. DeciLM is remote code, so each block is built here from
    transformers' own Llama attention and MLP at that block's KV heads and width (vLLM's and TensorRT-LLM's
    ``_ffn_mult_to_intermediate_size``), without the attention its search dropped: the count must be exact."""
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaMLP

    config = bundled_config("llama-3.3-nemotron-super-49b")
    h, heads = config["hidden_size"], config["num_attention_heads"]
    built = 2 * config["vocab_size"] * h + h  # untied embedding and head, final norm
    for block in config["block_configs"]:
        attention, ffn = block["attention"], block["ffn"]
        width = -(-int(2 * ffn["ffn_mult"] * h / 3) // 256) * 256
        layer = LlamaConfig(hidden_size=h, num_attention_heads=heads, intermediate_size=width,
                            num_key_value_heads=heads // (attention["n_heads_in_group"] or 1))  # fmt: skip
        with torch.device("meta"):
            parts = [LlamaMLP(layer)] + ([] if attention["no_op"] else [LlamaAttention(layer, 0)])
        built += sum(p.numel() for part in parts for p in part.parameters()) + len(parts) * h  # and their norms
    a = arch("llama-3.3-nemotron-super-49b")
    assert a.total_params == built == 49_867_145_216
    assert len(a.attention_layers) == 49 and a.kv_bytes_per_token("bfloat16") == 49 * 2 * 8 * 128 * 2
    assert a.attention_kind == "gqa" == a.summary()["attention"]  # its config names no KV heads: its blocks do


def test_nemotron_3_latent_experts_work_in_their_latent_width_as_transformers_builds_them():
    """Nemotron 3 Super and Ultra route tokens to experts in a latent width (moe_latent_size, 1,024 and 2,048),
    projected from and back to the hidden size: read at the hidden size, Super came out 458.6B for its 120.7B and
    Ultra 2,094B for its 549.3B."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    for name in ("nemotron-3-super-120b-a12b", "nemotron-3-ultra-550b-a55b"):
        config = copy.deepcopy(bundled_config(name))
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config))
        built = built_params(model)
        assert arch(name).total_params == built and arch(name).experts.latent == config["moe_latent_size"]


# XiaomiMiMo/MiMo-V2-Flash's config.json, the fields that size it: full attention in 9 of 48 layers
# (hybrid_layer_pattern 0), a 128-token window in the others with twice the KV heads, values narrower than keys.
MIMO_V2_FLASH = {
    "model_type": "mimo_v2_flash", "num_hidden_layers": 48, "hidden_size": 4096, "num_attention_heads": 64,
    "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128, "intermediate_size": 16384, "vocab_size": 152576,
    "max_position_embeddings": 262144, "sliding_window": 128, "sliding_window_size": 128,
    "attention_chunk_size": 128, "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_head_dim": 192,
    "swa_v_head_dim": 128, "hybrid_layer_pattern": [0, 1, 1, 1, 1, 0] + ([1] * 5 + [0]) * 7,
    "moe_layer_freq": [0] + [1] * 47, "moe_intermediate_size": 2048, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "add_swa_attention_sink_bias": True, "add_full_attention_sink_bias": False,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_mimo_v2_flash_windowed_layers_have_attention_of_their_own_as_transformers_builds_them():
    """MiMo-V2-Flash's values are 128 wide beside 192-wide keys, its sliding layers have twice the KV heads and
    sinks, and hybrid_layer_pattern (not its attention_chunk_size) says which layers slide: read as 192-wide values
    everywhere and a Llama-4-like chunk rule, its parameters were 0.2% over and its cache 36,864 bytes a token for
    23,040 (9 full layers x 4 KV heads x (192 + 128) values x 2 bytes)."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    config = copy.deepcopy(MIMO_V2_FLASH)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config))
    a = from_config(config)
    assert a.total_params == sum(p.numel() for p in model.parameters())
    full = [i for i, kind in enumerate(config["hybrid_layer_pattern"]) if kind == 0]
    assert [i for i, layer in enumerate(a.layers) if layer.window is None] == full == [0, 5, 11, 17, 23, 29, 35, 41, 47]
    assert a.kv_bytes_per_token("bfloat16") == 9 * 4 * (192 + 128) * 2 == 23_040


@pytest.mark.parametrize("listed", [True, False], ids=["indexer_types", "index_topk_freq"])
def test_glm_5_2_layers_sharing_an_indexer_have_none_of_their_own_as_transformers_builds_them(listed):
    """GLM-5.2 runs its sparse-attention indexer in one layer of four (index_topk_freq, from index_skip_topk_offset;
    transformers saves the list as indexer_types and names the layers deepseek_sparse_attention): NVIDIA's NVFP4
    copy was refused for that layer type, and zai-org's read with an indexer (and its cached key) in every layer,
    0.07% over."""
    torch = pytest.importorskip("torch")
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

    config = CONFIG_MAPPING["glm_moe_dsa"](num_hidden_layers=9, index_topk_freq=4, index_skip_topk_offset=3,
                                           layer_types=["deepseek_sparse_attention"] * 9).to_dict()  # fmt: skip
    if not listed:
        config = {**{k: v for k, v in config.items() if k != "indexer_types"}, "index_topk_freq": 4,
                  "index_skip_topk_offset": 3}  # fmt: skip
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    built = built_params(model)
    a = from_config(config)
    assert a.total_params == built
    indexed = [i for i, layer in enumerate(a.layers) if a.layer_attention(layer).index_head_dim]
    assert indexed == [i for i, layer in enumerate(model.model.layers) if layer.self_attn.indexer is not None]
    assert a.indexer_layers() == len(indexed)  # those alone add an indexer's kernels to a step
    from infercost.performance.roofline import model_shape  # a layer sharing a pick attends to the picked tokens

    latent = config["kv_lora_rank"] + config["qk_rope_head_dim"]
    assert model_shape(a).sparse_reach == config["index_topk"]
    assert model_shape(a).picked_kv_values_per_token == 9 * latent


def test_minimax_m2_lists_its_layers_as_softmax_attention_and_is_read():
    """MiniMax-M2.7's config (and NVIDIA's NVFP4 copies of M2.5 and M2.7) lists every layer's attention type, all 1
    (softmax): refused as MiniMax-01's lightning attention, which a 0 would name. A 0 is still refused."""
    m2 = bundled_config("minimax-m2.5")
    listed = from_config({**m2, "attn_type_list": [1] * m2["num_hidden_layers"]})
    assert listed.total_params == arch("minimax-m2.5").total_params
    with pytest.raises(InputError) as raised:
        from_config({**m2, "attn_type_list": [0, 1] * (m2["num_hidden_layers"] // 2)})
    assert raised.value.field == "config.attn_type_list"


# Kimi-Linear-48B-A3B-Instruct's config.json (moonshotai, Hugging Face), the fields that size it
KIMI_LINEAR = {
    "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 2304,
    "intermediate_size": 9216, "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 27,
    "vocab_size": 163840, "hidden_act": "silu", "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "mla_use_nope": True,
    "linear_attn_config": {"head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4,
                           "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
                           "full_attn_layers": [4, 8, 12, 16, 20, 24, 27]},
    "num_experts": 256, "num_experts_per_token": 8, "num_shared_experts": 1, "moe_intermediate_size": 1024,
    "moe_router_activation_func": "sigmoid", "use_grouped_topk": True, "num_expert_group": 1, "topk_group": 1,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "tie_word_embeddings": False,
}  # fmt: skip


@pytest.mark.parametrize("saved", [False, True], ids=["published", "saved by transformers"])
def test_kimi_linear_sizes_its_delta_attention_layers_as_transformers_builds_them(saved: bool) -> None:
    """Kimi-Linear was refused for its Kimi Delta Attention layers (``linear_attn_config``): the delta rule of Gated
    DeltaNet with a per-channel decay, its decay and output gate each through a rank-128 pair, between MLA layers
    numbered from 1. Published and as transformers saves it (linear_* fields and layer_types), the count is what
    transformers builds (its router's correction bias is a buffer there, a weight in the checkpoint), the layers
    are the published ones, and each KDA layer's state is the convolution's last 3 inputs (16-bit) and a 128 x 128
    fp32 matrix per head (vLLM's ``kda_state_dtype``)."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    config = KIMI_LINEAR
    if saved:  # without the dict (transformers' own KimiLinearConfig() has none): its linear_* fields and layer_types
        config = {k: v for k, v in AutoConfig.for_model(**copy.deepcopy(KIMI_LINEAR)).to_dict().items()
                  if k != "linear_attn_config"}  # fmt: skip
        assert config["linear_num_heads"] == 32 and len(config["layer_types"]) == 27
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(KIMI_LINEAR)))
    built = built_params(model)
    a = from_config(config)
    assert a.total_params == built
    full = [i for i, layer in enumerate(a.layers) if layer.mixer == "attention"]
    assert full == [3, 7, 11, 15, 19, 23, 26] == [i for i, layer in enumerate(model.model.layers)
                                                  if layer.block_type == "full_attention"]  # fmt: skip
    assert a.state_bytes_per_sequence() == 20 * (3 * 4096 * 3 * 2 + 32 * 128 * 128 * 4)  # bf16 conv, fp32 state
    assert a.kv_bytes_per_token("bfloat16") == 7 * (512 + 64) * 2


def test_transformers_default_kimi_linear_config_is_counted_as_it_builds_it() -> None:
    """transformers' own KimiLinearConfig() places its MLA layers by its default rule (every fourth from the fifth)
    and keeps no linear_attn_config: counted as it builds it, layer by layer."""
    torch = pytest.importorskip("torch")
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

    config = CONFIG_MAPPING["kimi_linear"]().to_dict()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    a = from_config(config)
    assert a.total_params == built_params(model)
    assert [layer.mixer == "attention" for layer in a.layers] == [
        layer.block_type == "full_attention" for layer in model.model.layers]  # fmt: skip


def test_kimi_k3_and_a_delta_attention_list_that_misses_layers_are_refused_with_the_field() -> None:
    """Kimi-K3's block attention residuals, full-rank gates and latent experts are not sized (remote code, no class
    to check against): refused by its field. A KDA list that does not number every layer once is refused too, and
    so are other models' linear-attention layers whose fields look like Kimi's (Ling's bailing_hybrid, read as KDA
    when Kimi-Linear's reader took any linear_head_dim, was 0.54% under what transformers builds)."""
    from transformers import CONFIG_MAPPING

    with pytest.raises(InputError) as raised:
        from_config({**KIMI_LINEAR, "attn_res_block_size": 12})
    assert raised.value.field == "config.attn_res_block_size"
    bad = {**KIMI_LINEAR, "linear_attn_config": {**KIMI_LINEAR["linear_attn_config"], "num_heads": "32"}}
    with pytest.raises(InputError) as raised:  # named where it is, not as a top-level num_heads
        from_config(bad)
    assert raised.value.field == "config.linear_attn_config.num_heads"
    with pytest.raises(InputError) as raised:
        from_config(CONFIG_MAPPING["bailing_hybrid"]().to_dict())
    assert raised.value.field == "config.linear_num_value_heads"
    with pytest.raises(InputError) as raised:
        from_config({**KIMI_LINEAR, "model_type": "glm5_next"})
    assert raised.value.field == "config.linear_attn_config"
    with pytest.raises(InputError) as raised:
        from_config({**bundled_config("kimi-k2"), "linear_attn_config": {"kda_layers": [1, 2, 3]}})
    assert raised.value.field == "config.linear_attn_config"


def test_a_nemotron_h_config_saved_by_transformers_reads_as_the_published_one():
    """transformers 5 saves Nemotron-H's layer pattern as a layers_block_type list, without num_hidden_layers or
    hybrid_override_pattern: a model directory it wrote was refused for a missing layer count."""
    from transformers import AutoConfig

    for name in ("nemotron-h-56b", "nemotron-3-nano-30b-a3b"):
        saved = AutoConfig.for_model(**copy.deepcopy(bundled_config(name))).to_dict()
        assert "hybrid_override_pattern" not in saved and "num_hidden_layers" not in saved
        assert (from_config(saved).layers, from_config(saved).total_params) == (arch(name).layers,
                                                                               arch(name).total_params)


@pytest.mark.parametrize(("config", "field"), [
    ({"model_type": "jamba", "attn_layer_period": 8, "attn_layer_offset": 4}, "config.attn_layer_period"),
    ({"model_type": "bamba", "attn_layer_indices": [9, 18, 27]}, "config.attn_layer_indices"),
    ({"model_type": "falcon_h1", "mamba_d_ssm": 3072}, "config.mamba_d_ssm"),
    ({"model_type": "minimax", "attn_type_list": [0, 0, 0, 1]}, "config.attn_type_list"),
    ({"model_type": "zamba2", "layers_block_type": ["mamba", "hybrid"]}, "config.layers_block_type"),
    ({"model_type": "mamba2", "num_heads": 128}, "config.model_type"),
])  # fmt: skip
def test_a_layout_the_reader_does_not_size_is_refused_not_read_as_attention(config, field):
    """Each of these came out as a plain attention stack (every layer with a KV cache) and was priced so."""
    full = {**bundled_config("llama-3.1-8b"), **config, "num_hidden_layers": 4}
    with pytest.raises(InputError) as raised:
        from_config(full)
    assert raised.value.field == field
    assert "not simulated" in str(raised.value) or "without attention layers" in str(raised.value)


def test_per_layer_mlp_types_say_which_layers_are_moe_as_transformers_builds_them():
    """transformers 5 lists a layer's MLP as dense or sparse (mlp_layer_types) in the configs it writes and in new
    models' own: read as every layer MoE, transformers' default glm4_moe_lite config came out 1.8% over what it
    builds, mimo_v2_flash's 2.2%, laguna's 2.3%. DeepSeek-V3.2 saved by transformers 5 ("indexed_attention" layers,
    MLP types listed) reads as its published config does."""
    torch = pytest.importorskip("torch")
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

    config = CONFIG_MAPPING["glm4_moe_lite"]().to_dict()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    built = sum(p.numel() for p in model.parameters())
    assert from_config(config).total_params == pytest.approx(built, rel=1e-6)
    saved = AutoConfig.for_model(**copy.deepcopy(bundled_config("deepseek-v3.2"))).to_dict()
    assert "indexed_attention" in saved["layer_types"] and "mlp_layer_types" in saved
    assert from_config(saved).total_params == arch("deepseek-v3.2").total_params
    assert from_config(saved).moe_layers == arch("deepseek-v3.2").moe_layers


@pytest.mark.parametrize("layout", [{}, {"moe_layer_interval": 2},
                                    {"moe_layer_start_index": 3, "moe_layer_end_index": 20}])  # fmt: skip
def test_ernie_4_5_experts_and_moe_layers_are_read_as_transformers_builds_them(layout):
    """ERNIE-4.5's MoE configs name their experts moe_num_experts / moe_k and place MoE layers by a start, an end and
    an interval: read as a dense model, transformers' default (ERNIE-4.5-21B-A3B's shape) came out 3.3B parameters
    for 21.8B."""
    torch = pytest.importorskip("torch")
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModelForCausalLM

    config = CONFIG_MAPPING["ernie4_5_moe"](**layout).to_dict()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**copy.deepcopy(config)))
    a = from_config(config)
    assert a.kind == "moe" and a.total_params == sum(p.numel() for p in model.parameters())
    assert a.moe_layers == tuple(i for i, layer in enumerate(model.model.layers) if hasattr(layer.mlp, "experts"))


def test_a_list_where_a_count_belongs_names_the_field_the_config_used():
    with pytest.raises(InputError) as raised:
        from_config({**bundled_config("qwen3-30b-a3b"), "num_experts": [64, 64]})  # ERNIE-4.5-VL's text + vision
    assert raised.value.field == "config.num_experts"


@pytest.mark.parametrize(("change", "field"), [
    ({"layer_types": ["conv", "full_attention"] * 2}, "config.layer_types"),
    ({"mlp_layer_types": ["latent_moe"] * 2 + ["moe"] * 2}, "config.mlp_layer_types"),
])  # fmt: skip
def test_layer_types_the_reader_does_not_size_are_refused(change, field):
    """LFM's convolution layers were read as attention (as DeepSeek-V4's compressed layers were, before they were
    sized); an MLP kind the reader does not know is refused, not read as dense or routed."""
    config = {**bundled_config("qwen3-30b-a3b"), "num_hidden_layers": 4, **change}
    with pytest.raises(InputError) as raised:
        from_config(config)
    assert raised.value.field == field and "not simulated" in str(raised.value)


# --- rules read from the config ---------------------------------------------------------------------------------


def test_moe_layers_follow_each_models_rule():
    assert arch("llama-4-maverick").moe_layers == tuple(range(1, 48, 2))  # interleave_moe_layer_step 2
    assert arch("kimi-k2").moe_layers == tuple(range(1, 61))  # first_k_dense_replace 1
    qwen = copy.deepcopy(bundled_config("qwen3-30b-a3b"))
    qwen.update(decoder_sparse_step=2, mlp_only_layers=[3])
    assert from_config(qwen).moe_layers == tuple(i for i in range(1, 48, 2) if i != 3)
    glm_style = {**bundled_config("qwen3-30b-a3b"), "moe_layer_freq": [0, 1] * 24}
    assert from_config(glm_style).moe_layers == tuple(range(1, 48, 2))


def test_llama_4_chunks_three_layers_in_four():
    layers = arch("llama-4-scout").layers
    assert [layer.window_kind for layer in layers[:4]] == ["chunked", "chunked", "chunked", "full"]
    assert {layer.window for layer in layers if layer.window_kind == "chunked"} == {8192}


def test_gemma_3_is_five_local_layers_to_one_global():
    # google/gemma-3-12b-it's text_config names only what differs from Gemma3TextConfig's defaults
    config = {"model_type": "gemma3", "torch_dtype": "bfloat16",
              "text_config": {"hidden_size": 3840, "intermediate_size": 15360, "model_type": "gemma3_text",
                              "num_attention_heads": 16, "num_hidden_layers": 48, "num_key_value_heads": 8,
                              "sliding_window": 1024}}  # fmt: skip
    a = from_config(config)
    assert [layer.window for layer in a.layers[:6]] == [1024] * 5 + [None]
    assert a.tie_word_embeddings and a.vocab_size == 262208 and a.attention.head_dim == 256
    assert a.kv_bytes_per_token("bfloat16") == 8 * 2 * 8 * 256 * 2  # 8 global layers


def test_a_window_as_long_as_the_context_is_no_window():
    assert all(layer.window is None for layer in arch("phi-4").layers)  # sliding_window 16384 = its context


def test_hybrid_mamba_state_is_per_sequence():
    a = arch("nemotron-h-56b")
    assert a.kind == "hybrid" and len(a.attention_layers) == 10
    state = a.kv_bytes_per_sequence(1) - a.kv_bytes_per_token("bfloat16")
    assert state == a.kv_bytes_per_sequence(5000) - 5000 * a.kv_bytes_per_token("bfloat16") > 0


def test_regular_ids_avoid_special_tokens_at_either_end():
    assert regular_token_ids(bundled_config("llama-3.1-8b")) == (0, 128000)
    assert regular_token_ids(bundled_config("mistral-7b-v0.1")) == (3, 32000)


@pytest.mark.parametrize("dtype, per_value", [("bfloat16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5 + 2.5 / 128),
                                              ("mxfp4", 0.5 + 1 / 32), ("nvfp4", 0.5 + 1 / 16)])
def test_quantized_weights_keep_embeddings_and_head_in_16_bits(dtype, per_value):
    a = arch("qwen3-8b")
    parts = a.params_by_part()
    matmuls = parts["attention"] + parts["mlp"]
    expected = matmuls * per_value + (a.total_params - matmuls) * (2 if DTYPES[dtype].quantized else per_value)
    assert a.weight_bytes(dtype) == pytest.approx(expected)


# --- bad configs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("change, field", [
    ({"num_hidden_layers": None}, "config.num_hidden_layers"),
    ({"hidden_size": "big"}, "config.hidden_size"),
    ({"num_key_value_heads": 3}, "config.num_key_value_heads"),
    ({"layer_types": ["full_attention"]}, "config.layer_types"),
    ({"num_experts": 4, "num_experts_per_tok": 8, "moe_intermediate_size": 64}, "config.num_experts_per_tok"),
])  # fmt: skip
def test_a_config_missing_what_its_kind_needs_names_the_field(change, field):
    config = {**bundled_config("qwen3-8b"), **change}
    with pytest.raises(InputError) as raised:
        from_config(config)
    assert raised.value.field == field


def test_mla_needs_its_head_sizes():
    config = {k: v for k, v in bundled_config("deepseek-v3").items() if k != "qk_rope_head_dim"}
    with pytest.raises(InputError, match="config.qk_rope_head_dim"):
        from_config(config)
