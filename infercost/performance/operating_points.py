"""Where a self-host setup's throughput points come from, carried to the workload's token shape.

Points are typed in (taken as measured by whoever gives them), a stored run, a bundled measured or published table,
or a roofline estimate. Points measured at another prompt or output length are carried to the workload's by a
performance model fitted to them. Every path returns a ``PointsBasis`` that says which it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from infercost.costmodel import ThroughputPoint
from infercost.costmodel.montecarlo import points_at_error
from infercost.errors import InputError
from infercost.performance.models import find_bundled
from infercost.performance.perfmodel import (
    MeasuredPoint,
    PerformanceModel,
    fit_performance_model,
    holdout_errors,
    summarize_holdout,
)
from infercost.performance.predict import Layout, Load, PredictedProfile, predict_profile, predict_roofline
from infercost.performance.profiles import ThroughputProfile, find_profile
from infercost.profile import SelfHost

SHAPE_TOLERANCE = 0.2  # a measured point holds for token shapes within ±20% of the one it was measured at

RunLoader = Callable[[str], ThroughputProfile]


@dataclass(frozen=True)
class PointsBasis:
    """Where a setup's points came from: what every self-host figure must say about itself."""

    basis: str  # measured | published | fitted | roofline
    run_id: str | None = None
    input_len: float | None = None
    output_len: float | None = None
    gpus_per_replica: int | None = None
    source: str = ""
    hardware: str = ""
    note: str = ""
    transfer: str = ""  # the engine model's kind of transfer, where the points are predicted
    expected_error: dict[str, dict[str, float]] = field(default_factory=dict)  # per metric, from the harness
    model: str = ""  # the weights the points were measured or predicted on, where that is known


INLINE = "inline"


def inline_profile(spec: SelfHost) -> ThroughputProfile:
    """Points a person typed in, taken as measured by them, at the shape they say (else at the workload's)."""
    throughput = spec.throughput
    points = [{**p.latency_ms(), **p.model_dump(include={"concurrency", "request_throughput", "output_throughput"})}
              for p in throughput.points or ()]  # fmt: skip
    return ThroughputProfile(id=INLINE, name=spec.name, model="", hardware=spec.gpu, engine="", dtype="",
                             basis="measured", input_len=throughput.input_len, output_len=throughput.output_len,
                             points=sorted(points, key=lambda p: p["concurrency"]), gpus_per_replica=0)  # fmt: skip


def reference_id(profile: ThroughputProfile) -> str | None:
    """The id a person can look up again: a run or bundled profile; none for typed-in points or an estimate."""
    return profile.run_id or (None if profile.id == INLINE or profile.basis == "roofline" else profile.id)


def throughput_points(
    spec: SelfHost, index: int, load_run: RunLoader | None, *, prompt_tokens: float, output_tokens: float,
    cached_prompt_fraction: float = 0.0,
) -> tuple[list[ThroughputPoint], PointsBasis]:
    """The setup's points: inline (taken as measured by whoever gives them), a stored or bundled run, or a roofline
    estimate at the workload's own token shape (a prefix-caching engine skips the prompts' cached share)."""
    throughput = spec.throughput
    shape = (max(1, round(prompt_tokens)), max(1, round(output_tokens)))
    if throughput.points:
        profile = inline_profile(spec)
    elif throughput.roofline is not None:
        r = throughput.roofline
        layout = Layout(r.tensor_parallel, r.expert_parallel, r.data_parallel)
        return predicted_points(predict_roofline(r.model, r.gpu, r.gpus, r.dtype, *shape,
                                                 Load(cached_prompt_fraction=cached_prompt_fraction),
                                                 engine=r.engine, layout=layout, release=r.engine_version))  # fmt: skip
    else:
        profile = (load_run or find_profile)(str(throughput.run))
    points = [
        ThroughputPoint(p["concurrency"], p["request_throughput"], p.get("output_throughput"), profile.latency_ms(p))
        for p in profile.points
        if p.get("request_throughput")
    ]
    if profile.basis != "roofline" and shape_warnings_for(
        profile.input_len, profile.output_len, prompt_tokens, output_tokens
    ):
        try:
            return predicted_points(predict_profile(profile, *shape))
        except InputError:  # no architecture or datasheet to simulate: the simpler fitted model carries the points
            return fitted_points(profile, *shape)  # a call makes at least one token, as the engine model takes it
    estimated = profile.basis == "roofline"
    basis = PointsBasis(
        profile.basis, reference_id(profile), profile.input_len, profile.output_len,
        profile.gpus_per_replica, profile.source, profile.hardware, profile.notes if estimated else "",
        model=profile.model,
    )  # fmt: skip
    return points, basis


def predicted_points(predicted: PredictedProfile) -> tuple[list[ThroughputPoint], PointsBasis]:
    """The engine model's closed-loop predictions as sizing takes them, with their basis and expected error."""
    latency = ("mean_ttft_ms", "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms", "mean_e2el_ms", "p95_e2el_ms")
    points = [ThroughputPoint(p.level, p.request_throughput, p.output_throughput,
                              {name: getattr(p, name) for name in latency})
              for p in predicted.points if p.load == "concurrency"]  # fmt: skip
    reference = None if predicted.basis == "roofline" else predicted.source
    basis = PointsBasis(predicted.basis, reference, predicted.input_len, predicted.output_len,
                        predicted.gpus_per_replica, predicted.source, predicted.hardware,
                        "; ".join(predicted.every_note), predicted.transfer, predicted.expected_error,
                        predicted.model)  # fmt: skip
    return points, basis


def error_scaled(points: Sequence[ThroughputPoint], error: dict[str, dict[str, float]], *,
                 optimistic: bool) -> list[ThroughputPoint]:  # fmt: skip
    """The points as they would be measured if the prediction erred as its p10 (optimistic: faster than predicted)
    or p90 (pessimistic) error does (``points_at_error``, which the bill band draws from)."""
    return points_at_error(points, error, 0.1 if optimistic else 0.9)


def carried_point(
    model: PerformanceModel, point: MeasuredPoint, prompt_tokens: float, output_tokens: float
) -> ThroughputPoint:
    """A measured point carried to another token shape by the ratios the model predicts between the two shapes.

    Carrying ratios, not replacing the point with the model, keeps what the model cannot know: a queue that builds
    once an engine's batch is full shows in the measured point and stays in the carried one.
    """
    c = point.concurrency
    there = model.predict(c, point.input_len, point.output_len)
    here = model.predict(c, prompt_tokens, output_tokens)
    speedup = here.request_throughput / there.request_throughput
    latency = {"mean_ttft_ms": point.mean_ttft_ms, "mean_tpot_ms": point.mean_tpot_ms,
               "p95_ttft_ms": point.p95_ttft_ms, "p95_tpot_ms": point.p95_tpot_ms}  # fmt: skip
    ratios = {"ttft": here.mean_ttft_ms / there.mean_ttft_ms, "tpot": here.mean_tpot_ms / there.mean_tpot_ms}
    carried = {name: value * ratios[name.split("_")[1]] for name, value in latency.items() if value is not None}
    requests = point.request_throughput * speedup
    return ThroughputPoint(c, requests, requests * output_tokens, carried)


def fitted_points(
    profile: ThroughputProfile, prompt_tokens: float, output_tokens: float
) -> tuple[list[ThroughputPoint], PointsBasis]:
    """Measured points carried to the workload's token shape by a performance model fitted to them.

    The note gives the fit's leave-one-out error on the measured points and every assumption it had to make.
    """
    measured = [
        MeasuredPoint(
            p["concurrency"],
            profile.input_len,
            profile.output_len,
            p["request_throughput"],
            p.get("mean_ttft_ms"),
            p.get("mean_tpot_ms") or p.get("mean_itl_ms"),
            p.get("p95_ttft_ms"),
            p.get("p95_tpot_ms"),
        )  # fmt: skip
        for p in profile.points
        if p.get("request_throughput")
    ]
    model = fit_performance_model(measured)
    points = [carried_point(model, p, prompt_tokens, output_tokens) for p in measured]
    shape = f"{profile.input_len:,.0f} in / {profile.output_len:,.0f} out"
    note = f"{len(measured)} {profile.basis} points at {shape}, carried to this shape by a fitted performance model"
    if len(measured) >= 2:
        worst = summarize_holdout(holdout_errors(measured)).median_abs_error.get("request_throughput")
        if worst is not None:
            note += f" (leave-one-out median error of requests/s: {worst:.0%})"
    if model.assumptions:
        note += "; assumed: " + "; ".join(model.assumptions)
    basis = PointsBasis("fitted", reference_id(profile), prompt_tokens, output_tokens, profile.gpus_per_replica,
                        profile.source, profile.hardware, note, model=profile.model)  # fmt: skip
    return points, basis


def shape_warnings_for(
    input_len: float | None, output_len: float | None, prompt_tokens: float, output_tokens: float
) -> list[str]:
    """Measured points hold for the token shape they were measured at; say so where the workload differs."""
    notes = []
    shapes = (("input", input_len, prompt_tokens), ("output", output_len, output_tokens))
    for label, measured, wanted in shapes:
        if measured and abs(wanted - measured) > SHAPE_TOLERANCE * measured:
            notes.append(
                f"measured at {label} length {measured:,.0f}, the workload has {wanted:,.0f}: throughput may differ"
            )
    return notes


def shape_warnings(basis: PointsBasis, prompt_tokens: float, output_tokens: float) -> list[str]:
    """Where the points' token shape is not the workload's, and where the workload's calls are longer than the
    model's context (a bundled model's: an API model's context is warned of the same way)."""
    bundled = find_bundled(basis.model) if basis.model else None
    over = bundled.architecture().over_context(prompt_tokens + output_tokens) if bundled else None
    shape = shape_warnings_for(basis.input_len, basis.output_len, prompt_tokens, output_tokens)
    return shape + ([over] if over else [])


# Where a table does not report an SLO's statistic, the nearest one it does report stands in, with a note.
SLO_STAND_INS = {"tpot": ("tpot", "itl"), "itl": ("itl", "tpot"), "ttft": ("ttft",), "e2el": ("e2el",)}


def effective_slo(slo: dict[str, float], points: Sequence[ThroughputPoint]) -> tuple[dict[str, float], list[str]]:
    """The SLO as these points can be checked: a missing metric is replaced by the closest reported one."""
    reported = set.intersection(*(set(p.latency_ms) for p in points)) if points else set()
    effective, notes = {}, []
    for metric, limit in slo.items():
        stat, name = metric.split("_")[0], metric.split("_")[1]
        candidates = [f"{s}_{n}_ms" for n in SLO_STAND_INS[name] for s in (stat, "median", "mean")]
        stand_in = next((c for c in candidates if c in reported), metric)
        effective[stand_in] = limit
        if stand_in != metric:
            notes.append(f"{metric} not reported; the SLO is checked against {stand_in}")
    return effective, notes
