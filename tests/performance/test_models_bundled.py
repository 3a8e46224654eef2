"""The configs bundled for issue 21's list, issue 22's held-out tables and the API catalog's open-weight models (a
release of the same architecture as a bundled one resolves to it): found by the names people type, their
caches by hand, and the rules they needed (Gated DeltaNet layers, GLM's q/k/v-only bias, compressed-tensors INT4)."""

from __future__ import annotations

import pytest

from infercost.performance.architecture import from_config
from infercost.performance.models import bundled_architecture as arch
from infercost.performance.models import find_bundled


@pytest.mark.parametrize("typed, name", [
    ("gemma-3-27b", "gemma-3-27b"), ("google/gemma-3-27b-it", "gemma-3-27b"), ("Gemma 3 27B", "gemma-3-27b"),
    ("gemma3-27b", "gemma-3-27b"), ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
    ("mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3"), ("Mistral-7B-v0.1", "mistral-7b-v0.1"),
    ("meta-llama/Llama-3.2-3B", "llama-3.2-3b"), ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"),
    ("zhipuai/GLM-5", "glm-5"), ("zai-org/GLM-5-FP8", "glm-5"), ("GLM-5", "glm-5"),
    ("moonshotai/Kimi-K2.5", "kimi-k2.5"), ("nvidia/Kimi-K2.5-NVFP4", "kimi-k2.5"),
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2"), ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5"),
    ("MiniMax-M2.1", "minimax-m2.5"), ("Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b"),
    ("Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"), ("zai-org/GLM-5.1-FP8", "glm-5"),
    ("moonshotai/Kimi-K2.6", "kimi-k2.5"), ("moonshotai/Kimi-K2.7-Code", "kimi-k2.5"),
    ("MiniMaxAI/MiniMax-M2.7", "minimax-m2.5"), ("Qwen/Qwen3.5-122B-A10B", "qwen3.5-122b-a10b"),
    ("Qwen/Qwen3.6-35B-A3B", "qwen3.5-35b-a3b"), ("Qwen/Qwen3.6-27B-FP8", "qwen3.5-27b"),
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning", "nemotron-3-nano-30b-a3b"),
])  # fmt: skip
def test_new_models_resolve_as_people_type_them(typed, name):
    assert find_bundled(typed).name == name


@pytest.mark.parametrize("typed", ["gemma-3-12b-it", "GLM-4.5-Air", "GLM-5.2", "Qwen3.5-9B", "Kimi-K3", "MiniMax-M3"])
def test_a_model_not_bundled_is_not_taken_for_a_neighbour(typed):
    assert find_bundled(typed) is None


def test_gemma_3_27b_caches_ten_global_layers_and_52_windows_of_1024_by_hand():
    a = arch("gemma-3-27b")  # 62 layers, every 6th global; 16 KV heads of 128
    per_layer = 2 * 16 * 128 * 2  # keys and values, bf16
    assert [layer.window for layer in a.layers[:6]] == [1024] * 5 + [None]
    assert a.kv_bytes_per_token() == 10 * per_layer == 81_920
    assert a.kv_bytes_per_sequence(32768) == (10 * 32768 + 52 * 1024) * per_layer == 3_120_562_176
    assert a.kv_bytes_per_sequence(512) == 62 * 512 * per_layer  # under the window every layer holds all


def test_glm_5_caches_its_latent_rope_key_and_indexer_key_by_hand():
    a = arch("glm-5")  # 78 MLA layers: kv_lora_rank 512 + qk_rope_head_dim 64 + index_head_dim 128
    assert a.moe_layers == tuple(range(3, 78)) and a.mtp_layers == 1
    assert a.kv_bytes_per_token("fp8") == 78 * (512 + 64 + 128)
    assert a.kv_bytes_per_sequence(4096, "bf16") == 4096 * 78 * 704 * 2


def test_qwen3_5_holds_45_delta_rule_states_and_15_attention_caches_by_hand():
    """Before Gated DeltaNet layers were read, all 60 layers were costed as full attention (4x the cache per token,
    and no per-sequence state)."""
    a = arch("qwen3.5-397b-a17b")
    assert a.kind == "hybrid-moe" and len(a.attention_layers) == 15
    conv_dim = 2 * 16 * 128 + 64 * 128  # q and k of 16 heads, v of 64 heads, 128 wide
    # the conv's last 3 inputs (16-bit), a 128x128 matrix per value head (mamba_ssm_dtype float32)
    state = conv_dim * (4 - 1) * 2 + 64 * 128 * 128 * 4
    assert a.kv_bytes_per_token() == 15 * 2 * 2 * 256 * 2 == 30_720
    assert a.kv_bytes_per_sequence(1000) == 1000 * 30_720 + 45 * state


def test_kimi_k2_5_ships_int4_experts_with_16_bit_attention_and_shared_experts():
    a = arch("kimi-k2.5")
    assert a.default_dtype == "int4" and a.quantization.group == 32
    assert {"attention", "shared_experts", "mlp", "lm_head"} <= set(a.quantization.keep_unquantized)
    parts = a.params_by_part()
    int4 = 0.5 + 2.5 / 32  # AWQ/GPTQ-style scale and zero point per group of 32
    kept = parts["attention"] + parts["mlp"] + parts["shared_experts"]
    expected = parts["experts"] * int4 + (sum(parts.values()) - parts["experts"]) * 2
    assert a.weight_bytes() == pytest.approx(expected) and kept > 9e9


def test_glm_4_5_style_bias_is_on_q_k_v_only_and_its_qk_norm_counts():
    """GLM-4.5's attention_bias puts biases on q, k and v, not on o_proj, and use_qk_norm adds a norm per head: a
    small config of that model type, counted as transformers builds it."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = {"model_type": "glm4_moe", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "moe_intermediate_size": 32,
              "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
              "attention_bias": True, "use_qk_norm": True, "vocab_size": 100, "tie_word_embeddings": False}  # fmt: skip
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(**config))
    built = sum(p.numel() for p in model.parameters())
    built += sum(b.numel() for key, b in model.named_buffers() if "e_score_correction_bias" in key)
    a = from_config(config)
    assert a.moe_layers == (1, 2) and not a.attention.o_bias and a.attention.qk_norm
    assert built == a.total_params


def test_a_config_that_leaves_its_vocabulary_to_the_class_still_gives_regular_ids():
    """google/gemma-3-27b-it's text_config names no vocab_size (Gemma3TextConfig's 262208): building the dense
    architectures' kwargs raised KeyError."""
    from infercost.performance.architecture import regular_token_ids
    from infercost.performance.architectures import ARCHITECTURES
    from infercost.performance.models import bundled_config

    assert regular_token_ids(bundled_config("gemma-3-27b")) == (107, 262208)  # pad 0, eos 1 and 106, bos 2 below
    assert "gemma-3-27b" in ARCHITECTURES and "mistral-7b-v0.3" in ARCHITECTURES
