"""How far the engine model can be trusted: predict bundled tables it was not fitted to, and measure the error.

Three kinds of transfer, the ones a person makes when sizing a workload:

- ``shape``: a table of one setup (model, engine, dtype, GPUs) predicted from that setup's other tables, each
  table held out in turn (leave one table out).
- ``one_shape``: the same, from a single table of the setup (a person's one sweep), the first one by shape.
- ``gpu``: a table predicted from every table of the same model and dtype on *other* hardware (GPU type or count),
  the fitted coefficients moved to this table's GPUs.

Errors are relative, ``(predicted - measured) / measured``, per point and metric. ``cross_gpu_ratio`` compares
the predicted and the published ratio of best throughput between two setups at the same shape.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from infercost.performance.calibrate import Calibration, Observation, Setup, fit, predict_concurrency

METRICS = ("request_throughput", "mean_ttft_ms", "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms")
TRANSFERS = ("shape", "one_shape", "gpu")
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
    group: tuple[str, ...]  # (model, engine, hardware, gpus, dtype): tables that share coefficients
    family: tuple[str, ...]  # (model, engine, dtype): tables whose coefficients can move between GPUs
    setup: Setup
    observations: tuple[Observation, ...]

    @property
    def shape(self) -> tuple[int, int]:
        return self.observations[0].input_len, self.observations[0].output_len


@dataclass
class Errors:
    """Signed relative errors per transfer and metric."""

    values: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def add(self, transfer: str, metric: str, predicted: float, measured: float | None) -> None:
        if measured:
            self.values[transfer][metric].append(predicted / measured - 1.0)

    def summary(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per transfer and metric: count, median / p90 / max of |error|, and p10 / p50 / p90 of the signed error
        (the range a predicted figure carries)."""
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
                }
        return out


def _score(errors: Errors, transfer: str, setup: Setup, calibration: Calibration, table: Table) -> None:
    for obs in table.observations:
        predicted = predict_concurrency(setup, calibration, obs.concurrency, obs.input_len, obs.output_len)
        for metric in METRICS:
            errors.add(transfer, metric, getattr(predicted, metric), getattr(obs, metric))


def fit_tables(tables: Sequence[Table]) -> Calibration:
    """One setup's calibration on every point of the given tables (all of them of that setup)."""
    return fit(tables[0].setup, [o for table in tables for o in table.observations])


def group_tables(tables: Iterable[Table]) -> dict[tuple[str, ...], list[Table]]:
    """The tables of each setup, in the order given."""
    groups: dict[tuple[str, ...], list[Table]] = defaultdict(list)
    for table in tables:
        groups[table.group].append(table)
    return dict(groups)


def validate(
    tables: Sequence[Table], transfers: Iterable[str] = TRANSFERS, progress: Callable[[str], None] | None = None
) -> tuple[Errors, list[float]]:
    """Errors of every transfer over the tables, and the cross-GPU best-throughput ratio errors."""
    errors, ratios = Errors(), []
    groups = group_tables(tables)
    transfers = set(transfers)
    for group, members in groups.items():
        if progress:
            progress(" ".join(map(str, group)))
        for held in members:
            others = [t for t in members if t is not held]
            if "shape" in transfers and others:
                _score(errors, "shape", held.setup, fit_tables(others), held)
            if "one_shape" in transfers and others:
                source = min(others, key=lambda t: t.shape)
                _score(errors, "one_shape", held.setup, fit_tables([source]), held)
    if "gpu" in transfers:
        ratios = _gpu_transfer(groups, errors, progress)
    return errors, ratios


def _gpu_transfer(groups: dict[tuple[str, ...], list[Table]], errors: Errors,
                  progress: Callable[[str], None] | None) -> list[float]:  # fmt: skip
    """Fit each setup on all its tables, carry it to every other setup of its family, and score."""
    calibrations = {group: fit_tables(members) for group, members in groups.items()}
    ratios = []
    for target_group, targets in groups.items():
        for source_group, sources in groups.items():
            if source_group == target_group or sources[0].family != targets[0].family:
                continue
            if progress:
                progress(f"{' '.join(map(str, source_group))} -> {' '.join(map(str, target_group))}")
            moved = sources[0].setup.on(targets[0].setup.hardware)
            for table in targets:
                _score(errors, "gpu", moved, calibrations[source_group], table)
                source_table = next((t for t in sources if t.shape == table.shape), None)
                if source_table is not None:
                    ratios.append(_ratio_error(moved, calibrations[source_group], table, source_table))
    return ratios


def _best(observations: Sequence[Observation]) -> float:
    return max(o.request_throughput for o in observations)


def _ratio_error(moved: Setup, calibration: Calibration, target: Table, source: Table) -> float:
    """Predicted over published ratio of best throughput (target setup / source setup), minus one. Both ends of
    the predicted ratio come from the same calibration, so what is scored is how it moves between GPUs, not how
    well it fits the source (that is the throughput error's job)."""
    predicted = _predicted_best(moved, calibration, target) / _predicted_best(source.setup, calibration, source)
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
