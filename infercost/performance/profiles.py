"""Throughput profiles: the measured points of one engine on one hardware setup, from stored runs and bundled files.

Stored runs are this person's own measurements (``basis: measured``); bundled files are this project's measurements
(``performance/data/measured``, with their hardware fingerprint) and published tables (``performance/data/published``,
"published, not measured here"). Every profile has one id space: a run id, or ``measured:<slug>`` /
``published:<slug>`` for bundled ones.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

from infercost.errors import InputError
from infercost.performance.architecture import Architecture
from infercost.performance.calibrate import Observation, Setup
from infercost.performance.engine import NIM_ENGINE, EngineConfig, engine_preset
from infercost.performance.engine import Hardware as EngineHardware
from infercost.performance.models import bundled_models, find_bundled, list_models, resolve
from infercost.performance.roofline import DTYPE_ALIASES, DTYPE_BYTES, ModelShape
from infercost.performance.roofline import model_shape as shape_of
from infercost.performance.validation import UNNAMED_RELEASE, OfflineTable, Table, dtype_width
from infercost.runner.metrics import counted_per_request

if TYPE_CHECKING:
    from infercost.pricing.schema import GpuSpec

BUNDLED_KINDS = ("measured", "published")
POINT_FIELDS = ("concurrency", "request_throughput", "output_throughput", "total_token_throughput")
# How a table's load was applied: a closed loop of N users (vLLM's --max-concurrency), Poisson arrivals at a request
# rate (--request-rate), a burst of N requests sent at once with no cap (vllm bench serve without either), or an
# offline batch inside the engine (trtllm-bench, vllm bench throughput).
LOADS = ("closed_loop", "request_rate", "burst", "offline")
ENGINE_KINDS = {"tensorrt-llm": "trtllm", "nim": "trtllm", "vllm": "vllm", "sglang": "sglang"}


@dataclass(frozen=True)
class ThroughputProfile:
    id: str
    name: str
    model: str
    hardware: str
    engine: str
    dtype: str
    basis: str  # measured | published
    input_len: float | None
    output_len: float | None
    points: list[dict[str, float]]  # vLLM field names, one dict per concurrency
    gpus_per_replica: int = 1
    source: str = ""
    as_of: str = ""
    run_id: str | None = None
    fingerprint: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    load: str = "closed_loop"  # one of LOADS
    engine_version: str | None = None
    pipeline_parallel: int = 1  # stages of a replica's GPUs (the rest is tensor parallelism)
    engine_kind: str = ""  # vllm | sglang | trtllm, whatever the engine's display name says
    tensor_parallel: int | None = None  # None: not stated (gpus_per_replica / pipeline_parallel, as before)
    data_parallel: int = 1  # attention data-parallel ranks of a replica (vLLM/SGLang --data-parallel-size / --dp)
    expert_parallel: int = 1  # ranks the experts are split over (1: none, or not a mixture of experts)
    kv_dtype: str | None = None  # the KV cache's dtype where the source states it
    derived: dict[str, str] = field(default_factory=dict)  # field -> how it was derived from the published ones
    # How far its benchmark drew request lengths around the stated ones, as a share either side (InferenceX's
    # --random-range-ratio 0.8: 0.8-1.0 of nominal, 1/9 either side of its middle); 0: every request exactly them
    length_spread: float = 0.0
    # Whether the engine model calibrates and validates on this table and sizes workloads on it by default. Tables
    # bundled for issue 22 (MoE, vLLM/SGLang, AIConfigurator's sample, AMD) say false until the engine model covers
    # them: they load and can be looked up by id, but they change no calibration, reference or default list yet.
    calibration_set: bool = True

    @property
    def offline(self) -> bool:
        return self.load == "offline"

    @property
    def closed_loop(self) -> bool:
        return self.load == "closed_loop"

    def latency_ms(self, point: dict[str, float]) -> dict[str, float]:
        return {k: float(v) for k, v in point.items() if k.endswith("_ms") and v is not None}


def _replica_gpus(document: dict[str, Any]) -> int:
    """The replica's GPUs: attention TP x PP x attention DP as stated, or the MoE layers' TP x EP where that is more.
    The MoE layers run on the same GPUs as attention, so a table whose MoE layout spans more GPUs than its attention
    layout names ran on those (AIConfigurator's vLLM rows of Qwen3-235B-A22B-FP8 say "TP1 ... MoE TP2" for one H200,
    which its 235 GB of FP8 weights do not fit, and decode at the TPOT of its TP2 rows: 55 against 52 ms)."""
    stated = int(document.get("gpus_per_replica", 1))
    moe = int(document.get("moe_tensor_parallel") or 1) * int(document.get("expert_parallel") or 1)
    return max(stated, moe)


def _from_bundled(kind: str, slug: str, document: dict[str, Any]) -> ThroughputProfile:
    return ThroughputProfile(
        id=f"{kind}:{slug}",
        name=document.get("name", slug),
        model=document.get("model", ""),
        hardware=document.get("hardware", ""),
        engine=document.get("engine", ""),
        dtype=document.get("dtype", ""),
        basis=document.get("basis", kind),
        input_len=document.get("input_len"),
        output_len=document.get("output_len"),
        points=sorted(document["points"], key=_point_order),
        gpus_per_replica=_replica_gpus(document),
        source=document.get("source", ""),
        as_of=document.get("as_of", ""),
        run_id=document.get("run_id"),
        fingerprint=document.get("fingerprint", {}),
        notes=document.get("notes", ""),
        load=document.get("load", "closed_loop"),
        engine_version=document.get("engine_version"),
        pipeline_parallel=int(document.get("pipeline_parallel") or 1),
        engine_kind=document.get("engine_kind") or engine_kind(document.get("engine", "")),
        tensor_parallel=document.get("tensor_parallel"),
        data_parallel=int(document.get("data_parallel") or 1),
        expert_parallel=int(document.get("expert_parallel") or 1),
        kv_dtype=document.get("kv_dtype"),
        derived=document.get("derived", {}),
        length_spread=float(document.get("length_spread") or 0.0),
        calibration_set=bool(document.get("calibration_set", True)),
    )


def engine_kind(engine: str) -> str:
    """An engine's display name (``NVIDIA NIM 1.8.0``, ``vLLM 0.16.0``) as vllm, sglang or trtllm."""
    return ENGINE_KINDS[engine_preset(engine)[0]]


def _point_order(point: dict[str, Any]) -> tuple[float, float, float]:
    """By concurrency, then shape: offline points (no concurrency) carry their own lengths."""
    return (point.get("concurrency") or 0, point.get("input_len") or 0, point.get("output_len") or 0)


def closed_loop_profiles() -> tuple[ThroughputProfile, ...]:
    """Bundled profiles a workload can be sized on: concurrency sweeps with latencies, not offline maxima, request
    rates or bursts (their points have no concurrency); tables outside the calibration set are looked up by id only."""
    return tuple(p for p in bundled_profiles() if p.closed_loop and p.calibration_set)


@cache
def bundled_profiles() -> tuple[ThroughputProfile, ...]:
    """This project's own measurements first, then published tables; tables held out of calibration last (so
    whatever takes the first suitable profile keeps taking the one it took before issue 22's data)."""
    profiles = []
    root = resources.files("infercost.performance").joinpath("data")
    for kind in BUNDLED_KINDS:
        folder = root.joinpath(kind)
        if not folder.is_dir():
            continue
        for item in sorted(folder.iterdir(), key=lambda f: f.name):
            if item.name.endswith(".json"):
                document = json.loads(item.read_text(encoding="utf-8"))
                profiles.append(_from_bundled(kind, item.name.removesuffix(".json"), document))
    return tuple(sorted(profiles, key=lambda p: not p.calibration_set))  # a stable sort: file order otherwise


def _median_point(summaries: list[dict[str, Any]]) -> dict[str, float]:
    """One point per load level: the median of each metric over the level's repeats (DESIGN: median of 5–10)."""
    keys = [k for k in summaries[0] if k in POINT_FIELDS or k.endswith("_ms")]
    point = {}
    for key in keys:
        values = [s[key] for s in summaries if isinstance(s.get(key), int | float)]
        if values:
            point[key] = float(statistics.median(values))
    return point


def profile_from_run(run: dict[str, Any]) -> ThroughputProfile:
    """A stored run (``store.get_run``) as a profile: completed levels only, medians over repeats."""
    by_level: dict[int, list[dict[str, Any]]] = {}
    for level in run["levels"]:
        if level["status"] == "done" and level["summary"] and level["summary"].get("completed"):
            summary = {"concurrency": level["load"], **level["summary"]}
            by_level.setdefault(level["idx"], []).append(summary)
    if not by_level:
        raise InputError("run", f"stored run {run['id']!r} has no completed level")
    points = sorted((_median_point(s) for s in by_level.values()), key=lambda p: p["concurrency"])
    first = next(iter(by_level.values()))[0]
    hardware = run.get("hardware") or {}
    return ThroughputProfile(
        id=run["id"],
        name=f"{run['model']} · {run['backend']} · {_hardware_name(hardware)} · run {run['id']}",  # runs differ
        model=run["model"],
        hardware=_hardware_name(hardware),
        engine=str((run.get("engine") or {}).get("name") or run["backend"]),
        dtype=str((run.get("engine") or {}).get("dtype") or run.get("config", {}).get("dtype") or ""),
        basis="measured",
        input_len=_processed_length(by_level, "input") or first.get("input_len"),
        output_len=_processed_length(by_level, "output") or first.get("output_len"),
        points=points,
        source=run.get("source", "infercost"),
        as_of=str(run.get("created_at", ""))[:10],
        run_id=run["id"],
        fingerprint=hardware,
    )


def _processed_length(by_level: dict[int, list[dict[str, Any]]], what: str) -> float | None:
    """The median over levels of the ``what`` ("input"/"output") tokens per request the server counted, where every
    level counted them: a server that tokenizes a 128-word prompt as 654 tokens was measured at 654, and the engine
    model must carry its points from there (the run's summary warns of the difference). None where it did not count
    (an imported run), and the lengths asked for stand."""
    counted = counted_per_request([s for level in by_level.values() for s in level], what)
    return float(statistics.median(counted)) if counted else None


def _hardware_name(fingerprint: dict[str, Any]) -> str:
    gpu = fingerprint.get("gpu")
    if isinstance(gpu, dict):
        gpu = gpu.get("name")
    return str(gpu or fingerprint.get("cpu") or "unknown hardware")


def stored_profiles(db_path: str | Path | None = None) -> list[ThroughputProfile]:
    """Every stored run with at least one completed level, newest first."""
    from infercost.store import connect, get_run, list_runs

    db = connect(db_path)
    try:
        profiles = []
        for run in list_runs(db):
            try:
                profiles.append(profile_from_run(get_run(db, run["id"])))
            except InputError:
                continue  # a run still in progress or with no completed level has no points yet
        return profiles
    finally:
        db.close()


def find_profile(profile_id: str, db_path: str | Path | None = None) -> ThroughputProfile:
    """A bundled profile by ``measured:``/``published:`` id, else a stored run by its id."""
    for profile in bundled_profiles():
        if profile.id == profile_id:
            return profile
    if profile_id.split(":", 1)[0] in BUNDLED_KINDS:
        listed = [p.id for p in bundled_profiles() if p.calibration_set]  # over a thousand would drown the line
        held_out = len(bundled_profiles()) - len(listed)
        known = ", ".join(listed) or "none"
        more = f" and {held_out} held out of calibration (files in performance/data/published)" if held_out else ""
        raise InputError("run", f"no bundled profile {profile_id!r}; bundled: {known}{more}")
    from infercost.store import connect, get_run

    db = connect(db_path)
    try:
        return profile_from_run(get_run(db, profile_id))
    finally:
        db.close()


@cache  # a frozen shape, asked for by every table the engine model simulates
def model_shape(model: str) -> ModelShape:
    """The engine model's shape of a bundled architecture (``models list``), dense or mixture-of-experts."""
    found = find_bundled(model)
    if found is None:
        raise InputError("model", f"unknown architecture {model!r}; `python -m infercost models list` lists the "
                                  "bundled ones")  # fmt: skip
    return shape_of(found.architecture())


@cache
def shape_twin(model: str) -> str:
    """The bundled model whose tables stand for ``model``'s: the first by name of those the engine model sees
    alike (equal ``model_shape``), itself where none other does. DeepSeek-R1 and V3 share one config, so a table of
    either can calibrate both (speed follows the weights' shapes, not their values): DeepSeek-V3 under vLLM, which
    none of its own tables measured, took the priors before, though R1's vLLM tables are bundled."""
    found = find_bundled(model)
    if found is None:
        return model
    shape = model_shape(found.name)
    return next(name for name in sorted(bundled_models()) if model_shape(name) == shape)


def roofline_architecture(model: str, config_path: str | None = None) -> Architecture:
    """The architecture of a model a roofline setup names, as ``models show`` resolves it: its ``config.json``
    where one is given, else a bundled architecture, else the Hugging Face Hub's config (never the model's code), or
    InputError naming ``model`` with how to give one. A published table's model stays bundled-only
    (``model_shape``): one the bundle lacks is carried by the simple fitted model, not fetched."""
    if not config_path and "/" not in model and not find_bundled(model):  # not a Hub id either
        raise InputError("model", f"unknown architecture {model!r}: not bundled (`python -m infercost models list`); "
                                  "name its Hugging Face id, or give its config.json (throughput --config PATH)")
    return resolve(model, config_path).architecture



def engine_hardware(gpu: str, gpus: int, dtype: str) -> EngineHardware:
    """A replica's GPUs for the engine model: the datasheet's dense peak in the dtype the model computes in
    (FP8 or FP4 tensor cores where the GPU has them and the weights use them)."""
    from infercost.pricing import gpu_spec

    spec = gpu_spec(gpu)
    fp4 = spec.fp4_dense_tflops  # None before Blackwell: 4-bit weights are widened to 16 bits, at its peak
    peak = {"fp8": spec.fp8_dense_tflops, "fp4": fp4, "mxfp4": fp4, "nvfp4": fp4}.get(dtype.lower())
    return EngineHardware(spec.gpu, spec.memory_bandwidth_gbps, peak or spec.bf16_dense_tflops,
                          spec.memory_gb, gpus, spec.interconnect_gbps or 0.0, gpu_generation(spec),
                          fp4=bool(fp4))  # fmt: skip


def gpu_generation(spec: GpuSpec) -> str:
    """The generation ``engine.Hardware.generation`` names, told by the tensor cores' formats on the datasheet."""
    if spec.vendor == "AMD":
        return "amd"
    return "blackwell" if spec.fp4_dense_tflops else "hopper" if spec.fp8_dense_tflops else "ampere"


def published_dtype(profile: ThroughputProfile) -> str:
    """A published table's dtype: its "fp4" is the checkpoint's own 4-bit format where it ships in one (gpt-oss's
    MXFP4, which AIConfigurator's sample calls fp4 even on H100), else NVIDIA's NVFP4 (nvidia/*-NVFP4 checkpoints).
    A person's "fp4" stays ambiguous, and refused."""
    if profile.dtype.lower() != "fp4":
        return profile.dtype
    found = find_bundled(profile.model)
    own = found.architecture().default_dtype if found else ""
    return own if own in ("mxfp4", "nvfp4") else "nvfp4"


def weights_dtype(dtype: str) -> str:
    lowered = dtype.lower()
    return "bfloat16" if lowered in ("", "auto", "bf16", "bfloat16") else DTYPE_ALIASES.get(lowered, lowered)


def kv_dtype_for(dtype: str) -> str | None:
    """The KV cache's dtype beside weights of ``dtype``: FP8 with FP8 weights, as NIM and TensorRT-LLM ship it, and
    with NVFP4 weights, whose NVIDIA checkpoints name ``kv_cache_quant_algo: FP8`` (16 bits there put the held-out
    AIConfigurator FP4 tables' KV cache at half its size: Llama-3.1-70B on one B200 at 64 users of 1,024 + 8,192
    tokens queued for a 76 s TTFT where 238 ms was measured); 16 bits beside integer or MXFP4 weights (widened
    before attention, which never reads 4-bit keys); the weights' own float format otherwise (None)."""
    if dtype in ("fp8", "nvfp4"):
        return "fp8"
    return "bfloat16" if dtype in ("int8", "int4", "mxfp4") else None


def setup_for(model: str, hardware: EngineHardware, dtype: str, engine: EngineConfig,
              shape: ModelShape | None = None) -> Setup:  # fmt: skip
    """What the engine model needs to simulate a setup: the model's shape (a bundled architecture's unless given:
    ``roofline_architecture``), the GPUs, the weights' dtype with its KV cache's (``kv_dtype_for``) and the engine's
    scheduling."""
    if dtype not in DTYPE_BYTES:
        raise InputError("dtype", f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
    return Setup(shape or model_shape(model), hardware, dtype, engine, kv_dtype=kv_dtype_for(dtype))


def engine_setup(profile: ThroughputProfile) -> Setup:
    """A profile's setup, with its engine's scheduling defaults. Experts spread over ``expert_parallel`` GPUs
    exchange tokens all-to-all; attention data parallelism (SGLang's and TensorRT-LLM's DP attention beside expert
    parallelism) is taken as one engine over all the GPUs: its ranks step together through the MoE layers, and
    the attention weights each rank reads again are a small share of a MoE model's bytes (an approximation)."""
    dtype = weights_dtype(published_dtype(profile))
    _, config = engine_preset(profile.engine)
    setup = setup_for(profile.model, engine_hardware(profile.hardware, profile.gpus_per_replica or 1, dtype), dtype,
                      config)  # fmt: skip
    if profile.tensor_parallel and setup.shape.n_heads % profile.tensor_parallel:
        # AIConfigurator's sample names TP12-TP72 for DeepSeek-R1 on GB200 (128 heads) and TP64 for Qwen3.5 (32):
        # some layout ran, not that one, and AIConfigurator refuses those rows too ("num_heads should be divisible
        # by tp_size"); simulated as stated they were the worst calibrations to move (4-22x off elsewhere)
        raise InputError("tensor_parallel", "the stated tensor-parallel size does not divide the model's attention "
                                            "heads: not the layout that ran")  # fmt: skip
    return replace(setup, expert_parallel=max(profile.expert_parallel, 1),
                   attention_data_parallel=max(profile.data_parallel, 1), length_spread=profile.length_spread)


def observations(profile: ThroughputProfile) -> list[Observation]:
    """A closed-loop profile's points as the engine model fits them; points without throughput are left out."""
    if not profile.closed_loop or not (profile.input_len and profile.output_len):
        raise InputError("run", f"{profile.id} has no closed-loop points at a known token shape")
    return [
        Observation(int(p["concurrency"]), round(profile.input_len), round(profile.output_len),
                    p["request_throughput"], p.get("mean_ttft_ms"), p.get("mean_tpot_ms") or p.get("mean_itl_ms"),
                    p.get("p95_ttft_ms"), p.get("p95_tpot_ms") or p.get("p95_itl_ms"))  # fmt: skip
        for p in profile.points
        if p.get("request_throughput") and p.get("concurrency")
    ]


def unpredictable_reason(profile: ThroughputProfile) -> str:
    """Why the engine model cannot simulate a profile yet ("" when it can): an architecture it has no shape for (the
    mixture-of-experts models of the published tables, for now), a layout it does not simulate (pipeline, attention
    data or expert parallelism), a stated layout that cannot run, a GPU without a datasheet, a dtype it has no bytes
    for, no closed-loop points, or, for a table it could simulate, that the table is not in the calibration set
    yet."""
    if profile.pipeline_parallel > 1:
        return "layout not simulated (pipeline parallelism)"
    if not profile.closed_loop:
        return f"{profile.load} load is not a closed loop"
    try:
        engine_setup(profile)
        observations(profile)
    except InputError as error:
        return error.reason.split(";")[0]  # the list of known names after ';' would make every reason unique-long
    if not profile.calibration_set:  # last: a table the model could simulate says only that it waits
        return "simulable, not in the calibration set yet (bundled for issue 22)"
    return ""


def validation_skips(profiles: Sequence[ThroughputProfile] | None = None) -> dict[str, int]:
    """How many bundled tables ``validation_tables`` leaves out, per reason (``unpredictable_reason``, with the
    model, GPU or dtype named)."""
    skipped: dict[str, int] = {}
    for profile in bundled_profiles() if profiles is None else profiles:
        reason = "" if profile.offline else unpredictable_reason(profile)
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
    return dict(sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))


def held_out_profiles() -> tuple[ThroughputProfile, ...]:
    """The published closed-loop tables kept out of calibration (issue 22's vLLM, SGLang and MoE sweeps), as
    profiles the validation may score: ``bench.held_out_accuracy`` predicts them from each other."""
    return tuple(replace(p, calibration_set=True) for p in bundled_profiles() if not p.calibration_set)


def tables_by_model() -> dict[str, dict[str, int]]:
    """The bundled closed-loop tables of each bundled model, counted per engine (``engine_preset``'s names): what
    its throughput predictions are calibrated on. A model with none is predicted from the engine model's priors
    alone, which a person choosing a model should see before asking."""
    found: dict[str, dict[str, int]] = {}
    for model, engine, _ in _bundled_closed_loop():
        engines = found.setdefault(model, {})
        engines[engine] = engines.get(engine, 0) + 1
    return {model: dict(sorted(engines.items())) for model, engines in found.items()}


@cache
def releases_by_model() -> dict[str, dict[str, list[str]]]:
    """The engine releases each bundled model's closed-loop tables name, per engine, newest first: the ones
    ``throughput --engine-version`` (and the app's release list) calibrates on first."""
    found: dict[str, dict[str, set[str]]] = {}
    for model, engine, profile in _bundled_closed_loop():
        # a NIM container's version is NIM's, not its TensorRT-LLM's: not a release --engine trtllm names
        if profile.engine_version and engine_preset(profile.engine)[1] is not NIM_ENGINE:
            found.setdefault(model, {}).setdefault(engine, set()).add(profile.engine_version)
    return {model: {engine: sorted(releases, key=_release_order, reverse=True) for engine, releases in engines.items()}
            for model, engines in found.items()}  # fmt: skip


def _release_order(release: str) -> tuple[int, Version | str]:
    try:
        return 1, Version(release)
    except InvalidVersion:  # not PEP 440 (a vendor's own tag): after those that are, by name
        return 0, release


def _bundled_closed_loop() -> list[tuple[str, str, ThroughputProfile]]:
    """(bundled model, engine preset, profile) of every bundled closed-loop table of a bundled model."""
    found = []
    for profile in [*closed_loop_profiles(), *held_out_profiles()]:
        bundled = find_bundled(profile.model)
        if bundled is not None and profile.closed_loop:
            found.append((bundled.name, engine_preset(profile.engine)[0], profile))
    return found


def listed_models() -> list[dict[str, Any]]:
    """``models.list_models``' rows, each with its ``tables_by_model`` (``tables``: {} where none is bundled), the
    tables of its ``shape_twin`` under the engines it has none of (``twin_tables``: what calibrates it there) and
    its ``releases_by_model`` (``releases``: what ``--engine-version`` can name)."""
    tables, releases = tables_by_model(), releases_by_model()
    rows = []
    for row in list_models():
        own, twin = tables.get(row["model"], {}), shape_twin(row["model"])
        stand_in = {engine: count for engine, count in tables.get(twin, {}).items() if engine not in own}
        rows.append({**row, "tables": own, "twin_tables": {twin: stand_in} if twin != row["model"] and stand_in
                     else {}, "releases": releases.get(row["model"], {})})  # fmt: skip
    return rows


def validation_tables(profiles: Sequence[ThroughputProfile] | None = None) -> list[Table]:
    """Every closed-loop profile the engine model can simulate, as a table for ``validation``; the others (see
    ``validation_skips``) are left out."""
    tables = []
    for profile in closed_loop_profiles() if profiles is None else profiles:
        if unpredictable_reason(profile):
            continue
        setup = engine_setup(profile)
        points = observations(profile)
        engine, _ = engine_preset(profile.engine)
        # A release is part of the engine: NIM 1.8.0 queues a closed loop's prompts unlike the 2024 NIM releases
        # (Llama-3.3-70B on two H100s, 5000/500: mean TTFT 407 ms alone, 689 ms at 25 users; 2024's 70B on four
        # H100s, 2000/200: 112 ms and 1729 ms), so calibrations move between GPUs of one release only.
        engine = f"{engine} {profile.engine_version or unnamed_release(profile.source)}"
        model = find_bundled(profile.model).name
        group = (model, engine, profile.hardware, str(profile.gpus_per_replica), setup.dtype, *layout_tag(profile))
        tables.append(Table(profile.id, group, (shape_twin(model), engine, dtype_width(setup.dtype)), setup,
                            tuple(points)))  # fmt: skip
    return tables


def unnamed_release(source: str) -> str:
    """The release of a table whose source does not name it, as its setup's key holds it: that source's own
    (``unnamed@aiconfigurator``). Two sources' tables were measured apart and, unnamed, need not be of one release:
    AIConfigurator's unversioned SGLang DeepSeek-R1 NVFP4 tables on 4x B200 (InferenceX's runs of November 2025, TTFT
    7.1 s at 32 users of 1,024-token prompts) and inference-sim's of July 2026 (422 ms) were one setup, whose fit put
    86 ms on every request and 2.6x its roofline on compute, where the 2026 table alone gives 23 ms and 1.8x.
    Held-out MoE shape transfer, median |error| throughput / mean TTFT: SGLang 10.0 / 27.2% -> 9.9 / 26.7%,
    TensorRT-LLM 8.1 / 20.1% -> 7.9 / 20.1%, vLLM 5.2 / 20.9% -> 5.0 / 20.6%."""
    parts = urlsplit(source)
    path = parts.path.strip("/").split("/")
    name = path[1] if parts.netloc == "github.com" and len(path) > 1 else parts.netloc or source
    return f"{UNNAMED_RELEASE}{name}"


class Parallel(Protocol):
    """What a layout tag is made of: a profile's or a requested setup's (``predict.Layout``) parallel sizes."""

    @property
    def data_parallel(self) -> int: ...
    @property
    def expert_parallel(self) -> int: ...


def layout_tag(profile: Parallel) -> tuple[str, ...]:
    """How a replica's GPUs share the model, where it is not one tensor-parallel group (``("dp8 ep8",)``; ``()`` for
    plain TP): part of a setup, so tables of one GPU count but other layouts are not fitted together (DeepSeek-R1 on
    8x B200 decodes at 4.3 ms a token at TP8 and 4 users, at 12 ms with attention DP8 x EP8 at 64)."""
    parts = [f"dp{profile.data_parallel}" if profile.data_parallel > 1 else "",
             f"ep{profile.expert_parallel}" if profile.expert_parallel > 1 else ""]
    tag = " ".join(p for p in parts if p)
    return (tag,) if tag else ()


def offline_tables(profiles: Sequence[ThroughputProfile] | None = None) -> list[OfflineTable]:
    """Every offline (perf-overview) profile as a table for ``validation.offline_ratios``; one the engine model
    cannot simulate (pipeline parallelism, a dtype or GPU it has no data for) keeps the reason instead of a setup."""
    tables = []
    for profile in bundled_profiles() if profiles is None else profiles:
        if not profile.offline:
            continue
        found = find_bundled(profile.model)
        model = found.name if found else profile.model
        engine, _ = engine_preset(profile.engine)
        dtype = weights_dtype(profile.dtype)
        setup, reason = None, ""
        if profile.pipeline_parallel > 1:
            reason = "pipeline parallelism is not simulated"
        elif any(p.get("num_requests") for p in profile.points):
            reason = "a sweep over the batch's request count, not one maximum per shape"
        elif not profile.calibration_set:
            reason = "not in the calibration set yet (bundled for issue 22)"
        else:
            try:
                setup = engine_setup(profile)
            except InputError as error:
                reason = str(error)
        points = {} if reason.startswith("a sweep") else {
            (int(p["input_len"]), int(p["output_len"])): float(p["output_throughput"])
            for p in profile.points if p.get("output_throughput") and p.get("input_len") and p.get("output_len")}
        family = (model, engine, dtype_width(dtype))
        tables.append(OfflineTable(profile.id, profile.engine_version or "", model, family, profile.hardware,
                                   profile.gpus_per_replica, dtype, points, setup, reason))  # fmt: skip
    return tables
