"""The engine model on mixture-of-experts setups and on vLLM's and SGLang's schedulers (issue 22)."""

from dataclasses import replace

import numpy as np
import pytest

from infercost.performance.calibrate import Calibration, Observation, Prediction, Setup, fit, predict_concurrency
from infercost.performance.engine import ENGINE_PRESETS, FEATURES, WEIGHTS, kv_capacity_tokens
from infercost.performance.profiles import Table, engine_hardware, find_profile, layout_tag, setup_for


def _held_out_groups() -> dict[tuple[str, ...], list[Table]]:
    """The bundled held-out closed-loop tables, grouped by setup (``validation.group_tables``)."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import group_tables

    return group_tables(validation_tables([p for p in held_out_profiles() if p.closed_loop]))


def _measured_and_predicted(table: Table, calibration: Calibration, users: int) -> tuple[Observation, Prediction]:
    """A table's point at ``users`` and what the calibration predicts for it."""
    measured = next(o for o in table.observations if o.concurrency == users)
    return measured, predict_concurrency(table.setup, calibration, users, measured.input_len, measured.output_len)


@pytest.fixture(scope="module")
def gpt_oss() -> Setup:
    return setup_for("openai/gpt-oss-120b", engine_hardware("H200", 1, "mxfp4"), "mxfp4", ENGINE_PRESETS["vllm"])


def test_a_decode_step_reads_the_distinct_experts_its_tokens_route_to(gpt_oss: Setup) -> None:
    """Top-k routing over n experts: one token reads k of them, T tokens n (1 - (1 - k/n)^T) on average per layer,
    a large batch nearly all; the dense weights are read whole whatever the batch."""
    cost, shape = gpt_oss.cost, gpt_oss.shape
    k, n = shape.experts_per_token, shape.num_experts
    dense_ms = cost.weights_bytes / cost.bandwidth_bytes_per_ms
    all_experts_ms = cost.expert_bytes / cost.bandwidth_bytes_per_ms

    def experts_ms(tokens: int) -> float:
        return cost.decode(tokens, tokens * 1000)[WEIGHTS] - dense_ms

    assert experts_ms(1) == pytest.approx(all_experts_ms * k / n)
    assert experts_ms(16) == pytest.approx(all_experts_ms * (1 - (1 - k / n) ** 16))
    assert experts_ms(16) < 16 * experts_ms(1)  # tokens share experts
    assert experts_ms(1024) == pytest.approx(all_experts_ms, rel=1e-6)


def test_experts_spread_whole_over_gpus_wait_for_the_busiest_gpu() -> None:
    """Under expert parallelism a GPU holds whole experts, and a decode step of few tokens hits some GPUs' experts
    more than others': the step waits for the busiest, by hand with the normal approximation (Qwen3.5-397B, 512
    experts, 10 a token, over 4 GPUs: 128 each). Sharded experts (tensor parallelism) are balanced; so is a step
    that reads every expert."""
    import math
    from dataclasses import replace
    from statistics import NormalDist

    sharded = setup_for("qwen3.5-397b-a17b", engine_hardware("B200", 4, "fp8"), "fp8", ENGINE_PRESETS["sglang"])
    spread = replace(sharded, expert_parallel=4)
    q = 1 - (1 - 10 / 512) ** 4  # the share of a layer's experts four decode tokens hit
    largest = NormalDist().inv_cdf((4 - 0.375) / (4 + 0.25))
    want = 1 + largest * math.sqrt(128 * q * (1 - q)) / (128 * q)
    assert spread.cost.expert_weights_ms(4) == pytest.approx(sharded.cost.expert_weights_ms(4) * want)
    assert want == pytest.approx(1.32, abs=0.01)
    assert spread.cost.expert_weights_ms(1_000_000) == pytest.approx(sharded.cost.expert_weights_ms(1_000_000))
    assert 1 < spread.cost.expert_imbalance(1 - (1 - 10 / 512) ** 64) < want  # more tokens, more even


@pytest.mark.parametrize(("model", "window_tokens_at_2048", "window_tokens_at_65536"), [
    ("openai/gpt-oss-120b", 128, 128),  # a 128-token window over half the layers
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 3 * 2048, 3 * 8192),  # 8,192-token chunks, three layers in four
])  # fmt: skip
def test_a_hybrid_kv_cache_counts_the_full_layers_per_token_and_each_sequences_window_apart(
    model: str, window_tokens_at_2048: int, window_tokens_at_65536: int
) -> None:
    """vLLM's hybrid KV cache manager and TensorRT-LLM's pool per window size keep a windowed layer's last
    ``window`` tokens only; SGLang's hybrid SWA pool holds 0.8 tokens of them per full-layer token. The capacity is
    counted in tokens of the full layers, by hand from their bytes, and a sequence's window is taken apart."""
    hardware = engine_hardware("H100 SXM", 8, "bfloat16")
    setups = {name: setup_for(model, hardware, "bfloat16", ENGINE_PRESETS[name]) for name in ENGINE_PRESETS}
    shape = setups["vllm"].shape
    full, windowed = shape.full_kv_values, shape.window_kv_values_per_token
    as_full_layers = kv_capacity_tokens(shape, hardware, dtype="bfloat16", step_tokens=8192)
    assert kv_capacity_tokens(shape, hardware, dtype="bfloat16", step_tokens=8192, window_cache=0.0) == \
        pytest.approx(as_full_layers * (full + windowed) / full)  # fmt: skip
    assert kv_capacity_tokens(shape, hardware, dtype="bfloat16", step_tokens=8192, window_cache=0.8) == \
        pytest.approx(as_full_layers * (full + windowed) / (full + 0.8 * windowed))  # fmt: skip
    cost = setups["vllm"].cost
    assert cost.window_tokens(2048) == window_tokens_at_2048
    assert cost.window_tokens(65536) == window_tokens_at_65536
    dense = setup_for("meta-llama/Llama-3.1-8B-Instruct", hardware, "bfloat16", ENGINE_PRESETS["vllm"])
    assert dense.cost.window_tokens(2048) == 0


def test_gpt_oss_users_that_fit_a_hybrid_kv_cache_do_not_queue() -> None:
    """256 users of 1,024 + 8,192 tokens on one B200 (AIConfigurator's gpt-oss-120b sample under TensorRT-LLM
    1.2: mean TTFT 190 ms, no queue). Counted as if every layer kept every token they did not fit, and the
    simulation queued them for a whole request (a minute); with the windowed layers' 128 tokens kept apart they
    all run."""
    from dataclasses import replace

    from infercost.performance.calibrate import prior_for

    hybrid = setup_for("openai/gpt-oss-120b", engine_hardware("B200", 1, "mxfp4"), "mxfp4",
                       ENGINE_PRESETS["tensorrt-llm"])  # fmt: skip
    as_full = replace(hybrid, engine=replace(hybrid.engine, window_cache=1.0))
    assert as_full.config.kv_capacity_tokens < 256 * 9216 < hybrid.config.kv_capacity_tokens
    calibration = Calibration(prior_for(hybrid), 0)
    assert predict_concurrency(hybrid, calibration, 256, 1024, 8192).mean_ttft_ms < 2_000
    assert predict_concurrency(as_full, calibration, 256, 1024, 8192).mean_ttft_ms > 20_000


@pytest.mark.parametrize(("engine", "ranks_budgets"), [("vllm", True), ("tensorrt-llm", True), ("sglang", False)])
def test_attention_data_parallel_ranks_schedule_their_own_batches_where_the_engine_gives_each_its_own(
    engine: str, ranks_budgets: bool
) -> None:
    """Simulated as one engine over the GPUs, attention DP x EP gets its ranks' batch caps and step budgets together
    where each rank has the engine's (vLLM's engine cores, TensorRT-LLM's attention DP); SGLang divides its server's
    among the ranks (chunked_prefill_size // dp_size), so there the whole is the one engine's."""
    from dataclasses import replace

    one = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("B200", 8, "fp8"), "fp8", ENGINE_PRESETS[engine])
    one = replace(one, expert_parallel=8)
    ranks = replace(one, attention_data_parallel=8)
    factor = 8 if ranks_budgets else 1
    assert ranks.config.max_batched_tokens == factor * one.config.max_batched_tokens
    assert ranks.config.max_batch == factor * one.config.max_batch
    # the memory is the same, but TP8 keeps MLA's latent on every GPU, each DP8 rank only its own sequences'
    assert ranks.config.kv_capacity_tokens == pytest.approx(8 * one.config.kv_capacity_tokens)


@pytest.mark.parametrize(("model", "gpus", "data_parallel", "copies"), [
    ("deepseek-ai/DeepSeek-R1", 8, 1, 8),  # MLA's latent, one part: every GPU of TP8 keeps it
    ("deepseek-ai/DeepSeek-R1", 8, 8, 1),  # attention DP8: each rank its own
    ("deepseek-ai/DeepSeek-R1", 8, 2, 4),
    ("Qwen/Qwen3-235B-A22B", 8, 1, 2),  # 4 KV heads over 8 GPUs
    ("Qwen/Qwen3-235B-A22B", 4, 1, 1),
    ("meta-llama/Llama-3.1-70B-Instruct", 8, 1, 1),  # 8 KV heads
])
def test_a_tensor_parallel_group_copies_the_cache_it_cannot_split_by_kv_head(model, gpus, data_parallel, copies):
    """By hand: the copies divide the KV cache's capacity and multiply what a step reads of it."""
    from dataclasses import replace

    from infercost.performance.engine import kv_copies
    from infercost.performance.roofline import dtype_bytes

    setup = setup_for(model, engine_hardware("H200", gpus, "fp8"), "fp8", ENGINE_PRESETS["vllm"])
    setup = replace(setup, attention_data_parallel=data_parallel)
    assert kv_copies(setup.shape, gpus, data_parallel) == copies
    rank_budget = setup.config.max_batched_tokens // data_parallel  # vLLM: each rank its own step budget
    one_copy = kv_capacity_tokens(setup.shape, setup.hardware, dtype="fp8", kv_dtype=setup.kv_dtype,
                                  step_tokens=rank_budget, window_cache=setup.engine.window_cache,
                                  attention_data_parallel=gpus)  # one GPU a rank: nothing copied  # fmt: skip
    assert setup.config.kv_capacity_tokens * copies == pytest.approx(one_copy)
    per_token = setup.shape.full_kv_values * dtype_bytes(setup.kv_dtype or "fp8")
    assert setup.cost.kv_bytes_per_token == pytest.approx(copies * per_token)


def test_an_mla_decode_step_computes_over_the_latent_and_its_prefill_expanded() -> None:
    deepseek = setup_for("deepseek-ai/DeepSeek-V3", engine_hardware("H200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"])
    cost, shape, compute = deepseek.cost, deepseek.shape, FEATURES.index("compute_ms")
    decode_ms = cost.decode(4, 4 * 8000)[compute] - cost.decode(4, 0)[compute]
    assert decode_ms == pytest.approx(shape.decode_attention_flops * 4 * 8000 / cost.flops_per_ms)
    prefill_ms = cost.prefill(100, 8000)[compute] - cost.prefill(100, 0)[compute]
    assert prefill_ms == pytest.approx(shape.attention_flops * 100 * 8000 / cost.flops_per_ms)
    assert shape.decode_attention_flops > 3 * shape.attention_flops


@pytest.mark.parametrize("model", ["deepseek-v3.2", "glm-5"])
def test_a_sparse_attention_step_reads_and_attends_to_the_entries_its_indexer_picks(model: str) -> None:
    """DeepSeek Sparse Attention: past ``index_topk`` (2,048) tokens a query attends to the 2,048 its indexer picks,
    and the indexer scores every cached token with a key of its own. A decode step at 8,000 tokens of context reads
    the latent of 2,048 and the indexer keys of all 8,000, and its compute is the indexers' over the 5,952 more; a
    prompt chunk's queries past the reach likewise, attending to their picks in MLA's absorbed form as a decoding
    token does (FlashMLA's sparse prefill). DeepSeek-V3 (no indexer) reads and attends to all of it."""
    kv, compute = FEATURES.index("kv_cache_ms"), FEATURES.index("compute_ms")
    sparse = setup_for(model, engine_hardware("H200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"])
    cost, shape = sparse.cost, sparse.shape
    assert shape.sparse_reach == 2048
    index_bytes = cost.kv_bytes_per_token - cost.picked_kv_bytes_per_token
    per_value = cost.kv_bytes_per_token / shape.full_kv_values
    assert index_bytes == pytest.approx(shape.n_layers * 128 * per_value)  # every layer's indexer key
    beyond = cost.decode(1, 8000) - cost.decode(1, 2048)
    assert beyond[kv] == pytest.approx(index_bytes * (8000 - 2048) / cost.bandwidth_bytes_per_ms)
    indexers = shape.decode_attention_flops - shape.picked_decode_attention_flops_per_pair
    assert beyond[compute] == pytest.approx(indexers * (8000 - 2048) / cost.flops_per_ms)
    prompt = cost.prefill(1000, 7000) - cost.prefill(1000, 3000)  # every query past the reach, 4,000 later
    prompt_indexers = shape.attention_flops - shape.picked_attention_flops_per_pair
    assert prompt[compute] == pytest.approx(prompt_indexers * 1000 * 4000 / cost.flops_per_ms)
    own = cost.prefill(1, 0)[compute] - shape.attention_flops / cost.flops_per_ms  # a token's FLOPs but attention
    past = cost.prefill(1, 5000)[compute] - own  # one query past the reach: its picks in MLA's absorbed form
    assert past == pytest.approx((prompt_indexers * 5001 + shape.picked_decode_attention_flops_per_pair * 2048)
                                 / cost.flops_per_ms)  # fmt: skip
    within = cost.prefill(1000, 1048)[compute] - cost.prefill(1000, 0)[compute]  # all within it: all attended
    assert within == pytest.approx(shape.attention_flops * 1000 * 1048 / cost.flops_per_ms)
    dense = setup_for("deepseek-ai/DeepSeek-V3", engine_hardware("H200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"])
    assert dense.shape.sparse_reach == 0
    assert (dense.cost.decode(1, 8000) - dense.cost.decode(1, 2048))[kv] == pytest.approx(
        dense.cost.kv_bytes_per_token * 5952 / dense.cost.bandwidth_bytes_per_ms)


def test_vllm_and_sglang_take_the_batch_cap_and_step_budget_they_default_to_on_each_gpu() -> None:
    """vLLM's server: 1024 sequences and 8192 tokens a step on a GPU of 70 GiB or more other than an A100, 256 and
    2048 on the rest; SGLang caps running requests only by its memory pool and chunks prefill at 8192 tokens below
    160 GiB, 16384 above. The 256-request cap this model had for both queued 512 users into 20 s of TTFT where
    DeepSeek-R1 on SGLang measured 3 s."""
    vllm, sglang = ENGINE_PRESETS["vllm"], ENGINE_PRESETS["sglang"]
    for gpu, memory_gb, batch, budget in (("H100 SXM", 80, 1024, 8192), ("B200", 180, 1024, 8192),
                                          ("A100 80GB", 80, 256, 2048), ("L40S", 48, 256, 2048)):  # fmt: skip
        built = vllm.on_gpu(gpu, memory_gb)
        assert (built.max_batch, built.max_batched_tokens) == (batch, budget), gpu
    assert sglang.on_gpu("H200", 141).max_batched_tokens == 8192
    assert sglang.on_gpu("B200", 180).max_batched_tokens == 16384
    assert sglang.on_gpu("H200", 141).max_batch >= 2048
    setup = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("B200", 8, "fp8"), "fp8", sglang)
    assert setup.config.max_batch >= 2048 and setup.config.max_batched_tokens == 16384


def test_a_moe_table_runs_on_the_gpus_its_moe_layout_spans() -> None:
    """AIConfigurator's vLLM rows of Qwen3-235B-A22B-FP8 say attention TP1 with MoE TP2 for 'one' H200, which its
    235 GB of FP8 weights do not fit: the MoE layers run on the same GPUs as attention, so it ran on two."""
    profile = find_profile("published:aic-vllm-0.12.0-qwen3-235b-a22b-fp8-1xh200-fp8-tp1-dp1-ep1-2000in-100out-moetp2")
    assert profile.gpus_per_replica == 2
    assert find_profile("published:aic-vllm-0.12.0-qwen3-235b-a22b-fp8-2xh200-fp8-tp2-dp1-ep1-1000in-100out"
                        ).gpus_per_replica == 2  # fmt: skip


def test_tables_of_one_gpu_count_but_other_layouts_are_other_setups() -> None:
    """Attention data parallelism and expert parallelism are part of a setup: DeepSeek-R1 on 8x B200 decodes at
    5.4 ms a token with TP8 at 4 users and 21 ms with attention DP8 x EP8 at 256, so one fit for both is neither."""
    plain = find_profile("published:aic-trtllm-1.2.0rc6.post3-deepseek-r1-8xb200-fp8-tp8-dp1-ep1-1024in-1024out")
    wide = find_profile("published:aic-trtllm-1.2.0rc6.post3-deepseek-r1-8xb200-fp8-tp1-dp8-ep8-1024in-1024out")
    assert layout_tag(plain) == ()
    assert layout_tag(wide) == ("dp8 ep8",)


@pytest.mark.parametrize("step_overhead_ms", [1.0, 20.0])
def test_a_fit_finds_a_step_overhead_far_from_its_prior(step_overhead_ms: float) -> None:
    """A MoE model's fixed cost per step (61 layers of kernels and all-reduces for DeepSeek-R1) varies by setup
    (quartiles about 4 and 7 ms around the ~6 ms prior): a prior row relative to itself pinned it, and a fit of points
    made with 6 ms a step under the dense 0.3 ms prior put it at a fraction of that, decoding twice as fast as the
    points at few users. Priors weigh in the units of the measured figures, so points of several loads move it, to
    a sixth of the prior or three times it."""
    setup = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("H200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"])
    truth = Calibration(np.array([step_overhead_ms, 1.0, 2.0, 2.5, 0.002, 2.0, 1.0, 1.0]), 0)
    points = []
    for input_len, output_len in ((1024, 1024), (1024, 4096), (4096, 1024)):
        for c in (4, 16, 64, 128):
            p = predict_concurrency(setup, truth, c, input_len, output_len)
            points.append(Observation(c, input_len, output_len, p.request_throughput, p.mean_ttft_ms, p.mean_tpot_ms))
    fitted = fit(setup, points)
    for c in (2, 32):
        want = predict_concurrency(setup, truth, c, 2048, 512)
        got = predict_concurrency(setup, fitted, c, 2048, 512)
        assert got.mean_tpot_ms == pytest.approx(want.mean_tpot_ms, rel=0.1), c
        assert got.request_throughput == pytest.approx(want.request_throughput, rel=0.1), c
    assert fitted.coefficients[0] == pytest.approx(step_overhead_ms, rel=0.1)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tensorrt-llm"])
def test_a_moe_calibration_of_one_prompt_length_takes_its_engines_moe_prompt_slope(engine: str) -> None:
    """An engine's dense and MoE setups grow TTFT with the prompt at slopes of their own (TensorRT-LLM's bundled
    setups: -0.22 against -0.02), so one prompt length gives a MoE calibration the engine's MoE slope, whatever the
    dense one (set apart here where the two medians agree)."""
    from infercost.performance.calibrate import PROMPT

    preset = replace(ENGINE_PRESETS[engine], ttft_prompt_slope=ENGINE_PRESETS[engine].moe_ttft_prompt_slope + 0.2)
    setup = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("H200", 8, "fp8"), "fp8", preset)
    truth = Calibration(np.array([6.0, 0.5, 2.0, 2.5, 0.002, 2.0, 1.0, 1.0]), 0)
    points = [Observation(c, 2000, 500, p.request_throughput, p.mean_ttft_ms, p.mean_tpot_ms)
              for c in (4, 32) for p in [predict_concurrency(setup, truth, c, 2000, 500)]]  # fmt: skip
    slope = fit(setup, points).ttft_correction[PROMPT]
    assert slope == pytest.approx(preset.moe_ttft_prompt_slope)


def test_a_moe_step_overhead_is_the_groups_not_each_gpus_and_grows_with_its_layers() -> None:
    """Dense tensor-parallel groups pay their fixed step costs on every GPU (fitted on NIM's TP1-8 sweeps); a MoE
    setup's step overhead, many times larger, counted per GPU made gpt-oss-120b's vLLM calibration on one B200 decode
    5x too slowly on eight. It is counted once per group, and layer by layer: a model nobody measured took the median
    step overhead of 61-layer models, and gpt-oss-120b (36 layers) came out 56% slower to decode than measured."""
    from infercost.performance.engine import MOE_REFERENCE_LAYERS, step_cost
    from infercost.performance.profiles import model_shape

    eight = engine_hardware("B200", 8, "fp8")
    for model, layers in (("openai/gpt-oss-120b", 36), ("Qwen/Qwen3-235B-A22B", 94), ("deepseek-ai/DeepSeek-R1", 61)):
        moe = model_shape(model)
        assert moe.n_layers == layers
        assert step_cost(moe, eight, dtype="fp8").decode(16, 16000)[0] == pytest.approx(layers / MOE_REFERENCE_LAYERS)
    dense = model_shape("meta-llama/Llama-3.1-70B-Instruct")
    assert step_cost(dense, eight, dtype="fp8").decode(16, 16000)[0] == 8.0


def test_one_ttft_that_jumps_a_hundredfold_does_not_bend_the_other_shapes_prediction() -> None:
    """AIConfigurator's MiniMax-M2.5 on 4x H100 under vLLM: at 8,192 output tokens the mean TTFT is 148 ms at 32
    users and 20 s at 64; fitted with it, the TTFT correction predicted 9.3 s at 64 users for 1,024 output tokens,
    where 191 ms was measured. The correction leaves such a point out."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import fit_tables

    stem = "published:aic-vllm-0.18.0-minimax-m2.5-4xh100-sxm-fp8-tp4-dp1-ep4-1024in-"
    wanted = [f"{stem}1024out", f"{stem}8192out"]
    profiles = [p for p in held_out_profiles() if p.id in wanted]
    short, long = sorted(validation_tables(profiles), key=lambda t: t.shape)
    assert max(o.mean_ttft_ms for o in long.observations) > 100 * min(o.mean_ttft_ms for o in long.observations)
    calibration = fit_tables([long])
    for point in short.observations:
        predicted = predict_concurrency(short.setup, calibration, point.concurrency, *short.shape).mean_ttft_ms
        assert predicted == pytest.approx(point.mean_ttft_ms, rel=0.5), (point.concurrency, predicted)


def test_a_fit_never_reads_the_weights_faster_than_the_datasheet() -> None:
    """AIConfigurator's Llama-3.1-70B (FP8) on one B200 under TensorRT-LLM: fitted on its three tables, the weight
    coefficient came out 0 (44 of the held-out setups' fits put it below the roofline, 13 at 0), the per-sequence and
    KV terms carrying every step, so a shape with less context decoded faster than 70 GB can be read at 8 TB/s.
    The coefficient stays at or above what the datasheet's bandwidth allows."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import fit_tables

    stem = "published:aic-trtllm-unversioned-llama-3.1-70b-1xb200-fp8-tp1-dp1-ep1-"
    tables = validation_tables([p for p in held_out_profiles() if p.id.startswith(stem)])
    assert len(tables) == 3
    calibration = fit_tables(tables)
    assert calibration.coefficients[WEIGHTS] >= 1.0
    setup = tables[0].setup
    roofline_ms = setup.cost.weights_bytes / setup.cost.bandwidth_bytes_per_ms
    assert predict_concurrency(setup, calibration, 1, 128, 128).mean_tpot_ms > roofline_ms


def test_the_weight_floor_leaves_out_the_tensor_parallel_penalty_the_feature_carries() -> None:
    from infercost.performance.calibrate import roofline_floor
    from infercost.performance.engine import MOE_WEIGHTS_GPU_EXPONENT, TENSOR_PARALLEL_WEIGHTS_EXPONENT

    for gpus in (1, 2, 8):
        for model, exponent in (("qwen3-8b", TENSOR_PARALLEL_WEIGHTS_EXPONENT),
                                ("qwen3-30b-a3b", MOE_WEIGHTS_GPU_EXPONENT)):  # fmt: skip
            hardware = engine_hardware("H100 SXM", gpus, "bfloat16")
            setup = setup_for(model, hardware, "bfloat16", ENGINE_PRESETS["vllm"])
            floor = roofline_floor(setup)[WEIGHTS]
            assert floor * gpus ** (1 - exponent) == pytest.approx(1.0)


def test_a_moe_models_weight_reads_divide_among_its_gpus_nearly_as_its_bytes_do() -> None:
    """A dense model's read time falls as gpus ** -0.42 (NIM's tensor-parallel sweeps); a MoE model's, mostly whole
    expert matrices, as gpus ** -0.9: under the dense exponent its fitted weight coefficient fell from 1.0 on one GPU
    to 0.37 on eight, the floor for 40 of 98 setups."""
    from infercost.performance.engine import step_cost
    from infercost.performance.profiles import model_shape

    moe, dense = model_shape("deepseek-r1"), model_shape("llama-3.1-70b")
    one, eight = engine_hardware("H200", 1, "fp8"), engine_hardware("H200", 8, "fp8")
    for shape, exponent in ((moe, 0.9), (dense, 0.42)):
        single, spread = step_cost(shape, one, dtype="fp8"), step_cost(shape, eight, dtype="fp8")
        for features in (lambda cost: cost.decode(0, 0)[WEIGHTS], lambda cost: cost.decode(512, 0)[WEIGHTS]):
            assert features(single) / features(spread) == pytest.approx(8**exponent)


def test_a_moe_models_compute_time_falls_slower_than_its_gpu_count_and_its_floor_leaves_that_out() -> None:
    """A dense model's FLOPs divide among its GPUs; a MoE model's time falls as gpus**-0.6 (its expert GEMMs get
    thinner per GPU). The compute floor, no faster than the datasheet, takes that penalty off as the weights' does."""
    from infercost.performance.calibrate import roofline_floor
    from infercost.performance.engine import COMPUTE, MOE_COMPUTE_GPU_EXPONENT, step_cost
    from infercost.performance.profiles import model_shape

    assert MOE_COMPUTE_GPU_EXPONENT == 0.6
    moe, dense = model_shape("deepseek-r1"), model_shape("llama-3.1-70b")
    for gpus in (2, 4, 8):
        one, many = engine_hardware("H200", 1, "fp8"), engine_hardware("H200", gpus, "fp8")
        assert step_cost(moe, many, dtype="fp8").flops_per_ms / step_cost(moe, one, dtype="fp8").flops_per_ms == (
            pytest.approx(gpus**0.6))
        assert step_cost(dense, many, dtype="fp8").flops_per_ms == pytest.approx(
            gpus * step_cost(dense, one, dtype="fp8").flops_per_ms)
        moe_setup = setup_for("deepseek-r1", many, "fp8", ENGINE_PRESETS["sglang"])
        dense_setup = setup_for("llama-3.1-70b", many, "fp8", ENGINE_PRESETS["sglang"])
        assert roofline_floor(moe_setup)[COMPUTE] * gpus**0.4 == pytest.approx(1.0)
        assert roofline_floor(dense_setup)[COMPUTE] == 1.0


def test_a_moe_prefill_carried_to_fewer_or_more_gpus_keeps_its_ttft() -> None:
    """gpt-oss-120b under TensorRT-LLM (AIConfigurator's sweeps): calibrated on 4x H200 and carried to 2 and 8, with
    FLOPs divided by the GPU count, the mean TTFTs came out a median 58% too slow on 2 and 38% too fast on 8."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import fit_tables

    def tables(gpus: int) -> list:
        stem = f"published:aic-trtllm-unversioned-gpt-oss-120b-{gpus}xh200-fp4-tp{gpus}-dp1-ep1-"
        return validation_tables([p for p in held_out_profiles() if p.id.startswith(stem)])

    calibration = fit_tables(tables(4))
    for gpus in (2, 8):
        errors = [predict_concurrency(t.setup, calibration, o.concurrency, *t.shape).mean_ttft_ms / o.mean_ttft_ms - 1
                  for t in tables(gpus) for o in t.observations]  # fmt: skip
        assert len(errors) >= 10
        assert abs(float(np.median(errors))) < 0.35, (gpus, np.median(errors))


def test_a_calibration_is_taken_from_attention_dp_as_asked_then_the_gpu_type_loads_layout_count_and_data() -> None:
    from infercost.performance.validation import source_rank

    few_users = [Observation(4, 1024, 1024, 1.0), Observation(16, 1024, 1024, 3.0)]
    many_users = [Observation(512, 1024, 1024, 9.0), Observation(256, 1024, 1024, 8.0)]
    one_load = [Observation(256, 1024, 1024, 8.0), Observation(256, 8192, 1024, 4.0)]  # two shapes, one load
    target = ("B200", 8, ())
    candidates = {"GB200 x8": (("GB200", 8, ()), few_users), "one load": (("B200", 8, ()), one_load),
                  "DP8": (("B200", 8, ("dp8 ep8",)), few_users), "x4 at 512": (("B200", 4, ()), many_users),
                  "x16": (("B200", 16, ()), few_users), "EP8": (("B200", 8, ("ep8",)), few_users)}  # fmt: skip
    ranked = sorted(candidates, key=lambda name: source_rank(candidates[name][0], target, candidates[name][1]))
    assert ranked == ["x16", "x4 at 512", "EP8", "one load", "GB200 x8", "DP8"]
    under_dp = sorted(candidates, key=lambda name: source_rank(candidates[name][0], ("B200", 8, ("dp8 ep8",)),
                                                                candidates[name][1]))  # fmt: skip
    assert under_dp[0] == "DP8"


@pytest.mark.parametrize(("setup", "calibrated_on"), [
    ("deepseek-ai/DeepSeek-R1@4xB200:nvfp4", "-4xb200-fp4-"),  # not 8 B200s in FP8 (the one with most data)
    ("deepseek-ai/DeepSeek-R1@8xB200:nvfp4", "-8xb200-fp4-"),  # AIConfigurator's "fp4" is NVFP4: not an FP8 table
])  # fmt: skip
def test_a_roofline_setup_is_calibrated_on_the_nearest_published_setup(setup: str, calibrated_on: str) -> None:
    from infercost.performance.predict import predict_source

    predicted = predict_source(f"roofline:{setup}", 1000, 1000, engine="trtllm")
    assert calibrated_on in predicted.notes[0].split(" (")[0], predicted.notes[0]


@pytest.mark.parametrize(("setup", "engine", "release", "calibrated_on", "transfer"), [
    ("llama-3.1-70b@4xH200:fp8", "vllm", None, "published:aic-vllm-", "any_release"),  # not NIM's 4x H100 moved
    ("llama-3.1-8b@8xH200:fp8", "sglang", None, "published:aic-sglang-", "any_release"),
    ("llama-3.1-8b@4xH100 SXM:fp8", "sglang", "0.5.6.post2", "published:aic-sglang-0.5.6.post2-", "nearest"),
    ("llama-3.1-70b@4xH200:fp8", None, None, "published:nim-", "gpu"),  # no engine asked: the calibration set
])  # fmt: skip
def test_a_dense_setup_is_calibrated_on_the_engine_asked_for_where_its_tables_are_bundled(
        setup: str, engine: str | None, release: str | None, calibrated_on: str, transfer: str) -> None:  # fmt: skip
    from infercost.performance.predict import predict_source

    predicted = predict_source(f"roofline:{setup}", 1000, 1000, engine=engine, release=release)
    assert predicted.notes[0].startswith(f"engine model calibrated on {calibrated_on}"), predicted.notes[0]
    assert predicted.transfer == transfer


def test_a_roofline_on_other_gpus_carries_the_error_of_the_rule_that_chose_its_calibration() -> None:
    from infercost.performance.expected_error import held_out_error
    from infercost.performance.predict import point_range, predict_source

    spec = "roofline:deepseek-ai/DeepSeek-R1@16xGB200:nvfp4"
    predicted = predict_source(spec, 1000, 1000, engine="trtllm", release="1.2.0rc6.post2")
    nearest, every_pair = (held_out_error("moe", "tensorrt-llm", t) for t in ("nearest", "gpu"))
    assert predicted.transfer == "nearest" and predicted.expected_error == nearest != every_pair
    assert "TensorRT-LLM 1.2.0rc6.post2" in predicted.notes[0]
    low, high = point_range(predicted.points[0], nearest)["output_throughput"]
    assert low < predicted.points[0].output_throughput < high  # the range a person sees is the nearest rule's
    unnamed = predict_source(spec, 1000, 1000, engine="trtllm")  # a release not named: chosen among all
    assert unnamed.transfer == "any_release"
    assert unnamed.expected_error == held_out_error("moe", "tensorrt-llm", "any_release") != nearest


def test_a_table_whose_stated_layout_cannot_run_is_refused_with_the_reason() -> None:
    from infercost.performance.predict import predict_source
    from infercost.performance.profiles import held_out_profiles, unpredictable_reason

    mislabelled = next(p for p in held_out_profiles() if p.id == "published:aic-sglang-unversioned-deepseek-r1-"
                       "72xgb200-fp8-tp72-dp1-ep1-1024in-1024out")  # TP72 over DeepSeek-R1's 128 heads
    assert "tensor-parallel size does not divide the model's attention heads" in unpredictable_reason(mislabelled)
    predicted = predict_source(mislabelled.id, 1024, 1024)  # the table's own points, fitted without a simulation
    assert predicted.transfer == "none" and "attention heads" in predicted.notes[0]  # and "error is not measured"
    runs = next(p for p in held_out_profiles() if p.id.startswith("published:aic-sglang-0.5.9-deepseek-r1-8xb200-"))
    assert unpredictable_reason(runs) == ""


def test_a_published_moe_table_carried_to_another_shape_carries_the_held_out_error_of_its_kind() -> None:
    from infercost.performance.expected_error import expected_error, held_out_error
    from infercost.performance.predict import predict_source

    table = "published:aic-sglang-0.5.9-deepseek-r1-8xb200-fp8-tp8-dp1-ep1-1024in-1024out"
    predicted = predict_source(table, 2000, 300)
    assert predicted.transfer == "shape" and "the other tables of the same setup" in predicted.notes[0]
    assert predicted.expected_error == held_out_error("moe", "sglang", "shape") != expected_error("shape")


def test_the_moe_priors_are_the_median_fit_of_the_moe_setups_that_identify_theirs() -> None:
    """``MOE_PRIOR`` is what ``validation.moe_coefficients`` measured in the stored harness run (rerun
    ``python -m bench.held_out_accuracy --write`` and update it when they part)."""
    from infercost.performance.calibrate import FITTED, MOE_PRIOR
    from infercost.performance.engine import FEATURES
    from infercost.performance.expected_error import held_out_errors

    stored = held_out_errors()["moe_coefficients"]
    assert stored["setups"] >= 50
    for name, prior in zip(FEATURES[FITTED], MOE_PRIOR[FITTED], strict=True):
        assert prior == pytest.approx(stored[name], rel=0.05, abs=1e-6), name


def test_a_moe_fit_of_one_prompt_length_keeps_its_engines_request_latency() -> None:
    """Points of one prompt length cannot tell a request's fixed latency from its prefill (``calibrate
    .MEASURED_UNITS``): the fit keeps the engine's prior latency and leaves the prompt's time in its compute, which
    carries to longer prompts; with a second prompt length it finds its own. GLM-5 on 8x B200 under SGLang from its
    1,024-token table put 101 ms a request and compute at 0.44x (a third of the 1.2x both tables give). Its own
    latency, from both tables, is about SGLang's median (169 ms) today: a prior of 20 ms tells the two apart."""
    from infercost.performance.engine import COMPUTE, REQUEST
    from infercost.performance.profiles import engine_setup, observations

    short = find_profile("published:ix-sglang-unversioned-glm-5-8xb200-fp8-tp8-dp1-ep1-1024in-1024out-config658")
    long = find_profile("published:ix-sglang-unversioned-glm-5-8xb200-fp8-tp8-dp1-ep1-8192in-1024out-config658")
    prior = 20.0
    setup = engine_setup(short)
    setup = replace(setup, engine=replace(setup.engine, moe_request_ms_prior=prior))
    one = fit(setup, observations(short)).coefficients
    both = fit(setup, observations(short) + observations(long)).coefficients
    assert one[REQUEST] == pytest.approx(prior, rel=0.15)
    assert abs(both[REQUEST] - prior) > prior / 2
    assert one[COMPUTE] > both[COMPUTE] / 2


def test_prompt_lengths_two_percent_apart_cannot_tell_a_requests_latency_from_its_prefill() -> None:
    """DeepSeek-R1's 2025 sweep under SGLang 0.4.2 on 8x MI300X has tables of 3,200- and 3,275-token prompts. Taken
    as prompt lengths that vary, its fit put 1.0 s on every request and a TTFT slope of -0.97 on the prompt; lengths
    that span less than ``PROMPT_SPAN`` count as one, so the request latency stays near SGLang's prior and the slope
    is the preset's. Asked for DeepSeek-R1 on 8x MI300X under SGLang, 4 users' TTFT came out 2.2 s for 1,024-token
    prompts and 1.1 s for 8,192-token ones."""
    from infercost.performance.calibrate import PROMPT, prompts_vary
    from infercost.performance.engine import REQUEST
    from infercost.performance.predict import Load, predict_roofline
    from infercost.performance.validation import fit_tables

    assert not prompts_vary([Observation(4, n, 800, 1.0, 100.0, 10.0) for n in (3200, 3275)])
    assert prompts_vary([Observation(4, n, 800, 1.0, 100.0, 10.0) for n in (1024, 8192)])
    groups = _held_out_groups()
    calibration = fit_tables(groups["deepseek-r1", "sglang 0.4.2.post4", "MI300X", "8", "fp8"])
    sglang = ENGINE_PRESETS["sglang"]
    assert calibration.coefficients[REQUEST] < 3 * sglang.moe_request_ms_prior
    assert calibration.ttft_correction[PROMPT] == pytest.approx(sglang.prompt_slope(moe=True))
    ttft = {n: predict_roofline("deepseek-r1", "MI300X", 8, "fp8", n, 1024, Load(concurrencies=(4,)),
                                engine="sglang").points[0].mean_ttft_ms for n in (1024, 8192)}  # fmt: skip
    assert ttft[8192] > 2 * ttft[1024]


def test_a_request_latency_is_told_from_prefill_only_by_prompt_lengths_measured_at_few_users() -> None:
    """DeepSeek-R1 under TensorRT-LLM 1.1 on 8x H200 with attention DP8 was measured at 1,024- and 8,192-token prompts,
    but only at 64 to 256 users: its queue of prompts, a part of TTFT that does not grow with users either, was
    fitted as 3.5 s on every request, and the same GPUs without attention DP were predicted a 2.8 s TTFT at 4 users
    where 494 ms was measured. Lengths that vary among points at ``FEW_USERS`` or fewer tell it
    (``calibrate.identify_request``); these do not, and hold the latency near the engine's prior."""
    from infercost.performance.calibrate import FEW_USERS, identify_request
    from infercost.performance.engine import REQUEST
    from infercost.performance.validation import fit_tables, points_of

    few = [Observation(4, n, 1024, 1.0, 100.0, 10.0) for n in (1024, 8192)]
    many = [Observation(FEW_USERS * 4, n, 1024, 1.0, 100.0, 10.0) for n in (1024, 8192)]
    assert identify_request(few) and identify_request(few + many) and not identify_request(many)
    groups = _held_out_groups()
    release = "tensorrt-llm 1.1.0rc2.post2"
    source = groups["deepseek-r1", release, "H200", "8", "fp8", "dp8 ep8"]
    assert not identify_request(points_of(source))
    calibration = fit_tables(source)
    assert calibration.coefficients[REQUEST] < 2 * ENGINE_PRESETS["tensorrt-llm"].moe_request_ms_prior
    target = groups["deepseek-r1", release, "H200", "8", "fp8", "ep8"][0]
    measured, predicted = _measured_and_predicted(target, calibration, 4)
    assert 0.5 < predicted.mean_ttft_ms / measured.mean_ttft_ms < 1.5


def test_a_step_overhead_is_fitted_only_where_points_at_few_users_measure_it() -> None:
    """DeepSeek-R1 under TensorRT-LLM 1.2 on 8x B200 in FP8 with attention DP8 was measured only at 128 and more
    users, where a decode step's fixed cost is a small share of it: the fit put none there, and the same GPUs
    without attention DP were predicted to decode 4 users at 1.7 ms a token where 10.3 ms was measured. A point at
    ``FEW_USERS`` or fewer tells that cost (``calibrate.identify_step``); without one it is not fitted but taken
    from the prior."""
    from infercost.performance.calibrate import FEW_USERS, MOE_PRIOR, STEP, identify_step
    from infercost.performance.validation import fit_tables, points_of

    few = [Observation(FEW_USERS, 1024, 1024, 1.0, 100.0, 10.0)]
    many = [Observation(FEW_USERS * 4, 1024, 1024, 1.0, 100.0, 10.0)]
    assert identify_step(few) and identify_step(few + many) and not identify_step(many)
    groups = _held_out_groups()
    release = "tensorrt-llm 1.2.0rc6.post2"
    source = groups["deepseek-r1", release, "B200", "8", "fp8", "dp8 ep8"]
    assert not identify_step(points_of(source))
    calibration = fit_tables(source)
    assert calibration.coefficients[STEP] == pytest.approx(MOE_PRIOR[STEP])
    target = groups["deepseek-r1", release, "B200", "8", "fp8"][0]
    measured, predicted = _measured_and_predicted(target, calibration, 4)
    assert 0.6 < predicted.mean_tpot_ms / measured.mean_tpot_ms < 1.4


def test_widened_4_bit_weights_cost_more_a_step_and_a_calibration_moves_between_gpu_generations_without_it() -> None:
    """gpt-oss-120b's MXFP4 weights run natively on B200's FP4 tensor cores and are widened first on H200's; its
    step's fixed cost, fitted on the same sweeps under TensorRT-LLM, came out twice as high on H200. Carried from
    8 H200s to 8 B200s as it was, that predicted TPOT a median 59% high, and the other way 34% low. The step
    overhead of widened weights is ``WIDENED_WEIGHTS_STEP_FACTOR`` times a native one's (INT4 everywhere, FP4
    without FP4 tensor cores), FP8 alike on both."""
    from infercost.performance.engine import STEP, WIDENED_WEIGHTS_STEP_FACTOR, step_cost
    from infercost.performance.profiles import model_shape
    from infercost.performance.validation import fit_tables

    shape = model_shape("gpt-oss-120b")
    for dtype, widened in (("mxfp4", WIDENED_WEIGHTS_STEP_FACTOR), ("fp8", 1.0), ("int4", 1.0)):
        hopper, blackwell = (step_cost(shape, engine_hardware(gpu, 8, dtype), dtype=dtype) for gpu in ("H200", "B200"))
        assert hopper.decode(8, 8000)[STEP] == pytest.approx(widened * blackwell.decode(8, 8000)[STEP]), dtype
    groups = _held_out_groups()
    release = "tensorrt-llm unnamed@aiconfigurator"
    h200, b200 = (groups["gpt-oss-120b", release, gpu, "8", "mxfp4"] for gpu in ("H200", "B200"))
    for source, targets in ((h200, b200), (b200, h200)):
        calibration = fit_tables(source)
        ratios = [predicted.mean_tpot_ms / measured.mean_tpot_ms for table in targets
                  for measured, predicted in [_measured_and_predicted(table, calibration, o.concurrency)
                                              for o in table.observations]]  # fmt: skip
        assert 0.8 < float(np.median(ratios)) < 1.25, source[0].group


def test_a_sparse_attention_layers_indexer_adds_a_layers_step_cost_and_unmeasured_models_decode_as_measured() -> None:
    """A sparse-attention layer's indexer runs its own chain of kernels each step: fitted per layer, GLM-5's setups
    under SGLang took 1.45x DeepSeek-R1's step cost and DeepSeek-V4-Pro's under vLLM 1.8x the other families'. From
    the MoE priors alone (a model nobody measured), they decoded 14-43% faster than measured. A step now counts
    such a layer as 1 + ``INDEXER_STEP_SHARE`` (GLM-5: 78 of 78 index; DeepSeek-V4-Pro: 30 of 61; DeepSeek-R1:
    none), and every bundled setup of either model is predicted from the priors within 0.8-1.25x of its TPOT."""
    from infercost.performance.calibrate import unmeasured_prior
    from infercost.performance.engine import INDEXER_STEP_SHARE, STEP, step_cost
    from infercost.performance.profiles import model_shape

    hardware = engine_hardware("B200", 8, "fp8")
    for model, indexers in (("glm-5", 78), ("deepseek-v4-pro", 30), ("deepseek-r1", 0)):
        shape = model_shape(model)
        assert shape.indexer_layers == indexers, model
        plain = step_cost(replace(shape, indexer_layers=0), hardware, dtype="fp8").decode(8, 8000)[STEP]
        counted = step_cost(shape, hardware, dtype="fp8").decode(8, 8000)[STEP]
        assert counted == pytest.approx(plain * (1 + INDEXER_STEP_SHARE * indexers / shape.n_layers)), model
    groups = {key: tables for key, tables in _held_out_groups().items() if key[0] in ("glm-5", "deepseek-v4-pro")}
    assert len(groups) >= 10
    for key, tables in groups.items():
        priors = Calibration(unmeasured_prior(tables[0].setup), 0)
        ratios = [predicted.mean_tpot_ms / measured.mean_tpot_ms for table in tables
                  for measured, predicted in [_measured_and_predicted(table, priors, o.concurrency)
                                              for o in table.observations]]  # fmt: skip
        assert 0.8 < float(np.median(ratios)) < 1.25, key


def test_a_ttft_correction_is_carried_no_further_than_the_users_its_own_kv_cache_held() -> None:
    """DeepSeek-R1 under SGLang 0.5.9 on 4x B200 in FP8 holds 16 users of 9,216 tokens in its KV cache and queues
    32: its TTFT correction lowers that simulated queue (a factor 0.51 at 32 users). Carried to 8x B200, where 32
    users fit, the lowering had predicted 150 ms at 32 users of 1,024-token prompts where 642 ms was measured.
    A load its target's cache holds now takes the correction no further than 16 users
    (``Calibration.within_capacity``); a load that queues, the setup's own included, takes it whole."""
    from infercost.performance.calibrate import full_batch
    from infercost.performance.validation import fit_tables

    groups = _held_out_groups()
    source = groups["deepseek-r1", "sglang 0.5.9", "B200", "4", "fp8"]
    calibration = fit_tables(source)
    assert calibration.ttft_users == (4, 32) and calibration.ttft_held_users == 16
    assert calibration.within_capacity(queued=True) is calibration
    own = source[0].setup
    assert full_batch(calibration.applied_to(own), 8192, 1024) < 32
    alone = predict_concurrency(own, calibration, 32, 8192, 1024).mean_ttft_ms
    assert alone == pytest.approx(predict_concurrency(own, replace(calibration, ttft_held_users=None), 32, 8192,
                                                      1024).mean_ttft_ms)  # fmt: skip
    target = next(t for t in groups["deepseek-r1", "sglang 0.5.9", "B200", "8", "fp8"] if t.shape == (1024, 1024))
    measured, predicted = _measured_and_predicted(target, calibration, 32)
    assert 0.4 < predicted.mean_ttft_ms / measured.mean_ttft_ms < 1.5


def test_a_ttft_correction_from_a_source_whose_cache_held_none_of_its_points_is_not_carried_to_loads_that_fit() -> None:
    """AIConfigurator's DeepSeek-R1 table on 32 GB200s under TensorRT-LLM is one point, 2,150 users queued behind a
    batch of 2,048: its TTFT correction lowers that simulated queue twentyfold. Carried to 4x B200 at 64 users, whose
    batch holds them all, it predicted a TTFT of 1.9 ms where 459 ms was measured. A source that held none of its
    points measured only a queue (``ttft_held_users`` 0), so a load that fits takes none of its correction; the
    source's own queued point is unchanged."""
    from infercost.performance.calibrate import full_batch
    from infercost.performance.validation import fit_tables

    groups = _held_out_groups()
    release = "tensorrt-llm unnamed@aiconfigurator"
    source = groups["deepseek-r1", release, "GB200", "32", "nvfp4"]
    calibration = fit_tables(source)
    assert calibration.ttft_users == (2150, 2150) and calibration.ttft_held_users == 0
    assert calibration.within_capacity(queued=False).ttft_correction is None
    own = source[0].observations[0]
    assert predict_concurrency(source[0].setup, calibration, own.concurrency, own.input_len,
                               own.output_len).mean_ttft_ms == pytest.approx(own.mean_ttft_ms, rel=0.01)  # fmt: skip
    target = next(t for t in groups["deepseek-r1", release, "B200", "4", "nvfp4"] if t.shape == (1024, 1024))
    assert full_batch(calibration.applied_to(target.setup), 1024, 1024) > 64
    measured, predicted = _measured_and_predicted(target, calibration, 64)
    _, carried = _measured_and_predicted(target, replace(calibration, ttft_held_users=None), 64)
    assert predicted.mean_ttft_ms > 10 * carried.mean_ttft_ms and predicted.mean_ttft_ms / measured.mean_ttft_ms > 0.05


def test_each_engines_moe_compute_and_request_priors_are_its_setups_median_fit() -> None:
    """``EngineConfig.moe_compute_prior`` and ``moe_request_ms_prior`` are what ``validation.moe_coefficients``
    measured per engine in the stored harness run (rerun ``python -m bench.held_out_accuracy --write`` and update
    them when they part); an engine without bundled MoE setups (NIM) keeps ``MOE_PRIOR``'s."""
    from infercost.performance.calibrate import MOE_PRIOR, prior_for
    from infercost.performance.engine import COMPUTE, NIM_ENGINE, REQUEST
    from infercost.performance.expected_error import held_out_errors
    from infercost.performance.profiles import engine_setup

    stored = held_out_errors()["moe_coefficients"]
    for engine in ("vllm", "sglang", "tensorrt-llm"):
        preset = ENGINE_PRESETS[engine]
        assert stored[f"setups_{engine}"] >= 20, engine
        assert preset.moe_compute_prior == pytest.approx(stored[f"compute_ms_{engine}"], rel=0.05), engine
        assert preset.moe_request_ms_prior == pytest.approx(stored[f"request_ms_{engine}"], rel=0.05, abs=0.1), engine
    setup = engine_setup(find_profile("published:aic-sglang-0.5.10.post1-deepseek-v3-4xb300-fp4-tp4-dp1-ep4-"
                                      "1024in-1024out"))
    sglang = ENGINE_PRESETS["sglang"]
    assert prior_for(setup)[[COMPUTE, REQUEST]] == pytest.approx([sglang.moe_compute_prior,
                                                                   sglang.moe_request_ms_prior])  # fmt: skip
    nim = prior_for(replace(setup, engine=NIM_ENGINE))
    assert nim[[COMPUTE, REQUEST]] == pytest.approx(MOE_PRIOR[[COMPUTE, REQUEST]])


def test_the_moe_compute_share_leaves_blackwell_and_hopper_fitting_alike() -> None:
    """``engine.MOE_COMPUTE_SHARE`` is the gap between the generations' fitted MoE compute (rerun
    ``python -m bench.held_out_accuracy --write`` and update it when they part): with it applied, the stored medians
    of the Blackwell and Hopper setups agree within 15%."""
    from infercost.performance.expected_error import held_out_errors

    stored = held_out_errors()["moe_coefficients"]
    assert stored["compute_ms_blackwell"] / stored["compute_ms_hopper"] == pytest.approx(1.0, rel=0.15)


def test_the_dense_weight_read_share_leaves_blackwell_and_hopper_fitting_alike() -> None:
    """``engine.DENSE_WEIGHT_READ_SHARE`` is the gap between the generations' fitted dense FP8 weight reads (rerun
    ``python -m bench.held_out_accuracy --write`` and update it when they part): with it applied, the stored medians
    agree within 15%."""
    from infercost.performance.expected_error import held_out_errors

    stored = held_out_errors()["dense_weight_reads"]
    assert stored["setups"] >= 20
    assert stored["weights_ms_blackwell"] / stored["weights_ms_hopper"] == pytest.approx(1.0, rel=0.15)


def test_dense_weights_on_blackwell_read_at_its_share_and_moe_weights_whole() -> None:
    """Llama-3.1-70B's weights on B200s take 1.28x their datasheet read time, on H200s 1x; DeepSeek-R1's dense
    weights on B200s 1x (its share is compute's)."""
    from infercost.performance.engine import step_cost
    from infercost.performance.profiles import engine_hardware, model_shape

    def read_ms(model: str, gpu: str) -> float:
        return step_cost(model_shape(model), engine_hardware(gpu, 8, "fp8"), dtype="fp8").decode(0, 0)[WEIGHTS]

    blackwell, hopper = engine_hardware("B200", 8, "fp8"), engine_hardware("H200", 8, "fp8")
    ratio = hopper.bandwidth_gbps / blackwell.bandwidth_gbps
    assert read_ms("llama-3.1-70b", "B200") / read_ms("llama-3.1-70b", "H200") == pytest.approx(1.28 * ratio)
    assert read_ms("deepseek-r1", "B200") / read_ms("deepseek-r1", "H200") == pytest.approx(ratio)


def test_a_moe_model_computes_at_its_generations_share_of_the_peak_and_a_dense_one_at_all_of_it() -> None:
    """The share is the MoE model's on Blackwell only: DeepSeek-R1 on B200s runs its FLOPs at 1 / 2.04 of the
    datasheet FP8 peak, Llama-3.1-70B on the same GPUs and DeepSeek-R1 on H200s at all of it."""
    from infercost.performance.engine import compute_exponent, step_cost
    from infercost.performance.profiles import engine_hardware, model_shape

    def rate(model: str, gpu: str) -> float:  # of the peak, with the GPU count's own penalty taken off
        hardware, shape = engine_hardware(gpu, 8, "fp8"), model_shape(model)
        return step_cost(shape, hardware, dtype="fp8").flops_per_ms / (hardware.peak_tflops * 8 ** compute_exponent(
            shape) * 1e9)

    assert engine_hardware("B200", 8, "fp8").generation == "blackwell"
    assert engine_hardware("H200", 8, "fp8").generation == "hopper"
    assert rate("deepseek-r1", "B200") == pytest.approx(1 / 2.04)
    assert rate("llama-3.1-70b", "B200") == rate("deepseek-r1", "H200") == 1.0


def test_a_moe_setup_measured_at_four_users_carries_to_256_without_a_per_sequence_cost_it_never_saw() -> None:
    """DeepSeek-R1 NVFP4 on 8 B200s, TensorRT-LLM 1.2.0rc6.post2, measured at 4 users only (one point per shape,
    TPOT 7.5 ms at 1,024 / 1,024), carried to the same GPUs under attention DP with 128 and 256 users: with the dense
    priors the fit put 0.4 ms on each decoding sequence and predicted TPOTs of 85-142 ms where 19-27 ms were
    measured. Within 40% at 1,024-token prompts. The prefill-heavy shape, 8,192 in / 1,024 out at 128 users, decodes
    at 54 ms against 27.1 (36.8 before InferenceX's length draw was simulated: each 8,192-token prompt now arrives
    alone and stalls the other users' decoding, where a wave of them had prefilled before any decoded), within 2.1x."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import fit_tables, group_tables

    profiles = [p for p in held_out_profiles() if "DeepSeek-R1" in p.model and p.engine.endswith("1.2.0rc6.post2")
                and p.hardware == "B200" and p.dtype == "fp4" and p.gpus_per_replica == 8]  # fmt: skip
    groups = group_tables(validation_tables(profiles))
    source = next(members for group, members in groups.items() if group[5:] == ())
    targets = next(members for group, members in groups.items() if group[5:] == ("dp8 ep8",))
    assert {o.concurrency for table in source for o in table.observations} == {4}
    calibration = fit_tables(source)
    for table in targets:
        for obs in table.observations:
            predicted = predict_concurrency(table.setup, calibration, obs.concurrency, obs.input_len, obs.output_len)
            ratio = predicted.mean_tpot_ms / obs.mean_tpot_ms
            assert 0.6 < ratio < (1.4 if obs.input_len == 1024 else 2.1), obs


@pytest.mark.parametrize(("model", "expert_parallel"), [
    ("deepseek-ai/DeepSeek-R1", 8), ("deepseek-ai/DeepSeek-R1", 4), ("openai/gpt-oss-120b", 2)])  # fmt: skip
def test_an_all_to_all_sends_a_token_once_to_each_other_gpu_that_holds_its_experts(model: str,
                                                                                 expert_parallel: int) -> None:
    """The closed form against routing drawn at random: top-k of n experts, n / E on each GPU, the token on one."""
    from infercost.performance.engine import expert_ranks_off_gpu

    shape = setup_for(model, engine_hardware("B200", 8, "fp8"), "fp8", ENGINE_PRESETS["sglang"]).shape
    rng = np.random.default_rng(0)
    n, k = shape.num_experts, shape.experts_per_token
    gpus_of_picks = [set(rng.choice(n, size=k, replace=False) // (n // expert_parallel)) for _ in range(20000)]
    drawn = np.mean([len(gpus - {0}) for gpus in gpus_of_picks])  # the token sits on GPU 0
    assert expert_ranks_off_gpu(shape, expert_parallel) == pytest.approx(drawn, rel=0.02)
    assert expert_ranks_off_gpu(shape, expert_parallel) < k * (expert_parallel - 1) / expert_parallel


def test_a_latent_moe_dispatches_its_tokens_in_the_latent_width() -> None:
    """Nemotron 3 Super projects a token to its 1,024-wide latent before the all-to-all (hidden 4,096): under expert
    parallelism with attention data parallel ranks its dispatch sends a quarter of what the same model with experts
    in the hidden width would; its all-reduces (attention, and MoE output over tensor-parallel experts) are not."""
    from infercost.performance.engine import allreduce_ms_per_token

    hardware = engine_hardware("H100", 8, "fp8")
    shape = setup_for("nemotron-3-super-120b-a12b", hardware, "fp8", ENGINE_PRESETS["vllm"]).shape
    assert (shape.expert_width, shape.hidden_size) == (1024, 4096)
    hidden_wide = replace(shape, expert_width=0)
    dispatch = [allreduce_ms_per_token(s, hardware, 8, 8) for s in (shape, hidden_wide)]  # ranks hold whole layers
    assert dispatch[0] == pytest.approx(dispatch[1] / 4) and dispatch[0] > 0
    assert allreduce_ms_per_token(shape, hardware) == allreduce_ms_per_token(hidden_wide, hardware)


def test_attention_data_parallel_all_reduces_no_attention() -> None:
    """DeepSeek-R1 on 8 GPUs with EP8: under attention TP8 every GPU holds every token, so every layer all-reduces
    over the 8 GPUs, the MoE layers' outputs too (each GPU computed its experts' share); under attention DP8 each
    rank holds whole attention and its own tokens, and what crosses the link is the MoE all-to-all (counted whole:
    see ``allreduce_ms_per_token``), and the three dense layers' MLPs are whole on each rank too."""
    from infercost.performance.engine import (
        ACTIVATION_BYTES,
        LINK_EFFICIENCY,
        allreduce_ms_per_token,
        expert_ranks_off_gpu,
    )

    hardware = engine_hardware("B200", 8, "fp8")
    shape = setup_for("deepseek-ai/DeepSeek-R1", hardware, "fp8", ENGINE_PRESETS["sglang"]).shape
    tensor = allreduce_ms_per_token(shape, hardware, expert_parallel=8)
    data = allreduce_ms_per_token(shape, hardware, expert_parallel=8, attention_data_parallel=8)
    all_to_all_bytes = shape.moe_layers * 2 * shape.hidden_size * ACTIVATION_BYTES * expert_ranks_off_gpu(shape, 8)
    bytes_per_ms = hardware.interconnect_gbps / 2 * LINK_EFFICIENCY * 1e6
    assert data == pytest.approx(all_to_all_bytes / bytes_per_ms)
    attention_and_mlps = (shape.n_layers + (shape.n_layers - shape.moe_layers) + shape.moe_layers) * shape.hidden_size
    assert tensor == pytest.approx(attention_and_mlps * ACTIVATION_BYTES * 2 * 7 / 8 / bytes_per_ms)
    assert tensor == pytest.approx(allreduce_ms_per_token(shape, hardware))  # as if the experts were sharded


def test_every_attention_data_parallel_rank_reads_the_dense_weights_whole() -> None:
    """By hand: under attention DP8 each GPU reads all of DeepSeek-R1's dense weights every step (its own copy of
    attention, shared experts and dense layers), one GPU's bandwidth for all of them; under TP8 the eight read a
    shard each, with a MoE model's tensor-parallel penalty (8 ** 0.1 of one GPU's share); DP2 x TP4 reads over
    four."""
    from infercost.performance.engine import MOE_WEIGHTS_GPU_EXPONENT as X
    from infercost.performance.roofline import weight_bytes

    assert X == 0.9
    tensor = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("B200", 8, "fp8"), "fp8", ENGINE_PRESETS["vllm"])
    dense = weight_bytes(tensor.shape.dense_matmul_params, "fp8", tensor.shape.kept_matmul_params)
    bandwidth = tensor.cost.bandwidth_bytes_per_ms  # all eight GPUs'
    assert tensor.cost.weights_bytes / bandwidth == pytest.approx(dense * 8 ** (1 - X) / bandwidth)
    data = replace(tensor, attention_data_parallel=8).cost
    assert data.weights_bytes / bandwidth == pytest.approx(dense / (bandwidth / 8))  # one GPU reads it all
    half = replace(tensor, attention_data_parallel=2).cost
    assert half.weights_bytes / bandwidth == pytest.approx(dense * 4 ** (1 - X) / (bandwidth / 2))


def test_under_attention_data_parallelism_a_prompt_alone_waits_for_its_own_rank() -> None:
    """By hand: a step's prompt chunks run their attention, dense layers and shared experts on their own rank's
    GPUs (an eighth of eight under DP8) and the ranks step together, so one prompt alone costs that part eight times
    what the replica as a whole would take; eight prompts, one a rank, cost what they would on one engine. The
    routed experts' FLOPs and the interconnect stay spread over the GPUs."""
    hardware = engine_hardware("B200", 8, "fp8")
    tensor = setup_for("deepseek-ai/DeepSeek-R1", hardware, "fp8", ENGINE_PRESETS["sglang"])
    tensor = replace(tensor, expert_parallel=8)
    data = replace(tensor, attention_data_parallel=8).cost
    one = data.prefill(4096, 0)
    experts = data.expert_flops_per_token * 4096 / data.flops_per_ms
    compute = FEATURES.index("compute_ms")
    local = one.copy()
    local[compute] -= experts
    local[FEATURES.index("communication_ms")] = 0.0
    alone = data.rank_prefill([(3, 4096, 0)])
    assert alone == pytest.approx(8 * local + (one - local))
    spread = data.rank_prefill([(rank, 4096, 0) for rank in range(8)])
    assert spread == pytest.approx(8 * one)  # eight prompts, as one engine over the GPUs would take them
    assert tensor.cost.rank_prefill([(0, 4096, 0)]) == pytest.approx(tensor.cost.prefill(4096, 0))
    assert 0 < experts < one[compute]


def test_tensorrt_llms_attention_dp_balance_holds_prompts_until_every_rank_has_one() -> None:
    """TensorRT-LLM's attention DP balance (``enable_balance`` with ``timeout_iters`` 60, as InferenceX and NVIDIA's
    DeepSeek recipes run it): while every rank decodes, a prompt waits until every rank has one, and all are
    prefilled in one step. DeepSeek-R1 on 8 B200s under DP8 at 64 users of 8,192-token prompts then stalls decoding
    once for eight prompts rather than eight times: a TPOT of 43 ms against 90 without the wait, and a longer TTFT
    (4.8 s against 2.9). At 4 users some rank has nothing to decode and nothing waits. vLLM and SGLang do not wait."""
    from infercost.performance.calibrate import MOE_PRIOR
    from infercost.performance.engine import simulate_closed_loop

    trt = ENGINE_PRESETS["tensorrt-llm"]
    assert trt.balance_wait_steps == 60
    assert not ENGINE_PRESETS["vllm"].balance_wait_steps and not ENGINE_PRESETS["sglang"].balance_wait_steps
    balanced = setup_for("deepseek-ai/DeepSeek-R1", engine_hardware("B200", 8, "fp8"), "fp8", trt)
    balanced = replace(balanced, expert_parallel=8, attention_data_parallel=8)
    unbalanced = replace(balanced, engine=replace(trt, balance_wait_steps=0))

    def means(setup: Setup, users: int, prompt: int) -> tuple[float, float]:
        trace = simulate_closed_loop(setup.cost, setup.config, MOE_PRIOR, concurrency=users, input_len=prompt,
                                     output_len=1024, length_spread=1 / 9)  # fmt: skip
        return float(trace.mean(trace.ttft) @ MOE_PRIOR), float(trace.mean(trace.tpot) @ MOE_PRIOR)

    (ttft, tpot), (ttft_alone, tpot_alone) = means(balanced, 64, 8192), means(unbalanced, 64, 8192)
    assert tpot < 0.6 * tpot_alone and ttft > 1.3 * ttft_alone
    assert means(balanced, 4, 1024) == pytest.approx(means(unbalanced, 4, 1024))


def test_a_ttft_correction_is_not_carried_past_the_users_it_was_fitted_on() -> None:
    """DeepSeek-R1 under SGLang 0.5.9, fitted on 4 B200s at 4 to 32 users, predicted 8 B200s at 512 users a mean
    TTFT of 0.5 ms (3.1 s measured): the correction's parabola in log users, carried past its points."""
    from infercost.performance.profiles import held_out_profiles, validation_tables
    from infercost.performance.validation import fit_tables, group_tables

    tables = validation_tables([p for p in held_out_profiles() if p.closed_loop and "deepseek-r1" in p.id
                                and "sglang-0.5.9" in p.id and "xb200-fp8" in p.id])  # fmt: skip
    groups = group_tables(tables)
    four, eight = (next(m for g, m in groups.items() if g[3] == gpus and len(g) == 5) for gpus in ("4", "8"))
    calibration = fit_tables(four)
    assert calibration.ttft_users == (4, 32)
    assert Calibration.from_json(calibration.to_json()).ttft_users == (4, 32)
    setup = eight[0].setup
    at = {users: predict_concurrency(setup, calibration, users, 1024, 1024).mean_ttft_ms for users in (32, 512)}
    unbounded = replace(calibration, ttft_users=None)
    assert predict_concurrency(setup, unbounded, 512, 1024, 1024).mean_ttft_ms < 5.0  # what it was: under 5 ms
    assert at[512] > at[32] > 100.0  # held at 32 users' correction, the queue of 512 users still shows


def _slower(table, factor: float):
    """The table as if every point took ``factor`` times as long."""
    return replace(table, observations=tuple(
        replace(o, request_throughput=o.request_throughput / factor, mean_ttft_ms=o.mean_ttft_ms * factor,
                mean_tpot_ms=o.mean_tpot_ms * factor, p95_ttft_ms=None, p95_tpot_ms=None)
        for o in table.observations))  # fmt: skip


def _model_predictions(tables) -> dict[str, list[float]]:
    """Each engine's ``model``-transfer predicted throughputs, from its signed errors."""
    from collections import defaultdict

    from infercost.performance.validation import Errors, model_transfer

    errors: dict[str, Errors] = defaultdict(Errors)
    model_transfer(tables, errors.__getitem__)
    measured = {engine: [o.request_throughput for t in tables if t.group[1].startswith(engine) for o in t.observations]
                for engine in errors}  # fmt: skip
    return {engine: [m * (1 + e) for m, e in zip(measured[engine], found.values["model"]["request_throughput"],
                                                 strict=True)]
            for engine, found in errors.items()}  # fmt: skip


def test_a_model_nobody_measured_is_predicted_from_the_other_families_medians_only() -> None:
    """``validation.model_transfer`` measures the error of ``predict_roofline`` for a model with no bundled table:
    each family's setups are predicted from priors whose medians leave that family out. Making DeepSeek-R1's own
    sweep twice as slow moves Qwen3.5's prediction (its priors are DeepSeek's fit here) and not DeepSeek's."""
    from infercost.performance.profiles import held_out_profiles, validation_tables

    wanted = {("deepseek-r1", "sglang 0.5.9", "B200", "8", "fp8"), ("qwen3.5-397b-a17b", "sglang 0.5.9", "B200", "4",
                                                                    "fp8")}  # fmt: skip
    tables = [t for t in validation_tables([p for p in held_out_profiles() if p.closed_loop])
              if t.group[:5] in wanted and len(t.group) == 5]  # fmt: skip
    assert {t.group[0] for t in tables} == {"deepseek-r1", "qwen3.5-397b-a17b"}
    before = _model_predictions(tables)["sglang"]
    after = _model_predictions([_slower(t, 2.0) if t.group[0] == "deepseek-r1" else t for t in tables])["sglang"]
    order = [t.group[0] for t in tables for _ in t.observations]
    mine = [i for i, name in enumerate(order) if name == "deepseek-r1"]
    theirs = [i for i, name in enumerate(order) if name != "deepseek-r1"]
    assert [after[i] for i in mine] == pytest.approx([before[i] for i in mine], rel=1e-9)
    assert all(after[i] < 0.9 * before[i] for i in theirs)


def test_a_dense_model_nobody_measured_under_vllm_computes_at_its_setups_fitted_share_of_the_peak() -> None:
    """``calibrate.unmeasured_prior``: vLLM's dense setups fit compute at the datasheet's peak (both bundled model
    families), so a dense model with no table is predicted so under vLLM; under SGLang and TensorRT-LLM, whose
    families disagree or stand alone, at the dense prior; a MoE model at its priors. ``EngineConfig.dense_compute_
    prior`` is what the stored harness run measured (rerun ``bench.held_out_accuracy --write`` when they part)."""
    from infercost.performance.calibrate import PRIOR, prior_for, unmeasured_prior
    from infercost.performance.engine import COMPUTE
    from infercost.performance.expected_error import held_out_errors

    stored = held_out_errors()["dense_compute"]
    assert stored["families_vllm"] >= 2
    assert ENGINE_PRESETS["vllm"].dense_compute_prior == pytest.approx(stored["compute_ms_vllm"], rel=0.05)
    for engine, compute in (("vllm", ENGINE_PRESETS["vllm"].dense_compute_prior), ("sglang", PRIOR[COMPUTE]),
                            ("tensorrt-llm", PRIOR[COMPUTE])):  # fmt: skip
        dense = setup_for("gemma-3-27b", engine_hardware("H100 SXM", 1, "bfloat16"), "bfloat16",
                          ENGINE_PRESETS[engine])  # fmt: skip
        assert unmeasured_prior(dense)[COMPUTE] == pytest.approx(compute), engine
        moe = setup_for("qwen3-30b-a3b", engine_hardware("H100 SXM", 1, "bfloat16"), "bfloat16",
                        ENGINE_PRESETS[engine])  # fmt: skip
        assert unmeasured_prior(moe) == pytest.approx(prior_for(moe)), engine


@pytest.mark.parametrize(("model", "kind", "engine"), [("qwen3-30b-a3b", "moe", "sglang"),
                                                       ("gemma-3-27b", "dense", "vllm")])  # fmt: skip
def test_a_roofline_of_a_model_with_no_table_carries_the_error_measured_for_that(model, kind, engine) -> None:
    """It said "its error is unknown" and carried a fixed -50%..+100% range; the error of predicting a held-out
    model family from the other families' priors is measured (the ``model`` transfer), and its ranges follow."""
    from infercost.performance.expected_error import held_out_error
    from infercost.performance.predict import Load, point_range, predict_roofline

    predicted = predict_roofline(model, "H100 SXM", 1, "bfloat16", 1000, 300, Load([1, 8]), engine=engine)
    error = held_out_error(kind, engine, "model")
    assert predicted.transfer == "model" and predicted.expected_error == error
    assert error["request_throughput"]["n"] > 50 and "other models" in predicted.notes[0]
    for point in predicted.points:
        low, high = point_range(point, error)["output_throughput"]
        assert low == pytest.approx(point.output_throughput / (1 + error["request_throughput"]["p90"]))
        assert high == pytest.approx(point.output_throughput / (1 + error["request_throughput"]["p10"]))


def test_a_hybrid_models_recurrent_state_takes_cache_and_is_read_by_every_step() -> None:
    """Nemotron-3-Nano keeps 49 MB of Mamba2 state per sequence (23 layers: 16-bit convolution inputs, fp32 SSM
    state, as vLLM and SGLang keep them) beside 3 KB of KV cache a token at FP8: the state is worth 15,978 tokens
    of cache. It was counted nowhere, so on one H100 1,024 users of 1,000 +
    300 tokens all ran, 51 GB of state in the ~50 GB the weights leave; and a decode step did not read it (at 256
    users, 12.8 GB a step). Now a sequence holds its state in the capacity's count and every step reads it once."""
    from infercost.performance.engine import held_extra_tokens
    from infercost.performance.predict import Load, predict_roofline

    hardware = engine_hardware("H100 SXM", 1, "fp8")
    nano = setup_for("nemotron-3-nano-30b-a3b", hardware, "fp8", ENGINE_PRESETS["vllm"])
    state = nano.shape.state_bytes_per_sequence
    assert state == 23 * ((4096 + 2 * 8 * 128) * 3 * 2 + 64 * 64 * 128 * 4)  # conv inputs bf16, SSM state fp32
    assert nano.cost.state_tokens(0.0) == -(-state // nano.cost.kv_bytes_per_token) == 15_978
    assert held_extra_tokens(nano.cost, nano.config, 1300) == 15_978
    decode_kv = nano.cost.decode(256, 256 * 1300)[2] * nano.cost.bandwidth_bytes_per_ms
    assert decode_kv == pytest.approx(nano.cost.kv_bytes_per_token * 256 * 1300 + 256 * state)
    predicted = predict_roofline("nemotron-3-nano-30b-a3b", "H100", 1, "fp8", 1000, 300,
                                 Load(concurrencies=(1, 256, 1024)))  # fmt: skip
    levels = [point.level for point in predicted.points]
    assert levels == [1, 256] and any("799 users" in note for note in predicted.notes)


def test_a_model_is_calibrated_on_the_tables_of_another_of_the_same_shapes() -> None:
    """DeepSeek-R1 and V3 share one config: under an engine with no table of V3, R1's calibrate it (before, V3
    under vLLM fell to the priors, R1's nine vLLM tables unused); under an engine with V3's own tables, those come
    first, even on other GPUs (runs of the two on one setup differ in what the tables do not record)."""
    from infercost.performance.predict import Load, predict_roofline
    from infercost.performance.profiles import shape_twin

    assert shape_twin("deepseek-v3") == shape_twin("DeepSeek-R1-0528") == "deepseek-r1"
    assert shape_twin("glm-5") == "glm-5" and shape_twin("not-bundled") == "not-bundled"
    twin = predict_roofline("deepseek-v3", "H200", 8, "fp8", 3200, 800, Load([4]), engine="vllm")
    assert twin.transfer != "model" and "deepseek-r1-8xh200" in twin.notes[0]
    assert any(note.startswith("deepseek-r1 is measured in deepseek-v3's place") for note in twin.notes)
    own = predict_roofline("deepseek-v3", "H200", 8, "fp8", 1024, 1024, Load([4]), engine="sglang")
    assert "deepseek-v3-4xb300" in own.notes[0] or "deepseek-v3-8xb300" in own.notes[0]
    assert not any("measured in deepseek-v3's place" in note for note in own.notes)


def test_a_moe_setup_of_one_prompt_length_takes_its_models_prompt_scaling_from_its_other_setups() -> None:
    """How a MoE model's TTFT grows with its prompt under one engine is more the model's than the engine's: under
    SGLang, 8,192-token prompts take 2.0-5.1x the 1,024-token TTFT at 4 users on GLM-5's setups, 1.2-2.6x on
    Qwen3.5-397B's. Fitted on its 1,024-token table alone, with SGLang's slope over every model, GLM-5 on 8x B300
    (InferenceX, FP8) predicted 383 ms for 4 users of 8,192-token prompts, where 573 ms was measured. A setup of one
    prompt length now takes its model's request latency and TTFT prompt slope from the model's other setups under
    its engine whose prompt lengths vary (``validation.prompt_scaling``)."""
    from infercost.performance.calibrate import PROMPT
    from infercost.performance.predict import held_out_scalings, held_out_tables
    from infercost.performance.validation import (
        PROMPT_SCALING_SETUPS,
        fit_tables,
        group_tables,
        model_engine,
        points_of,
        prompt_scaling,
    )

    groups = group_tables(t.table for t in held_out_tables().values())
    group = ("glm-5", "sglang unnamed@inference-sim", "B300", "8", "fp8")
    short, long = sorted(groups[group], key=lambda t: t.shape)  # 1,024 and 8,192 tokens in, 1,024 out
    scalings = held_out_scalings()
    others = [each for each in scalings[model_engine(short)] if each.group != group]
    assert len(others) >= PROMPT_SCALING_SETUPS
    own, engines = fit_tables([short], scalings=scalings), fit_tables([short])
    assert own.ttft_correction[PROMPT] == pytest.approx(np.median([each.prompt_slope for each in others]))
    assert engines.ttft_correction[PROMPT] == pytest.approx(ENGINE_PRESETS["sglang"].moe_ttft_prompt_slope)
    point = long.observations[0]
    assert point.concurrency == 4

    def ttft_ratio(calibration: Calibration) -> float:
        predicted = predict_concurrency(long.setup, calibration, 4, point.input_len, point.output_len)
        return predicted.mean_ttft_ms / point.mean_ttft_ms

    # Since InferenceX's length draw is simulated (``engine.request_lengths``), SGLang's MoE slope and GLM-5's own
    # nearly agree, and both predict about 425 ms here (0.74 of the measured; 383 and 466 ms before the draw)
    assert 0.7 < ttft_ratio(own) < 1.0 and ttft_ratio(engines) < 1.0
    # points of several prompt lengths tell for themselves; with fewer other setups than PROMPT_SCALING_SETUPS, the
    # engine's scaling stands
    assert prompt_scaling(model_engine(short), points_of(groups[group]), scalings) is None
    few = {model_engine(short): others[:PROMPT_SCALING_SETUPS - 1]}
    assert prompt_scaling(model_engine(short), short.observations, few) is None


def test_a_source_calibration_takes_no_prompt_scaling_from_the_setup_it_predicts() -> None:
    """A source of one prompt length takes its model's prompt scaling from the model's other setups; predicting one
    of those, it leaves that one out (``validation.SourceCalibrations``), so no table is predicted by a fit that saw
    it."""
    from infercost.performance.calibrate import PROMPT
    from infercost.performance.predict import held_out_tables
    from infercost.performance.validation import SourceCalibrations, group_tables, points_of, prompts_vary

    groups = group_tables(t.table for t in held_out_tables().values())
    deepseek = [g for g in groups if g[0] == "deepseek-r1" and g[1].startswith("sglang")]
    source = next(g for g in deepseek if not prompts_vary(points_of(groups[g])))
    varied = [g for g in deepseek if prompts_vary(points_of(groups[g]))][:3]
    calibrations = SourceCalibrations({g: groups[g] for g in (source, *varied)})
    slopes = {each.group: each.prompt_slope for each in calibrations.scalings["deepseek-r1", "sglang"]}
    assert set(slopes) == set(varied)
    assert calibrations(source, None).ttft_correction[PROMPT] == pytest.approx(np.median(list(slopes.values())))
    target = varied[0]
    left = calibrations(source, target).ttft_correction[PROMPT]
    assert left == pytest.approx(np.median([slope for g, slope in slopes.items() if g != target]))
    assert left != pytest.approx(calibrations(source, None).ttft_correction[PROMPT])
    assert calibrations(varied[1], target) is calibrations(varied[1], None)  # its own prompt lengths tell it


def test_a_prediction_at_a_prompt_length_its_calibration_never_saw_says_whose_prompt_scaling_it_took() -> None:
    """A setup measured at one prompt length and asked for another takes how TTFT grows with the prompt from
    elsewhere, and the answer's notes say from where: its model's other setups under its engine (a MoE model
    measured so), or the engine's median over every model's (a dense one, or a model measured once)."""
    import json
    import re
    import subprocess
    import sys

    def notes(source: str, input_tokens: int, *extra: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "infercost", "throughput", source, "--input-tokens",
                               str(input_tokens), "--output-tokens", "1024", "--concurrency", "4", "--json", *extra],
                              capture_output=True, text=True, check=True)  # fmt: skip
        return [n for n in json.loads(done.stdout)["notes"] if "prompt length" in n]

    deepseek = "published:aic-sglang-0.5.9-deepseek-r1-4xb200-fp8-tp4-dp1-ep1-8192in-1024out"  # 8,192 tokens only
    assert notes(deepseek, 8192) == notes(deepseek, 12000) == []  # its own, and within PROMPT_SPAN of it
    [moe] = notes(deepseek, 1024)
    assert re.fullmatch(r"measured at one prompt length \(8,192 tokens\): how TTFT grows with the prompt is "
                        r"deepseek-r1's under sglang, the median of \d+ of its other setups that measured several",
                        moe)  # fmt: skip
    assert notes("roofline:deepseek-r1@4xB200:fp8", 1024, "--engine", "sglang", "--engine-version", "0.5.9") == [moe]
    [dense] = notes("published:aic-trtllm-1.3.0rc5-qwen3-32b-nvfp4-2xb200-fp4-tp2-dp1-ep1-15000in-500out", 1024)
    assert dense.endswith("how TTFT grows with the prompt is tensorrt-llm's median over dense models' setups that "
                          "measured several, not this model's own")  # fmt: skip


def test_a_setup_of_several_prompt_lengths_says_nothing_of_another_ones_scaling() -> None:
    """Meta-Llama-3-8B on one A100 under NIM has tables of 200 to 2,000 tokens; its table of 200 tokens asked for
    1,024 was said to be measured at one prompt length (the note read the table's own points, not its setup's)."""
    from infercost.performance.predict import predict_profile

    profile = find_profile("published:nim-trtllm-llama-3-8b-instruct-1xa100-80gb-fp16-200in-1000out")
    predicted = predict_profile(profile, 4096, 1000)
    assert predicted.transfer == "shape"
    assert not [note for note in predicted.notes if "prompt length" in note]
