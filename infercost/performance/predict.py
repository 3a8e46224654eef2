"""Predicted throughput points for any token shape and load, from a profile or for hardware nobody measured.

- From a profile (a stored run, a bundled measured or published table): the engine model is calibrated on the
  profile's own points and run at the wanted shape. Basis ``fitted``; expected error of a ``one_shape`` transfer
  (one sweep at one shape carried to another), or ``shape`` where the setup's other tables were fitted too.
- For a model on GPUs nobody measured (``roofline:MODEL@NxGPU:DTYPE``): the engine model calibrated on the
  nearest setup that was measured or published (same model, then same bytes per weight, then same GPU), moved to
  these GPUs: bandwidth, compute and KV-cache capacity change, the coefficients stay. Basis ``roofline``; expected
  error of a ``gpu`` transfer. With nothing of that model to calibrate on, the priors for a model of its kind under
  its engine alone (``calibrate.unmeasured_prior``): the estimate says so, with the error of a ``model`` transfer
  (a held-out model family predicted so, ``validation.model_transfer``). The same where the model was measured
  under other engines only and the asked engine's priors were measured closer than rescheduling another engine's
  calibration (``expected_error.priors_beat_another_engine``: every MoE engine); otherwise that calibration runs
  under the asked engine's scheduler, with the ``engine`` transfer's error compounded.

Every result names its basis, its source and the error the validation harness measured for that kind of transfer.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.performance.architecture import DTYPES, normalize_dtype
from infercost.performance.calibrate import (
    LATENCY_FIGURES,
    PRIOR,
    PROMPT_SPAN,
    Calibration,
    Observation,
    Prediction,
    Setup,
    fit,
    predict_concurrency,
    predict_offline,
    predict_rate,
    prompts_vary,
    unmeasured_prior,
    with_prompt_scaling,
)
from infercost.performance.engine import (
    COMPUTE,
    ENGINE_PRESETS,
    NIM_ENGINE,
    RELEASE_PATTERN,
    engine_preset,
    held_extra_tokens,
    held_weight_bytes,
)
from infercost.performance.expected_error import (
    compounded,
    expected_error,
    held_out_error,
    priors_beat_another_engine,
    stored_calibrations,
    stored_held_out_calibrations,
)
from infercost.performance.models import find_bundled
from infercost.performance.profiles import (
    ThroughputProfile,
    closed_loop_profiles,
    engine_hardware,
    engine_setup,
    find_profile,
    held_out_profiles,
    layout_tag,
    observations,
    published_dtype,
    roofline_architecture,
    setup_for,
    shape_twin,
    validation_tables,
    weights_dtype,
)
from infercost.performance.roofline import ModelShape, dtype_bytes, model_shape
from infercost.performance.validation import (
    MISFIT,
    PROMPT_SCALING_SETUPS,
    Scalings,
    SourceCalibrations,
    Table,
    fit_error,
    fit_tables,
    group_tables,
    model_engine,
    points_of,
    prompt_scaling,
    prompt_scalings,
    scaling_sources,
    source_rank,
)
from infercost.pricing import GpuSpec, gpu_spec

DEFAULT_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
ENGINE_MODEL_VERSION = 28  # bump when the simulation or the fit changes, so stored calibrations are refitted
ROOFLINE_SOURCE = re.compile(r"^roofline:(?P<model>[^@]+)@(?P<gpus>\d+)x(?P<gpu>[^:]+)(?::(?P<dtype>[\w.]+))?$")


def layout_name(parallel: Mapping[str, int]) -> str:
    """A layout as ``throughput`` prints it and the app lists it ("TP4 EP1 DP2"), from its ``tensor_parallel``,
    ``expert_parallel`` and ``data_parallel``."""
    return f"TP{parallel['tensor_parallel']} EP{parallel['expert_parallel']} DP{parallel['data_parallel']}"


@dataclass(frozen=True)
class Layout:
    """How a replica's GPUs share the model, as vLLM and SGLang name it: ``data_parallel`` engines, each a
    ``tensor_parallel`` group whose routed experts are spread over ``expert_parallel`` of its GPUs."""

    tensor_parallel: int | None = None  # None: the replica's GPUs over data_parallel
    expert_parallel: int = 1
    data_parallel: int = 1

    def resolved(self, gpus: int, shape: ModelShape) -> Layout:
        """The layout on ``gpus`` GPUs, or InputError naming the setting a model or GPU count cannot run."""
        for name, value in (("tensor_parallel", self.tensor_parallel), ("expert_parallel", self.expert_parallel),
                            ("data_parallel", self.data_parallel)):  # fmt: skip
            if value is not None and not 1 <= value <= 64:
                raise InputError(name, f"must be 1 to 64 GPUs, got {value}")
        if gpus % self.data_parallel:
            raise InputError("data_parallel", f"{self.data_parallel} engines cannot share {gpus} GPUs evenly")
        tensor = self.tensor_parallel or gpus // self.data_parallel
        if tensor * self.data_parallel != gpus:
            raise InputError("tensor_parallel", f"{tensor} x {self.data_parallel} data-parallel engines is not the "
                                                f"setup's {gpus} GPUs")  # fmt: skip
        if shape.n_heads % tensor:
            raise InputError("tensor_parallel", f"the model's {shape.n_heads} attention heads do not divide among "
                                                f"{tensor} GPUs")  # fmt: skip
        if self.expert_parallel > 1 and not shape.num_experts:
            raise InputError("expert_parallel", "a dense model has no experts to spread")
        if self.expert_parallel > gpus:
            raise InputError("expert_parallel", f"experts cannot spread over more than the setup's {gpus} GPUs")
        if self.expert_parallel > 1 and shape.num_experts % self.expert_parallel:
            raise InputError("expert_parallel", f"{shape.num_experts} experts do not divide among "
                                                f"{self.expert_parallel} GPUs")  # fmt: skip
        return Layout(tensor, self.expert_parallel, self.data_parallel)

    @property
    def engines(self) -> int:
        """Engines simulated apart: the data-parallel ones, unless experts span them (attention data parallelism
        beside wide expert parallelism, as SGLang and TensorRT-LLM run DeepSeek), whose ranks step together
        through every MoE layer: one engine over all the GPUs, then."""
        return 1 if self.expert_parallel > (self.tensor_parallel or 1) else self.data_parallel


@dataclass(frozen=True)
class PredictedProfile:
    """Predicted points with everything a figure built on them must say about itself."""

    basis: str  # fitted | roofline
    source: str  # the profile id, or the roofline spec
    model: str
    hardware: str
    gpus_per_replica: int
    dtype: str
    input_len: int
    output_len: int
    points: list[Prediction]
    transfer: str  # which kind of transfer the expected error is of
    expected_error: dict[str, dict[str, float]]
    calibration: Calibration
    notes: list[str] = field(default_factory=list)
    engine: str = "vllm"  # the preset the simulation scheduled with (engine.ENGINE_PRESETS)
    cached_prompt_fraction: float = 0.0  # share of each prompt served from the engine's prefix cache
    layout: Layout | None = None  # None: one tensor-parallel group over the replica's GPUs
    kv_dtype: str | None = None  # the KV cache's dtype the simulation sized and read (None: not simulated)
    engine_version: str | None = None  # the engine release asked for (None: not named)
    length_spread: float = 0.0  # how far the simulated requests' lengths spread around the stated ones

    @property
    def parallel(self) -> dict[str, int]:
        """The replica's layout as vLLM and SGLang name it."""
        layout = self.layout or Layout(self.gpus_per_replica)
        return {"tensor_parallel": layout.tensor_parallel or self.gpus_per_replica,
                "expert_parallel": layout.expert_parallel, "data_parallel": layout.data_parallel}  # fmt: skip

    @property
    def every_note(self) -> list[str]:
        """The notes of how it was predicted, then what its ranges and saturated rates mean."""
        return [*self.notes, *one_sided_notes(self.expected_error), *saturation_notes(self.points)]

    def as_dict(self) -> dict[str, object]:
        return {"basis": self.basis, "source": self.source, "model": self.model, "hardware": self.hardware,
                "gpus_per_replica": self.gpus_per_replica, "dtype": self.dtype, "engine": self.engine,
                "engine_version": self.engine_version,
                "parallel": self.parallel, "input_len": self.input_len, "output_len": self.output_len,
                "kv_dtype": self.kv_dtype, "cached_prompt_fraction": self.cached_prompt_fraction,
                "length_spread": self.length_spread,
                "transfer": self.transfer,
                "expected_error": self.expected_error, "coefficients": self.calibration.as_dict(),
                "notes": self.every_note,
                "points": [{**p.as_dict(), "range": point_range(p, self.expected_error)}
                           for p in self.points]}  # fmt: skip


def saturation_notes(points: Sequence[Prediction]) -> list[str]:
    """What a rate above the setup's capacity means, for the rates that are (``Prediction.saturated``)."""
    rates = [p for p in points if p.saturated]
    if not rates:
        return []
    most = max(p.request_throughput for p in rates)
    listed = ", ".join(f"{p.level:g}" for p in rates)
    return [f"saturated at {listed} requests/s: the setup serves about {most:.3g} requests/s at most, so requests "
            "queue for as long as they keep coming and latency has no steady value (left blank)"]


METRIC_WORDS = {"request_throughput": "throughput", "mean_ttft_ms": "mean TTFT", "mean_tpot_ms": "mean TPOT"}


def one_sided_notes(error: dict[str, dict[str, float]]) -> list[str]:
    """Where every held-out prediction of this kind erred the same way (p10 and p90 of the signed error on one side
    of zero: SGLang's dense TTFTs, predicted from another engine's calibration, were 1.8-7x the prediction), the
    range lies wholly above or below the figure. Said in words, so that a figure outside its own range reads as
    what it is: the simulation's value, with where the measured one was found."""
    notes = []
    for metric, words in METRIC_WORDS.items():
        row = error.get(metric) or {}
        low, high = row.get("p10"), row.get("p90")
        if low is None or high is None or low <= 0 <= high:
            continue
        side = "below" if low > 0 else "above"
        notes.append(f"{words}: this kind of prediction erred one way on the held-out tables, so its range lies "
                     f"{side} the figure: measured values were {1 / (1 + high):.2g} to {1 / (1 + low):.2g} times "
                     "the predicted one (p10 to p90)")
    return notes


# Where no transfer of this kind was ever measured (a model no table calibrates), the range is not left out but made
# wide: a factor of two either way. A convention, not a measurement: it says "we do not know" in the figure's units.
UNMEASURED_ERROR = {"p10": -0.5, "p90": 1.0}
RANGE_METRICS = {"output_throughput": "request_throughput", "request_throughput": "request_throughput",
                 "mean_ttft_ms": "mean_ttft_ms", "mean_tpot_ms": "mean_tpot_ms"}  # figure -> error it carries


def point_range(point: Prediction, error: dict[str, dict[str, float]]) -> dict[str, list[float]]:
    """Per figure, the interval that should hold the measured value 80% of the time: a prediction is
    ``measured × (1 + e)``, so the measured value lies in ``predicted / (1 + e)`` for e between the transfer's
    p90 and p10 signed error (``expected_error``). An open loop serves at most what is offered, so neither end of
    its throughputs' ranges passes the rate."""
    offered = ({"request_throughput": point.level, "output_throughput": point.level * point.output_len}
               if point.load == "rate" else {})  # fmt: skip
    ranges: dict[str, list[float] | None] = {}
    for figure, metric in RANGE_METRICS.items():
        quantiles = error.get(metric) or UNMEASURED_ERROR
        value = getattr(point, figure)
        saturated = point.saturated and figure in LATENCY_FIGURES  # no steady latency to put a range on
        most = offered.get(figure, math.inf)
        ranges[figure] = None if saturated else [min(value / max(1.0 + quantiles["p90"], 1e-3), most),
                                                 min(value / max(1.0 + quantiles["p10"], 1e-3), most)]  # fmt: skip
    return ranges


@dataclass(frozen=True)
class Load:
    """What to predict at: closed-loop users, open-loop rates (requests/s), and an offline batch of requests all
    queued at once (trtllm-bench, ``vllm bench throughput``); and the share of each prompt the prefix cache holds."""

    concurrencies: Sequence[int] | None = None  # None: the source's own levels
    rates: Sequence[float] = ()
    offline: int | None = None
    cached_prompt_fraction: float = 0.0
    # How far requests' lengths spread around the stated ones (``Setup.length_spread``); None: as a table's own
    # benchmark drew them (a bundled or stored table), ``DEFAULT_LENGTH_SPREAD`` (a roofline setup)
    length_spread: float | None = None


# How far a roofline setup's requests spread around the stated lengths unless asked (``--length-spread``): as
# InferenceX's benchmark draws them (``engine.request_lengths``), the public runs most of the held-out tables are,
# and nearer a real workload's lengths than every request alike. The calibrations are fitted at each table's own
# spread; predicted at exactly the stated lengths instead, a closed loop's users stay in step and queue their
# prompts in waves that the fitted request latencies already pay for: the held-out MoE tables of other shapes, each
# predicted so, missed their mean TTFT by a median 83% (SGLang) and 85% (vLLM); at this spread 25% and 16%; at their
# own benchmarks' (fixed-length sweeps alike) 22.5% and 15.6%. Say 0 for a benchmark that sends every request alike
# (genai-perf, ``vllm bench serve`` at its default --random-range-ratio 0).
DEFAULT_LENGTH_SPREAD = 0.1111


def _levels(setup: Setup, calibration: Calibration, input_len: int, output_len: int, concurrencies: Sequence[int],
            load: Load, data_parallel: int = 1) -> list[Prediction]:  # fmt: skip
    """Each level's prediction; with ``data_parallel`` engines, each serves its share of the users, rate or batch
    (whole users and requests, at least one) and the replica serves their sum."""

    def spread(level: float, whole: bool) -> tuple[float, float]:
        share = max(1, round(level / data_parallel)) if whole else level / data_parallel
        return share, level / share

    points = []
    for level in concurrencies:
        share, factor = spread(level, True)
        points.append(_scaled(predict_concurrency(setup, calibration, int(share), input_len, output_len), level,
                              factor))  # fmt: skip
    for rate in load.rates:
        share, factor = spread(rate, False)
        points.append(_scaled(predict_rate(setup, calibration, share, input_len, output_len), rate, factor))
    if load.offline:
        share, factor = spread(load.offline, True)
        points.append(_scaled(predict_offline(setup, calibration, input_len, output_len, requests=int(share)),
                              load.offline, factor))  # fmt: skip
    return points


def _scaled(point: Prediction, level: float, factor: float) -> Prediction:
    """One engine's prediction as the replica's: ``factor`` engines' throughput at the same latencies."""
    if factor == 1:
        return point
    return replace(point, level=level, request_throughput=point.request_throughput * factor,
                   output_throughput=point.output_throughput * factor)


def _under_load(setup: Setup, load: Load, notes: list[str]) -> Setup:
    """The setup serving the load's requests: its cached prompt share and its request lengths, each noted."""
    return _spread(_cached(setup, load, notes), load, notes)


def _spread(setup: Setup, load: Load, notes: list[str]) -> Setup:
    """The setup under the load's request lengths (``Load.length_spread``), and a note where they are not all alike."""
    spread = setup.length_spread if load.length_spread is None else load.length_spread
    if spread:
        notes.append(f"closed-loop request lengths spread evenly over {1 - spread:.2f} to {1 + spread:.2f} of the "
                     "stated ones, as a benchmark that draws them at random sends them: users drift out of step, "
                     "and their prompts no longer arrive together")  # fmt: skip
    return replace(setup, length_spread=spread)


def _cached(setup: Setup, load: Load, notes: list[str]) -> Setup:
    """The setup serving the load's cached prompt share, where its engine caches prefixes (and a note either way)."""
    if not load.cached_prompt_fraction:
        return setup
    if not setup.engine.prefix_caching:
        notes.append(f"this engine's prefix cache is off: the {load.cached_prompt_fraction:.0%} of each prompt "
                     "that is cached is prefilled again")  # fmt: skip
        return setup
    notes.append(f"{load.cached_prompt_fraction:.0%} of each prompt is found in the engine's prefix cache and not "
                 "prefilled again (its KV cache is still counted per sequence, an upper bound on memory)")  # fmt: skip
    return replace(setup, cached_prompt_fraction=load.cached_prompt_fraction)


def _check_shape(input_len: int, output_len: int) -> None:
    for name, value in (("input_tokens", input_len), ("output_tokens", output_len)):
        if not 1 <= value <= 2_000_000:
            raise InputError(name, f"must be a whole number of tokens from 1 to 2,000,000, got {value!r}")


def group_fingerprint(tables: Sequence[Table], scalings: Scalings | None = None) -> str:
    """What a stored calibration was fitted to: the setup and every observation (and the engine model's version),
    and the prompt scaling it took from its model's other setups (``validation.prompt_scaling``), if any."""
    measured = prompt_scaling(model_engine(tables[0]), points_of(tables), scalings or {}, {tables[0].group})
    text = repr((ENGINE_MODEL_VERSION, tables[0].setup, [t.observations for t in tables],
                 *([tuple(round(value, 9) for value in measured)] if measured else [])))  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def group_key(table: Table) -> str:
    return "/".join(table.group)


@cache
def _calibrated_bundled(profile_id: str) -> Calibration:
    """A bundled table's setup fitted on every table of that setup (all its shapes): what ``shape`` transfer
    measures. Taken from ``data/calibrations.json`` when its fingerprint matches, else fitted (seconds)."""
    members = _bundled_setup(profile_id)
    assert members is not None, f"{profile_id} is not a bundled table"
    return _stored_or_fitted(stored_calibrations(), members)


def _bundled_setup(profile_id: str) -> list[Table] | None:
    """Every table of a bundled table's setup, held out or in the calibration set (None for a stored run)."""
    if profile_id in held_out_tables():
        return _held_out_setup(profile_id)
    groups = group_tables(validation_tables())
    table = next((t for members in groups.values() for t in members if t.id == profile_id), None)
    return groups[table.group] if table is not None else None


def _stored_or_fitted(calibrations: dict[str, Any], members: Sequence[Table],
                      scalings: Scalings | None = None) -> Calibration:  # fmt: skip
    """A setup's calibration as stored, where it is current (``_stored``), else fitted (seconds)."""
    stored = _stored(calibrations, members, scalings)
    return Calibration.from_json(stored["calibration"]) if stored else fit_tables(members, scalings=scalings)


def _stored(calibrations: dict[str, Any], members: Sequence[Table],
            scalings: Scalings | None = None) -> dict[str, Any] | None:  # fmt: skip
    """A setup's stored entry where it was fitted to these very tables (and prompt scaling) by this engine model,
    else None."""
    stored = calibrations.get(group_key(members[0]))
    return stored if stored and stored.get("fingerprint") == group_fingerprint(members, scalings) else None


def calibrate_bundled_groups() -> dict[str, dict[str, object]]:
    """Every bundled setup's calibration, as ``bench.prediction_accuracy --write`` stores it."""
    return {group_key(members[0]): {"fingerprint": group_fingerprint(members), "tables": [t.id for t in members],
                                    "calibration": fit_tables(members).to_json()}
            for members in group_tables(validation_tables()).values()}  # fmt: skip


def calibrate_held_out_groups(progress: Callable[[str], None] | None = None) -> dict[str, dict[str, object]]:
    """Every held-out setup's calibration and whether it misses its own tables, as
    ``bench.held_out_accuracy --write-calibrations`` stores them."""
    out: dict[str, dict[str, object]] = {}
    calibrations = SourceCalibrations(group_tables(t.table for t in held_out_tables().values()))
    for group, members in calibrations.groups.items():
        if progress:
            progress(group_key(members[0]))
        calibration = calibrations(group, None)
        out[group_key(members[0])] = {"fingerprint": group_fingerprint(members, calibrations.scalings),
                                      "tables": [t.id for t in members], "calibration": calibration.to_json(),
                                      "misfit": bool(fit_error(calibration, members) > MISFIT)}  # fmt: skip
    return out


@cache
def held_out_scalings() -> Scalings:
    """The prompt scaling of every held-out MoE setup whose prompt lengths vary (``validation.prompt_scalings``),
    from its stored calibration: what a setup of one prompt length takes from its model's others."""
    return prompt_scalings(group_tables(t.table for t in held_out_tables().values()),
                           calibrate=lambda members: _stored_or_fitted(stored_held_out_calibrations(), members))


def calibrate_profile(profile: ThroughputProfile) -> tuple[Setup, Calibration, str, dict[str, dict[str, float]]]:
    """The profile's setup, its calibration, which transfer its predictions are ('shape' or 'one_shape'), and that
    transfer's measured error: on the calibration set's tables, or, for a held-out published table, on the held-out
    tables of its model kind and engine (a MoE SGLang table carried dense NIM's narrower ranges before)."""
    setup = engine_setup(profile)
    points = observations(profile)
    if not points:
        raise InputError("run", f"{profile.id} has no point with a throughput to calibrate on")
    if (held := held_out_tables().get(profile.id)) is not None:
        shared = sum(t.table.group == held.table.group for t in held_out_tables().values()) > 1
        transfer = "shape" if shared else "one_shape"  # a setup of one table: its stored fit is that table's own
        return setup, _calibrated_held_out(profile.id), transfer, held_out_error(
            setup.shape.kind, engine_preset(profile.engine)[0], transfer)  # fmt: skip
    if len(_bundled_setup(profile.id) or ()) > 1:  # a stored run is never among the bundled tables
        return setup, _calibrated_bundled(profile.id), "shape", expected_error("shape")
    return setup, _fit_profile(profile, setup, points), "one_shape", expected_error("one_shape")


def _fit_profile(profile: ThroughputProfile, setup: Setup, points: Sequence[Observation]) -> Calibration:
    """One profile's own calibration; at one prompt length, with its model's prompt scaling under its engine as the
    held-out setups measured it (``validation.prompt_scaling``)."""
    return fit(with_prompt_scaling(setup, prompt_scaling(_model_engine_of(profile), points, held_out_scalings())),
               points)  # fmt: skip


def _model_engine_of(profile: ThroughputProfile) -> tuple[str, str]:
    """A profile's model (its shape twin) and engine preset, as ``validation.model_engine`` keys a table's."""
    return shape_twin(profile.model), engine_preset(profile.engine)[0]


def prompt_scaling_notes(profile: ThroughputProfile, setup: Setup, input_len: int) -> list[str]:
    """What TTFT at a prompt length rests on where the calibration's points have one prompt length, ``PROMPT_SPAN``
    or more away from it: a MoE model's growth with the prompt as its other setups under the engine measured it
    (``validation.prompt_scaling``), or the engine's median over every model's setups."""
    members = _bundled_setup(profile.id)
    points = points_of(members) if members else observations(profile)
    lengths = {o.input_len for o in points}
    if prompts_vary(points) or any(max(input_len / n, n / input_len) < PROMPT_SPAN for n in lengths):
        return []
    engine, preset = engine_preset(profile.engine)
    moe = bool(setup.shape.num_experts)
    measured = f"measured at one prompt length ({', '.join(f'{n:,}' for n in sorted(lengths))} tokens)"
    sources = scaling_sources(_model_engine_of(profile), held_out_scalings(), {members[0].group} if members else ())
    if moe and len(sources) >= PROMPT_SCALING_SETUPS:
        bundled = find_bundled(profile.model)
        return [f"{measured}: how TTFT grows with the prompt is {bundled.name if bundled else profile.model}'s "
                f"under {engine}, the median of {len(sources)} of its other setups that measured several"]
    engine = "NIM" if preset is NIM_ENGINE else engine  # NIM's TensorRT-LLM builds have their own slope
    return [f"{measured}: how TTFT grows with the prompt is {engine}'s median over "
            f"{'MoE' if moe else 'dense'} models' setups that measured several, not this model's own"]  # fmt: skip


def predict_profile(profile: ThroughputProfile, input_len: int, output_len: int,
                    load: Load = Load()) -> PredictedProfile:  # fmt: skip
    """The profile's setup at another shape (or its own), at its own concurrencies unless others are asked for."""
    _check_shape(input_len, output_len)
    setup, calibration, transfer, error = calibrate_profile(profile)
    levels = load.concurrencies or [int(p["concurrency"]) for p in profile.points if p.get("concurrency")]
    notes = [f"engine model calibrated on {len(observations(profile))} points of {profile.id}"
             f" at {profile.input_len:,.0f} in / {profile.output_len:,.0f} out"]  # fmt: skip
    if transfer == "shape":
        notes[0] += " and the other tables of the same setup"
    notes.extend(misfit_notes(profile) + prompt_scaling_notes(profile, setup, input_len))
    setup = _under_load(setup, load, notes)
    return PredictedProfile("fitted", profile.id, profile.model, profile.hardware, profile.gpus_per_replica,
                            setup.dtype, input_len, output_len,
                            _levels(setup, calibration, input_len, output_len, levels, load), transfer,
                            error, calibration, notes, engine_preset(profile.engine)[0],
                            setup.cached_prompt_fraction, kv_dtype=setup.kv_dtype or setup.dtype,
                            length_spread=setup.length_spread)  # fmt: skip


def _reference(model: str, gpu: str, gpus: int, dtype: str, engine: str | None = None,
               layout: Layout = Layout(), release: str | None = None) -> ThroughputProfile | None:  # fmt: skip
    """The measured or published profile nearest to a setup: same model, then the engine asked for, then the calibration
    set before the published tables kept out of it (``held_out_tables``: today's MoE models, and other engines'
    sweeps of its dense ones), then the same weights, else the nearest bytes per weight, then the release asked for
    (``release_distance``), then ``validation.source_rank`` (one its own calibration fits, attention data parallel as
    asked, same GPU, points at more than one load, same layout, nearest GPU count, the most data), then measured
    before published; one its own calibration misses comes after every other of its engine and weights, of the
    release asked for or not. Under the engine asked, a model with no table of its own takes its ``shape_twin``'s (a
    model of the same shapes: DeepSeek-R1's for V3) before any other engine's; its own come first, as runs of twins
    on the same GPUs differ in what the tables do not record (AIConfigurator's R1 runs under TensorRT-LLM decode
    twice as fast as its V3 runs of the same setup: TPOT 7.8 ms against 14.6 at 4 users on 8x B200, speculative
    decoding on in one and not the other, it seems; ranked by GPU before model, the held-out MoE TensorRT-LLM
    *nearest* TPOT went from a median 8.8% to 10.5%). The held-out tables are chosen by the rule their ``nearest``
    and ``any_release`` transfers were measured with. Until the engine asked for counted here, Llama-3.1-70B on 4x
    H200 under vLLM was calibrated on NIM's 4x H100 tables and moved between engines (held-out dense TTFT median
    40%), though vLLM's own tables of that setup are bundled (13% from other shapes)."""
    wanted, twin = find_bundled(model), shape_twin(model)
    same_width = {"float16": "bfloat16", "bfloat16": "float16"}
    target = (gpu, gpus, layout_tag(layout))

    def near(p: ThroughputProfile, points: Sequence[Observation], held_out: bool) -> tuple[object, ...]:
        width = weights_dtype(published_dtype(p))  # AIConfigurator's "fp4" is NVFP4 (gpt-oss's: MXFP4)
        other_engine = engine is not None and engine_preset(p.engine)[0] != engine
        doublings = abs(math.log2(dtype_bytes(width) / dtype_bytes(dtype)))  # 16-bit from FP8 before from FP4
        return (other_engine, find_bundled(p.model) != wanted, held_out, width not in (dtype, same_width.get(dtype)),
                doublings, release_distance(p.engine_version, release),
                *source_rank((p.hardware, p.gpus_per_replica, layout_tag(p)), target, points),
                p.basis != "measured")  # fmt: skip

    calibration_set = [(near(p, observations(p), False), p) for p in closed_loop_profiles()
                       if shape_twin(p.model) == twin and p.input_len and _usable(p)]  # fmt: skip
    observed = _group_observations()
    held_out = [(near(t.profile, observed[t.table.group], True), t.profile) for t in held_out_tables().values()
                if shape_twin(t.profile.model) == twin]  # fmt: skip
    ranked = sorted([*calibration_set, *held_out], key=lambda pair: pair[0])
    if not ranked:
        return None
    # one its own calibration misfits ranks after the others of its engine and width, as in source_rank, even of
    # the release named: a source "only where no other will do" (MISFIT). gpt-oss-120b under vLLM 0.11.2 on 2x H100
    # has two tables, both at 512 users queued for 113 s and 462 s; its fit put 79 s on every request and predicted
    # 172 s of TTFT for 4 users. (Misfits are decided only for those ranked first: each one takes a fit.)
    release_key, before_release = 6, 5  # near()'s keys: other engine, twin, held out, other width, doublings, release
    same_release = [p for key, p in ranked if key[:release_key] == ranked[0][0][:release_key]]
    any_release = [p for key, p in ranked if key[:before_release] == ranked[0][0][:before_release]]
    return next((p for p in [*same_release, *any_release] if not _misfit(p.id)), ranked[0][1])


def release_distance(found: str | None, asked: str | None) -> int:
    """How far a table's engine release is from the one asked for: 0 the same (``v0.5.9`` is ``0.5.9``) or none
    asked, 1 a release of that line (``0.5.9`` or ``0.5.9.post1`` where ``0.5`` is asked, ``1.2.0rc6`` where
    ``1.2.0`` is), 2 another or unnamed."""
    if not asked:
        return 0
    found, asked = (found or "").lower().removeprefix("v"), asked.lower().removeprefix("v")
    if found == asked:
        return 0
    line = found.startswith(asked) and not found[len(asked):len(asked) + 1].isdigit()
    return 1 if line else 2


@cache
def _misfit(profile_id: str) -> bool:
    """Whether a held-out table's setup is one its own calibration misses (``validation.MISFIT``)."""
    if profile_id not in held_out_tables():
        return False
    members = _held_out_setup(profile_id)
    stored = _stored(stored_held_out_calibrations(), members, held_out_scalings())
    return stored["misfit"] if stored else fit_error(_calibrated_held_out(profile_id), members) > MISFIT


def misfit_notes(reference: ThroughputProfile) -> list[str]:
    """What to say where a prediction rests on a setup its own calibration misses (``validation.MISFIT``): the error
    quoted is that of setups the engine model fits, and understates this one's."""
    if not _misfit(reference.id):
        return []
    return [f"the setup of {reference.id} is one the engine model cannot fit (its calibration misses its own points by "
            f"over {MISFIT:.0%}: queues or stalls it does not simulate): the error quoted, that of setups it fits, "
            "understates this prediction's"]  # fmt: skip


def _misfit_of_release(reference: ThroughputProfile, release: str | None) -> ThroughputProfile | None:
    """A held-out table of the release named, of the reference's weights under its engine, that ``_reference``
    passed over because its own calibration misses it (None where no release is named, or none was)."""
    if release is None:
        return None

    def weights(p: ThroughputProfile) -> tuple[str, str, str]:
        return shape_twin(p.model), engine_preset(p.engine)[0], weights_dtype(published_dtype(p))

    named = [t.profile for t in held_out_tables().values()
             if weights(t.profile) == weights(reference) and not release_distance(t.profile.engine_version, release)]
    return next((p for p in named if _misfit(p.id)), None)


@cache
def _group_observations() -> dict[tuple[str, ...], list[Observation]]:
    groups: dict[tuple[str, ...], list[Observation]] = {}
    for t in held_out_tables().values():
        groups.setdefault(t.table.group, []).extend(t.table.observations)
    return groups


@dataclass(frozen=True)
class HeldOutTable:
    profile: ThroughputProfile
    table: Table


@cache
def held_out_tables() -> dict[str, HeldOutTable]:
    """The held-out published tables the engine model can simulate, by profile id (validated apart, by
    ``bench.held_out_accuracy``)."""
    profiles = {p.id: p for p in held_out_profiles() if p.closed_loop}
    return {t.id: HeldOutTable(profiles[t.id], t) for t in validation_tables(list(profiles.values()))}


@cache
def _calibrated_held_out(profile_id: str) -> Calibration:
    """A held-out table's setup fitted on every held-out table of that setup (stored, where it is current)."""
    return _stored_or_fitted(stored_held_out_calibrations(), _held_out_setup(profile_id), held_out_scalings())


def _held_out_setup(profile_id: str) -> list[Table]:
    """Every held-out table of a held-out table's setup."""
    group = held_out_tables()[profile_id].table.group
    return [t.table for t in held_out_tables().values() if t.table.group == group]


def _reference_calibration(reference: ThroughputProfile, gpu: str, gpus: int, release: str | None = None,
                           ) -> tuple[Setup, Calibration, str, dict[str, dict[str, float]]]:  # fmt: skip
    """The reference's setup and calibration, the transfer that moving it here is, and that transfer's measured
    error: on the calibration set's tables, or on the held-out tables of the reference's model kind and engine. A
    held-out reference of another release than the one named, or with none named, is the ``any_release`` transfer:
    a person's release may be any, and moves between releases miss more than moves between GPUs."""
    if reference.id not in held_out_tables():
        setup, calibration, _, _ = calibrate_profile(reference)
        return setup, calibration, "gpu", expected_error("gpu")
    setup = held_out_tables()[reference.id].table.setup
    same_gpus = reference.hardware.lower() == gpu.lower() and reference.gpus_per_replica == gpus
    kind, engine = setup.shape.kind, engine_preset(reference.engine)[0]
    named = release is not None and release_distance(reference.engine_version, release) == 0
    if not named and held_out_error(kind, engine, "any_release"):
        transfer = "any_release"
    else:  # another GPU's setup is calibrated on the nearest (``_reference``): the error of that rule
        transfer = "shape" if same_gpus else "nearest" if held_out_error(kind, engine, "nearest") else "gpu"
    return setup, _calibrated_held_out(reference.id), transfer, held_out_error(kind, engine, transfer)


def _usable(profile: ThroughputProfile) -> bool:
    try:
        engine_setup(profile)
    except InputError:
        return False
    return True


def parse_roofline(source: str) -> tuple[str, str, int, str]:
    """``roofline:MODEL@NxGPU:DTYPE`` → (model, gpu, gpus, dtype); without ``:DTYPE``, "" (the checkpoint's own)."""
    match = ROOFLINE_SOURCE.match(source)
    if not match:
        raise InputError("source", f"expected roofline:MODEL@NxGPU:DTYPE (e.g. roofline:meta-llama/Llama-3.1-8B-"
                                   f"Instruct@1xL40S:fp8), got {source!r}")  # fmt: skip
    gpus = int(match["gpus"])
    if not 1 <= gpus <= 64:
        raise InputError("source", f"GPU count must be 1 to 64, got {gpus}")
    return match["model"], match["gpu"], gpus, weights_dtype(match["dtype"]) if match["dtype"] else ""


# Weight-only formats engines run on GPUs without their tensor cores, widening the values to 16 bits before each
# matmul: MXFP4 on Hopper and Ampere (vLLM's Marlin and Triton MoE kernels, as gpt-oss ships), FP8 on Ampere (FP8
# Marlin), integer weights (AWQ, GPTQ). NVFP4 is Blackwell's own format, refused elsewhere.
UPCAST_DTYPES = ("mxfp4", "fp8", "int4", "int8")


def _check_native(spec: GpuSpec, dtype: str) -> list[str]:
    """A note if the GPU runs these weights widened to 16 bits; InputError naming ``dtype`` if it cannot run them."""
    if dtype in spec.native_dtypes or not DTYPES[dtype].quantized:
        return []
    if dtype not in UPCAST_DTYPES:
        raise InputError("dtype", f"{dtype} weights need FP4 tensor cores (Blackwell); {spec.gpu} runs "
                                  f"{', '.join(spec.native_dtypes)}")  # fmt: skip
    return [f"{spec.gpu} has no {dtype} tensor cores: the weights are read at {dtype}'s bytes and computed widened "
            "to 16 bits"]


ENGINE_NAMES = {"vllm": "vllm", "sglang": "sglang", "trtllm": "tensorrt-llm", "trt-llm": "tensorrt-llm",
                "tensorrt-llm": "tensorrt-llm"}  # fmt: skip


def engine_name(engine: str | None) -> str | None:
    """An engine as ``--engine`` names it to its preset's key (``engine.ENGINE_PRESETS``)."""
    if engine is None:
        return None
    key = engine.lower().replace("_", "-")
    if key not in ENGINE_NAMES:
        raise InputError("engine", f"unknown engine {engine!r}; known: vllm, sglang, trtllm")
    return ENGINE_NAMES[key]


def engine_release(release: str | None) -> str | None:
    """An engine release as ``--engine-version`` gives it (``0.5.9``, ``v0.11.2``, ``1.2.0rc6.post3``), or
    InputError."""
    if release is None:
        return None
    if not re.fullmatch(RELEASE_PATTERN, release.strip()) or release.strip().lower() == "v":
        raise InputError("engine_version", f"must be a release such as 0.5.9 or 1.2.0rc6, got {release!r}")
    return release.strip()


def release_note(reference: ThroughputProfile, release: str | None, passed_over: ThroughputProfile | None = None,
                 ) -> str:  # fmt: skip
    """Why a prediction carries the error of a source of any release (``passed_over``: the release named's table
    that ``_reference`` did not take, its own calibration missing it)."""
    found = reference.engine if reference.engine_version else f"{reference.engine}, a release its source leaves unnamed"
    if release is None:
        return (f"no engine release named (--engine-version, or the app's Engine release): calibrated on {found}; "
                "its error and ranges are those of a source of any release, as releases of one engine differ")
    if passed_over is not None:
        return (f"release {release}'s tables of this model and weights ({passed_over.id}, ...) are ones the engine "
                f"model cannot fit (its calibration misses their own points by over {MISFIT:.0%}: queues or stalls "
                f"it does not simulate): calibrated on {found} instead; its error and ranges are those of a source "
                "of any release")  # fmt: skip
    kin = "of its line" if release_distance(reference.engine_version, release) == 1 else "nearest"
    return (f"no table of release {release} of this model and weights: calibrated on {found} ({kin}); its error and "
            "ranges are those of a source of any release")


def predict_roofline(
    model: str, gpu: str, gpus: int, dtype: str, input_len: int, output_len: int, load: Load = Load(), *,
    engine: str | None = None, layout: Layout = Layout(), kv_dtype: str | None = None, config: str | None = None,
    release: str | None = None,
) -> PredictedProfile:  # fmt: skip
    """A setup nobody measured: the nearest calibration moved to these GPUs (and to the engine asked for, of the
    release asked for where one is bundled), with
    the KV cache in ``kv_dtype`` if given (``profiles.kv_dtype_for`` otherwise); concurrencies whose KV caches do not
    fit are left out. ``model`` is anything ``models show`` resolves (``profiles.roofline_architecture``: ``config``, a
    config.json or model directory, names a model the bundle lacks); an empty ``dtype`` is the checkpoint's own (as
    it is served unless told otherwise: gpt-oss in MXFP4, DeepSeek-V4 with FP4 experts)."""
    _check_shape(input_len, output_len)
    kv_dtype = kv_cache_dtype(kv_dtype) if kv_dtype else None
    engine, release = engine_name(engine), engine_release(release)
    # an unknown GPU is refused first (engine_hardware), then an unknown model (roofline_architecture), then dtype
    datasheet = gpu_spec(gpu)
    architecture = roofline_architecture(model, config)
    dtype = weights_dtype(dtype or architecture.default_dtype)
    replica = engine_hardware(gpu, gpus, dtype)
    shape = model_shape(architecture)
    setup_for(model, replica, dtype, ENGINE_PRESETS["vllm"], shape)
    gpu = datasheet.gpu  # as the catalog names it ("H100" is "H100 SXM"): the tables' hardware is named so
    over = architecture.over_context(input_len + output_len)
    sparse = architecture.sparse_attention_note(input_len + output_len)
    setup_notes = (_check_native(datasheet, dtype) + ([f"{over}, as simulated here"] if over else [])
                   + ([sparse] if sparse else []))  # fmt: skip
    nvidia = datasheet.vendor == "NVIDIA"
    if engine == "tensorrt-llm" and not nvidia:
        raise InputError("engine", f"TensorRT-LLM runs on NVIDIA GPUs only and {datasheet.gpu} is "
                                   f"{datasheet.vendor}'s: use vllm or sglang")  # fmt: skip
    layout = layout.resolved(gpus, shape)
    engines = layout.engines
    hardware = engine_hardware(gpu, gpus // engines, dtype)
    reference = _reference(model, gpu, gpus, dtype, engine, layout, release)
    if reference is not None and not nvidia and engine_preset(reference.engine)[0] == "tensorrt-llm":
        # calibrated on TensorRT-LLM, which this GPU cannot run: the nearest vLLM table, else vLLM's scheduler on it
        reference = _reference(model, gpu, gpus, dtype, "vllm", layout, release)
        measured = engine_preset(reference.engine)[0] if reference else "vllm"
        engine = engine or (measured if measured != "tensorrt-llm" else "vllm")
    elsewhere = None  # measured under another engine only, where that engine's priors predict a model better
    if reference is not None and engine and engine_preset(reference.engine)[0] != engine and (
            priors_beat_another_engine(shape.kind, engine)):  # fmt: skip
        elsewhere, reference = reference, None
    spec = f"roofline:{model}@{gpus}x{hardware.gpu}:{dtype}"
    error: dict[str, dict[str, float]] = {}
    if reference is not None:
        reference_setup, calibration, transfer, error = _reference_calibration(reference, hardware.gpu, gpus,
                                                                               release)  # fmt: skip
        measured_on = engine_preset(reference.engine)[0]
        notes = [f"engine model calibrated on {reference.id} ({reference.gpus_per_replica}x {reference.hardware}, "
                 f"{reference.dtype}, {reference.engine}), moved to {gpus}x {hardware.gpu}: bandwidth, compute and "
                 "KV-cache capacity from the datasheet"]  # fmt: skip
        notes.extend(misfit_notes(reference))  # where no other source will do
        notes.extend(prompt_scaling_notes(reference, reference_setup, input_len))
        measured_model = find_bundled(reference.model)
        if measured_model is not None and measured_model != find_bundled(model):
            notes.append(f"{measured_model.name} is measured in {model}'s place: the same architecture (every shape "
                         "the engine model reads), so the same speed")  # fmt: skip
        if transfer == "any_release":
            notes.append(release_note(reference, release, _misfit_of_release(reference, release)))
        elif release_distance(reference.engine_version, release):  # a release named that no bundled table is of
            notes.append(f"no table of release {release} of this model and weights is bundled: calibrated on "
                         f"{reference.engine}" + ("" if reference.engine_version else ", a release its source "
                                                  "leaves unnamed"))  # fmt: skip
        if engine not in (None, measured_on):  # another engine's scheduler over this engine's fitted step costs
            moved = calibration.under_another_engine(ENGINE_PRESETS[engine], bool(reference_setup.shape.num_experts))
            speed = moved.coefficients[COMPUTE] / calibration.coefficients[COMPUTE]
            calibration = moved
            error = compounded(error, held_out_error(reference_setup.shape.kind, engine, "engine"))  # after the GPUs'
            basis = (f"its error compounds the {transfer} transfer's and the held-out tables' move between engines "
                     "(the same weights and GPUs under another engine)" if error else
                     "the error of moving between engines is not measured")  # fmt: skip
            transfer = "engine"
            notes.append(f"measured on {measured_on}, scheduled as {engine} (its preset: step budget, chunked "
                         "prefill, KV reservation" + (f"; compute {speed:.2f}x as long, as the engines' MoE compute "
                                                      "priors differ" if abs(speed - 1) > 1e-9 else "")
                         + f"); {basis}")  # fmt: skip
        setup = setup_for(model, hardware, dtype, ENGINE_PRESETS[engine] if engine else reference_setup.engine, shape)
    else:
        setup = setup_for(model, hardware, dtype, ENGINE_PRESETS[engine or "vllm"], shape)
        calibration = Calibration(unmeasured_prior(setup), 0)
        transfer = "model"
        error = held_out_error(setup.shape.kind, engine or "vllm", transfer)
        kind = "MoE" if setup.shape.num_experts else "dense"
        if elsewhere is None:
            notes = [f"no measured or published profile of this model to calibrate on: the engine model's priors for "
                     f"a {kind} model under {engine or 'vllm'} alone (step costs read off the bundled setups of other "
                     f"models); its error is that of predicting a held-out model family so"
                     + ("" if error else ", not measured for this engine")]  # fmt: skip
        else:
            notes = [f"measured under {elsewhere.engine} only ({elsewhere.id}): the engine model's priors for a "
                     f"{kind} model under {engine} (step costs read off the bundled setups of every model), which "
                     f"predicted held-out {kind} models under {engine} closer than another engine's calibration of "
                     f"the same weights and GPUs did; under {engine_preset(elsewhere.engine)[0]} its tables "
                     f"calibrate it"]  # fmt: skip
        if release:
            under = f" under {engine}" if elsewhere is not None else ""
            notes.append(f"release {release} named, but no table of this model{under} is bundled to take it from")
    ranks = layout.data_parallel if engines == 1 else 1  # attention DP simulated as one engine: its ranks' batches
    setup = _under_load(replace(setup, expert_parallel=layout.expert_parallel, attention_data_parallel=ranks,
                                kv_dtype=kv_dtype or setup.kv_dtype, length_spread=DEFAULT_LENGTH_SPREAD),
                        load, notes)  # fmt: skip
    notes.extend(setup_notes)
    if engines > 1:
        notes.append(f"{engines} data-parallel engines of {hardware.gpus} GPUs, each serving its share of the load")
    elif layout.data_parallel > 1:
        wait = setup.engine.balance_wait_steps
        notes.append(f"attention data parallel over {layout.data_parallel} ranks beside experts over "
                     f"{layout.expert_parallel} GPUs: simulated as one engine over all {gpus} GPUs, "
                     + ("each rank with its own batch and step budget" if setup.engine.budget_per_rank
                        else "the server's batch and step budget shared among the ranks")
                     + (f"; a prompt waits up to {wait} steps for every rank to have one, and all are prefilled "
                        "together (TensorRT-LLM's attention DP balance)" if wait else ""))  # fmt: skip
    config = calibration.applied_to(setup).config
    capacity = config.kv_capacity_tokens
    sequence_tokens = input_len + output_len + held_extra_tokens(setup.cost, config, input_len + output_len)
    if not capacity:
        raise InputError("gpus", f"{model}'s weights at {dtype} ({held_weight_bytes(setup.shape, dtype) / 1e9:,.0f} "
                                 f"GB) leave no room for a KV cache on {hardware.gpus}x {hardware.gpu} "
                                 f"({hardware.memory_gb:,.0f} GB each): use more GPUs or a smaller dtype")  # fmt: skip
    held = f"the KV cache of an engine on {hardware.gpus}x {hardware.gpu} holds {capacity:,.0f} tokens"
    most = engines * int(capacity // sequence_tokens)  # users whose whole sequences the replica's caches hold
    if not most:
        raise InputError("gpus", f"{held}, less than one request of {input_len:,} + {output_len:,} tokens: use more "
                                 "GPUs, a smaller dtype or KV dtype, or shorter requests")  # fmt: skip
    wanted = load.concurrencies or DEFAULT_CONCURRENCIES
    per_engine = [max(1, round(c / engines)) for c in wanted]
    fits = [c for c, share in zip(wanted, per_engine, strict=True) if share * sequence_tokens <= capacity]
    if not fits and not load.rates and not load.offline:
        raise InputError("concurrency", f"{held}, {most:,} users of {input_len:,} + {output_len:,} tokens at most: "
                                        f"ask for {most:,} or fewer")  # fmt: skip
    if len(fits) < len(wanted):
        notes.append(f"{held}, {most:,} users of this shape at most: levels that do not fit are left out")
    points = _levels(setup, calibration, input_len, output_len, fits, load, engines)
    scheduled = engine or (engine_preset(reference.engine)[0] if reference else "vllm")
    return PredictedProfile("roofline", spec, model, hardware.gpu, gpus, dtype, input_len, output_len, points,
                            transfer, error, calibration, notes, scheduled,
                            setup.cached_prompt_fraction, layout, setup.kv_dtype or dtype, release,
                            setup.length_spread)  # fmt: skip


# What a KV cache is kept in: 16 or 32-bit floats, FP8 (vLLM, SGLang and TensorRT-LLM's --kv-cache-dtype fp8) or
# NVFP4 (TensorRT-LLM's nvfp4 on Blackwell); integer and MXFP4 caches are not what these engines keep.
KV_CACHE_DTYPES = ("bfloat16", "float16", "float32", "fp8", "nvfp4")


def kv_cache_dtype(asked: str) -> str | None:
    """A KV-cache dtype as people write it (``bf16``, ``fp8_e4m3``; ``auto``: None, the default), or InputError
    naming ``kv_dtype``."""
    if asked.strip().lower() == "auto":
        return None
    try:
        dtype = normalize_dtype(asked)
    except InputError:
        dtype = ""
    if dtype not in KV_CACHE_DTYPES:
        raise InputError("kv_dtype", f"unknown KV-cache dtype {asked!r}; known: {', '.join(KV_CACHE_DTYPES)}")
    return dtype


def predict_source(source: str, input_len: int, output_len: int, load: Load = Load(), *, engine: str | None = None,
                   layout: Layout = Layout(), kv_dtype: str | None = None, config: str | None = None,
                   release: str | None = None, db_path: str | Path | None = None) -> PredictedProfile:  # fmt: skip
    """What ``python -m infercost throughput SOURCE`` answers: a run id, a bundled id, or a roofline spec."""
    if source.startswith("roofline:"):
        model, gpu, gpus, dtype = parse_roofline(source)
        return predict_roofline(model, gpu, gpus, dtype, input_len, output_len, load, engine=engine, layout=layout,
                                kv_dtype=kv_dtype, config=config, release=release)  # fmt: skip
    for name, asked in (("engine", engine), ("engine_version", release), ("tensor_parallel", layout != Layout()),
                        ("kv_dtype", kv_dtype), ("config", config)):  # fmt: skip
        if asked:
            raise InputError(name, "a run or a published table was measured on its own model, engine, layout and "
                                   "KV cache; --config, --engine, --engine-version, the parallel flags and --kv-dtype "
                                   "choose those of a roofline:MODEL@NxGPU:DTYPE setup")  # fmt: skip
    profile = find_profile(source, db_path)
    if profile.offline:
        raise InputError("source", f"{source} is an offline maximum-throughput table (no latencies); name a "
                                   "closed-loop sweep, or use roofline:MODEL@NxGPU:DTYPE")  # fmt: skip
    try:
        engine_setup(profile)
    except InputError as reason:
        for name, asked in (("rate", load.rates), ("offline", load.offline),
                            ("cached_prompt_fraction", load.cached_prompt_fraction),
                            ("length_spread", load.length_spread)):  # fmt: skip
            if asked:
                raise InputError(name, f"needs the engine model, which cannot simulate {source}: {reason}") from None
        return predict_simple(profile, input_len, output_len, reason=str(reason), concurrencies=load.concurrencies)
    return predict_profile(profile, input_len, output_len, load)


def predict_simple(
    profile: ThroughputProfile, input_len: int, output_len: int, *, reason: str,
    concurrencies: Sequence[int] | None = None,
) -> PredictedProfile:  # fmt: skip
    """A profile the engine model cannot simulate (a CPU run, an architecture or GPU without data): its points
    carried by the simple fitted model of ``perfmodel``, whose error the harness has not measured."""
    from infercost.performance.perfmodel import MeasuredPoint, fit_performance_model

    _check_shape(input_len, output_len)
    if not (profile.input_len and profile.output_len):
        raise InputError("run", f"{profile.id} does not say the token shape it was measured at")
    measured = [MeasuredPoint(p["concurrency"], profile.input_len, profile.output_len, p["request_throughput"],
                              p.get("mean_ttft_ms"), p.get("mean_tpot_ms") or p.get("mean_itl_ms"))
                for p in profile.points if p.get("request_throughput") and p.get("concurrency")]  # fmt: skip
    model = fit_performance_model(measured)
    levels = concurrencies or [int(p.concurrency) for p in measured]
    points = []
    for c in levels:
        q = model.predict(c, input_len, output_len)
        e2el = q.mean_ttft_ms + (output_len - 1) * q.mean_tpot_ms
        points.append(Prediction("concurrency", c, input_len, output_len, q.request_throughput, q.output_throughput,
                                 q.mean_ttft_ms, q.p95_ttft_ms or q.mean_ttft_ms, q.mean_tpot_ms,
                                 q.p95_tpot_ms or q.mean_tpot_ms, e2el, e2el))  # fmt: skip
    notes = [f"the engine model cannot simulate this setup ({reason}); the points are carried by a simple fitted "
             "model (prefill and decode time against length and concurrency), whose error is not measured",
             *(f"assumed: {a}" for a in model.assumptions)]  # fmt: skip
    return PredictedProfile("fitted", profile.id, profile.model, profile.hardware, profile.gpus_per_replica or 1,
                            profile.dtype, input_len, output_len, points, "none", {}, Calibration(PRIOR, 0), notes)
