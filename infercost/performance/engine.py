"""A discrete-event simulation of a continuous-batching inference engine (vLLM, SGLang, TensorRT-LLM).

The engine runs in *steps*. Each step it admits waiting requests while the batch has a free slot
(``max_batch``) and the KV cache has room, schedules one decode token for every running sequence and as many
prompt tokens as the step's token budget allows (``max_batched_tokens``; whole prompts, or chunks of them with
chunked prefill), then every scheduled sequence advances together. A prompt's last chunk yields the first output
token; a sequence that reaches its output length leaves and frees its KV cache. Where the cache runs out under
on-demand allocation (vLLM), the newest sequence is preempted and recomputed later.

A step's time is linear in features of what it does (``StepCost``): one (fixed overhead per step), bytes moved
over memory bandwidth (weights once, plus every KV cache read), FLOPs over peak compute, decode sequences
(per-sequence overhead: sampling, scheduling, attention-kernel inefficiency), and, on a tensor-parallel group, the
all-reduces of every token's activations over the GPUs' interconnect (NVLink or PCIe, from the datasheet). Each
request also pays a fixed latency of its own outside the steps (``request_ms``: the server's front end), once in its
TTFT. The simulation records those features, not seconds, so every latency is ``features · coefficients``: for a
closed loop the schedule does not depend on the coefficients at all, which makes fitting them a linear least-squares
problem (``calibrate``). Runs of identical pure-decode steps are taken in one jump, so a sweep of ten levels
simulates in milliseconds. The KV cache holds what the GPUs' memory leaves after the weights and the runtime's own
buffers (``kv_capacity_tokens``).

Pure: numbers in, numbers out.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache, partial
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from infercost.performance.roofline import ModelShape, dtype_bytes, weight_bytes

FEATURES = ("step_overhead_ms", "weights_ms", "kv_cache_ms", "compute_ms", "sequence_ms", "request_ms",
            "communication_ms", "wait_ms")
# A request's own fixed latency outside the engine's steps (the server's HTTP front end, tokenizing the prompt,
# detokenizing and sending the first chunk): one unit in every TTFT and end-to-end latency, fitted like a step cost.
REQUEST = FEATURES.index("request_ms")
STEP = FEATURES.index("step_overhead_ms")
WEIGHTS = FEATURES.index("weights_ms")
KV_CACHE = FEATURES.index("kv_cache_ms")
COMPUTE = FEATURES.index("compute_ms")
# Time that is not fitted (coefficient 1): tensor-parallel all-reduces at the interconnect's datasheet rate, which
# the points of one setup cannot tell from compute, and time outside the engine's steps (client delay, idle engine).
COMMUNICATION = FEATURES.index("communication_ms")
WAIT = FEATURES.index("wait_ms")
LINK_EFFICIENCY = 0.7  # share of the interconnect's bandwidth an all-reduce reaches (NCCL's bus bandwidth)
MEMORY_HEADROOM = 0.9  # share of free GPU memory an engine gives its KV cache (vLLM's gpu_memory_utilization)
# The KV cache gets what is free once the runtime has its own memory: the CUDA context and communication buffers
# (about a GB a GPU), and the activation buffers of the largest step, which TensorRT sizes when the engine is built as
# "max number of input tokens * some constant factor" (TensorRT-LLM docs, reference/memory.md) and vLLM measures by
# profiling its largest batch. Taken as 6 hidden-state-sized 16-bit tensors per token of the step budget: 4.2 GB a GPU
# for Llama-3-8B at NIM's 65,536-token budget, 7.4 GB for 70B. The bundled NIM sweeps, where they plateau on a full KV
# cache, serve 0.7-0.93 of the requests the weights alone would leave room for; shape-transfer mean TTFT went from
# a median 14.7% / p90 39.8% to 11.8% / 33.9% with it, one table 13.7% / 43.0% to 13.6% / 39.4%, other GPUs
# 14.9% / 43.9% to 13.3% / 37.0% (with ``request_ms``; bench.prediction_accuracy): measured on the tables it is
# scored on, like the tensor-parallel exponent below.
RUNTIME_CONTEXT_GB = 1.0
ACTIVATION_TENSORS_PER_TOKEN = 6
ACTIVATION_BYTES = 2  # activations (and the all-reduces that carry them) are 16-bit, whatever the weights' dtype


@dataclass(frozen=True)
class Hardware:
    """One replica's GPUs: tensor parallelism adds bandwidth, compute and memory (taken as ideal)."""

    gpu: str
    bandwidth_gbps: float  # GB/s per GPU
    peak_tflops: float  # dense, per GPU, in the model's compute dtype
    memory_gb: float  # per GPU
    gpus: int = 1
    interconnect_gbps: float = 0.0  # GB/s between the GPUs, both directions (0: unknown, no all-reduce cost)
    # "blackwell" (NVIDIA with FP4 tensor cores), "hopper" (FP8 ones: Hopper and Ada), "ampere" (neither), "amd";
    # "" where not known. A MoE model computes at a share of the peak that depends on it (``MOE_COMPUTE_SHARE``), a
    # dense model reads its weights at a share of the bandwidth (``DENSE_WEIGHT_READ_SHARE``).
    generation: str = ""
    fp4: bool = False  # FP4 tensor cores (Blackwell, MI355X): MXFP4 and NVFP4 weights computed as they are stored


# The share of its datasheet peak a MoE model's FLOPs run at on a GPU generation, relative to Hopper's. The median
# compute coefficient fitted on the bundled MoE setups whose points identify it (``validation.moe_coefficients``)
# was 4.9x the roofline on Blackwell (66 setups: B200, B300, GB200) and 1.9x on Hopper (30: H100, H200), where dense
# models fit alike on both (1.1x and 1.0x at FP8): the grouped expert GEMMs of 2025-26 engines reached a smaller share
# of Blackwell's doubled FP8 and FP4 peaks than of Hopper's. Measured low-concurrency TTFTs say the same: DeepSeek-R1
# FP8 on 8 H200s under SGLang 0.5.9 takes 1.1x its TTFT on 8 B200s, against a 2.3x peak ratio. Without it a
# calibration moved between the generations carried the gap with it (DeepSeek-R1 on 8 B200s predicting 8 H200s: TTFT
# +162%). Held-out MoE mean TTFT from other GPUs, SGLang median / p90 33.9% / 79.3% -> 25.5% / 68.5%, TensorRT-LLM
# 42.5% / 125.5% -> 39.7% / 109.2%, vLLM 23.2% -> 22.3%; from the nearest setup, SGLang p90 100% -> 82.9% (at a
# share of 1 / 2.17, measured before the sample's repeated measurements were bundled once). The harness stores the
# fitted medians per generation with the share applied, and a test holds them together (in the units of
# ``MOE_COMPUTE_GPU_EXPONENT``, 2.67x on Blackwell and 2.68x on Hopper). It was 1 / 2.5 until InferenceX's tables
# were simulated with their benchmark's length draw (``request_lengths``), under which the generations' fits parted
# at that share (2.19x and 2.68x).
MOE_COMPUTE_SHARE = {"blackwell": 1 / 2.04}
# A MoE step whose 4-bit weights the GPU cannot compute as stored (MXFP4 or NVFP4 without FP4 tensor cores, INT4 on
# any GPU) runs its expert layers through kernels that widen the weights first (W4A16: vLLM's Marlin and Triton MoE,
# TensorRT-LLM's on Hopper), and pays a fixed cost a layer for it: its step overhead is this many times a native
# step's. Paired on the same weights and engine, the fits that identify it put gpt-oss-120b's (MXFP4) step overhead
# at 2.18x its Blackwell one on Hopper under TensorRT-LLM (7 setups against 8) and 1.48x under vLLM (15 against 7),
# the same at every GPU count (a fixed cost, not a read); 1.80 is their geometric mean. Every other dtype measured on
# both generations fits alike (FP8: DeepSeek-R1 and Qwen3.5 under SGLang 1.06x and 1.05x, GLM-5 0.93x, MiniMax-M2.5
# under vLLM 0.99x), and Kimi-K2.5's INT4, widened on both, 0.91x. Carried between the generations without it, a
# calibration took the gap along: gpt-oss-120b under TensorRT-LLM from 8 H200s to 8 B200s predicted TPOT 59% high,
# and the other way 34% low. Like the other shares here, read off the same tables it is scored on.
WIDENED_WEIGHTS_STEP_FACTOR = 1.8
# The share of its datasheet bandwidth a dense model's weight reads reach on a generation, relative to Hopper's. The
# dense FP8 setups whose points identify it (``validation.dense_weight_reads``) fitted their weight reads at 1.32x
# the roofline on Blackwell (8 setups: Llama-3.1-70B on B200s under vLLM and TensorRT-LLM) and 1.03x on Hopper (20),
# where MoE setups read alike on both (0.46x and 0.45x at FP8): not the memory, then, but the dense decode GEMMs of
# these engines, which reach less of Blackwell's 8 TB/s than of Hopper's 4.8. Measured at FP8, the format both run
# natively; NVFP4 weights, Blackwell's alone, fit at 2.08x. Held-out dense throughput / TPOT carried to other GPUs:
# vLLM median 17.5% / 17.7% -> 12.7% / 13.0% (p90 42.0% / 41.1% -> 30.5% / 29.3%), TensorRT-LLM 14.8% / 15.7% ->
# 13.3% / 14.0%; MoE setups given a share of 1 / 1.35 fared worse (TensorRT-LLM throughput p90 from other GPUs
# 48% -> 65%).
DENSE_WEIGHT_READ_SHARE = {"blackwell": 1 / 1.28}


@dataclass(frozen=True)
class EngineConfig:
    """How the engine schedules: the settings that shape queues, batch sizes and saturation."""

    max_batch: int = 256  # running sequences (vLLM max_num_seqs, TensorRT-LLM max_batch_size)
    max_batched_tokens: int = 8192  # tokens per step (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens)
    chunked_prefill: bool = False  # split a prompt across steps to fill the budget
    mixed_steps: bool = True  # decode tokens ride along in a step that prefills; False: decodes wait for it
    # Whether the engine always schedules that way (vLLM V1's chunked prefill, TensorRT-LLM's in-flight batching
    # mix every step), or a deployment may run either and a fit of its points chooses (SGLang pauses decoding for
    # prefill batches unless --enable-mixed-chunk; NIM's builds are not documented): ``calibrate._schedulers``.
    mixed_steps_fixed: bool = False
    reserve_full_kv: bool = True  # admit only if prompt + output fit (TensorRT-LLM); else grow and preempt (vLLM)
    kv_capacity_tokens: float = math.inf  # tokens the KV cache holds across the batch
    prefix_caching: bool = False  # prompts that start with a cached prefix skip prefilling it (vLLM, SGLang)
    cached_prompt_fraction: float = 0.0  # share of each prompt found in the prefix cache (with ``prefix_caching``)
    # Defaults that depend on the GPU (0: none): the step budget on GPUs of ``LARGE_GPU_GB`` or more (SGLang), and
    # the batch cap and step budget on GPUs under ``SMALL_GPU_GB`` or A100s (vLLM)
    large_gpu_batched_tokens: int = 0
    small_gpu_batch: int = 0
    small_gpu_batched_tokens: int = 0
    # How much faster mean TTFT grows with prompt length than the simulated steps make it, as a log-log slope: what
    # the TTFT correction takes (``calibrate._ttft_correction``) where a calibration's points have one prompt length
    # and cannot tell. The median fitted slope of the engine's bundled setups whose points have several
    # (``validation.prompt_slopes``; python -m bench.held_out_accuracy prints them), for dense models and for MoE
    # models apart: their quartiles hardly overlap (TensorRT-LLM dense 0.13 to 0.29, MoE -0.06 to 0.11).
    ttft_prompt_slope: float = 0.0
    moe_ttft_prompt_slope: float = 0.0
    # Where a MoE setup's prompt time goes under this engine, as the priors of its fit (``calibrate.prior_for``): its
    # compute (x roofline) and each request's own latency outside the steps, the medians of the engine's MoE setups
    # whose points identify them (``validation.moe_coefficients``, per engine, the latency over those of several
    # prompt lengths; None: ``calibrate.MOE_PRIOR``'s, the median over every engine). The engines part: SGLang 3.9x
    # and 169 ms, TensorRT-LLM 2.2x and 100 ms, vLLM 2.7x and 31 ms (compute in the units of
    # ``MOE_COMPUTE_GPU_EXPONENT``). They were 2.0x and 8 ms, 1.5x and 29 ms, 1.2x and none while InferenceX's tables
    # were simulated as if their users stayed in step (``engine.request_lengths``): the waves of prompts that
    # prefilled together stood for time that each request now pays alone.
    # With one prompt length a fit cannot tell the two apart, and the pooled prior put SGLang's prefill into a
    # per-request latency carried whole to other prompt lengths (DeepSeek-V3 on 8 B300s fitted at 8,192 tokens: 1.5 s
    # a request, 1,673 ms predicted at 1,024 where 291 ms was measured); such a fit now keeps the latency's prior
    # (``calibrate.MEASURED_UNITS``).
    moe_compute_prior: float | None = None
    moe_request_ms_prior: float | None = None
    # A dense model's compute (x roofline) under this engine where nothing of that model was measured
    # (``calibrate.unmeasured_prior``); None: the dense prior's 2 (50% of peak, read off NIM). vLLM's dense setups
    # whose points identify it fit 2.09 (Llama-3 and Qwen3; at the floor, 1, while InferenceX's Llama-3.1-70B runs
    # were simulated in step). The others' model families disagree (TensorRT-LLM: Llama-3 1.2, Qwen3 2.2) or only
    # one was measured (SGLang), and keep the prior. Held out, a dense model nobody measured, its vLLM mean TTFT
    # median |error| 94% -> 36% (``validation.model_transfer``; 55% since the length draw). The fitted setups keep
    # the prior: their own points place their compute.
    dense_compute_prior: float | None = None
    # How the KV cache keeps a model's windowed layers (sliding-window or chunked attention: gpt-oss, Llama-4,
    # Gemma-3), in tokens held per token of the full-attention layers' cache: 1 as if they were full layers (one page
    # layout for every layer, vLLM before its hybrid KV cache manager); SGLang's hybrid SWA pool, sized at
    # ``swa_full_tokens_ratio`` (0.8) of the full layers' tokens; 0 where each sequence holds only its window, apart
    # (vLLM's hybrid KV cache manager, TensorRT-LLM's pool per window size): ``StepCost.window_tokens``.
    window_cache: float = 1.0
    # Whether each attention data-parallel rank has the batch cap and step budget (vLLM's engine cores, TensorRT-LLM's
    # attention DP), or the server's are divided among them (SGLang: chunked_prefill_size // dp_size, and so its
    # max_running_requests; server_args.py ``_handle_data_parallelism``): ``calibrate.Setup.attention_data_parallel``.
    budget_per_rank: bool = True
    # TensorRT-LLM's attention DP balance (``attention_dp_config``: ``enable_balance`` with ``timeout_iters``): a
    # prompt waits, while every rank has sequences to decode, until every rank has a prompt to prefill, or this many
    # steps at most; then all are prefilled in one step (0: no wait). A rank's prompt alone stalls every rank's
    # decoding for its prefill (``StepCost.rank_prefill``); balanced, the stalls come once for all ranks, and TTFT
    # pays the wait (NVIDIA/TensorRT-LLM, ``PyExecutor._balance_adp_requests`` and its tech blog 10, "ADP Balance
    # Strategy": 1.33x the throughput of DeepSeek-V3 on 8 GB200s). InferenceX's launch scripts and NVIDIA's DeepSeek
    # recipes run attention DP with ``enable_balance: true``, ``timeout_iters: 60``, ``batching_wait_iters: 0``.
    balance_wait_steps: int = 0

    def on_gpu(self, gpu: str, memory_gb: float) -> EngineConfig:
        """The engine with the defaults it takes on this GPU (and no GPU-dependent defaults left to apply)."""
        batch, budget = self.max_batch, self.max_batched_tokens
        if self.large_gpu_batched_tokens and memory_gb >= LARGE_GPU_GB:
            budget = self.large_gpu_batched_tokens
        if self.small_gpu_batch and (memory_gb < SMALL_GPU_GB or "a100" in gpu.lower()):
            batch, budget = self.small_gpu_batch, self.small_gpu_batched_tokens
        return replace(self.as_set(), max_batch=batch, max_batched_tokens=budget)

    def as_set(self) -> EngineConfig:
        """This batch cap and step budget on every GPU (what a build that sets them explicitly runs with)."""
        return replace(self, large_gpu_batched_tokens=0, small_gpu_batch=0, small_gpu_batched_tokens=0)

    def compute_prior(self, moe: bool) -> float | None:
        """This engine's own compute prior for a MoE or a dense model (None: it has none and takes the pooled one)."""
        return self.moe_compute_prior if moe else self.dense_compute_prior

    def prompt_slope(self, moe: bool) -> float:
        """The TTFT correction's prompt-length slope for a calibration that cannot fit its own."""
        return self.moe_ttft_prompt_slope if moe else self.ttft_prompt_slope

    def cached_tokens(self, input_len: int) -> int:
        """Prompt tokens a request finds in the prefix cache: never its last one, which must run to give the first
        output token (vLLM recomputes it even on a full hit)."""
        if not self.prefix_caching:
            return 0
        return min(int(input_len * self.cached_prompt_fraction), input_len - 1)


# NVIDIA NIM's TensorRT-LLM engines (the calibration set), GUARANTEED_NO_EVICT scheduling (a request's whole KV cache
# reserved on admission). NIM's engines prefill a closed loop's whole wave of prompts in one step: Llama-3.1-8B on one
# H100 at 2000/200 has mean TTFT 52, 207, 446 and 904 ms at 1, 5, 10 and 25 users, about 13 + 37 ms per prompt of the
# wave (25 prompts are 50,000 tokens); a budget of 16384 splits the wave and puts the later prompts' TTFT at a
# fraction of it. 65536 fits the bundled sweeps best (shape transfer, mean TTFT median |error| 23.1% at 16384, 14.0%
# at 65536, 12.9% at 131072 with throughput and TPOT worse; bench.prediction_accuracy). ``engine_preset`` gives it
# to an engine named NIM.
NIM_ENGINE = EngineConfig(max_batch=256, max_batched_tokens=65536, chunked_prefill=False, reserve_full_kv=True,
                          ttft_prompt_slope=-0.023, window_cache=0.0)
ENGINE_PRESETS: dict[str, EngineConfig] = {
    # TensorRT-LLM as trtllm-serve and trtllm-build build it: BuildConfig's max_batch_size 2048 and max_num_tokens
    # 8192 (NVIDIA/TensorRT-LLM at 008b2b8, tensorrt_llm/builder.py), chunked prefill off, GUARANTEED_NO_EVICT. With
    # NIM's 65536 the held-out TensorRT-LLM tables (AIConfigurator's, trtllm-serve 0.17 to 1.3) came out worse:
    # leaving one shape out, dense throughput / TPOT median 11.5% / 15.9% -> 8.2% / 9.1%, MoE 9.1% / 10.9% ->
    # 8.4% / 9.3% (dense TTFT from one table went the other way, 32% -> 43%).
    # How its TTFT grows with the prompt beyond the steps (setups of several prompt lengths: dense 21, -0.219,
    # quartiles -0.26 and 0.15; MoE 42, -0.029, quartiles -0.09 and 0.01; NIM's 12: -0.023). The dense slope was
    # +0.16 while InferenceX's Llama-3.1-70B runs were simulated in step: their waves' queue had been read as
    # prefill that grows with the prompt.
    "tensorrt-llm": replace(NIM_ENGINE, max_batch=2048, max_batched_tokens=8192, ttft_prompt_slope=-0.219,
                            moe_ttft_prompt_slope=-0.029, moe_compute_prior=2.23, moe_request_ms_prior=99.9,
                            mixed_steps_fixed=True, balance_wait_steps=60),
    # vLLM V1's server: max_num_seqs 1024 and max_num_batched_tokens 8192 on a GPU of 70 GiB or more other than an
    # A100, 256 and 2048 on the others (EngineArgs.get_batch_defaults, vllm-project/vllm at 99d7eb5,
    # vllm/engine/arg_utils.py); chunked prefill on, KV blocks on demand. The cap was 256 here before: SGLang's and
    # vLLM's held-out sweeps run 512 users, which it queued into TTFTs of 20 s against 3 s measured. Its TTFT grows
    # with prompt length as its simulated steps make it grow (setups of several prompt lengths: dense 22, slope
    # 0.002, quartiles -0.07 and 0.15; MoE 69, 0.002, quartiles -0.03 and 0.03; SGLang's -0.18 for 8 dense setups,
    # -0.012 for 42 MoE). The slopes were 0.32 and 0.07 while InferenceX's runs were simulated as if their users
    # stayed in step: what the waves' queue added had been read as time that grows with the prompt.
    "vllm": EngineConfig(max_batch=1024, max_batched_tokens=8192, chunked_prefill=True, reserve_full_kv=False,
                         prefix_caching=True, small_gpu_batch=256, small_gpu_batched_tokens=2048,
                         ttft_prompt_slope=0.002, moe_ttft_prompt_slope=0.002, moe_compute_prior=2.67,
                         moe_request_ms_prior=31.2, dense_compute_prior=2.09, window_cache=0.0,
                         mixed_steps_fixed=True),
    # SGLang: chunked_prefill_size 8192 on GPUs under 160 GB (H100, H200), 16384 on larger ones (B200, MI300X), and
    # no running-request cap but the memory pool's (max_running_requests unset: at least 2048 request slots); in
    # sgl-project/sglang at 469c63e, python/sglang/srt/server_args.py and model_runner.py.
    "sglang": EngineConfig(max_batch=2048, max_batched_tokens=8192, chunked_prefill=True, reserve_full_kv=False,
                           prefix_caching=True, large_gpu_batched_tokens=16384, ttft_prompt_slope=-0.179,
                           moe_ttft_prompt_slope=-0.011, moe_compute_prior=3.86, moe_request_ms_prior=169.0,
                           window_cache=0.8, budget_per_rank=False),
}
LARGE_GPU_GB = 160 * 1024 * 2**20 / 1e9  # SGLang's tier for a larger chunked prefill (gpu_mem >= 160 * 1024 MiB)
SMALL_GPU_GB = 70 * 2**30 / 1e9  # vLLM's tier for its larger defaults (device memory >= 70 GiB)


# An engine release as people write it: 0.5.9, v0.11.2, 1.2.0rc6.post3, nightly-dev-20260402 (``--engine-version``)
RELEASE_PATTERN = r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}"


def engine_preset(engine: str) -> tuple[str, EngineConfig]:
    """The preset an engine's name refers to (``NVIDIA NIM, TensorRT-LLM backend`` → tensorrt-llm, with NIM's engine
    build); vLLM's otherwise."""
    lowered = engine.lower().replace("_", "-")
    if re.search(r"\bnim\b", lowered):
        return "tensorrt-llm", NIM_ENGINE  # TensorRT-LLM as NIM builds it
    for name in ("tensorrt-llm", "trt-llm", "trtllm", "sglang", "vllm"):
        if name in lowered:
            key = {"trt-llm": "tensorrt-llm", "trtllm": "tensorrt-llm"}.get(name, name)
            return key, ENGINE_PRESETS[key]
    return "vllm", ENGINE_PRESETS["vllm"]


@cache
def _expected_largest_normal(count: int) -> float:
    """The expected largest of ``count`` standard normal draws (Blom's approximation: 1.05 for 4, 1.43 for 8)."""
    return NormalDist().inv_cdf((count - 0.375) / (count + 0.25))


@dataclass(frozen=True)
class StepCost:
    """What one step costs in features; ``seconds = features · coefficients``.

    ``weights_bytes`` are read once per step, and of the routed experts' ``expert_bytes`` the share the step's tokens
    route to (``expert_pick`` = k / n of them for one token, all of them for thousands); each token of context a
    sequence attends to reads ``kv_bytes_per_token`` and costs ``attention_flops_per_token_pair`` (a decoding
    token ``decode_attention_flops_per_token_pair``), a windowed layer's at most ``window`` of them, a sparse
    layer's attention the ``sparse_reach`` its indexer picks; each token processed (prompt or decode) costs
    ``flops_per_token``. A hybrid model's recurrent layers keep ``state_bytes_per_sequence`` per sequence, which
    every step it is in updates in place (counted once: counted twice, as a read and a write, the held-out Qwen3.5
    tables' errors rose, shape transfer throughput 5.9% -> 6.5% median, TTFT 16.3% -> 17.0%).
    """

    weights_bytes: float
    kv_bytes_per_token: float
    flops_per_token: float
    attention_flops_per_token_pair: float
    bandwidth_bytes_per_ms: float
    flops_per_ms: float
    group_gpus: int = 1  # per-step and per-sequence costs are counted once per GPU of the group (see step_cost)
    # a MoE model's layers over ``MOE_REFERENCE_LAYERS`` (its step cost is per layer; more where its weights are
    # widened: ``WIDENED_WEIGHTS_STEP_FACTOR``)
    step_layers: float = 1.0
    allreduce_ms_per_token: float = 0.0  # tensor-parallel all-reduce time of one token's activations, all layers
    expert_bytes: float = 0.0  # every routed expert of every MoE layer
    expert_pick: float = 0.0  # k / n: the share of a layer's experts one token goes through
    window: int = 0  # tokens a windowed layer attends to at most
    window_kv_bytes_per_token: float = 0.0
    window_attention_flops_per_token_pair: float = 0.0
    decode_attention_flops_per_token_pair: float = 0.0  # 0: as a prompt token's
    experts_per_gpu: float = 0.0  # routed experts of a layer each GPU holds under expert parallelism (0: sharded)
    expert_gpus: int = 1  # GPUs the routed experts are spread over (expert parallelism)
    # Attention data-parallel ranks (1: none), and the FLOPs of a token's routed experts, the part of
    # ``flops_per_token`` that the expert GPUs share whichever rank the token is on (``rank_prefill``)
    attention_ranks: int = 1
    expert_flops_per_token: float = 0.0
    state_bytes_per_sequence: float = 0.0
    # Sparse attention: of ``kv_bytes_per_token`` and the attention FLOPs per pair, the parts a sequence spends only
    # on the entries its indexer picks, at most ``sparse_reach`` tokens' worth however long it is
    sparse_reach: int = 0
    picked_kv_bytes_per_token: float = 0.0
    picked_attention_flops_per_token_pair: float = 0.0
    picked_decode_attention_flops_per_token_pair: float = 0.0

    @property
    def sparse_prefill_extra_flops_per_token_pair(self) -> float:
        """What a prompt token past the reach spends on each pick beyond the expanded form: sparse prefill runs MLA
        absorbed, as decoding does (FlashMLA's sparse prefill kernel, which vLLM and SGLang call, works in its MQA
        mode, q.k over 576 values and 512 summed: deepseek-ai/FlashMLA at 9241ae3, README), 3.4x the expanded
        FLOPs for DeepSeek-V3.2 and 2.1x for GLM-5; none where the forms are alike (DeepSeek-V4's indexed branches)."""
        return self.picked_decode_attention_flops_per_token_pair - self.picked_attention_flops_per_token_pair

    def expert_weights_ms(self, tokens: float) -> float:
        """Roofline time of the routed experts a step of ``tokens`` tokens reads (uniform routing: an expert is
        left unread with probability ``(1 - k/n) ** tokens``), on the busiest GPU (``expert_imbalance``)."""
        if not self.expert_bytes or tokens <= 0:
            return 0.0
        read = 1.0 - (1.0 - self.expert_pick) ** tokens
        return self.expert_bytes * read * self.expert_imbalance(read) / self.bandwidth_bytes_per_ms

    def expert_imbalance(self, read: float) -> float:
        """How much longer the GPU with the most routed-to experts reads than the mean GPU. Sharded experts
        (tensor parallelism) put a slice of every expert on every GPU: 1. Spread whole over ``expert_gpus`` GPUs, a
        GPU's experts hit are binomial (``experts_per_gpu``, ``read``), and the step waits for the most loaded: the
        expected largest of ``expert_gpus`` such counts over their mean, by the normal approximation with Blom's
        expected maximum. Qwen3.5-397B (512 experts, 10 a token) over 4 GPUs decoding 4 tokens: 1.32; 64 tokens:
        1.06."""
        if self.expert_gpus < 2 or not self.experts_per_gpu or read <= 0.0 or read >= 1.0:
            return 1.0
        spread = math.sqrt((1.0 - read) / (self.experts_per_gpu * read))  # a GPU's count's sd over its mean
        return 1.0 + _expected_largest_normal(self.expert_gpus) * spread

    def window_tokens(self, length: int) -> int:
        """Tokens of the full-attention layers' cache that a sequence of ``length`` tokens takes for its windowed
        layers, in a cache that keeps only their window (``EngineConfig.window_cache`` 0): gpt-oss's 128-token
        window over half its layers, 128; Llama-4's 8,192-token chunks over three layers in four, three times the
        sequence up to 24,576. 0 without windowed layers, or without full ones to count in (every token counted)."""
        if not (self.window and self.kv_bytes_per_token):
            return 0
        return math.ceil(min(length, self.window) * self.window_kv_bytes_per_token / self.kv_bytes_per_token)

    def state_tokens(self, window_cache: float) -> int:
        """A sequence's recurrent state (Mamba2, Gated DeltaNet, Kimi Delta Attention) in tokens of the cache the
        capacity counts (its full layers', and ``window_cache`` of its windowed layers'): engines keep it per running
        sequence beside its KV cache (vLLM's hybrid cache manager in the same pool, SGLang in a pool of its own).
        Qwen3.5-397B's 192 MB is worth 6,252 tokens of its cache; Nemotron-H-56B's 460 MB, 11,222 (bfloat16)."""
        token = self.kv_bytes_per_token + window_cache * self.window_kv_bytes_per_token
        return math.ceil(self.state_bytes_per_sequence / token) if self.state_bytes_per_sequence and token else 0

    def decode(self, sequences: float, context_tokens: float) -> NDArray:
        """Features of one step that decodes a token for ``sequences`` sequences holding ``context_tokens`` in all
        (with ``sequences`` 0: the overhead and weight reads every step pays)."""
        return self.decode_run(1, sequences, context_tokens)

    def prefill(self, tokens: float, past_tokens: float) -> NDArray:
        """Extra features of ``tokens`` prompt tokens after ``past_tokens`` already cached, in a step that is
        already paying its overhead and weight reads (its extra expert reads: ``step``)."""
        kv_ms, compute_ms, communication_ms = self._prefill_ms(tokens, past_tokens)
        return np.array([0.0, 0.0, kv_ms, compute_ms, 0.0, 0.0, communication_ms, 0.0])

    def _prefill_ms(self, tokens: float, past_tokens: float) -> tuple[float, float, float]:
        """``prefill``'s KV-cache, compute and communication features, as numbers: a step sums its chunks' without
        an array for each."""
        attended = tokens * (past_tokens + (tokens + 1) / 2)
        kv_bytes = self.kv_bytes_per_token * (past_tokens + tokens) + self.state_bytes_per_sequence
        flops = self.flops_per_token * tokens + self.attention_flops_per_token_pair * attended
        if self.sparse_reach:  # the chunk's queries past the reach attend to their picks only, as decoding does
            first, last = max(past_tokens + 1, self.sparse_reach + 1), past_tokens + tokens
            if last >= first:
                queries = last - first + 1
                flops -= self.picked_attention_flops_per_token_pair * queries * ((first + last) / 2 - self.sparse_reach)
                flops += self.sparse_prefill_extra_flops_per_token_pair * queries * self.sparse_reach
        if self.window:
            kv_bytes += self.window_kv_bytes_per_token * min(past_tokens + tokens, self.window)
            flops += self.window_attention_flops_per_token_pair * tokens * min(past_tokens + (tokens + 1) / 2,
                                                                                self.window)  # fmt: skip
        return kv_bytes / self.bandwidth_bytes_per_ms, flops / self.flops_per_ms, self.allreduce_ms_per_token * tokens

    def rank_prefill(self, chunks: list[tuple[int, int, int]]) -> NDArray:
        """Extra features of a step's prompt chunks (rank, tokens, past tokens). Under attention data parallelism a
        prompt's attention, dense layers and shared experts run on its own rank's GPUs, a ``1 / attention_ranks``
        share of the replica's, and the ranks step together: the step waits for the busiest rank, so that work
        costs ``attention_ranks`` times the busiest rank's (the features' units are the whole replica's). A wave of
        prompts spread over every rank costs what one engine over all the GPUs would; one prompt alone, arriving
        into a steady closed loop, ``attention_ranks`` times that, while the routed experts' FLOPs and the
        interconnect traffic stay spread over the GPUs."""
        features = np.zeros(len(FEATURES))
        if self.attention_ranks == 1:  # one rank: nothing to wait for (the hot path of most simulations)
            for _, tokens, past in chunks:
                kv_ms, compute_ms, communication_ms = self._prefill_ms(tokens, past)
                features[KV_CACHE] += kv_ms
                features[COMPUTE] += compute_ms
                features[COMMUNICATION] += communication_ms
            return features
        ranks: dict[int, NDArray] = {}
        for rank, tokens, past in chunks:
            chunk = self.prefill(tokens, past)
            shared = self.expert_flops_per_token * tokens / self.flops_per_ms
            chunk[COMPUTE] -= shared
            features[COMPUTE] += shared
            features[COMMUNICATION] += chunk[COMMUNICATION]
            chunk[COMMUNICATION] = 0.0
            ranks[rank] = ranks.get(rank, 0.0) + chunk
        if ranks:
            busiest = max(ranks.values(), key=lambda local: float(local.sum()))
            features += busiest * self.attention_ranks
        return features

    def step(self, decodes: int, context_tokens: float, chunks: list[tuple[int, int, int]]) -> NDArray:
        """Features of one step that decodes a token for ``decodes`` sequences holding ``context_tokens`` in all and
        prefills ``chunks`` (rank, tokens, past tokens): the routed experts read are those all its tokens go to."""
        tokens = decodes
        for _, chunk, _ in chunks:  # a step has a chunk or two: a loop is quicker than sum() over a generator
            tokens += chunk
        features = self.decode_run(1, decodes, context_tokens, expert_tokens=tokens)
        features += self.rank_prefill(chunks)
        return features

    def decode_run(self, steps: int, sequences: float, context_tokens: float,
                   expert_tokens: float | None = None) -> NDArray:  # fmt: skip
        """Features of ``steps`` pure-decode steps in a row; context grows by ``sequences`` tokens a step. Each step
        reads the routed experts of ``expert_tokens`` tokens (its ``sequences`` unless a prompt rides along)."""
        context_sum = steps * context_tokens + sequences * steps * (steps - 1) / 2
        routed = self.expert_weights_ms(sequences if expert_tokens is None else expert_tokens)
        weights = steps * (self.weights_bytes / self.bandwidth_bytes_per_ms + routed)
        kv_bytes = self.kv_bytes_per_token * context_sum + self.state_bytes_per_sequence * sequences * steps
        decode_pair = self.decode_attention_flops_per_token_pair or self.attention_flops_per_token_pair
        flops = self.flops_per_token * sequences * steps + decode_pair * context_sum
        if self.window:  # each sequence's windowed layers read at most the window (mean context taken for all)
            windowed = min(context_sum, steps * sequences * self.window)
            kv_bytes += self.window_kv_bytes_per_token * windowed
            flops += self.window_attention_flops_per_token_pair * windowed
        if self.sparse_reach:  # and its sparse layers their picks (mean context taken for all)
            unpicked = max(context_sum - steps * sequences * self.sparse_reach, 0.0)
            kv_bytes -= self.picked_kv_bytes_per_token * unpicked
            flops -= self.picked_decode_attention_flops_per_token_pair * unpicked
        return np.array([steps * self.group_gpus * self.step_layers, weights, kv_bytes / self.bandwidth_bytes_per_ms,
                         flops / self.flops_per_ms, float(sequences * steps * self.group_gpus), 0.0,
                         self.allreduce_ms_per_token * sequences * steps, 0.0])  # fmt: skip


# Tensor parallelism does not divide a step's weight-read time by the GPU count: each layer's shards synchronise
# (two all-reduces a layer) and narrower GEMMs run less efficiently. In the bundled NIM tables the fitted weight
# coefficient grows 1.49x from 1 to 2 GPUs (Llama-3-8B, H100 and A100) and 1.50-1.55x from 4 to 8 (70B), i.e. the
# time falls as gpus**-0.42, not gpus**-1. That exponent is taken as a fact of tensor parallelism here; the GPU
# transfer error the validation reports is therefore in-sample for this one number.
# The fixed costs of a step and of each decode sequence (kernel launches, sampling, scheduling, the all-reduces'
# latency) do not divide among the GPUs of a tensor-parallel group either: they are paid on every GPU and
# synchronised, so they are counted once per GPU (the fitted coefficients are per GPU). Moving calibrations between
# GPU counts this way cuts the GPU-transfer error of the bundled NIM tables from a median 10.5% / p90 33.9% to
# 8.4% / 25.7% on throughput and from 10.2% / 32.3% to 8.4% / 26.6% on TPOT (bench.prediction_accuracy --transfer
# gpu); like the exponent above, a choice made on the same tables it is scored on. That rule was read off dense
# tensor-parallel groups of one to eight GPUs with a step overhead held near its 0.3 ms prior; a MoE setup's much
# larger step overhead (fitted in the units of its figures: calibrate.MEASURED_UNITS) is counted once per group:
# per GPU, gpt-oss-120b's vLLM calibration on one B200 moved to eight put TPOT 5x too high, and the held-out MoE GPU
# transfer's median throughput error was 48.2% (vLLM), 46.4% (SGLang), 44.2% (TensorRT-LLM); once per group, 16.5%,
# 18.8%, 27.3%.
TENSOR_PARALLEL_WEIGHTS_EXPONENT = 0.42
# A MoE model's reads are mostly its experts', whole matrices on each GPU's share that a decode step streams at any
# batch: they divide among the GPUs nearly as the bytes do. With the dense exponent above, the MoE setups that identify
# their weight coefficient fitted 1.0, 0.67, 0.51 and 0.37 (medians) on 1, 2, 4 and 8 GPUs, 40 of 98 at the floor
# (the datasheet's bandwidth): in bytes over bandwidth, 1.0, 1.0, 1.15 and 1.24, i.e. gpus ** -0.9.
MOE_WEIGHTS_GPU_EXPONENT = 0.9
# A MoE model's FLOPs do not divide by the GPU count either: spread over more GPUs, each expert's grouped GEMM gets
# fewer rows (expert parallelism) or narrower shards (tensor parallelism), and the dispatch around it does not
# shrink. Held out within a release, MoE mean TTFTs carried to more GPUs came out too fast and to fewer too slow
# with compute divided by the GPU count (TensorRT-LLM 4 -> 8 GPUs: -22% to -65%; 4 -> 1: +98%), and so compute
# time falls as gpus**-MOE_COMPUTE_GPU_EXPONENT. Dense models keep 1: their prefill GEMMs stay large (dense SGLang
# throughput carried between GPUs went 3.3% -> 12.4% at 0.6).
MOE_COMPUTE_GPU_EXPONENT = 0.6
# A MoE step's fixed cost is paid layer by layer: each runs a chain of small kernels whatever the batch (norms, the
# router and its top-k, aligning tokens to experts, the grouped GEMMs' launches, the all-reduce's latency), a few
# microseconds each even under CUDA graphs. Fitted per step, the bundled MoE setups whose points identify it spread
# 3.0 ms (gpt-oss-120b, 36 layers, vLLM) to 14.5 ms (GLM, SGLang) a step; per layer, scaled to DeepSeek-V3's 61,
# 4.1 to 11.4, most families 5 to 7. Counted so, a MoE model nobody measured predicts its TPOT from the priors with a
# median |error| of 14.3% under vLLM (19.1% counted per step; gpt-oss-120b's 56% -> 16%), 16.6% under SGLang (18.2%),
# 28.7% under TensorRT-LLM (28.3%, p90 109.9% -> 77.0%) (``validation.model_transfer``). Dense models keep theirs
# per GPU of the group: their fits sit at the prior and cannot tell.
MOE_REFERENCE_LAYERS = 61
# A sparse-attention layer's indexer (DeepSeek Sparse Attention: GLM-5, DeepSeek-V3.2; DeepSeek-V4's sparse branches)
# runs its own chain of small kernels each step beside the layer's (its query and key projections, FP8 quantization
# of its keys, the logits over every cached token, the top-k), and a step counts such a layer as 1 + this many.
# Fitted per layer as others were, GLM-5's setups under SGLang took 1.45x DeepSeek-R1's step cost (9.7 against
# 6.7 ms a 61-layer step), DeepSeek-V4-Pro's under vLLM 1.8x the other families' (9.8 against ~5.5; 30 of its 61
# layers index); from the priors alone they decoded 26% and 36-40% faster than measured. At 1, a model nobody
# measured (``validation.model_transfer``), MoE SGLang: throughput median |error| 16.6% -> 12.1% (p90 68.0% ->
# 42.4%), TPOT 15.7% -> 12.0%; vLLM TPOT 11.7% -> 10.9%; GLM-5's TPOT -26% -> +2% (signed median), DeepSeek-V4-Pro's
# -40% -> -22% (SGLang) and -36% -> -16% (vLLM). Layers that reuse another's pick (GLM-5.2) run none.
INDEXER_STEP_SHARE = 1.0


def step_cost(shape: ModelShape, hardware: Hardware, *, dtype: str, kv_dtype: str | None = None,
              expert_parallel: int = 1, attention_data_parallel: int = 1) -> StepCost:  # fmt: skip
    """The roofline quantities of one model on one replica (one engine: a tensor-parallel group, its experts
    over ``expert_parallel`` of its GPUs), the units in which coefficients are fitted."""
    tensor_parallel_penalty = hardware.gpus ** (1 - weights_exponent(shape))
    kv_bytes = dtype_bytes(kv_dtype or dtype) * kv_copies(shape, hardware.gpus, attention_data_parallel)
    # Every attention data-parallel rank reads the dense weights (attention, shared experts, dense layers) whole,
    # sharded only over its own tensor-parallel group: in the replica's units, its GPUs times that group's read.
    rank_gpus = attention_group(hardware.gpus, attention_data_parallel)
    dense_read = hardware.gpus * rank_gpus ** -weights_exponent(shape)
    # a generation's shares of the datasheet: a MoE model's of its peak, a dense model's of its bandwidth
    compute_share = MOE_COMPUTE_SHARE.get(hardware.generation, 1.0) if shape.num_experts else 1.0
    read_share = 1.0 if shape.num_experts else DENSE_WEIGHT_READ_SHARE.get(hardware.generation, 1.0)
    # a MoE step's fixed cost is per layer, and more where its weights are widened first
    moe_step_layers = ((shape.n_layers + INDEXER_STEP_SHARE * shape.indexer_layers) / MOE_REFERENCE_LAYERS
                       * widened_step_factor(shape, dtype, hardware))  # fmt: skip
    return StepCost(
        weights_bytes=weight_bytes(shape.dense_matmul_params, dtype, shape.kept_matmul_params) * dense_read
        / read_share,
        kv_bytes_per_token=shape.full_kv_values * kv_bytes,
        flops_per_token=2 * shape.active_matmul_params,
        attention_flops_per_token_pair=shape.attention_flops,
        bandwidth_bytes_per_ms=hardware.bandwidth_gbps * hardware.gpus * 1e6,
        flops_per_ms=hardware.peak_tflops * hardware.gpus ** compute_exponent(shape) * 1e9 * compute_share,
        group_gpus=1 if shape.num_experts else hardware.gpus,
        step_layers=moe_step_layers if shape.num_experts else 1.0,
        allreduce_ms_per_token=allreduce_ms_per_token(shape, hardware, expert_parallel, attention_data_parallel),
        expert_bytes=weight_bytes(shape.routed_expert_params, dtype) * tensor_parallel_penalty,
        expert_pick=shape.experts_per_token / shape.num_experts if shape.num_experts else 0.0,
        window=shape.window,
        window_kv_bytes_per_token=shape.window_kv_values_per_token * kv_bytes,
        window_attention_flops_per_token_pair=shape.window_attention_flops_per_pair,
        decode_attention_flops_per_token_pair=shape.decode_attention_flops,
        experts_per_gpu=shape.num_experts / expert_parallel if expert_parallel > 1 else 0.0,
        expert_gpus=expert_parallel,
        attention_ranks=max(attention_data_parallel, 1),
        expert_flops_per_token=2 * (shape.active_matmul_params - shape.dense_matmul_params),
        state_bytes_per_sequence=shape.state_bytes_per_sequence,
        sparse_reach=shape.sparse_reach,
        picked_kv_bytes_per_token=shape.picked_kv_values_per_token * kv_bytes,
        picked_attention_flops_per_token_pair=shape.picked_attention_flops_per_pair,
        picked_decode_attention_flops_per_token_pair=shape.picked_decode_attention_flops_per_pair,
    )  # fmt: skip


def widened_weights(dtype: str, hardware: Hardware) -> bool:
    """Whether 4-bit weights are widened before the GPU computes with them (``WIDENED_WEIGHTS_STEP_FACTOR``): INT4
    always, MXFP4 and NVFP4 on a GPU without FP4 tensor cores."""
    return dtype == "int4" or (dtype in ("mxfp4", "nvfp4") and not hardware.fp4)


def widened_step_factor(shape: ModelShape, dtype: str, hardware: Hardware) -> float:
    """How many native steps' fixed cost one step pays: ``WIDENED_WEIGHTS_STEP_FACTOR`` where a MoE model's weights
    are widened (``widened_weights``), else 1."""
    return WIDENED_WEIGHTS_STEP_FACTOR if shape.num_experts and widened_weights(dtype, hardware) else 1.0


def weights_exponent(shape: ModelShape) -> float:
    """How a step's weight-read time falls with the GPUs it runs on: as ``gpus ** -weights_exponent``."""
    return MOE_WEIGHTS_GPU_EXPONENT if shape.num_experts else TENSOR_PARALLEL_WEIGHTS_EXPONENT


def compute_exponent(shape: ModelShape) -> float:
    """How a step's compute time falls with the GPUs it runs on: as ``gpus ** -compute_exponent``."""
    return MOE_COMPUTE_GPU_EXPONENT if shape.num_experts else 1.0


def activation_bytes_per_gpu(shape: ModelShape, step_tokens: float) -> float:
    """The activation buffers of a step of ``step_tokens`` tokens (not sharded by tensor parallelism: each GPU holds
    the step's full hidden states)."""
    return ACTIVATION_TENSORS_PER_TOKEN * step_tokens * shape.hidden_size * ACTIVATION_BYTES


def runtime_bytes_per_gpu(shape: ModelShape, step_tokens: float) -> float:
    """Memory a GPU's runtime keeps from the KV cache: its context and the activation buffers of the largest step."""
    return RUNTIME_CONTEXT_GB * 1e9 + activation_bytes_per_gpu(shape, step_tokens)


MIN_STEP_BUDGET = 2048  # tokens: trtllm-bench's and vLLM's smallest max_num_tokens


def step_budget_that_fits(shape: ModelShape, hardware: Hardware, *, dtype: str, budget: int) -> int:
    """The step token budget an engine is built with on these GPUs: the preset's, halved (down to 2,048) while its
    activation buffers would take more than a quarter of what the weights leave of a GPU's memory. On a small card
    one builds a smaller ``max_num_tokens`` rather than give the KV cache away (70B in 16 bits on eight L4s)."""
    free_per_gpu = hardware.memory_gb * 1e9 - held_weight_bytes(shape, dtype) / hardware.gpus
    while budget > MIN_STEP_BUDGET and activation_bytes_per_gpu(shape, budget) > free_per_gpu / 4:
        budget //= 2
    return budget


# Cards without NVLink reach each other over PCIe (a datasheet interconnect of at most a Gen5 x16 slot, 128 GB/s), and
# an 8-card PCIe server has two CPU sockets with four cards each: a ring over more cards than one socket holds crosses
# the CPUs' interconnect, which bounds its bus bandwidth below the slots'. NCCL's own topology model (NVIDIA/nccl,
# src/graph/topo.h and topo.cc, ncclTopoGetInterCpuBw) rates a Gen4 x16 slot at 24 GB/s and the link between two
# sockets at 16 GB/s on AMD (AMD_BW), 10 on Intel Skylake/Cascade Lake (SKL_QPI_BW), 22 on Sapphire Rapids and 40 on
# Emerald Rapids; AMD's figure is taken (the host of a published table is rarely named). Measured: eight PCIe Gen5 cards
# on two Xeon 8480+ sockets reach 28 GB/s bus bandwidth, four 35 GB/s, "usually determined by the bandwidth your CPU
# and memory can deliver" (NVIDIA/nccl#1639, NCCL's maintainer). NCCL's figures are what a ring reaches, so
# ``LINK_EFFICIENCY`` is not applied to them again.
PCIE_MAX_GBPS = 128.0
PCIE_GPUS_PER_SOCKET = 4
CROSS_SOCKET_GBPS = 16.0  # one direction


def allreduce_ms_per_token(shape: ModelShape, hardware: Hardware, expert_parallel: int = 1,
                           attention_data_parallel: int = 1) -> float:  # fmt: skip
    """The interconnect time of one token's hidden state through every layer. Attention, and a dense layer's MLP,
    all-reduce over their tensor-parallel group: the GPUs over the attention data-parallel ranks, none where each
    rank holds whole attention. A MoE layer all-reduces over every GPU, its experts sharded or spread over
    ``expert_parallel`` GPUs alike, where every GPU holds every token (tensor-parallel attention: each GPU runs its
    own experts on the tokens routed to them, SGLang's and vLLM's EP without DP attention); with attention data
    parallel ranks holding tokens of their own it becomes an all-to-all: the token goes once to each other GPU that
    holds one of its ``k`` experts (``expert_ranks_off_gpu``) and comes back, in the experts' width (Nemotron 3's
    LatentMoE projects a token to its latent before dispatch: a quarter of the hidden state). A ring all-reduce
    sends 2 (p - 1) / p of the state from each GPU, over one direction of the link at ``LINK_EFFICIENCY``, and no
    faster than the CPUs' interconnect where PCIe cards span two sockets. Zero on one GPU."""
    if hardware.gpus < 2 or hardware.interconnect_gbps <= 0:
        return 0.0
    hidden_bytes = shape.hidden_size * ACTIVATION_BYTES
    dense_layers = shape.n_layers - shape.moe_layers
    attention_ring = _ring_share(attention_group(hardware.gpus, attention_data_parallel))
    sent_bytes = (shape.n_layers + dense_layers) * hidden_bytes * attention_ring
    if expert_parallel > 1 and attention_data_parallel > 1:
        # Each rank dispatches its own tokens, all at once, so per token the link carries 1 / ranks of this. Divided
        # so, TensorRT-LLM's attention-DP tables (most measured at one load, which cannot separate their costs) put
        # their TTFT in the request's fixed latency and carried it to other layouts (MoE TTFT p90 from the nearest
        # setup 135% -> 282%): the whole count stands in for attention-DP costs not modelled (TensorRT-LLM's
        # balancing holds prompts back a few steps).
        dispatched_bytes = (shape.expert_width or shape.hidden_size) * ACTIVATION_BYTES
        sent_bytes += shape.moe_layers * 2 * dispatched_bytes * expert_ranks_off_gpu(shape, expert_parallel)
    else:  # every GPU holds every token: each computes its own experts' share and the outputs are all-reduced
        sent_bytes += shape.moe_layers * hidden_bytes * _ring_share(hardware.gpus)
    one_direction_gbps = hardware.interconnect_gbps / 2 * LINK_EFFICIENCY
    if hardware.interconnect_gbps <= PCIE_MAX_GBPS and hardware.gpus > PCIE_GPUS_PER_SOCKET:
        one_direction_gbps = min(one_direction_gbps, CROSS_SOCKET_GBPS)
    return sent_bytes / (one_direction_gbps * 1e6)


def _ring_share(gpus: int) -> float:
    """What a ring all-reduce sends from each of ``gpus`` GPUs, as a share of the reduced state."""
    return 2 * (gpus - 1) / gpus


def expert_ranks_off_gpu(shape: ModelShape, expert_parallel: int) -> float:
    """The other GPUs a token's ``k`` routed experts sit on, expected under uniform top-k routing over experts spread
    evenly on ``expert_parallel`` GPUs: all-to-all dispatch (DeepEP, pplx-kernels, the engines' own) sends a token
    once to each GPU that holds any of its experts, not once per expert. DeepSeek-R1's 8 of 256 experts on 8 GPUs
    reach 4.6 other GPUs (7 counted per expert); Kimi-K2's 8 of 384 on 4 GPUs, 2.7 (6)."""
    if not shape.num_experts:
        return 0.0
    n, k, local = shape.num_experts, shape.experts_per_token, shape.num_experts / expert_parallel
    missed = math.prod((n - local - i) / (n - i) for i in range(k))  # none of the k experts on a given GPU
    return (expert_parallel - 1) * (1 - missed)


def kv_capacity_tokens(shape: ModelShape, hardware: Hardware, *, dtype: str, kv_dtype: str | None = None,
                       step_tokens: float = 0.0, window_cache: float = 1.0, attention_data_parallel: int = 1) -> float:
    """Tokens of KV cache that fit beside the weights and the runtime's own memory for steps of up to
    ``step_tokens`` tokens (``runtime_bytes_per_gpu``) in the replica's memory (0 if the weights do not fit), the
    windowed layers kept as the engine keeps them (``EngineConfig.window_cache``), each token's cache as many
    times as its attention group copies it (``kv_copies``)."""
    usable = (hardware.memory_gb * 1e9 - runtime_bytes_per_gpu(shape, step_tokens)) * hardware.gpus
    free = usable - held_weight_bytes(shape, dtype)
    per_token = cached_bytes_per_token(shape, kv_dtype or dtype, window_cache)
    return max(0.0, free * MEMORY_HEADROOM / (per_token * kv_copies(shape, hardware.gpus, attention_data_parallel)))


def kv_copies(shape: ModelShape, gpus: int, attention_data_parallel: int = 1) -> int:
    """How many GPUs keep (and read) each cached value. An attention tensor-parallel group (the replica's GPUs
    over its attention data-parallel ranks) splits a token's cache by KV head and copies what it cannot split: MLA's
    latent is one part, kept whole by every GPU of the group (DeepSeek-R1 on eight GPUs: 8 copies under TP8, 1 with
    attention DP8, why the engines recommend DP attention for MLA models); Qwen3-235B's 4 KV heads over 8 GPUs, 2."""
    group = attention_group(gpus, attention_data_parallel)
    return max(group // min(group, shape.kv_head_shards), 1)


def attention_group(gpus: int, attention_data_parallel: int = 1) -> int:
    """The GPUs of one attention data-parallel rank: the tensor-parallel group its attention is sharded over."""
    return max(gpus // max(attention_data_parallel, 1), 1)


def held_extra_tokens(cost: StepCost, config: EngineConfig, length: int) -> int:
    """Cache tokens a sequence of ``length`` tokens takes beside its own: its windowed layers', where the engine keeps
    their window apart (``EngineConfig.window_cache`` 0; otherwise they are in the capacity's count), and its
    recurrent state (``StepCost.state_tokens``)."""
    return (0 if config.window_cache else cost.window_tokens(length)) + cost.state_tokens(config.window_cache)


def held_weight_bytes(shape: ModelShape, dtype: str) -> float:
    """The weights a replica keeps in memory: every parameter (all experts), unconverted modules in 16 bits."""
    return weight_bytes(shape.n_params, dtype, shape.kept_params)


def cached_bytes_per_token(shape: ModelShape, kv_dtype: str, window_cache: float = 1.0) -> float:
    """KV-cache bytes a token of the full-attention layers takes, with ``window_cache`` tokens of the windowed layers
    beside it (``EngineConfig.window_cache``). A model whose every layer is windowed (Mistral-7B v0.1) is counted in
    tokens of those layers, each as if it kept every token: an upper bound."""
    if not shape.full_kv_values:
        window_cache = 1.0
    return (shape.full_kv_values + window_cache * shape.window_kv_values_per_token) * dtype_bytes(kv_dtype)


@dataclass(eq=False, slots=True)
class _Request:
    arrival: NDArray  # cumulative features when it arrived
    input_len: int
    output_len: int
    user: int = 0
    round: int = 1  # the user's how-many-th request
    prefilled: int = 0  # prompt tokens in the KV cache
    first_token: NDArray | None = None
    # Output tokens it had streamed before it was last preempted: vLLM and SGLang keep them, prefill them again with
    # the prompt when it resumes, and go on from there (its first token came long before)
    resumed: int = 0
    decode_start: int = 0  # the engine's decode-step count when this request's first token came
    extra_tokens: int = 0  # its windowed layers' cache where kept apart, and its recurrent state (held_extra_tokens)
    rank: int = 0  # the attention data-parallel rank it is served on (round robin, as SGLang's controller does)
    # Its place in the order requests were sent: requests finishing in the same step retire in that order, the same
    # in every process (ordered by id(), the rows of a trace, and their sums' last bits, changed from run to run)
    index: int = 0

    @property
    def kv_reserved(self) -> int:
        return self.input_len + self.output_len + self.extra_tokens

    @property
    def to_prefill(self) -> int:
        """The tokens a (re)prefill puts in the cache: the prompt, and after a preemption the output so far."""
        return self.input_len + self.resumed


@dataclass(frozen=True)
class Trace:
    """Per-request features at arrival, first token and finish (rows), for the requests that count."""

    ttft: NDArray  # (requests, features)
    tpot: NDArray  # (requests, features): (finish - first token) / (output_len - 1)
    e2el: NDArray
    arrival: NDArray  # (requests, features): when each arrived, and when it finished
    finish: NDArray
    completed: int
    # How much each request counts in the benchmark's means and percentiles (summing to 1; None: alike), where the
    # simulated requests stand for more of some kind than of another (``simulate_closed_loop``).
    weights: NDArray | None = None

    def mean_features(self) -> dict[str, NDArray]:
        return {"ttft": self.mean(self.ttft), "tpot": self.mean(self.tpot), "e2el": self.mean(self.e2el)}

    def mean(self, values: NDArray) -> NDArray:
        """The benchmark's mean of per-request ``values`` (features or milliseconds)."""
        return np.average(values, axis=0, weights=self.weights)

    def percentile(self, values: NDArray, q: float) -> float:
        """The benchmark's ``q``-th percentile of per-request milliseconds."""
        if self.weights is None:
            return float(np.percentile(values, q))
        return float(np.percentile(values, q, weights=self.weights, method="inverted_cdf"))


@dataclass(slots=True)
class _Engine:
    """The engine's state, with running totals kept as it changes so that a step costs O(work done in it).

    Every step advances every decoding sequence by one token or (a prefill step without ``mixed_steps``) none, so
    one count of decode steps tells each sequence's progress and a heap ordered by finishing count finds who is done.
    """

    cost: StepCost
    config: EngineConfig
    clock: NDArray = field(default_factory=lambda: np.zeros(len(FEATURES)))
    waiting: deque[_Request] = field(default_factory=deque)
    prefilling: list[_Request] = field(default_factory=list)  # admitted, prompt not yet (fully) cached
    decoding: dict[int, _Request] = field(default_factory=dict)  # by id, in admission order (newest preempted first)
    finishing: list[tuple[int, int, _Request]] = field(default_factory=list)  # heap: (decode count when done, ...)
    finished: list[tuple[_Request, NDArray]] = field(default_factory=list)
    decode_steps: int = 0
    decode_context: int = 0  # tokens in the KV caches of the decoding sequences
    kv_used: int = 0  # tokens reserved (reserve_full_kv) or held in the KV cache
    prefill_pending: int = 0  # prompt tokens admitted and not yet cached
    rank_decoding: list[int] = field(default_factory=list)  # decoding sequences per attention data-parallel rank
    balance_waited: int = 0  # steps the prompts have waited for every rank to have one (``holds_prompts``)

    def __post_init__(self) -> None:
        self.rank_decoding = [0] * self.cost.attention_ranks

    @property
    def running(self) -> int:
        return len(self.prefilling) + len(self.decoding)

    def busy(self) -> bool:
        return bool(self.running or self.waiting)

    def generated(self, request: _Request) -> int:
        return self.decode_steps - request.decode_start + 1

    def admit(self) -> None:
        """Take waiting requests while their KV fits: the whole sequence reserved (TensorRT-LLM), or on demand the
        prompt beside the prompts already admitted and not yet cached (vLLM allocates a prompt's blocks chunk by
        chunk, and where the next chunk finds none it preempts the newest request: the one it just took)."""
        reserve = self.config.reserve_full_kv
        while self.waiting and self.running < self.config.max_batch:
            request = self.waiting[0]
            need = (request.kv_reserved if reserve
                    else self.prefill_pending + request.to_prefill + 1 + request.extra_tokens)  # fmt: skip
            if self.kv_used + need > self.config.kv_capacity_tokens and self.running:
                return
            self.prefill_pending += request.to_prefill - request.prefilled
            self.prefilling.append(self.waiting.popleft())
            self.kv_used += request.kv_reserved if reserve else request.prefilled + request.extra_tokens

    def preempt_if_full(self) -> bool:
        """On-demand KV: when the next step's tokens do not fit, recompute the newest sequence later (vLLM); whether
        any was."""
        if self.config.reserve_full_kv:
            return False
        preempted = False
        while len(self.decoding) > 1 and self.kv_used + self.running > self.config.kv_capacity_tokens:
            preempted = True
            victim = self.decoding.popitem()[1]
            self.rank_decoding[victim.rank] -= 1
            held = victim.to_prefill + self.generated(victim)
            self.kv_used -= held + victim.extra_tokens
            self.decode_context -= held
            self.finishing = [entry for entry in self.finishing if entry[2] is not victim]
            heapq.heapify(self.finishing)
            victim.resumed += self.generated(victim)
            victim.prefilled = self.config.cached_tokens(victim.input_len)
            self.waiting.appendleft(victim)
        return preempted

    def _schedule_prefill(self, budget: int) -> list[tuple[_Request, int]]:
        chunks: list[tuple[_Request, int]] = []
        for request in self.prefilling:
            if budget <= 0:
                break
            remaining = request.to_prefill - request.prefilled
            chunk = min(remaining, budget) if self.config.chunked_prefill else remaining
            if chunk > budget and chunks:  # a whole prompt waits for a step with room, unless it is alone
                continue
            chunks.append((request, chunk))
            budget -= chunk
        return chunks

    def step(self) -> None:
        """One step with prefill work in it (decodes ride along with ``mixed_steps``)."""
        decodes = len(self.decoding) if self.config.mixed_steps else 0
        chunks = self._schedule_prefill(self.config.max_batched_tokens - decodes)
        self.clock += self.cost.step(decodes, self.decode_context if decodes else 0,
                                     [(r.rank, chunk, r.prefilled) for r, chunk in chunks])  # fmt: skip
        if decodes:
            self._advance_decoders(1)
        for request, chunk in chunks:
            request.prefilled += chunk
            self.prefill_pending -= chunk
            if not self.config.reserve_full_kv:
                self.kv_used += chunk
            if request.prefilled == request.to_prefill:
                self._start_decoding(request)
                self.prefilling.remove(request)  # near the front: prompts are taken in order

    def _start_decoding(self, request: _Request) -> None:
        if request.first_token is None:
            request.first_token = self.clock.copy()
        request.decode_start = self.decode_steps
        self.decoding[id(request)] = request
        self.rank_decoding[request.rank] += 1
        self.decode_context += request.to_prefill + 1
        if not self.config.reserve_full_kv:
            self.kv_used += 1
        remaining = request.output_len - request.resumed
        heapq.heappush(self.finishing, (self.decode_steps + remaining - 1, request.index, request))

    def _advance_decoders(self, steps: int) -> None:
        self.decode_steps += steps
        self.decode_context += steps * len(self.decoding)
        if not self.config.reserve_full_kv:
            self.kv_used += steps * len(self.decoding)

    def decode_run(self, limit_steps: int | None = None) -> None:
        """Every running sequence is decoding: take the steps up to the next finish (or ``limit_steps``) at once."""
        steps = max(1, self.finishing[0][0] - self.decode_steps)
        if not self.config.reserve_full_kv:
            room = self.config.kv_capacity_tokens - self.kv_used
            steps = max(1, min(steps, int(room // len(self.decoding))))
        if limit_steps is not None:
            steps = max(1, min(steps, limit_steps))
        self.clock += self.cost.decode_run(steps, len(self.decoding), self.decode_context)
        self._advance_decoders(steps)

    def retire(self) -> list[_Request]:
        done = []
        while self.finishing and self.finishing[0][0] <= self.decode_steps:
            request = heapq.heappop(self.finishing)[2]
            done.append(request)
            del self.decoding[id(request)]
            self.rank_decoding[request.rank] -= 1
            held = request.input_len + request.output_len
            self.decode_context -= held
            self.kv_used -= request.kv_reserved if self.config.reserve_full_kv else held + request.extra_tokens
            self.finished.append((request, self.clock.copy()))
        return done

    def advance(self, limit_steps: Callable[[], int] | None = None) -> list[_Request]:
        """Make room, then admit (not in a step that preempted: vLLM's scheduler takes no waiting request then, or
        the freed room goes to a new prompt and the preempted sequence waits behind it), then one step with prefill
        work or a run of decode steps, at most ``limit_steps()`` of them (asked only then); the requests that
        finished."""
        if not self.preempt_if_full():
            self.admit()
        if not self.running:
            raise RuntimeError("nothing to run")
        if self.prefilling and self.holds_prompts():
            wait = self.config.balance_wait_steps - self.balance_waited
            before = self.decode_steps
            self.decode_run(wait if limit_steps is None else min(limit_steps(), wait))
            self.balance_waited += self.decode_steps - before
        elif self.prefilling:
            self.balance_waited = 0
            self.step()
        else:
            self.decode_run(None if limit_steps is None else limit_steps())
        return self.retire()

    def holds_prompts(self) -> bool:
        """Whether the admitted prompts wait for every attention data-parallel rank to have one
        (``EngineConfig.balance_wait_steps``): not past the wait, nor while some rank has nothing to decode."""
        ranks = self.cost.attention_ranks
        if ranks == 1 or self.balance_waited >= self.config.balance_wait_steps or 0 in self.rank_decoding:
            return False
        return len({request.rank for request in self.prefilling}) < ranks


def _stacked(vectors: list[NDArray]) -> NDArray:
    """Feature vectors as the rows of one array (quicker than ``np.array`` of the list at a trace's size)."""
    return np.concatenate(vectors).reshape(-1, len(FEATURES)) if vectors else np.empty((0, len(FEATURES)))


def _trace(finished: list[tuple[_Request, NDArray]], first_round_share: float | None = None) -> Trace:
    """The requests' features; with ``first_round_share``, the first round's requests count that much of the means
    together and the later rounds' the rest."""
    rows = [(r, done) for r, done in finished if r.first_token is not None]
    arrival = _stacked([r.arrival for r, _ in rows])
    ttft = _stacked([r.first_token for r, _ in rows]) - arrival
    e2el = _stacked([done for _, done in rows]) - arrival
    ttft[:, REQUEST] += 1.0  # the request's own latency outside the steps, once in each
    e2el[:, REQUEST] += 1.0
    steps = np.maximum(np.array([r.output_len for r, _ in rows], dtype=float) - 1.0, 1.0)
    tpot = (e2el - ttft) / steps[:, None]
    weights = None
    if first_round_share is not None:
        first = np.array([r.round == 1 for r, _ in rows])
        weights = np.where(first, first_round_share / first.sum(), (1 - first_round_share) / (~first).sum())
    return Trace(ttft, tpot, e2el, arrival, arrival + e2el, len(rows), weights)


# A closed-loop benchmark sends each user's requests one after another, ten of them: ``--num-prompts`` ten times
# ``--max-concurrency`` (AIConfigurator's deployment guide, "to reduce the impact of the first batch of requests";
# SemiAnalysis's InferenceMAX runs), every one measured, the first wave too, in which every user's prompt arrives at
# once and queues behind the others'. Taken so (the wave a tenth of the means, three rounds simulated: the wave and
# two of the steady state that follows; ten simulated whole give the same within a point at 5x the time), held-out
# MoE mean TTFT leaving one shape out went from a median 25.6% / p90 65.7% to 20.1% / 57.9% (vLLM) and 24.5% / 66.9%
# to 19.0% / 55.8% (TensorRT-LLM), dense vLLM 18.7% / 47.5% to 14.1% / 41.1%, with throughput and TPOT closer too;
# measured after a warm-up round (two rounds, the first left out) it missed what the benchmarks include.
CLOSED_LOOP_REQUESTS_PER_USER = 10
SIMULATED_ROUNDS = 3
# Some benchmarks draw each request's lengths at random around the stated ones (InferenceX: ``--random-range-ratio
# 0.8``, prompt and output lengths each uniform over 0.8-1.0 of the nominal), and a closed loop's users, finishing
# at different times, drift out of step: their prompts no longer arrive in waves that prefill together. Where a
# table says so (``length_spread``: each length uniform within that share either side of the stated one), the
# simulation draws them the same way, evenly spread rather than random (``request_lengths``), so a fit does not
# depend on a seed. Held-out MoE mean TTFT leaving one shape out, with the priors refitted: SGLang median 25.1% ->
# 22.5%, vLLM 19.8% -> 15.6%, TensorRT-LLM 17.6% -> 18.8% (bench.held_out_accuracy; docs/engine-model.md lists the
# rows that moved the other way). Given to every table, a spread made the fixed-length ones worse (AIConfigurator's
# dense SGLang tables 11.8% -> 57.1%): their users stay in step. Closed loops only: an open loop's arrivals are
# apart already, and an offline batch is measured on fixed lengths.
_GOLDEN = (5**0.5 - 1) / 2  # successive requests' output lengths: the golden-ratio sequence, evenly spread
_PLASTIC = 0.7548776662466927  # and their prompt lengths: the plastic number's, independent of it


@lru_cache(maxsize=8192)  # a sweep's levels draw the same first requests again
def request_lengths(input_len: int, output_len: int, spread: float, index: int) -> tuple[int, int]:
    """The ``index``-th request's prompt and output lengths under a ``length_spread`` of ``spread``: spread evenly
    over the stated ones plus or minus that share, their means the stated ones."""
    if not spread:
        return input_len, output_len
    prompt_draw, output_draw = (0.5 + index * _PLASTIC) % 1.0, (0.5 + index * _GOLDEN) % 1.0
    return (max(1, round(input_len * (1 + spread * (2 * prompt_draw - 1)))),
            max(2, round(output_len * (1 + spread * (2 * output_draw - 1)))))  # fmt: skip


def simulate_closed_loop(
    cost: StepCost, config: EngineConfig, coefficients: NDArray, *, concurrency: int, input_len: int,
    output_len: int, client_delay_ms: float = 0.0, rounds: int = SIMULATED_ROUNDS, length_spread: float = 0.0,
) -> Trace:  # fmt: skip
    """``concurrency`` users, all starting together, each sending its next request ``client_delay_ms`` after the
    last one finished (genai-perf's ``--concurrency`` and vLLM's ``--max-concurrency`` load), ``rounds`` requests
    each, standing for a benchmark of ``CLOSED_LOOP_REQUESTS_PER_USER``: the first round (every user's prompt at
    once) counts as one of those, the later rounds as the steady state of the rest; each request of exactly the
    lengths given, or spread around them (``request_lengths``). With no client delay the schedule does not depend
    on the coefficients."""
    arrivals = [(0.0, user, user) for user in range(concurrency)]
    sent = dict.fromkeys(range(concurrency), 1)

    def next_request(request: _Request, finished_ms: float) -> tuple[float, int] | None:
        if sent[request.user] >= rounds:
            return None
        sent[request.user] += 1
        return finished_ms + client_delay_ms, request.user

    engine = _Engine(cost, config)
    _drive(engine, coefficients, arrivals, input_len, output_len, next_request, length_spread)
    return _trace(engine.finished, 1 / CLOSED_LOOP_REQUESTS_PER_USER if rounds > 1 else None)


def simulate_poisson(
    cost: StepCost, config: EngineConfig, coefficients: NDArray, *, rate_per_s: float, input_len: int,
    output_len: int, requests: int = 600, seed: int = 0,
) -> Trace:  # fmt: skip
    """Open loop: requests arrive as a Poisson process of ``rate_per_s``; the first fifth is warm-up."""
    rng = np.random.default_rng(seed)
    arrivals_ms = np.cumsum(rng.exponential(1000.0 / rate_per_s, size=requests))
    engine = _Engine(cost, config)
    _drive(engine, coefficients, [(float(t), i, i) for i, t in enumerate(arrivals_ms)], input_len, output_len)
    warmup = requests // 5
    measured = [(r, done) for r, done in engine.finished if r.user >= warmup]
    return _trace(measured)


def simulate_offline(
    cost: StepCost, config: EngineConfig, coefficients: NDArray, *, requests: int, input_len: int, output_len: int,
) -> Trace:  # fmt: skip
    """Every request queued at once and served to the last one (trtllm-bench throughput): the trace of all of them,
    whose last finish is the run's makespan; the ramp-up and the drain at the end are part of it, as they are of the
    benchmark's figure."""
    engine = _Engine(cost, config)
    _drive(engine, coefficients, [(0.0, i, i) for i in range(requests)], input_len, output_len)
    return _trace(engine.finished)


NextRequest = Callable[[_Request, float], "tuple[float, int] | None"]


def _drive(
    engine: _Engine, coefficients: NDArray, arrivals: list[tuple[float, int, int]], input_len: int,
    output_len: int, next_request: NextRequest | None = None, length_spread: float = 0.0,
) -> None:  # fmt: skip
    """Run the engine until every arrival (time ms, tie-break, user) is served, each request of the lengths
    ``request_lengths`` gives. A request that arrives during a step joins at the next step boundary; its arrival
    stamp is the clock then, less the wait, in ``wait_ms``."""
    heapq.heapify(arrivals)
    rounds: dict[int, int] = {}
    sent = 0
    extra_tokens = held_extra_tokens(engine.cost, engine.config, input_len + output_len)
    cached_tokens, ranks = engine.config.cached_tokens, engine.cost.attention_ranks
    now = float(engine.clock.dot(coefficients))  # kept as the clock moves (.dot: half the time of @ at this size)
    while arrivals or engine.busy():
        if not engine.busy() and arrivals[0][0] > now:
            engine.clock[WAIT] += arrivals[0][0] - now  # idle until the next arrival
            now = arrivals[0][0]
        while arrivals and arrivals[0][0] <= now + 1e-9:
            time_ms, _, user = heapq.heappop(arrivals)
            rounds[user] = rounds.get(user, 0) + 1
            stamp = engine.clock.copy()
            stamp[WAIT] += time_ms - now
            prompt, output = request_lengths(input_len, output_len, length_spread, sent)
            engine.waiting.append(_Request(stamp, prompt, output, user, rounds[user],
                                           prefilled=cached_tokens(prompt), extra_tokens=extra_tokens,
                                           rank=sent % ranks, index=sent))
            sent += 1
        gap_ms = arrivals[0][0] - now if arrivals else None
        done = engine.advance(None if gap_ms is None else partial(_steps_until, engine, coefficients, gap_ms))
        now = float(engine.clock.dot(coefficients))
        if done and next_request:
            for request in done:
                follow = next_request(request, now)
                if follow is not None:
                    heapq.heappush(arrivals, (follow[0], len(engine.finished), follow[1]))


def _steps_until(engine: _Engine, coefficients: NDArray, gap_ms: float) -> int:
    """Decode steps that fit before the next arrival (at least one)."""
    if not engine.decoding:
        return 1
    step_ms = float(engine.cost.decode(len(engine.decoding), engine.decode_context).dot(coefficients))
    return max(1, int(gap_ms // max(step_ms, 1e-9)) + 1)


def with_capacity(config: EngineConfig, capacity_tokens: float) -> EngineConfig:
    return replace(config, kv_capacity_tokens=capacity_tokens)
