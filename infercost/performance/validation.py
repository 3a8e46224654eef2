"""How far the engine model can be trusted: predict bundled tables it was not fitted to, and measure the error.

The transfers a person makes when sizing a workload:

- ``shape``: a table of one setup (model, engine, dtype, GPUs) predicted from that setup's tables of other token
  shapes, each shape held out in turn with its repeat runs (leave one shape out: a repeat of the same sweep, often
  identical point for point in AIConfigurator's sample, would make the transfer a lookup).
- ``one_shape``: the same, from a single table of the setup (a person's one sweep), the first one by shape.
  Calibrated on one prompt length, a MoE setup takes its model's prompt scaling from the model's other setups
  (``prompt_scaling``), never from the setup being predicted (nor, moved to another setup, from that one).
- ``gpu``: a table predicted from every table of the same model and dtype on *other* hardware (GPU type or count)
  or layout, the fitted coefficients moved to this table's GPUs and simulated in its layout (as ``predict_roofline``
  simulates the layout asked for): every pair, the far ones too (64 GB200s to 4 B200s).
- ``nearest``: the same from the one other setup a roofline prediction would be calibrated on (``source_rank``:
  one its own calibration fits, attention data parallel as the target's, the same GPU type, points at more than one
  load, the same layout, the nearest GPU count, then the most data): the GPU transfer as infercost makes it for a
  release named.
- ``any_release``: the same, the source chosen among every release of the engine, as infercost chooses when the
  release is not named (a person's own may be any).
- ``engine_version`` and ``engine``: a table predicted from the same model and weights on the same GPUs and layout,
  served by another release of its engine, or by another engine whose fitted step costs are scheduled as this
  engine schedules (what ``throughput --engine`` does with a calibration of another engine).
- ``model``: a table predicted as a model nobody measured is (``predict_roofline`` with no table of it): from the
  engine model's priors for such a model alone (``calibrate.unmeasured_prior``), their medians taken over the other
  model families' setups, as if this family were not bundled (``model_transfer``).

Errors are relative, ``(predicted - measured) / measured``, per point and metric. ``cross_gpu_ratio`` compares
the predicted and the published ratio of best throughput between two setups at the same shape.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from infercost.performance.calibrate import (
    FITTED,
    MOE_PRIOR,
    PRIOR,
    PROMPT,
    Calibration,
    Observation,
    Setup,
    fit,
    identify_request,
    identify_step,
    predict_concurrency,
    predict_offline,
    prompts_vary,
    unmeasured_prior,
    with_prompt_scaling,
)
from infercost.performance.engine import (
    COMPUTE,
    FEATURES,
    NIM_ENGINE,
    REQUEST,
    STEP,
    WEIGHTS,
    engine_preset,
    widened_step_factor,
)
from infercost.performance.models import find_bundled

METRICS = ("request_throughput", "mean_ttft_ms", "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms")
TRANSFERS = ("shape", "one_shape", "gpu")
ENGINE_TRANSFERS = ("engine_version", "engine")  # between releases and engines: ``engine_transfer``
# measured on the held-out tables, whose setups span GPU counts, engine releases and engines
HELD_OUT_TRANSFERS = (*TRANSFERS, "nearest", "any_release", *ENGINE_TRANSFERS, "model")
# How a setup's key names a release its source left unnamed (``profiles.unnamed_release``): not a release to compare
UNNAMED_RELEASE = "unnamed@"
# The targets the engine model is held to (median and p90 of |relative error|), per metric.
TARGETS = {
    "request_throughput": (0.10, 0.25),
    "mean_ttft_ms": (0.15, 0.40),
    "mean_tpot_ms": (0.10, 0.25),
    "cross_gpu_ratio": (0.10, 0.25),
}


@dataclass(frozen=True)
class Table:
    """One published or measured table: its setup's key, its setup, and its points at one shape."""

    id: str
    group: tuple[str, ...]  # (model, engine and release, hardware, gpus, dtype, layout): tables that share coefficients
    family: tuple[str, ...]  # (model's shape twin, engine, dtype): tables whose coefficients can move between GPUs
    setup: Setup
    observations: tuple[Observation, ...]

    @property
    def shape(self) -> tuple[int, int]:
        return self.observations[0].input_len, self.observations[0].output_len


@dataclass
class Errors:
    """Signed relative errors per transfer and metric, each with the setup (group) of the table it was scored on."""

    values: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    groups: dict[str, dict[str, list[tuple[str, ...]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def add(self, transfer: str, metric: str, predicted: float, measured: float | None,
            group: tuple[str, ...] = ()) -> None:  # fmt: skip
        if measured:
            self.values[transfer][metric].append(predicted / measured - 1.0)
            self.groups[transfer][metric].append(group)

    def summary(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per transfer and metric: count, median / p90 / max of |error|, p10 / p50 / p90 of the signed error (the
        range a predicted figure carries), and that range's coverage on setups it was not measured on."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for transfer, metrics in self.values.items():
            out[transfer] = {}
            for metric, errors in metrics.items():
                signed = np.array(errors)
                absolute = np.abs(signed)
                out[transfer][metric] = {
                    "n": len(errors),
                    "median_abs": float(np.median(absolute)),
                    "p90_abs": float(np.percentile(absolute, 90)),
                    "max_abs": float(absolute.max()),
                    "p10": float(np.percentile(signed, 10)),
                    "p50": float(np.median(signed)),
                    "p90": float(np.percentile(signed, 90)),
                    "coverage": held_out_coverage(signed, self.groups[transfer][metric]),
                }
        return out


def held_out_coverage(signed: NDArray, groups: Sequence[tuple[str, ...]]) -> float:
    """The share of errors inside the p10..p90 range of the errors of every *other* setup: how often a range holds
    the truth on a setup it was not measured on (80% if ranges transfer; leave-one-setup-out, not in-sample)."""
    labels = np.array(["/".join(map(str, g)) for g in groups])
    inside = []
    for label in np.unique(labels):
        others = signed[labels != label]
        if len(others) < 10:  # too few to take a range from
            continue
        low, high = np.percentile(others, [10, 90])
        mine = signed[labels == label]
        inside.extend((mine >= low) & (mine <= high))
    return float(np.mean(inside)) if inside else float("nan")


def _score(errors: Errors, transfers: Sequence[str], setup: Setup, calibration: Calibration, table: Table) -> None:
    """Each point of ``table`` predicted once, its errors counted under every transfer named."""
    for obs in table.observations:
        predicted = predict_concurrency(setup, calibration, obs.concurrency, obs.input_len, obs.output_len)
        for metric in METRICS:
            for transfer in transfers:
                errors.add(transfer, metric, getattr(predicted, metric), getattr(obs, metric), table.group)


def fit_tables(tables: Sequence[Table], priors: NDArray | None = None, scalings: Scalings | None = None,
               leave_out: Collection[tuple[str, ...]] = ()) -> Calibration:  # fmt: skip
    """One setup's calibration on every point of the given tables (all of them of that setup), towards its own
    priors unless given; where its points have one prompt length, with its model's TTFT growth with the prompt as
    its other setups measured it (``prompt_scaling``, of the ``scalings`` given, but for the setups left out)."""
    points = points_of(tables)
    measured = prompt_scaling(model_engine(tables[0]), points, scalings or {}, {tables[0].group, *leave_out})
    return fit(with_prompt_scaling(tables[0].setup, measured), points, priors=priors)


def points_of(tables: Iterable[Table]) -> list[Observation]:
    return [o for table in tables for o in table.observations]


# A MoE model's TTFT growth with its prompt under one engine differs by model more than the engine's median over
# every model says (``EngineConfig.moe_ttft_prompt_slope``, ``moe_request_ms_prior``): at 4 users, SGLang's
# 8,192-token TTFT is 1.2-2.6x its 1,024-token one for Qwen3.5-397B (19 setups), 2.0-5.1x for GLM-5 (9), whose
# sparse-attention prefill the simulation makes cheaper than it runs. A setup measured at one prompt length cannot
# tell (see ``calibrate.MEASURED_UNITS``), and takes it from the model's other setups under its engine whose prompt
# lengths vary, where there are at least this many: the median of their fits' request latency and TTFT prompt
# slope (``prompt_scaling``). Held-out MoE shape transfer, mean TTFT median / p90: SGLang 26.8% / 82.9% -> 25.1% /
# 75.9%, TensorRT-LLM 20.1% / 49.6% -> 17.6% / 49.5%, vLLM 20.5% / 53.7% -> 19.8% / 51.7%; from one table SGLang
# 25.6% -> 22.5%. Dense models keep their engine's: by model family it moved their TTFT the wrong way.
PROMPT_SCALING_SETUPS = 2


@dataclass(frozen=True)
class PromptScaling:
    """How one MoE setup's TTFT grows with its prompt, fitted on its points of several prompt lengths: each
    request's fixed latency and its TTFT correction's prompt slope."""

    group: tuple[str, ...]
    request_ms: float
    prompt_slope: float


Scalings = dict[tuple[str, str], list[PromptScaling]]  # by model (its shape twin) and engine preset: ``model_engine``


def model_engine(table: Table) -> tuple[str, str]:
    """A table's model (its shape twin) and engine preset: whose setups share a prompt scaling."""
    return table.family[0], _engine_release(table.group)[0]


def prompt_scalings(groups: Mapping[tuple[str, ...], Sequence[Table]],
                    calibrate: Callable[[Sequence[Table]], Calibration] = fit_tables) -> Scalings:  # fmt: skip
    """The prompt scaling of each MoE setup whose points tell its request latency from its prefill
    (``calibrate.identify_request``; ``calibrate`` fits it on all its tables), by model and engine."""
    found: Scalings = defaultdict(list)
    for group, members in groups.items():
        if members[0].setup.shape.num_experts and identify_request(points_of(members)):
            calibration = calibrate(members)
            correction = calibration.ttft_correction
            found[model_engine(members[0])].append(PromptScaling(
                group, float(calibration.coefficients[REQUEST]), float(correction[PROMPT]) if correction is not None
                else 0.0))  # fmt: skip
    return dict(found)


def scaling_sources(key: tuple[str, str], scalings: Scalings,
                    leave_out: Collection[tuple[str, ...]] = ()) -> list[PromptScaling]:  # fmt: skip
    """A model's setups under an engine (``key``: ``model_engine``) in ``scalings``, but those left out."""
    return [each for each in scalings.get(key, ()) if each.group not in leave_out]


def prompt_scaling(key: tuple[str, str], points: Sequence[Observation], scalings: Scalings,
                   leave_out: Collection[tuple[str, ...]] = ()) -> tuple[float, float] | None:  # fmt: skip
    """What a setup of a model and engine (``key``: ``model_engine``) measured at ``points`` takes for its request
    latency and TTFT prompt slope: the medians over the model's setups in ``scalings`` but those left out. None
    where the points' own prompt lengths vary (they tell for themselves) or fewer than ``PROMPT_SCALING_SETUPS``
    remain."""
    if prompts_vary(points):
        return None
    found = scaling_sources(key, scalings, leave_out)
    if len(found) < PROMPT_SCALING_SETUPS:
        return None
    return (float(np.median([each.request_ms for each in found])),
            float(np.median([each.prompt_slope for each in found])))  # fmt: skip


def group_tables(tables: Iterable[Table]) -> dict[tuple[str, ...], list[Table]]:
    """The tables of each setup, in the order given."""
    groups: dict[tuple[str, ...], list[Table]] = defaultdict(list)
    for table in tables:
        groups[table.group].append(table)
    return dict(groups)


def shape_sources(members: Sequence[Table]) -> Iterator[tuple[Table, list[Table], Table]]:
    """Each table of one setup with what the ``shape`` and ``one_shape`` transfers predict it from: the setup's
    tables of other shapes (a repeat run of the held shape is not another), and the first of them by shape, its
    fullest run where there are several (a rerun of one level is not the sweep a person would calibrate on)."""
    for held in members:
        others = [t for t in members if t.shape != held.shape]
        if others:
            yield held, others, min(others, key=lambda t: (t.shape, -len(t.observations)))


def validate(
    tables: Sequence[Table], transfers: Iterable[str] = TRANSFERS, progress: Callable[[str], None] | None = None
) -> tuple[Errors, list[float]]:
    """Errors of every transfer over the tables, and the cross-GPU best-throughput ratio errors."""
    errors, ratios = Errors(), []
    groups = group_tables(tables)
    calibrations = SourceCalibrations(groups)
    transfers = set(transfers)
    for group, members in groups.items():
        if progress:
            progress(" ".join(map(str, group)))
        for held, others, first in shape_sources(members):
            if "shape" in transfers:
                _score(errors, ("shape",), held.setup, fit_tables(others, scalings=calibrations.scalings), held)
            if "one_shape" in transfers:
                _score(errors, ("one_shape",), held.setup, fit_tables([first], scalings=calibrations.scalings), held)
    if transfers & {"gpu", "nearest", "any_release"}:
        ratios = _gpu_transfer(calibrations, errors, transfers, progress)
    return errors, ratios


def prompt_slopes(tables: Sequence[Table]) -> dict[str, dict[str, float]]:
    """Per engine and model kind (``vllm`` for dense models, ``vllm/moe``), the median and quartiles of the TTFT
    correction's prompt-length slope over the setups whose prompt lengths vary (``calibrate.prompts_vary``): the
    slope an engine preset gives a calibration that cannot fit its own (``EngineConfig.prompt_slope``). NIM's
    TensorRT-LLM build (``engine.NIM_ENGINE``) has its own."""
    slopes: dict[str, list[float]] = defaultdict(list)
    for group, members in group_tables(tables).items():
        if prompts_vary(points_of(members)):
            correction = fit_tables(members).ttft_correction
            nim = members[0].setup.engine == NIM_ENGINE
            moe = "/moe" if members[0].setup.shape.num_experts else ""
            slopes["nim" if nim else engine_preset(group[1])[0] + moe].append(float(correction[PROMPT]))
    return {engine: {"setups": len(values), "p25": float(np.percentile(values, 25)),
                     "median": float(np.median(values)), "p75": float(np.percentile(values, 75))}
            for engine, values in sorted(slopes.items())}  # fmt: skip


# Points that identify a setup's own coefficients: several concurrency levels, far apart. At one level a step's fixed
# cost and its per-sequence cost move together, and any split of them fits.
IDENTIFYING_LEVELS = 4
IDENTIFYING_SPAN = 8


@dataclass(frozen=True)
class IdentifyingFit:
    """A setup whose points identify its coefficients, the engine preset its tables were measured on
    (``engine.engine_preset``, as ``prompt_slopes`` keys them), and its fit."""

    engine: str
    setup: Setup
    coefficients: NDArray
    family: str = ""  # the model's architecture family (``models.BundledModel.family``): DeepSeek-R1's and V3's one
    prompts_vary: bool = False  # its request latency is identified too (``calibrate.identify_request``)


def identifying_fits(tables: Sequence[Table], moe: bool) -> list[IdentifyingFit]:
    """Each MoE (or dense) setup whose points identify its coefficients (``IDENTIFYING_LEVELS`` levels spanning
    ``IDENTIFYING_SPAN`` times or more), with its fitted coefficients. Each is fitted towards the dense priors, not
    towards the MoE medians these give: a prior pulls even a rich fit a little, and fitted towards their own medians
    the weakly identified ones crept on from run to run (compute 2.2, 2.4, 2.6, 2.9, 3.1 x its roofline)."""
    fits = []
    for group, members in group_tables(tables).items():
        points = points_of(members)
        levels = sorted({o.concurrency for o in points})
        if (bool(members[0].setup.shape.num_experts) == moe and len(levels) >= IDENTIFYING_LEVELS
                and levels[-1] >= IDENTIFYING_SPAN * levels[0]):
            coefficients = fit_tables(members, priors=PRIOR).coefficients
            fits.append(IdentifyingFit(engine_preset(group[1])[0], members[0].setup, coefficients, model_family(group),
                                       identify_request(points)))  # fmt: skip
    return fits


def _median_by(fits: list[IdentifyingFit], feature: int, prefix: str, key: Callable[[IdentifyingFit], str],
               dtype: str | None = None) -> dict[str, float]:  # fmt: skip
    """One coefficient's median per ``key`` (a GPU generation, an engine), of the setups in ``dtype``."""
    values = defaultdict(list)
    for found in fits:
        if dtype is None or found.setup.dtype == dtype:
            values[key(found)].append(float(found.coefficients[feature]))
    return {f"{prefix}_{name}": float(np.median(value)) for name, value in sorted(values.items())}


def _generation(found: IdentifyingFit) -> str:
    return found.setup.hardware.generation or "unknown"


def _engine(found: IdentifyingFit) -> str:
    return found.engine


def moe_coefficients(tables: Sequence[Table]) -> dict[str, float]:
    """The median fitted coefficients of the MoE setups whose points identify them (``identifying_fits``): the
    priors a MoE setup with fewer points is fitted towards (``calibrate.MOE_PRIOR``); their compute per GPU
    generation, ``engine.MOE_COMPUTE_SHARE`` applied (alike where the share is right); and their compute and request
    latency per engine (``EngineConfig.moe_compute_prior``, ``moe_request_ms_prior``)."""
    return _moe_medians(identifying_fits(tables, moe=True))


def _moe_medians(fits: Sequence[IdentifyingFit]) -> dict[str, float]:
    """The medians of ``moe_coefficients``; the request latency's over the setups whose prompt lengths vary, the
    only ones that identify it (one prompt length holds it at its prior: ``calibrate.MEASURED_UNITS``)."""
    fits = list(fits)
    medians = np.median(np.array([_as_measured(each) for each in fits]), axis=0) if fits else []
    varied = [each for each in fits if each.prompts_vary]
    request = {"request_ms": float(np.median([each.coefficients[REQUEST] for each in varied]))} if varied else {}
    return {"setups": len(fits), **{name: float(m) for name, m in zip(FEATURES[FITTED], medians, strict=False)},
            **request, "setups_prompts_vary": len(varied),
            **_median_by(fits, COMPUTE, "compute_ms", _generation),
            **{f"setups_{engine}": count for engine, count in Counter(each.engine for each in fits).items()},
            **_median_by(fits, COMPUTE, "compute_ms", _engine),
            **_median_by(varied, REQUEST, "request_ms", _engine)}  # fmt: skip


def _as_measured(found: IdentifyingFit) -> NDArray:
    """A fit's coefficients with its step overhead in the time its own steps take (a widened setup's counts native
    steps: ``engine.widened_step_factor``), as the priors are."""
    coefficients = found.coefficients[FITTED].copy()
    coefficients[STEP] *= widened_step_factor(found.setup.shape, found.setup.dtype, found.setup.hardware)
    return coefficients


def model_family(group: tuple[str, ...]) -> str:
    """A setup's model architecture family (DeepSeek-R1 and V3 are one), or its model where none is bundled."""
    bundled = find_bundled(group[0])
    return bundled.family if bundled else group[0]


def model_transfer(tables: Sequence[Table], errors_for: Callable[[str], Errors]) -> None:
    """Score ``model`` over the tables (every engine's), each error under the predicted table's engine: each setup
    calibrated on nothing of its own, as ``predict_roofline`` calibrates a model with no table bundled
    (``calibrate.unmeasured_prior``), with every median in those priors taken over the other families' identifying
    fits: a MoE setup's (``moe_coefficients``: its engine's compute and request latency where they have that
    engine), and a dense setup's compute where its engine has one (``EngineConfig.dense_compute_prior``)."""
    fits = identifying_fits(tables, moe=True) + identifying_fits(tables, moe=False)
    for group, members in group_tables(tables).items():
        setup, engine = members[0].setup, engine_preset(group[1])[0]
        others = [each for each in fits if each.family != model_family(group)
                  and bool(each.setup.shape.num_experts) == bool(setup.shape.num_experts)]  # fmt: skip
        if setup.shape.num_experts:
            medians = _moe_medians(others)
            setup = replace(setup, engine=replace(
                setup.engine, moe_compute_prior=medians.get(f"compute_ms_{engine}", medians["compute_ms"]),
                moe_request_ms_prior=medians.get(f"request_ms_{engine}", medians["request_ms"])))  # fmt: skip
            priors = unmeasured_prior(setup, np.array([medians.get(name, fixed) for name, fixed
                                                       in zip(FEATURES, MOE_PRIOR, strict=True)]))  # fmt: skip
        else:
            computes = [each.coefficients[COMPUTE] for each in others if each.engine == engine]
            if setup.engine.dense_compute_prior is not None:  # none from the other families: the dense prior's
                own = float(np.median(computes)) if computes else None
                setup = replace(setup, engine=replace(setup.engine, dense_compute_prior=own))
            priors = unmeasured_prior(setup)
        for table in members:
            _score(errors_for(engine), ("model",), table.setup, Calibration(priors, 0), table)


def dense_weight_reads(tables: Sequence[Table]) -> dict[str, float]:
    """The median weight-read coefficient of the dense FP8 setups whose points identify it, per GPU generation,
    ``engine.DENSE_WEIGHT_READ_SHARE`` applied (alike where the share is right). FP8 is the format both Hopper and
    Blackwell run natively, so the generations compare like for like."""
    fits = identifying_fits(tables, moe=False)
    return {"setups": sum(each.setup.dtype == "fp8" for each in fits),
            **_median_by(fits, WEIGHTS, "weights_ms", _generation, "fp8")}  # fmt: skip


def dense_computes(tables: Sequence[Table]) -> dict[str, float]:
    """The median compute coefficient of the dense setups whose points identify it, per engine, and how many model
    families those setups span: where they agree, what a dense model nobody measured is predicted with under that
    engine (``EngineConfig.dense_compute_prior``)."""
    fits = identifying_fits(tables, moe=False)
    families: dict[str, set[str]] = defaultdict(set)
    for each in fits:
        families[each.engine].add(each.family)
    return {**_median_by(fits, COMPUTE, "compute_ms", _engine),
            **{f"families_{engine}": len(found) for engine, found in sorted(families.items())}}  # fmt: skip


def engine_transfer(tables: Sequence[Table], errors_for: Callable[[str], Errors]) -> None:
    """Score ``engine_version`` and ``engine`` over the tables (every engine's), each error under the predicted
    table's engine (``errors_for(engine)``). The source is a setup of the same model, weight width, GPU type and
    count and layout; another release of the same engine (both named: an unnamed release may be the same) or
    another engine, whose calibration is then scheduled by the target's engine preset."""
    groups = group_tables(tables)
    calibrations = SourceCalibrations(groups)
    for target_group, targets in groups.items():
        engine, release = _engine_release(target_group)
        for source_group, sources in groups.items():
            if source_group == target_group or not _same_weights_and_gpus(sources[0], targets[0]):
                continue
            source_engine, source_release = _engine_release(source_group)
            if source_engine != engine:
                transfer = "engine"
            elif release and source_release and release != source_release:
                transfer = "engine_version"
            else:
                continue
            calibration = calibrations(source_group, target_group)
            if transfer == "engine":
                calibration = calibration.under_another_engine(targets[0].setup.engine,
                                                               bool(targets[0].setup.shape.num_experts))
            for table in targets:
                _score(errors_for(engine), (transfer,), table.setup, calibration, table)


def _split_engine(label: str) -> tuple[str, str]:
    """A setup key's engine label (``sglang 0.5.9``) as its engine and release, '' where its source left the release
    unnamed (``profiles.unnamed_release``)."""
    name, _, release = label.partition(" ")
    return name, "" if release.startswith(UNNAMED_RELEASE) else release


def _engine_release(group: tuple[str, ...]) -> tuple[str, str]:
    """A setup's engine (its preset's key) and release ('' where the table does not name it)."""
    name, release = _split_engine(group[1])
    return engine_preset(name)[0], release


def _same_weights_and_gpus(source: Table, target: Table) -> bool:
    """Same model, weight width, GPU type and count, and layout: a setup that differs only in its engine."""
    return (source.family[0], source.family[2], *source.group[2:4], *source.group[5:]) == (
        target.family[0], target.family[2], *target.group[2:4], *target.group[5:])  # fmt: skip


Placement = tuple[str, int, tuple[str, ...]]  # GPU type, GPUs a replica, layout tag (``profiles.layout_tag``)


def source_rank(source: Placement, target: Placement, observations: Sequence[Observation],
                misfit: bool = False) -> tuple[object, ...]:  # fmt: skip
    """Which setup a calibration is taken from, best first: one its own calibration fits (``misfit``: see
    ``MISFIT``); one with attention data parallel where the target has it, and without where it has not (its ranks
    queue and prefill prompts their own way: DeepSeek-R1 under SGLang 0.5.9 on 8x H200 at TP8, predicted from
    0.4.3's DP8 sweep on the same GPUs, came out at 16x its measured TTFT); the same GPU type; then one measured at
    more than one concurrency level (one level cannot tell a step's fixed cost from a sequence's: DeepSeek-R1 on 4x
    B200 under attention DP, fitted on its one point at 256 users and moved to plain TP4, decoded 4 users at 2.0 ms a
    token where 7.9 ms was measured); the same layout otherwise (expert parallel); the nearest GPU count (in
    doublings); then points at a few users (a calibration on nothing but a queue at 512 users puts that queue into
    every request) and the most points. Held-out MoE nearest transfer, TensorRT-LLM throughput / TTFT / TPOT median
    12.2% / 37.2% / 12.7% -> 10.6% / 32.1% / 11.1% (the count went before the layout, and a one-level setup counted
    as any other, before) -> 9.9% / 28.6% / 10.8% (attention DP before the GPU type; across releases, SGLang
    15.6% / 40.2% / 16.1% -> 14.8% / 37.8% / 14.7%, the rest alike or better)."""
    levels = {o.concurrency for o in observations}
    return (misfit, _attention_dp(source[2]) != _attention_dp(target[2]), source[0].lower() != target[0].lower(),
            len(levels) < 2, source[2] != target[2], abs(math.log2(source[1] / target[1])),
            not identify_step(observations), -len(observations))


def _attention_dp(layout: tuple[str, ...]) -> bool:
    """Whether a layout tag (``profiles.layout_tag``: ``("dp8 ep8",)``) runs attention data parallel."""
    return any(part.startswith("dp") for tag in layout for part in tag.split())


# A setup whose own calibration misses its own points by more than this (the median |error| of its worst metric) is
# taken as a source only where no other will do: its tables hold what the engine model cannot explain, and a move
# carries that along. SGLang's unversioned DeepSeek-R1 NVFP4 tables on 4x B200 (TTFT 0.9 s at 16 users, 7.1 s at 32,
# and 5.5 s for an 8K prompt alone, where SGLang 0.5.9 prefilled it in 0.3 s on the same GPUs) fit themselves at 61%
# on TTFT; moved to 4x MI355X they predicted 541 ms at 4 users where InferenceX measured 148 ms. 9 of the 228
# held-out setups miss so; the held-out nearest transfer across releases (``any_release``), MoE SGLang TTFT median /
# p90: 48.0% / 238.6% -> 40.2% / 94.4%.
MISFIT = 0.4


def fit_error(calibration: Calibration, tables: Sequence[Table]) -> float:
    """The median |relative error| of a setup's calibration on its own points, of its worst metric."""
    errors = Errors()
    for table in tables:
        _score(errors, ("own",), table.setup, calibration, table)
    return max(float(np.median(np.abs(values))) for values in errors.values["own"].values())


def placement(table: Table) -> Placement:
    return table.group[2], int(table.group[3]), tuple(table.group[5:])


class SourceCalibrations:
    """Each setup fitted on all its tables, as the source of another setup's predictions (``calibrations(source,
    target)``): one of a single prompt length takes its model's prompt scaling from the model's other setups
    (``prompt_scaling``) but the target's, so that no table is predicted by a fit that saw it."""

    def __init__(self, groups: Mapping[tuple[str, ...], Sequence[Table]]) -> None:
        self.groups: Mapping[tuple[str, ...], Sequence[Table]] = groups
        self.fitted: dict[tuple[tuple[str, ...], tuple[str, ...] | None], Calibration] = {}
        self.misfits: dict[tuple[tuple[str, ...], tuple[str, ...] | None], bool] = {}
        # the setups of several prompt lengths first: their fits take no scaling (so none is needed yet), and each
        # is kept as that setup's calibration
        self.scalings: Scalings = {}
        self.scalings = prompt_scalings(groups, calibrate=lambda members: self(members[0].group, None))

    def _key(self, source: tuple[str, ...], target: tuple[str, ...] | None
             ) -> tuple[tuple[str, ...], tuple[str, ...] | None]:  # fmt: skip
        """The fit a source needs: its own where the target's setup is not among those it takes a scaling from."""
        members = self.groups[source]
        taken = not prompts_vary(points_of(members)) and any(
            each.group == target for each in self.scalings.get(model_engine(members[0]), ()))  # fmt: skip
        return source, target if taken else None

    def __call__(self, source: tuple[str, ...], target: tuple[str, ...] | None) -> Calibration:
        key = self._key(source, target)
        if key not in self.fitted:
            self.fitted[key] = fit_tables(self.groups[source], scalings=self.scalings, leave_out={key[1]})
        return self.fitted[key]

    def misfit(self, source: tuple[str, ...], target: tuple[str, ...]) -> bool:
        """Whether the source's calibration misses its own tables (``MISFIT``)."""
        key = self._key(source, target)
        if key not in self.misfits:
            self.misfits[key] = fit_error(self(source, target), self.groups[source]) > MISFIT
        return self.misfits[key]


def _gpu_transfer(calibrations: SourceCalibrations, errors: Errors, transfers: set[str],
                  progress: Callable[[str], None] | None) -> list[float]:  # fmt: skip
    """Fit each setup on all its tables, carry it to every other setup of its family (``gpu``), from the nearest of
    them (``nearest``) and from the nearest of the same weights under any release of the engine (``any_release``),
    and score."""
    groups = calibrations.groups
    ranked = bool(transfers & {"nearest", "any_release"})
    ratios = []
    for target_group, targets in groups.items():
        def rank(group: tuple[str, ...], target: Table = targets[0]) -> tuple[object, ...]:
            observed = points_of(groups[group])
            own = group[0] == target.group[0]  # its own model's tables before its shape twin's (predict._reference)
            misfit = ranked and calibrations.misfit(group, target.group)
            return (not own, *source_rank(placement(groups[group][0]), placement(target), observed, misfit))

        releases = [g for g in groups if g != target_group and _same_weights(groups[g][0], targets[0])]
        family = [g for g in releases if groups[g][0].family == targets[0].family]
        nearest, any_release = min(family, key=rank, default=None), min(releases, key=rank, default=None)
        for source_group in releases:
            sources = groups[source_group]
            # the move between GPUs of one model: its shape twin's tables (profiles.shape_twin) are scored only where
            # a roofline prediction would take them, as the nearest
            moved = source_group[0] == target_group[0] and placement(sources[0]) != placement(targets[0])
            scored = [t for t, chosen in (("gpu", source_group in family and moved),
                                          ("nearest", source_group == nearest),
                                          ("any_release", source_group == any_release)) if t in transfers and chosen]
            if not scored:
                continue
            if progress:
                progress(f"{' '.join(map(str, source_group))} -> {' '.join(map(str, target_group))}")
            calibration = calibrations(source_group, target_group)
            for table in targets:  # simulated on its own GPUs and layout, as a roofline setup is
                _score(errors, scored, table.setup, calibration, table)
                source_table = next((t for t in sources if t.shape == table.shape), None)
                if "gpu" in scored and source_table is not None:
                    ratios.append(_ratio_error(calibration, table, source_table))
    return ratios


def _same_weights(source: Table, target: Table) -> bool:
    """Same model (or its shape twin) and weight width under the same engine, of any release."""
    return ((source.family[0], source.family[2], _engine_release(source.group)[0])
            == (target.family[0], target.family[2], _engine_release(target.group)[0]))  # fmt: skip


def _best(observations: Sequence[Observation]) -> float:
    return max(o.request_throughput for o in observations)


def _ratio_error(calibration: Calibration, target: Table, source: Table) -> float:
    """Predicted over published ratio of best throughput (target setup / source setup), minus one. Both ends of
    the predicted ratio come from the same calibration, so what is scored is how it moves between GPUs, not how
    well it fits the source (that is the throughput error's job)."""
    predicted = _predicted_best(target.setup, calibration, target) / _predicted_best(source.setup, calibration, source)
    return predicted / (_best(target.observations) / _best(source.observations)) - 1.0


def _predicted_best(setup: Setup, calibration: Calibration, table: Table) -> float:
    return max(predict_concurrency(setup, calibration, o.concurrency, o.input_len, o.output_len).request_throughput
               for o in table.observations)  # fmt: skip


def meets_targets(summary: dict[str, dict[str, dict[str, float]]], transfer: str,
                  ratios: Sequence[float] = ()) -> dict[str, bool]:  # fmt: skip
    """Which targets a transfer's errors meet (metrics it has no error for are left out)."""
    met = {}
    for metric, (median, p90) in TARGETS.items():
        if metric == "cross_gpu_ratio":
            if ratios:
                absolute = np.abs(np.array(ratios))
                met[metric] = bool(np.median(absolute) <= median and np.percentile(absolute, 90) <= p90)
            continue
        row = summary.get(transfer, {}).get(metric)
        if row:
            met[metric] = row["median_abs"] <= median and row["p90_abs"] <= p90
    return met


def ratio_summary(ratios: Sequence[float]) -> dict[str, float]:
    absolute = [abs(r) for r in ratios]
    if not absolute:
        return {}
    return {"n": len(absolute), "median_abs": statistics.median(absolute),
            "p90_abs": float(np.percentile(absolute, 90)), "max_abs": max(absolute)}  # fmt: skip


# The GPU the perf-overview ratios are taken against, and the only GPU closed-loop calibrations are taken from: the
# offline check asks how well a setup fitted where people measure (H100) moves to the GPU they are pricing.
REFERENCE_GPU = "H100 SXM"


def dtype_width(dtype: str) -> str:
    """FP16 and BF16 weights move the same bytes through the same kernels: one family."""
    return "16-bit" if dtype in ("float16", "bfloat16") else dtype


@dataclass(frozen=True)
class OfflineTable:
    """One offline maximum-throughput table (TensorRT-LLM's perf-overview: trtllm-bench queues every request at
    once): output tokens/s of the replica per (input length, output length)."""

    id: str
    release: str  # engine version: ratios are taken within one release
    model: str  # architecture (Llama-3.1 and 3.3 70B share one)
    family: tuple[str, ...]  # (model, engine, dtype width), as ``Table.family``
    gpu: str
    gpus: int
    dtype: str
    output_throughput: dict[tuple[int, int], float]
    setup: Setup | None = None
    unsimulated: str = ""  # why there is no setup


@dataclass(frozen=True)
class OfflineRatio:
    """Predicted and published throughput of a GPU relative to the reference GPU, same model, GPU count and shape."""

    target: str
    reference: str
    gpu: str
    gpus: int
    dtype: str
    reference_dtype: str  # differs where the reference GPU has no table in the target's dtype (A100 FP16 / H100 FP8)
    shape: tuple[int, int]
    published: float
    predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1.0


def offline_ratios(offline: Sequence[OfflineTable], closed_loop: Sequence[Table],
                   reference_gpu: str = REFERENCE_GPU) -> tuple[list[OfflineRatio], dict[str, int]]:  # fmt: skip
    """Every offline point on a non-reference GPU against the reference GPU's point of the same release, model, GPU
    count and shape (the same dtype where there is one), predicted from the reference GPU's closed-loop tables alone:
    nothing is fitted on the offline numbers. Returns the ratios and, per reason, how many points were skipped."""
    calibrations = _ReferenceCalibrations(closed_loop, reference_gpu)
    predicted: dict[tuple[str, tuple[int, int]], float] = {}

    def offline_throughput(table: OfflineTable, shape: tuple[int, int]) -> float:
        if (table.id, shape) not in predicted:
            calibration = calibrations.for_table(table)
            predicted[table.id, shape] = predict_offline(table.setup, calibration, *shape).output_throughput
        return predicted[table.id, shape]

    ratios, skipped = [], defaultdict(int)
    for target in offline:
        if target.gpu == reference_gpu:
            continue
        reference = _reference_table(offline, target, reference_gpu)
        for shape, published in target.output_throughput.items():
            reason = _skip_reason(target, reference, shape, calibrations)
            if reason:
                skipped[reason] += 1
                continue
            ratio = offline_throughput(target, shape) / offline_throughput(reference, shape)
            ratios.append(OfflineRatio(target.id, reference.id, target.gpu, target.gpus, target.dtype, reference.dtype,
                                       shape, published / reference.output_throughput[shape], ratio))  # fmt: skip
    return ratios, dict(skipped)


class _ReferenceCalibrations:
    """Fits of the reference GPU's closed-loop setups, each made once: for a table, the group of its family whose GPU
    count is closest to the table's (the fit's per-step coefficients depend on tensor parallelism)."""

    def __init__(self, closed_loop: Sequence[Table], reference_gpu: str) -> None:
        self.groups = {g: m for g, m in group_tables(closed_loop).items() if m[0].setup.hardware.gpu == reference_gpu}
        self.fitted: dict[tuple[str, ...], Calibration] = {}

    def group(self, table: OfflineTable) -> tuple[str, ...] | None:
        candidates = [g for g, members in self.groups.items() if _bare_engine(members[0].family) == table.family]
        if not candidates:
            return None
        return min(candidates, key=lambda g: (abs(np.log(self.groups[g][0].setup.hardware.gpus / table.gpus)),
                                              -len(self.groups[g])))  # fmt: skip

    def for_table(self, table: OfflineTable) -> Calibration:
        group = self.group(table)
        if group not in self.fitted:
            self.fitted[group] = fit_tables(self.groups[group])
        return self.fitted[group]


def _bare_engine(family: tuple[str, ...]) -> tuple[str, ...]:
    """A closed-loop table's family with a release its source left unnamed (``profiles.unnamed_release``) as the
    engine alone, as an offline table's family names its engine: the release-agnostic calibrations the offline
    ratios are predicted from (NIM's tables of no stated release)."""
    name, release = _split_engine(family[1])
    return family if release else (family[0], name, *family[2:])


def _reference_table(offline: Sequence[OfflineTable], target: OfflineTable, reference_gpu: str) -> OfflineTable | None:
    """The reference GPU's table of the target's release, model and GPU count, in the target's dtype if there is one."""
    matching = [t for t in offline if t.gpu == reference_gpu and t.release == target.release
                and t.model == target.model and t.gpus == target.gpus]  # fmt: skip
    return min(matching, key=lambda t: t.dtype != target.dtype, default=None)


def _skip_reason(target: OfflineTable, reference: OfflineTable | None, shape: tuple[int, int],
                 calibrations: _ReferenceCalibrations) -> str:  # fmt: skip
    """Why a point cannot be scored ('' when it can): every skipped point is counted under its reason."""
    if target.setup is None:
        return target.unsimulated
    if reference is None:
        return "no reference-GPU table of the same release, model and GPU count"
    if shape not in reference.output_throughput:
        return "no reference-GPU point at this shape"
    if reference.setup is None:
        return f"reference not simulated: {reference.unsimulated}"
    for table in (target, reference):
        if calibrations.group(table) is None:
            return f"no closed-loop reference-GPU calibration for {table.model} {table.dtype}"
    return ""


def offline_ratio_summary(ratios: Sequence[OfflineRatio], skipped: dict[str, int]) -> dict[str, object]:
    """|error| median / p90 / max over every ratio, whether the cross-GPU target is met, the median signed error
    per GPU (which GPU is off, and in which direction), and the skipped points per reason."""
    errors = [r.error for r in ratios]
    summary: dict[str, object] = dict(ratio_summary(errors))
    if errors:
        median, p90 = TARGETS["cross_gpu_ratio"]
        summary["met"] = bool(summary["median_abs"] <= median and summary["p90_abs"] <= p90)
    summary["by_gpu"] = _median_signed(ratios, lambda r: r.gpu)
    summary["by_setup"] = _median_signed(ratios, lambda r: f"{r.gpus}x {r.gpu} {r.dtype} / {r.reference_dtype}")
    summary["skipped"] = dict(sorted(skipped.items()))
    return summary


def _median_signed(ratios: Sequence[OfflineRatio], key: Callable[[OfflineRatio], str]) -> dict[str, dict[str, float]]:
    grouped: dict[str, list[float]] = defaultdict(list)
    for ratio in ratios:
        grouped[key(ratio)].append(ratio.error)
    return {name: {"n": len(values), "median_signed": statistics.median(values)}
            for name, values in sorted(grouped.items())}  # fmt: skip
