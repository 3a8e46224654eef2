"""Fit the engine simulation's step costs to measured or published points, and predict any load from them.

A setup (one model, engine and dtype on one replica's GPUs) has six fitted coefficients (``engine.FEATURES``):
milliseconds of overhead per step, how many times slower than the roofline the engine reads weights, reads the KV
cache and does FLOPs, milliseconds per decode sequence, and milliseconds per request outside the steps.
Tensor-parallel all-reduces are not fitted: the points of one setup cannot tell them from compute, so they take the
interconnect's datasheet rate. The simulation of a closed loop gives every measured figure as a linear function of
the coefficients (mean TTFT and TPOT directly; throughput through Little's law, ``1 / X = mean E2EL / c``), so the
fit is one non-negative least squares on relative errors. Roofline priors (an engine reaching 75% of bandwidth and
50% of peak compute, 0.3 ms per step, 2 ms per request) enter as weak extra rows, so a term the points cannot
separate (per-sequence cost against KV-cache reads, when every point has the same context length) falls back to its
prior instead of drifting.

Moving a fitted setup to other hardware keeps the coefficients and recomputes the features (bandwidth, compute,
interconnect, KV-cache capacity) on the new GPUs: that is the whole of the GPU transfer.

Pure: plain data in, plain data out.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from infercost.performance.engine import (
    COMMUNICATION,
    COMPUTE,
    FEATURES,
    REQUEST,
    STEP,
    WAIT,
    WEIGHTS,
    EngineConfig,
    Hardware,
    StepCost,
    Trace,
    compute_exponent,
    held_extra_tokens,
    kv_capacity_tokens,
    simulate_closed_loop,
    simulate_offline,
    simulate_poisson,
    step_budget_that_fits,
    step_cost,
    weights_exponent,
    widened_step_factor,
)
from infercost.performance.roofline import ModelShape, dtype_bytes

# ms per step, × roofline time of weight reads, of KV-cache reads, of FLOPs; ms per decode sequence; ms per request
# (the front end's own latency: 2 ms, about what NIM's TTFT at 200-token prompts and one user exceeds its steps by)
# the last two, communication_ms and wait_ms, are time already: always 1
PRIOR = np.array([0.3, 1 / 0.8, 1 / 0.5, 1 / 0.5, 0.01, 2.0, 1.0, 1.0])
# A MoE setup's priors, the group's: the median fit of the bundled MoE setups whose points identify their coefficients
# (``validation.moe_coefficients``: 141 setups of four or more concurrency levels spanning 8x, each fitted towards the
# dense priors; bench.held_out_accuracy stores the medians, a test holds these to them). A MoE step costs about 6 ms
# beyond its roofline for a model of 61 layers, in proportion to its layers (``engine.MOE_REFERENCE_LAYERS``: routing,
# expert dispatch, the launches of many small GEMMs, each layer's), where a dense one costs 0.3, and reads its weights
# at about their roofline time (0.95 x, their reads dividing among the GPUs as a MoE model's do:
# ``engine.MOE_WEIGHTS_GPU_EXPONENT``; dividing as a dense model's, 0.55 x, from 1.0 on one GPU to 0.37 on eight). With
# the dense priors a MoE setup measured at one concurrency put its overhead on each sequence, and carried it to many
# users: DeepSeek-R1 on 8 B200s measured at 4 users, moved to 128 and 256 under attention DP, predicted TPOTs 4-6x the
# measured. Held-out MoE throughput p90 from other GPUs went 85.7% -> 62.2% (TensorRT-LLM) and 53.7% -> 39.2% (vLLM),
# TPOT 63.8% -> 50.2% and 51.8% -> 36.5%; TTFT did not move. A one-point setup is still ambiguous, the other way: one
# SGLang 0.5.6 table at 64 users now puts its overhead on the step and over-predicts TPOT at 4 users 2x (SGLang MoE
# throughput between releases, p90 43.1% -> 52.3%). A request's own latency is the median of the 114 of those setups
# whose prompt lengths vary at few users, the only ones that tell it from prefill (``identify_request``; 57 ms;
# none while InferenceX's runs were simulated in step, their waves' queue standing for it; see ``MEASURED_UNITS``).
MOE_PRIOR = np.array([5.782, 0.9481, 1.618, 2.695, 0.0, 57.34, 1.0, 1.0])
# No engine reads the KV cache faster than the datasheet's bandwidth or computes faster than its peak: those two
# coefficients (× roofline time) stay at 1 or more. Without the floor, a setup with one table (70B FP8 on two H100s)
# put prefill at 11x peak compute and made up the TTFT in its correction, and every GPU it was carried to went wrong
# with it (offline perf-overview ratio p90 59.6% without, 42.8% with). Weight reads are left free: their feature
# carries the tensor-parallel penalty (``engine.TENSOR_PARALLEL_WEIGHTS_EXPONENT``), not the roofline itself.
ROOFLINE_FLOOR = np.where(np.isin(FEATURES, ["kv_cache_ms", "compute_ms"]), 1.0, 0.0)
PER_GPU = [FEATURES.index("step_overhead_ms"), FEATURES.index("sequence_ms")]  # features counted once per GPU
FITTED = slice(0, COMMUNICATION)
PRIOR_WEIGHT = 0.05  # a prior row counts this much against one relative error of a measured figure
CLIENT_DELAY_MS = 2.0
ITERATIONS = 2  # with a client delay the schedule depends on the coefficients: refit on the refitted schedule
# How much a mean-TTFT point counts in the step-cost fit against a throughput or TPOT point. TTFT has its own
# correction (``_ttft_correction``) for how real schedulers queue prompts; at full weight, what the simulation gets
# wrong about that queueing pulled the step costs away from the capacity they set (GPU transfer, throughput p90 26.8%
# at 1.0, 23.0% at 0.3; TPOT p90 26.4% and 24.2%; shape-transfer mean TTFT median 14.0% and 14.7%).
TTFT_WEIGHT = 0.3
# The TTFT correction leaves out a point the simulation misses by more than this log-ratio (7.4x) beyond the median
# miss of the fit's points: one TTFT that jumps 100x between neighbouring loads (AIConfigurator's MiniMax-M2.5 on
# 4x H100 at 64 users and 8,192 output tokens: 148 ms at 32, 20 s at 64) otherwise bent the correction's users term
# into a 50x over-prediction at the setup's other shapes.
TTFT_OUTLIER_LOG = 2.0
# How much of a TTFT correction that *raises* the simulated TTFT is carried to other loads and shapes (as a power of
# its factor). A correction that lowers it (measured TTFTs below the simulation's: NIM's genai-perf, engines that keep
# a closed loop's users in step) held on the shapes it was not fitted to; one that raised it held about half the way,
# in log terms: where the correction was 1.25-4x, on the held-out MoE tables of other shapes the corrected prediction
# sat a median 23% to 60% above the measured value and the uncorrected one 15% to 46% below it (leave one shape
# out). Such a raise comes from queues that jump between neighbouring loads and does not carry whole. Held-out MoE
# shape transfer, mean TTFT p90: vLLM 151% -> 111%, SGLang 101% -> 84%, TensorRT-LLM 121% -> 99%; the calibration
# set's one-table median 13.6% -> 14.3% (p90 39.4% -> 37.2%).
TTFT_RAISE_SHARE = 0.5
# The priors of the additive times (ms per step, per decode sequence, per request) were read off dense Llama-3 on
# NIM, and a prior row relative to its own value holds a coefficient near it hard: a step overhead of 20x the prior
# costs as much as a 100% error on every point. A MoE model's step is far from that prior (DeepSeek-R1 on 8x B200
# under SGLang decodes 4 users at 8.8 ms a token where its weights take 3.7 ms: 61 layers of routed-expert kernels and
# all-reduces), and the fit put the step costs where the prior held them, too fast at few users and too slow at
# many. Nothing measured those priors for MoE, so there they weigh in the units of the measured figures instead: a
# prior row moves the fit as much as the relative error a typical point would see from that deviation. Held-out MoE
# shape transfer, median |error| of throughput / TPOT: SGLang 25.6% / 26.9% -> 12.1% / 11.3%, TensorRT-LLM 16.7% /
# 18.8% -> 7.9% / 10.0%, vLLM 20.7% / 21.4% -> 7.8% / 7.6% (bench.held_out_accuracy). On the dense calibration set the
# same change made the GPU transfer worse (throughput median 7.4% -> 10.3%), so dense setups keep their priors.
# A MoE prefill's FLOPs are just as unmeasured: DeepSeek-V3 NVFP4 on 4x B300 under SGLang 0.5.10 prefills about
# 5,500 tokens/s at 1,024- and 8,192-token prompts alike (TTFT 183 and 1,389 ms at 4 users), some 150x its FP4
# roofline. With the compute coefficient held near its prior in relative terms, a one-prompt fit put that time into
# a fixed per-request latency (1.6 s a request fitted at 8,192 tokens, carried whole to 1,024). So its prior weighs
# in measured units too, those of the TTFTs (prefill is where FLOPs show; over every figure, a decode-heavy setup's
# compute was left free to absorb decoding costs, and gpt-oss-120b on 8 B200s fitted 8-20x its roofline). Held-out
# MoE shape transfer (with the engines' prompt slopes and these priors re-measured): SGLang throughput p90 40.9% ->
# 35.0%, TPOT p90 38.0% -> 31.4%, mean TTFT p90 82.4% -> 77.2%; vLLM mean TTFT p90 56.4% -> 48.4%. What it costs:
# TTFT carried to other GPUs of the same model (the slowness a fit now calls compute is divided by the new GPUs'
# peak, and gpt-oss-120b's prefill under TensorRT-LLM does not speed up from 1 to 8 GPUs), median 34.9% -> 42.5% on
# TensorRT-LLM, 21.3% -> 23.2% on vLLM; Blackwell's MoE share of the peak (``engine.MOE_COMPUTE_SHARE``) took back
# part of it (39.7% and 22.4%).
MEASURED_UNITS = [FEATURES.index(name) for name in ("step_overhead_ms", "sequence_ms", "request_ms")]
# Except a request's fixed latency where every point has one prompt length (or its several only at many users:
# ``identify_request``): such points cannot tell it from the prompt's prefill (both are a TTFT's part that does not
# grow with users), and a fit free to choose put 100-200 ms
# of what was prefill there (GLM-5 on 8x B200 under SGLang: 101 ms a request and compute at its floor from its
# 1,024-token table, none and 1.4x from its 8,192-token one), which carried whole to other prompt lengths: the
# held-out MoE TTFT one prompt length up came out a median 14-21% low, one down 3-23% high. There it is held to its
# engine's prior, relative to that prior's value as a dense setup's coefficients are (``EngineConfig
# .moe_request_ms_prior``, itself the median of setups whose prompt lengths vary). Held-out MoE shape transfer,
# median |error| throughput / TPOT / mean TTFT: SGLang 10.4 / 9.9 / 29.5% -> 10.0 / 9.6 / 27.2%, vLLM 5.6 / 5.4 /
# 23.0% -> 5.2 / 5.3 / 20.9%, TensorRT-LLM 8.5 / 9.2 / 19.0% -> 8.1 / 8.6 / 20.1%; from one table, TTFT SGLang
# 29.0% -> 25.6%, vLLM 22.2% -> 19.5%, but TensorRT-LLM 19.2% -> 22.9%.


@dataclass(frozen=True)
class Setup:
    """One model, engine and dtype on one replica: what the simulation needs besides the coefficients."""

    shape: ModelShape
    hardware: Hardware
    dtype: str
    engine: EngineConfig
    kv_dtype: str | None = None
    # The workload's share of each prompt that its engine finds in the prefix cache (``EngineConfig.prefix_caching``);
    # a benchmark's random prompts share none, so every calibration is fitted at 0.
    cached_prompt_fraction: float = 0.0
    expert_parallel: int = 1  # GPUs of the replica its routed experts are spread over (1: sharded with the rest)
    # Attention data-parallel ranks beside expert parallelism, simulated as one engine over all the GPUs: where each
    # rank schedules its own batch and step budget (vLLM's --data-parallel-size, TensorRT-LLM's attention DP:
    # ``EngineConfig.budget_per_rank``), the engine's are the ranks' together.
    attention_data_parallel: int = 1
    # How far the load's request lengths spread around the stated ones (``engine.request_lengths``): a table's
    # benchmark where it drew them at random (``ThroughputProfile.length_spread``); 0, every request exactly them.
    length_spread: float = 0.0

    @property
    def cost(self) -> StepCost:
        return step_cost(self.shape, self.hardware, dtype=self.dtype, kv_dtype=self.kv_dtype,
                         expert_parallel=self.expert_parallel,
                         attention_data_parallel=self.attention_data_parallel)  # fmt: skip

    @property
    def config(self) -> EngineConfig:
        """The engine as built on these GPUs: a step budget whose activations fit (a rank's, where attention is
        data parallel), and the KV cache left."""
        engine = self.engine.on_gpu(self.hardware.gpu, self.hardware.memory_gb)
        budget = step_budget_that_fits(self.shape, self.hardware, dtype=self.dtype,
                                       budget=engine.max_batched_tokens)  # fmt: skip
        capacity = kv_capacity_tokens(self.shape, self.hardware, dtype=self.dtype, kv_dtype=self.kv_dtype,
                                      step_tokens=budget, window_cache=engine.window_cache,
                                      attention_data_parallel=self.attention_data_parallel)  # fmt: skip
        ranks = self.attention_data_parallel if engine.budget_per_rank else 1
        return replace(engine, max_batch=engine.max_batch * ranks, max_batched_tokens=budget * ranks,
                       kv_capacity_tokens=min(capacity, self.engine.kv_capacity_tokens),
                       cached_prompt_fraction=self.cached_prompt_fraction)  # fmt: skip


@dataclass(frozen=True)
class Observation:
    """One measured (or published) closed-loop point at one token shape."""

    concurrency: int
    input_len: int
    output_len: int
    request_throughput: float  # requests/s
    mean_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    p95_ttft_ms: float | None = None
    p95_tpot_ms: float | None = None


@dataclass(frozen=True)
class Prediction:
    """What the simulation expects of one load level."""

    load: str  # "concurrency", "rate" or "requests" (all queued at once)
    level: float
    input_len: int
    output_len: int
    request_throughput: float
    output_throughput: float
    mean_ttft_ms: float
    p95_ttft_ms: float
    mean_tpot_ms: float
    p95_tpot_ms: float
    mean_e2el_ms: float
    p95_e2el_ms: float
    saturated: bool = False  # open loop above capacity: latencies grow without bound

    def as_dict(self) -> dict[str, float | bool | None]:
        """The figures by name; an open loop's say whether it saturated, and a saturated one has no latencies: its
        queue grows for as long as requests come, so a mean over the simulated run is the run's length, not the
        setup's (its throughput is what the setup serves at most)."""
        makespan = {"makespan_s": self.level / self.request_throughput} if self.load == "requests" else {}
        latencies = {name: None if self.saturated else getattr(self, name) for name in LATENCY_FIGURES}
        saturated = {"saturated": self.saturated} if self.load == "rate" else {}
        return {self.load: self.level, **makespan, "request_throughput": self.request_throughput,
                "output_throughput": self.output_throughput, **latencies, **saturated}  # fmt: skip


LATENCY_FIGURES = ("mean_ttft_ms", "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms", "mean_e2el_ms", "p95_e2el_ms")


@dataclass(frozen=True)
class Calibration:
    """Fitted coefficients (one per ``engine.FEATURES``) and how the tails sit above the simulated ones."""

    coefficients: NDArray
    points: int
    p95_ttft_noise: float = 0.0  # the spread (p95 - mean) the simulation lacks, over the mean (see ``_tail_noise``)
    p95_tpot_noise: float = 0.0
    engine: EngineConfig | None = None  # the scheduling the fit chose; None: the setup's own
    ttft_correction: NDArray | None = None  # on _load_terms: log(measured / simulated) mean TTFT
    notes: list[str] = field(default_factory=list)
    ttft_users: tuple[float, float] | None = None  # the fewest and most users the correction was fitted on
    length_spread: float = 0.0  # how the fitted points' request lengths were simulated (``Setup.length_spread``)
    ttft_held_users: float | None = None  # the most users of the correction's points whose KV cache held them all

    def to_json(self) -> dict[str, object]:
        return {"coefficients": self.as_dict(), "points": self.points, "p95_ttft_noise": self.p95_ttft_noise,
                "p95_tpot_noise": self.p95_tpot_noise,
                "engine": None if self.engine is None else asdict(self.engine),
                "ttft_correction": None if self.ttft_correction is None else self.ttft_correction.tolist(),
                "ttft_users": None if self.ttft_users is None else list(self.ttft_users),
                "length_spread": self.length_spread, "ttft_held_users": self.ttft_held_users}  # fmt: skip

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Calibration:
        engine = document.get("engine")
        correction, users = document.get("ttft_correction"), document.get("ttft_users")
        held = document.get("ttft_held_users")
        coefficients = document["coefficients"]
        return cls(np.array([coefficients.get(name, fixed) for name, fixed in zip(FEATURES, PRIOR, strict=True)]),
                   int(document["points"]),
                   float(document.get("p95_ttft_noise", 0.0)), float(document.get("p95_tpot_noise", 0.0)),
                   None if engine is None else EngineConfig(**engine),
                   None if correction is None else np.array(correction),
                   ttft_users=None if users is None else (float(users[0]), float(users[1])),
                   length_spread=float(document.get("length_spread", 0.0)),
                   ttft_held_users=None if held is None else float(held))  # fmt: skip

    def at_spread(self, length_spread: float) -> Calibration:
        """The calibration for a setup whose requests' lengths spread so. Where that is not how its points were
        simulated, its TTFT correction is carried at its fewest users only: its users terms measured how the
        measured engine's queue of prompts grew against a simulated one that arrived as the points' benchmark sent
        them (in step, or drifting apart), and the other arrivals queue their own way. NIM's Llama-3.3-70B sweep
        (genai-perf, fixed lengths, users in step) is simulated at 5 users as a wave of prompts at 365 ms, where 547
        was measured; carried whole to users out of step (a roofline setup's ``DEFAULT_LENGTH_SPREAD``), the
        correction that had lowered the wave lowered one prompt alone to 110 ms, and a roofline setup on one H100
        answered a TTFT that fell from 220 ms at one user to 89 at four."""
        if self.ttft_users is None or abs(length_spread - self.length_spread) < 1e-9:
            return self
        return self._correction_up_to(self.ttft_users[0])

    def within_capacity(self, queued: bool) -> Calibration:
        """The calibration for a load whose KV cache holds every user (``queued`` False): its TTFT correction carried
        no further than the most users its own cache held. Beyond them the correction measured how the source's queue
        for cache space was missed, which a setup with room for them does not have: DeepSeek-R1 under SGLang 0.5.9 on
        4x B200 in FP8 queues 32 users of 9,216 tokens, its correction lowers that queue to a factor 0.51, and carried
        to 8x B200, where 32 users fit, it predicted 150 ms where 642 ms was measured. A source that held none of
        its points (``ttft_held_users`` 0) measured nothing but a queue, and a load that fits takes none of it:
        DeepSeek-R1's one point on 32 GB200s, 2,150 users behind a batch of 2,048, lowered to 4x B200 at 64 users
        predicted 1.9 ms where 459 ms was measured."""
        if queued or self.ttft_users is None or self.ttft_held_users is None:
            return self
        return self._correction_up_to(self.ttft_held_users)

    def _correction_up_to(self, users: float) -> Calibration:
        """The TTFT correction carried no further than ``users`` (its users terms held at the nearest fitted), and
        not at all below its fewest: none of its points was that near."""
        assert self.ttft_users is not None
        fewest, most = self.ttft_users
        if users < fewest:
            return replace(self, ttft_correction=None, ttft_users=None)
        return self if users >= most else replace(self, ttft_users=(fewest, users))

    def under_another_engine(self, engine: EngineConfig, moe: bool) -> Calibration:
        """The fitted step costs, scheduled by ``engine`` (the setup's own preset), without the TTFT correction: that
        carried how the measured engine queues prompts, which another engine does its own way (held out, moving
        between engines, MoE mean TTFT median 57% -> 49% on vLLM, 75% -> 66% on SGLang, 109% -> 92% on
        TensorRT-LLM; dense TensorRT-LLM 147% -> 158%). The compute is the measured engine's times how much faster
        or slower the other runs a model of that kind, where both have their own compute prior
        (``EngineConfig.compute_prior``, each the median of its engine's setups): the engines' kernels differ
        (MoE: SGLang 3.9x the roofline, vLLM 2.7x, TensorRT-LLM 2.2x). Held out, MoE TensorRT-LLM tables predicted
        from vLLM's or SGLang's fits of the same weights and GPUs: mean TTFT median 26.2% -> 25.6%, p90 99% ->
        70%; SGLang's throughput 36.7% -> 31.0%."""
        coefficients = self.coefficients
        measured = None if self.engine is None else self.engine.compute_prior(moe)
        asked = engine.compute_prior(moe)
        if measured and asked:
            coefficients = coefficients.copy()
            coefficients[COMPUTE] *= asked / measured
        return replace(self, coefficients=coefficients, engine=None, ttft_correction=None, ttft_users=None)

    def applied_to(self, setup: Setup) -> Setup:
        return setup if self.engine is None else replace(setup, engine=self.engine)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(FEATURES, map(float, self.coefficients), strict=True))


def roofline_floor(setup: Setup) -> NDArray:
    """The least each coefficient can be: KV reads and FLOPs no faster than the datasheet, and weight reads no
    faster than its bandwidth once the tensor-parallel penalty their feature carries is taken off (and a MoE
    model's FLOPs, the penalty of ``engine.compute_exponent``)."""
    floor = ROOFLINE_FLOOR.copy()
    floor[WEIGHTS] = setup.hardware.gpus ** -(1 - weights_exponent(setup.shape))
    floor[COMPUTE] = setup.hardware.gpus ** -(1 - compute_exponent(setup.shape))
    return floor


def prior_for(setup: Setup, moe_prior: NDArray | None = None) -> NDArray:
    """The priors in this setup's units: the per-step and per-sequence times of a dense setup are per GPU of the
    group (see ``engine.step_cost``), so a group's 0.3 ms a step is 0.3 / gpus per GPU; a MoE setup's are the
    group's, and their own (``MOE_PRIOR`` unless given, with the engine's compute and request latency where it has
    them: ``EngineConfig.moe_compute_prior``)."""
    prior = (MOE_PRIOR if moe_prior is None else moe_prior) if setup.shape.num_experts else PRIOR
    prior = prior.copy()
    prior[PER_GPU] /= setup.cost.group_gpus
    # The priors are a step's fixed cost as steps take it; a widened setup's coefficient counts native steps, so its
    # prior is that much less and its steps take the same time: the factor moves a calibration between GPUs that
    # widen and GPUs that do not, and does not make a model nobody measured slower. On the priors as well, the
    # held-out MoE vLLM setups predicted from the other families' (gpt-oss's native steps are 0.6x their median)
    # came out TPOT 11.7% -> 15.6% off (p90 38.9% -> 56.9%), and between vLLM releases 10.6% -> 14.4%.
    prior[STEP] /= widened_step_factor(setup.shape, setup.dtype, setup.hardware)
    if setup.shape.num_experts:
        for feature, engines_own in ((COMPUTE, setup.engine.moe_compute_prior),
                                     (REQUEST, setup.engine.moe_request_ms_prior)):  # fmt: skip
            if engines_own is not None:
                prior[feature] = engines_own
    return prior


def unmeasured_prior(setup: Setup, moe_prior: NDArray | None = None) -> NDArray:
    """The coefficients a model nobody measured is predicted with: its priors (``prior_for``), a dense model's
    compute at its engine's (``EngineConfig.dense_compute_prior``) where it has one."""
    prior = prior_for(setup, moe_prior)
    if not setup.shape.num_experts and setup.engine.dense_compute_prior is not None:
        prior[COMPUTE] = setup.engine.dense_compute_prior
    return prior


def _closed_loop(setup: Setup, coefficients: NDArray, concurrency: int, input_len: int, output_len: int) -> Trace:
    return simulate_closed_loop(setup.cost, setup.config, coefficients, concurrency=concurrency, input_len=input_len,
                                output_len=output_len, client_delay_ms=CLIENT_DELAY_MS,
                                length_spread=setup.length_spread)  # fmt: skip


def _rows(trace: Trace, obs: Observation) -> list[tuple[str, NDArray, float, float]]:
    """(figure, features, measured value, weight), each to be matched in relative terms."""
    mean = trace.mean_features()
    cycle = mean["e2el"] + np.eye(len(FEATURES))[WAIT] * CLIENT_DELAY_MS  # a user's request, then its delay
    rows = [("cycle", cycle, 1000.0 * obs.concurrency / obs.request_throughput, 1.0)]
    if obs.mean_ttft_ms:
        rows.append(("ttft", mean["ttft"], obs.mean_ttft_ms, TTFT_WEIGHT))
    if obs.mean_tpot_ms and obs.output_len > 1:
        rows.append(("tpot", mean["tpot"], obs.mean_tpot_ms, 1.0))
    return rows


def fit(setup: Setup, observations: Sequence[Observation], priors: NDArray | None = None) -> Calibration:
    """Coefficients that make the simulation reproduce the observations, in relative terms, near the priors (the
    setup's own, ``prior_for``, unless given)."""
    if not observations:
        raise ValueError("need at least one observation to calibrate")
    priors = prior_for(setup) if priors is None else priors
    best: tuple[float, Setup, NDArray, list[Trace]] | None = None
    for candidate in _schedulers(setup):
        coefficients, loss = priors, math.inf
        for _ in range(ITERATIONS):
            traces = [_closed_loop(candidate, coefficients, o.concurrency, o.input_len, o.output_len)
                      for o in observations]  # fmt: skip
            coefficients, loss = _solve(traces, observations, priors, floor=roofline_floor(setup),
                                        measured_units=bool(setup.shape.num_experts))  # fmt: skip
        if best is None or loss < best[0]:
            best = (loss, candidate, coefficients, traces)
    _, chosen, coefficients, traces = best
    slope = chosen.engine.prompt_slope(moe=bool(setup.shape.num_experts))
    correction = _ttft_correction(traces, observations, coefficients, slope)
    noise = _tail_noise(traces, observations, coefficients, correction)
    users = [o.concurrency for o in observations if o.mean_ttft_ms]
    held = [o.concurrency for o in observations
            if o.mean_ttft_ms and o.concurrency <= full_batch(chosen, o.input_len, o.output_len)]  # fmt: skip
    return Calibration(coefficients, len(observations), *noise, engine=chosen.engine, ttft_correction=correction,
                       ttft_users=(min(users), max(users)) if users else None, length_spread=setup.length_spread,
                       ttft_held_users=max(held, default=0.0) if users else None)  # fmt: skip


def _load_terms(concurrency: float, input_len: float) -> NDArray:
    """What the TTFT correction depends on: how prompts queue grows with users and prompt length. Output length is
    left out: it changes how long a user is away, not how prompts meet in a step, and its terms made the
    correction extrapolate badly; so is the users × prompt-length term, which fitted the held-out shapes' neighbours
    and missed the rest (shape transfer, mean TTFT p90 41.7% with it, 39.8% without; one table, 50.2% and 43.3%)."""
    c, i = math.log(concurrency), math.log(input_len)
    return np.array([1.0, c, i, c * c])


PROMPT = 2  # the prompt length's term in ``_load_terms``
# Prompt lengths a setup's points must span to tell a request's fixed latency from its prefill, and the prompt's
# own TTFT slope: every bundled setup of several spans 2x or more, but three of DeepSeek-R1's 2025 sweeps (SGLang
# 0.4.2 on 8x MI300X, 0.4.3 on 8x H200 under attention DP, vLLM 0.7.4 on 8x H200), whose 3,200- and 3,274-token
# tables differ by 2%: from that their fits put 1-3 s on every request and TTFT slopes of -0.4 to -1.6 on the prompt.
PROMPT_SPAN = 2.0
FEW_USERS = 16  # a load at which prompts hardly queue (``identify_request``)


def _ttft_correction(traces: Sequence[Trace], observations: Sequence[Observation], coefficients: NDArray,
                     prompt_slope: float = 0.0) -> NDArray:  # fmt: skip
    """Log-ratio of measured to simulated mean TTFT, fitted over (users, prompt length) so that what the
    simulation misses about how real schedulers queue prompts (arrivals that stay in step, uneven chunking) is
    carried to other shapes; terms the points do not vary are left out (coefficient 0), but for the prompt length's
    (varied where its lengths span ``PROMPT_SPAN``), which takes the engine's ``prompt_slope``
    (``EngineConfig.prompt_slope``, a dense or a MoE model's): with one prompt length a fit cannot tell a request's
    fixed latency from its prefill, and most sweeps have one or two."""
    rows, target = [], []
    for trace, obs in zip(traces, observations, strict=True):
        simulated = float(trace.mean(trace.ttft) @ coefficients)
        if obs.mean_ttft_ms and simulated > 0:
            rows.append(_load_terms(obs.concurrency, obs.input_len))
            target.append(math.log(obs.mean_ttft_ms / simulated))
    beta = np.zeros(len(_load_terms(1, 1)))
    if not rows:
        return beta
    target_vector = np.array(target)
    miss = np.abs(target_vector - np.median(target_vector))
    kept = miss <= max(TTFT_OUTLIER_LOG, miss.min())  # a jump no scheduler explains; two far points keep both
    design, target_vector = np.array(rows)[kept], target_vector[kept]
    varying = [0] + [k for k in range(1, design.shape[1])
                     if np.ptp(design[:, k]) >= (math.log(PROMPT_SPAN) if k == PROMPT else 1e-9)]  # fmt: skip
    if PROMPT not in varying:
        beta[PROMPT] = prompt_slope
        target_vector = target_vector - prompt_slope * design[:, PROMPT]
    ridge = 0.03 * np.eye(len(varying))
    ridge[0, 0] = 0.0
    x = design[:, varying]
    beta[varying] = np.linalg.solve(x.T @ x + ridge, x.T @ target_vector)
    return beta


def _schedulers(setup: Setup) -> list[Setup]:
    """The engine as configured, and, where it may run either way (``EngineConfig.mixed_steps_fixed``), with
    prefill steps that pause decoding: which one the points bear out is chosen by the fit (published tables rarely
    say)."""
    if setup.engine.mixed_steps_fixed:
        return [setup]
    return [setup, replace(setup, engine=replace(setup.engine, mixed_steps=not setup.engine.mixed_steps))]


def prompts_vary(observations: Sequence[Observation]) -> bool:
    """Whether the points' prompt lengths span ``PROMPT_SPAN``: only then do they tell a request's fixed latency from
    its prefill (see ``MEASURED_UNITS``), or how TTFT grows with the prompt (``_ttft_correction``)."""
    lengths = [o.input_len for o in observations]
    return max(lengths) >= PROMPT_SPAN * min(lengths)


def identify_request(observations: Sequence[Observation]) -> bool:
    """Whether the points tell a request's fixed latency from its prefill: prompt lengths that span ``PROMPT_SPAN``
    among the points at ``FEW_USERS`` or fewer. At many users a queue of prompts is a part of TTFT that does not grow
    with users either: DeepSeek-R1 under TensorRT-LLM on 8x H200 with attention DP8, measured at 64 to 256 users,
    fitted 3.5 s a request, and predicted 2.8 s for 4 users of the same GPUs without it (494 ms measured)."""
    few = [o for o in observations if o.concurrency <= FEW_USERS]
    return bool(few) and prompts_vary(few)


def identify_step(observations: Sequence[Observation]) -> bool:
    """Whether the points tell a step's fixed cost from its per-token costs: a point at ``FEW_USERS`` or fewer users,
    where a decode step is mostly that cost (``validation.source_rank`` prefers such a source). Without one a MoE
    fit takes its prior instead. Fitted in the units of figures measured at many users, where it is a small share
    of each, it went to whatever the rest left over: DeepSeek-R1 under TensorRT-LLM 1.2 on 8x B200 with attention
    DP8, measured at 128 users and more, fitted none, and moved to the same GPUs without attention DP it decoded 4
    users at 1.7 ms a token where 10.3 ms was measured (7.5 ms with the prior). 2 of the 144 setups whose fits give
    the priors (``validation.moe_coefficients``) have no such point and their medians did not move."""
    return any(o.concurrency <= FEW_USERS for o in observations)


def with_prompt_scaling(setup: Setup, measured: tuple[float, float] | None) -> Setup:
    """The setup with a MoE model's own TTFT growth with the prompt under its engine, where one was measured on its
    other setups whose prompt lengths vary (``validation.prompt_scaling``: a request's fixed latency and the TTFT
    correction's prompt slope) in place of the engine's over every model: what a fit on one prompt length takes and
    cannot tell for itself (``MEASURED_UNITS``, ``_ttft_correction``)."""
    if measured is None:
        return setup
    request_ms, prompt_slope = measured
    return replace(setup, engine=replace(setup.engine, moe_request_ms_prior=request_ms,
                                         moe_ttft_prompt_slope=prompt_slope))  # fmt: skip


def _solve(traces: Sequence[Trace], observations: Sequence[Observation], priors: NDArray, floor: NDArray,
           measured_units: bool = False) -> tuple[NDArray, float]:  # fmt: skip
    """Non-negative least squares on relative errors, with the priors as weak extra rows: each relative to its own
    value, or (``measured_units``, a MoE setup's additive times and compute: see ``MEASURED_UNITS``) to the median
    effect a unit of the coefficient has on the measured figures (on the TTFTs, for compute), the request latency
    only where the points identify it (``identify_request``)."""
    from scipy.optimize import lsq_linear  # 1.2 s to import: only a fit pays it, not every page that prices a bill

    design, target, ttft_rows = [], [], []
    for trace, obs in zip(traces, observations, strict=True):
        for figure, features, measured, weight in _rows(trace, obs):
            design.append(weight * features[FITTED] / measured)
            target.append(weight * (1.0 - (features[COMMUNICATION] + features[WAIT]) / measured))  # time: coef. 1
            ttft_rows.append(figure == "ttft")
    prior = priors[FITTED]
    weight = PRIOR_WEIGHT * math.sqrt(len(design))
    measured = len(design)
    scale = 1.0 / np.maximum(prior, 1e-12)  # a MoE prior may be 0 (no cost per sequence): scaled below
    lower, upper = floor[FITTED].copy(), np.full(len(prior), np.inf)
    if measured_units:
        effects = np.abs(np.array(design))
        identified = identify_request(observations)
        units = MEASURED_UNITS if identified else [unit for unit in MEASURED_UNITS if unit != REQUEST]
        scale[units] = np.maximum(np.median(effects, axis=0)[units], 1e-12)
        if not identify_step(observations):  # not fitted: its prior (``identify_step``)
            lower[STEP], upper[STEP] = prior[STEP], np.nextafter(prior[STEP], np.inf)
        if any(ttft_rows):  # compute, in the units of the TTFTs (see ``MEASURED_UNITS``)
            scale[COMPUTE] = max(np.median(effects[ttft_rows, COMPUTE]) / TTFT_WEIGHT, 1e-12)
    design.extend(weight * np.diag(scale))
    target.extend(weight * scale * prior)
    design_matrix, target_vector = np.array(design), np.array(target)
    fitted = lsq_linear(design_matrix, target_vector, bounds=(lower, upper)).x
    residuals = design_matrix[:measured] @ fitted - target_vector[:measured]
    return np.append(fitted, [1.0, 1.0]), float(residuals @ residuals)


def _tail_noise(traces: Sequence[Trace], observations: Sequence[Observation], coefficients: NDArray,
                correction: NDArray) -> tuple[float, float]:  # fmt: skip
    """The spread of TTFT and TPOT (p95 - mean) that the simulation lacks, as a share of the mean: a real engine's
    noise (jitter, uneven arrivals) on top of the spread the simulation has (queues, waves). Independent spreads add
    in quadrature, so the simulated one is kept whole: where a few requests wait a whole service time at a full KV
    cache, a multiplied spread made a p95 of minutes out of one of seconds. Median over the points; 0 where none has
    a p95."""

    def noise(metric: str) -> float:
        shares = []
        for trace, obs in zip(traces, observations, strict=True):
            mean_ms, p95_ms = getattr(obs, f"mean_{metric}_ms"), getattr(obs, f"p95_{metric}_ms")
            if not (mean_ms and p95_ms) or obs.concurrency == 1:  # one user meets no noise to measure
                continue
            factor = _ttft_factor(correction, obs.concurrency, obs.input_len) if metric == "ttft" else 1.0
            values = getattr(trace, metric) @ coefficients * factor
            simulated = trace.percentile(values, 95) - float(trace.mean(values))
            missing = max(p95_ms - mean_ms, 0.0) ** 2 - simulated**2
            shares.append(math.sqrt(max(missing, 0.0)) / mean_ms / _crowding(obs.concurrency))
        return statistics.median(shares) if shares else 0.0

    return noise("ttft"), noise("tpot")


def _crowding(concurrency: float) -> float:
    """How much of the engine's noise a closed loop of ``concurrency`` users meets: none alone (one user's requests
    are alike: the bundled sweeps' p95 TTFT is a median 3% over the mean at one user), most of it once a few
    users' requests meet in steps unevenly (26% at two, 19-34% at 5-25)."""
    return 1.0 - 1.0 / concurrency


def _ttft_factor(correction: NDArray | None, concurrency: float, input_len: float,
                 users: tuple[float, float] | None = None) -> float:  # fmt: skip
    """What the fitted TTFT correction multiplies a closed loop's simulated TTFT by at this load: a lowering whole,
    a raise in part (``TTFT_RAISE_SHARE``). Beyond the users it was fitted on, it stays at the nearest of them: its
    users terms are a parabola in log users, and carried past the span of its points it ran away (DeepSeek-R1 on
    4x B200 under SGLang, fitted at 4 to 32 users, predicted 8 B200s' TTFT at 512 users as 0.5 ms, 3 s measured)."""
    if correction is None:
        return 1.0
    if users is not None:
        concurrency = min(max(concurrency, users[0]), users[1])
    log_factor = float(_load_terms(concurrency, input_len) @ correction)
    return math.exp(log_factor if log_factor <= 0 else TTFT_RAISE_SHARE * log_factor)


def _closed_loop_cycle(simulated_e2el_ms: float, raised_ms: float) -> float:
    """A closed-loop user's cycle (request, then the client's delay), from which throughput follows by Little's law.
    Where the TTFT correction raises TTFT, the user waits that much longer and the cycle with it: a throughput from
    the simulated cycle alone had 64 users of 120,000-token prompts wait 839 s a request at 0.109 requests/s, a
    589 s cycle. A lowering does not shorten it: it reproduces measured TTFTs below what the same run's throughput
    and TPOT imply (genai-perf's on the NIM sweeps). Held-out MoE throughput, leaving one shape out: median 8.2% ->
    7.7% on vLLM, 12.0% -> 11.6% on SGLang, p90 43.8% -> 42.4% on SGLang."""
    return simulated_e2el_ms + raised_ms + CLIENT_DELAY_MS


def _summary(trace: Trace, calibration: Calibration, load: str, level: float, input_len: int, output_len: int,
             throughput: float | None = None, saturated: bool = False) -> Prediction:  # fmt: skip
    """Means and p95s of one level; a closed loop's throughput follows from its latencies (Little's law, with the
    TTFT correction in them), an open loop's is what it served."""
    theta = calibration.coefficients

    def mean_p95(metric: str, noise: float, factor: float = 1.0) -> tuple[float, float]:
        values = getattr(trace, metric) @ theta * factor
        mean = float(trace.mean(values))
        return mean, mean + math.hypot(trace.percentile(values, 95) - mean, noise * mean)

    closed = load == "concurrency"
    factor = _ttft_factor(calibration.ttft_correction, level, input_len, calibration.ttft_users) if closed else 1.0
    crowding = _crowding(level) if closed else 1.0  # an open loop's arrivals meet at random
    ttft = mean_p95("ttft", calibration.p95_ttft_noise * crowding, factor)
    tpot = mean_p95("tpot", calibration.p95_tpot_noise * crowding)
    e2el = mean_p95("e2el", 0.0)
    added_ms = ttft[0] - ttft[0] / factor
    if throughput is None:  # Little's law over a user's cycle, longer by a raised TTFT (see ``_closed_loop_cycle``)
        throughput = 1000.0 * level / _closed_loop_cycle(e2el[0], max(added_ms, 0.0))
    e2el = (e2el[0] + added_ms, e2el[1] + added_ms)
    return Prediction(load, level, input_len, output_len, throughput, throughput * output_len, ttft[0], ttft[1],
                      tpot[0], tpot[1], e2el[0], e2el[1], saturated)  # fmt: skip


def predict_concurrency(setup: Setup, calibration: Calibration, concurrency: int, input_len: int,
                        output_len: int) -> Prediction:  # fmt: skip
    """A closed loop of ``concurrency`` users; throughput by Little's law over the latencies."""
    run = calibration.applied_to(setup)  # the spread and capacity below move the correction, not the engine
    calibration = calibration.at_spread(setup.length_spread).within_capacity(
        concurrency > full_batch(run, input_len, output_len))
    trace = _closed_loop(run, calibration.coefficients, concurrency, input_len, output_len)
    return _summary(trace, calibration, "concurrency", concurrency, input_len, output_len)


def full_batch(setup: Setup, input_len: int, output_len: int) -> int:
    """The sequences an engine runs at once while its queue never empties: its batch limit, or as many as its KV
    cache holds whole (a setup with a calibration applied)."""
    config = setup.config
    sequence = input_len + output_len + held_extra_tokens(setup.cost, config, input_len + output_len)
    held = config.kv_capacity_tokens / sequence
    return max(1, min(config.max_batch, int(held) if math.isfinite(held) else config.max_batch))


def predict_rate(setup: Setup, calibration: Calibration, rate_per_s: float, input_len: int,
                 output_len: int) -> Prediction:  # fmt: skip
    """Poisson arrivals at ``rate_per_s``; above capacity the engine saturates, says so, and serves what a closed
    loop of a full batch serves: its queue never empties. Read off the simulated run's finishes instead, gpt-oss-20b
    on one H100 served 300 requests/s at a rate of 300 (all 600 arrivals admitted into one batch of 1,024 and
    finishing together) where its full batch serves 61; and at 70 its 600 arrivals were over before its batch
    filled, so the rate above capacity was not seen as one."""
    given = setup  # as predict_concurrency takes it, before the calibration's engine is applied
    setup = calibration.applied_to(setup)
    trace = simulate_poisson(setup.cost, setup.config, calibration.coefficients, rate_per_s=rate_per_s,
                             input_len=input_len, output_len=output_len)  # fmt: skip
    theta = calibration.coefficients
    order = np.argsort(trace.arrival @ theta)
    ttft_ms = (trace.ttft @ theta)[order]
    # a queue that grows for as long as requests keep coming: the engine cannot keep up with this rate. Each quarter
    # of the arrivals waits longer than the one before, and the last twice the first: below capacity a quarter's
    # mean wanders (a replica at half its capacity, serving 3-minute requests, saw one quarter 2-3x another), so
    # comparing only the first and the last called it saturated
    quarters = [float(part.mean()) for part in np.array_split(ttft_ms, 4) if len(part)]
    growing = (len(quarters) == 4 and all(b > a for a, b in itertools.pairwise(quarters))
               and quarters[-1] > 2.0 * quarters[0] + 50.0)  # fmt: skip
    finishes_ms = np.sort(trace.finish @ theta)
    half = finishes_ms[len(finishes_ms) // 2:]
    served = (len(half) - 1) / ((half[-1] - half[0]) / 1000.0) if len(half) > 1 and half[-1] > half[0] else rate_per_s
    capacity = predict_concurrency(given, calibration, full_batch(setup, input_len, output_len), input_len,
                                   output_len).request_throughput  # fmt: skip
    if not (growing or served < 0.95 * rate_per_s or capacity < rate_per_s):
        return _summary(trace, calibration, "rate", rate_per_s, input_len, output_len, rate_per_s)
    return _summary(trace, calibration, "rate", rate_per_s, input_len, output_len, min(capacity, rate_per_s),
                    saturated=True)  # fmt: skip


# trtllm-bench sizes an engine for the dataset it is given (``tensorrt_llm/bench/build/tuning.py``,
# ``calc_engine_setting`` and ``finetune_setting``, NVIDIA/TensorRT-LLM at 04cba88): the requests whose whole
# sequence fits the KV cache, capped at 4096, rounded up ("slightly optimistic") to a multiple of 32 (at least 64),
# 128 from 256 on, 256 from 1024 on; max_num_tokens that batch times (1 + input / output), capped at 32768, rounded up
# to a multiple of 256 (at least 2048), 512 from 4096 on, 1024 from 8192 on.
OFFLINE_MAX_REQUESTS = 4096
OFFLINE_MAX_TOKENS = 32768


def _round_up(value: float, step: int) -> int:
    return step * math.ceil(value / step)


def offline_engine(setup: Setup, input_len: int, output_len: int) -> EngineConfig:
    """The batch size and step token budget trtllm-bench would build this setup with for one token shape (its
    tuning heuristic, above), on the KV cache the simulation gives the setup before any step budget is chosen (the
    heuristic sizes the engine from the memory beside the weights; the built engine's activations come after)."""
    unbuilt = replace(setup, engine=replace(setup.engine.as_set(), max_batched_tokens=0))
    requests = min(unbuilt.config.kv_capacity_tokens / (input_len + output_len), OFFLINE_MAX_REQUESTS)
    if requests < 256:
        max_batch = max(64, _round_up(requests, 32))
    else:
        max_batch = _round_up(requests, 128 if requests < 1024 else 256)
    tokens = min(requests * (1 + input_len / output_len), OFFLINE_MAX_TOKENS)
    step = 256 if tokens < 4096 else 512 if tokens < 8192 else 1024
    return replace(setup.engine.as_set(), max_batch=max_batch, max_batched_tokens=max(2048, _round_up(tokens, step)))


# How many requests trtllm-bench's dataset holds per shape in TensorRT-LLM's performance overview (perf-overview.md,
# "Preparing a Dataset": the same table from v0.17 to 1.0): more for short sequences, "to guarantee that the system
# hit a steady state". A shape it does not list takes the count of the listed one nearest in sequence length.
OFFLINE_DATASET_REQUESTS = {
    (128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
    (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000,
}  # fmt: skip


def offline_requests(input_len: int, output_len: int) -> int:
    """The size of trtllm-bench's dataset at this shape in the performance overview (``OFFLINE_DATASET_REQUESTS``)."""
    if (input_len, output_len) in OFFLINE_DATASET_REQUESTS:
        return OFFLINE_DATASET_REQUESTS[input_len, output_len]
    nearest = min(OFFLINE_DATASET_REQUESTS, key=lambda shape: (abs(sum(shape) - input_len - output_len), shape))
    return OFFLINE_DATASET_REQUESTS[nearest]


# The closed-loop tables the offline check calibrates on are NIM's (2024), whose FP8 engines keep an FP8 KV cache
# (Llama-3-8B on one H100 at 2000/2000 queues at 250 users, 1M tokens, not at 200: an FP16 cache would hold 494k and
# queue at 150) but decode no faster per token of context than its FP16 engines: TPOT grows 0.110 ms a user from 100 to
# 250 users at 200/2000 against 0.123 for FP16, 0.272 against 0.278 at 2000/2000. So an FP8 calibration's KV coefficient
# (x the FP8 roofline) is twice the FP16 one (4.28 against 2.22 on one H100). trtllm-bench's FP8 engines are taken to
# read the cache at its own width, the roofline the model assumes everywhere else: offline, the KV coefficient of an FP8
# cache is halved (16-bit over 8-bit bytes), never below the roofline. Offline cross-GPU ratio 9.5% / 23.0% -> 7.3% /
# 16.1% with it (1x A100 FP16 against 1x H100 FP8: +70% -> +6%).
NIM_KV_READ_BYTES = 2


def _offline_coefficients(setup: Setup, coefficients: NDArray) -> NDArray:
    if setup.kv_dtype != "fp8":
        return coefficients
    kv = FEATURES.index("kv_cache_ms")
    adjusted = coefficients.copy()
    adjusted[kv] = max(ROOFLINE_FLOOR[kv], coefficients[kv] * dtype_bytes("fp8") / NIM_KV_READ_BYTES)
    return adjusted


def predict_offline(setup: Setup, calibration: Calibration, input_len: int, output_len: int,
                    requests: int | None = None) -> Prediction:  # fmt: skip
    """Maximum throughput with every request queued at once (trtllm-bench throughput, an infinite request rate), as
    trtllm-bench reports it: the dataset's output tokens over the time from the first request's start to the last
    one's end (``tensorrt_llm/bench/dataclasses/reporting.py``: "End-to-End Latency (last request end - 1st request
    start)", output throughput = total output tokens / that latency). So the whole dataset is simulated, ramp-up and
    drain included: a closed loop's second round, which this once took, ends with an engine that empties as no third
    round comes, and overstated prefill-heavy shapes most (8x L40S at 2048/128: 325 against 215 tokens/s with the
    dataset's 3000 requests). The fit's scheduling (mixed steps or not) is kept; only the batch cap and the step
    budget follow the dataset, as trtllm-bench's build does."""
    engine = offline_engine(calibration.applied_to(setup), input_len, output_len)
    tuned = replace(calibration, engine=engine, coefficients=_offline_coefficients(setup, calibration.coefficients))
    run = tuned.applied_to(setup)
    count = requests or offline_requests(input_len, output_len)
    trace = simulate_offline(run.cost, run.config, tuned.coefficients, requests=count, input_len=input_len,
                             output_len=output_len)  # fmt: skip
    makespan_ms = float((trace.finish @ tuned.coefficients).max())
    return _summary(trace, tuned, "requests", count, input_len, output_len, 1000.0 * count / makespan_ms)
