"""Roofline bounds against numbers worked out by hand."""

import pytest

from infercost.performance.roofline import (
    ModelShape,
    count_params,
    decode_step_seconds,
    decode_tokens_per_s,
    kv_bytes_per_token,
    model_shape_from_config,
    prefill_bound_seconds,
    prefill_seconds,
    roofline_pct,
    weight_bytes,
)

# 1000 parameters, of which the untied 10 x 10 input embedding (100) is not read by a decode step.
TOY = ModelShape(n_params=1000, n_layers=2, n_heads=4, n_kv_heads=2, head_dim=4, hidden_size=10, vocab_size=10)


def test_weight_bytes_by_dtype():
    assert weight_bytes(1000, "bfloat16") == 2000
    assert weight_bytes(1000, "float32") == 4000
    assert weight_bytes(1000, "int4") == 500


def test_matmul_params_leave_out_an_untied_input_embedding_only():
    assert TOY.matmul_params == 900
    tied = ModelShape(**{**TOY.__dict__, "tie_word_embeddings": True})
    assert tied.matmul_params == 1000


def test_kv_bytes_per_token_is_keys_and_values_of_every_layer():
    assert kv_bytes_per_token(TOY, "float16") == 2 * 2 * 2 * 4 * 2  # K and V, 2 layers, 2 kv heads, dim 4, 2 bytes


def test_decode_step_reads_weights_once_and_every_kv_cache():
    # 900 x 2 bytes of weights + 4 requests x 10 tokens x 64 bytes = 4360 bytes at 1 GB/s
    assert decode_step_seconds(TOY, batch=4, context=10, dtype="float16", bandwidth_gbps=1) == pytest.approx(4.36e-6)
    assert decode_tokens_per_s(TOY, batch=4, context=10, dtype="float16", bandwidth_gbps=1) == pytest.approx(
        4 / 4.36e-6)


def test_prefill_is_two_flops_per_weight_per_token():
    assert prefill_seconds(TOY, tokens=100, peak_tflops=1) == pytest.approx(2 * 900 * 100 / 1e12)


def test_prefill_bound_is_compute_or_at_least_one_read_of_the_weights():
    # compute: 2 x 900 x 4 x 10 = 72,000 FLOPs; memory: 1800 + 4 x 10 x 64 = 4360 bytes
    fast_compute = prefill_bound_seconds(TOY, batch=4, input_len=10, dtype="float16", bandwidth_gbps=1,
                                         peak_tflops=1)
    assert fast_compute == pytest.approx(4.36e-6)
    slow_compute = prefill_bound_seconds(TOY, batch=4, input_len=10, dtype="float16", bandwidth_gbps=1,
                                         peak_tflops=1e-6)
    assert slow_compute == pytest.approx(72_000 / 1e6)


def test_llama_3_1_8b_on_an_h200_at_batch_1():
    shape = ModelShape(n_params=8_030_261_248, n_layers=32, n_heads=32, n_kv_heads=8, head_dim=128,
                       hidden_size=4096, vocab_size=128_256)
    # (8,030,261,248 - 525,336,576) x 2 bytes + 1000 tokens x 131,072 bytes, at 4.8 TB/s
    step = decode_step_seconds(shape, batch=1, context=1000, dtype="bf16", bandwidth_gbps=4800)
    assert step == pytest.approx(15_140_921_344 / 4.8e12)
    assert 1 / step == pytest.approx(317.02, abs=0.01)


def test_roofline_pct():
    assert roofline_pct(25.0, 100.0) == 25.0
    with pytest.raises(ValueError):
        roofline_pct(1.0, 0.0)


def test_count_params_by_hand_for_a_tiny_llama():
    config = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=4096)
    attention = 64 * 64 + 2 * 64 * 32 + 64 * 64  # q, k, v, o
    per_layer = attention + 3 * 64 * 128 + 2 * 64  # + gated MLP + two norms
    assert count_params(config) == 2 * per_layer + 64 + 2 * 4096 * 64  # + final norm + embedding and head


def test_qwen2_counts_its_qkv_biases():
    config = dict(model_type="qwen2", hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=100, tie_word_embeddings=True)
    llama = dict(config, model_type="llama")
    assert count_params(config) - count_params(llama) == 64 + 2 * 32


def test_model_shape_from_a_real_config_json():
    config = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False, "model_type": "llama"}
    shape = model_shape_from_config(config)
    assert shape.n_params == 8_030_261_248  # Llama-3.1-8B's published count
    assert (shape.head_dim, shape.n_kv_heads) == (128, 8)
