"""The engine model's errors next to NVIDIA AIConfigurator's, on the same points of AIConfigurator's silicon sample.

    python -m bench.aiconfigurator_same_points                 # every transfer, Markdown
    python -m bench.aiconfigurator_same_points --transfer one_shape --json
    python -m bench.aiconfigurator_same_points --predictions OTHER.csv
    python -m bench.aiconfigurator_same_points --write --write-docs   # stored, and the table in docs/engine-model.md

AIConfigurator's predictions are not computed here (it is not a dependency, and it pins its own numpy/pandas): they
come from a CSV made where ``aiconfigurator`` is installed, by ``scripts/aiconfigurator_predictions.py`` (how, which
version and which rows: the CSV's header comment and SOURCES.md's "AIConfigurator silicon sample"). The CSV has
``id,predicted_ttft_ms,predicted_tpot_ms,status``; ``id`` is the sample row's id, which every point of the bundled
``aic-*`` tables keeps as ``source_id``. A row that repeats another's measurement (the sample exports some runs
more than once, some rounded to 0.01 ms) is bundled once, under the id of the copy the importer kept; AIConfigurator's
prediction of a left-out copy (its id in the point's ``same_as``) is not scored, so that each measurement counts once
and is scored on the copy whose stated version and layout the bundled table has.

The engine model predicts each of those points as ``validation.validate`` does (``shape``: from the other tables of
the point's setup; ``one_shape``: from one of them; ``gpu``: from the same model and dtype on other GPUs, one error
per source setup, as ``validate`` counts them). Both are scored against the point's published mean TTFT and TPOT, on
exactly the points both predicted, as median and p90 of |relative error|, in all and per model kind (MoE / dense)
and engine. AIConfigurator calibrates on nothing end to end (it composes kernel microbenchmarks), while the engine
model fits its coefficients to the other tables of the same sample: ``gpu`` and ``one_shape`` are the closer
comparison, ``shape`` the most favourable to the engine model.

A point whose table's layout the importer repaired (``layout_as_published``: a row that states its GPU count times
its EP size) is scored apart, in the slice ``layout repaired`` only: AIConfigurator's prediction of it was made on
the layout the row states, so it says nothing about either model's accuracy.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from bench.prediction_accuracy import ENGINE_MODEL_DOC, replace_between
from infercost.performance.calibrate import predict_concurrency
from infercost.performance.profiles import held_out_profiles, validation_tables
from infercost.performance.validation import (
    TRANSFERS,
    SourceCalibrations,
    Table,
    fit_tables,
    group_tables,
    shape_sources,
)

PUBLISHED = Path(__file__).resolve().parents[1] / "infercost" / "performance" / "data" / "published"
PREDICTIONS = PUBLISHED / "aic-predictions-aiconfigurator-0.12.0.csv"
METRICS = {"ttft": "mean_ttft_ms", "tpot": "mean_tpot_ms"}
STORED = Path(__file__).resolve().parents[1] / "infercost" / "performance" / "data" / "aiconfigurator_same_points.json"
DOCS_MARKER = "aiconfigurator-same-points"


def read_predictions(path: Path = PREDICTIONS) -> dict[str, dict[str, str]]:
    """The CSV's rows by id (lines starting with ``#`` are its header comment)."""
    with path.open(newline="", encoding="utf-8") as f:
        return {row["id"]: row for row in csv.DictReader(line for line in f if not line.startswith("#"))}


def point_ids(tables: Iterable[Table]) -> dict[tuple[str, int], str]:
    """(table id, concurrency) -> the point's ``source_id``, for the bundled AIConfigurator tables."""
    profiles = {p.id: p for p in held_out_profiles()}
    ids = {}
    for table in tables:
        for point in profiles[table.id].points:  # the points ``observations`` keeps, in its order
            if point.get("request_throughput") and point.get("concurrency") and point.get("source_id"):
                ids[table.id, int(point["concurrency"])] = point["source_id"]
    return ids


def engine_predictions(tables: list[Table], wanted: set[str], transfers: Iterable[str]
                       ) -> Iterator[tuple[str, str, Table, dict[str, float], dict[str, float]]]:  # fmt: skip
    """(transfer, source_id, table, predicted, measured) per wanted point, as ``validation.validate`` predicts it;
    only the tables holding a wanted point are scored."""
    ids = point_ids(tables)
    groups = group_tables(tables)
    calibrations = SourceCalibrations(groups)
    targets = {t.id for t in tables if any(ids.get((t.id, o.concurrency)) in wanted for o in t.observations)}

    def score(transfer: str, setup, calibration, table: Table):
        for obs in table.observations:
            source_id = ids.get((table.id, obs.concurrency))
            if source_id not in wanted:
                continue
            predicted = predict_concurrency(setup, calibration, obs.concurrency, obs.input_len, obs.output_len)
            yield (transfer, source_id, table, {m: getattr(predicted, m) for m in METRICS.values()},
                   {m: getattr(obs, m) for m in METRICS.values()})  # fmt: skip

    transfers = set(transfers)
    for members in groups.values():
        for held, others, first in shape_sources(members):
            if held.id not in targets:
                continue
            if "shape" in transfers:
                yield from score("shape", held.setup, fit_tables(others, scalings=calibrations.scalings), held)
            if "one_shape" in transfers:
                yield from score("one_shape", held.setup, fit_tables([first], scalings=calibrations.scalings), held)
    if "gpu" in transfers:
        for target_group, members in groups.items():
            if not any(t.id in targets for t in members):
                continue
            for source_group, sources in groups.items():
                if source_group == target_group or sources[0].family != members[0].family:
                    continue
                calibration = calibrations(source_group, target_group)
                for table in members:  # on its own GPUs and layout, as validation._gpu_transfer scores it
                    if table.id in targets:
                        yield from score("gpu", table.setup, calibration, table)


def stats(errors: list[float]) -> dict[str, float]:
    absolute = np.abs(np.array(errors))
    return {"n": len(errors), "median_abs": float(np.median(absolute)), "p90_abs": float(np.percentile(absolute, 90))}


def compare(predictions: dict[str, dict[str, str]], transfers: Iterable[str]) -> dict:
    """Per transfer and slice: n, median and p90 |error| of TTFT and TPOT, engine model and AIConfigurator, on the
    points both predicted."""
    tables = validation_tables([p for p in held_out_profiles() if p.closed_loop and p.id.startswith("published:aic-")])
    predicted = {i: r for i, r in predictions.items() if r["status"].startswith("ok")}
    errors: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    points: dict = defaultdict(set)
    repaired = {point["source_id"] for p in held_out_profiles() for point in p.points if "layout_as_published" in point}
    for transfer, source_id, table, ours, measured in engine_predictions(tables, set(predicted), transfers):
        theirs = {"mean_ttft_ms": float(predicted[source_id]["predicted_ttft_ms"]),
                  "mean_tpot_ms": float(predicted[source_id]["predicted_tpot_ms"])}  # fmt: skip
        kind = table.setup.shape.kind
        engine = table.group[1].split()[0]
        slices = ("all", kind, engine, f"{kind}/{engine}", f"aic {predicted[source_id]['status']}")
        if source_id in repaired:  # AIConfigurator was given the layout the row states, W*W GPUs: not a fair match
            slices = ("layout repaired",)
        for name, metric in METRICS.items():
            if not measured[metric]:
                continue
            for slice_ in slices:
                errors[transfer][slice_][f"infercost {name}"].append(ours[metric] / measured[metric] - 1.0)
                errors[transfer][slice_][f"aiconfigurator {name}"].append(theirs[metric] / measured[metric] - 1.0)
        for slice_ in slices:
            points[transfer, slice_].add(source_id)
    statuses: dict[str, int] = defaultdict(int)
    for row in predictions.values():
        statuses[row["status"]] += 1
    return {"aiconfigurator": {"tried": len(predictions), "predicted": len(predicted), "statuses": dict(statuses)},
            "transfers": {t: {s: {"points": len(points[t, s]), **{k: stats(v) for k, v in metrics.items()}}
                              for s, metrics in sorted(slices.items())} for t, slices in errors.items()}}  # fmt: skip


def markdown(summary: dict) -> str:
    aic = summary["aiconfigurator"]
    lines = [f"AIConfigurator predicted {aic['predicted']} of {aic['tried']} rows tried.", "",
             "| transfer | slice | points | errors | TTFT infercost | TTFT AIC | TPOT infercost | TPOT AIC |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for transfer, slices in summary["transfers"].items():
        for name, row in slices.items():
            cells = [f"{row[f'{who} {m}']['median_abs']:.1%} / {row[f'{who} {m}']['p90_abs']:.1%}"
                     if f"{who} {m}" in row else "-" for m in METRICS for who in ("infercost", "aiconfigurator")]
            n = row.get("infercost ttft", row.get("infercost tpot", {"n": 0}))["n"]
            lines.append(f"| {transfer} | {name} | {row['points']} | {n} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: median / p90 of |relative error|. errors: scored predictions (the gpu transfer scores a "
              "point once per source setup).", "", "AIConfigurator's statuses:", ""]  # fmt: skip
    lines += [f"- {count} {status}" for status, count in sorted(aic["statuses"].items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--predictions", type=Path, default=PREDICTIONS, help="AIConfigurator's predictions CSV")
    parser.add_argument("--transfer", action="append", choices=TRANSFERS, help="transfers (default: all)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--write", action="store_true", help=f"store the summary in {STORED.name}")
    parser.add_argument("--write-docs", action="store_true", help="write the stored summary's table into "
                        "docs/engine-model.md (with --write: this run's)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.write_docs and not args.write:
        write_docs(json.loads(STORED.read_text(encoding="utf-8")))
        return 0
    summary = compare(read_predictions(args.predictions), args.transfer or TRANSFERS)
    if args.write:
        STORED.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.write_docs:
        write_docs(summary)
    print(json.dumps(summary, indent=1) if args.json else markdown(summary))
    return 0


def write_docs(summary: dict) -> None:
    text = ENGINE_MODEL_DOC.read_text(encoding="utf-8")
    ENGINE_MODEL_DOC.write_text(replace_between(text, DOCS_MARKER, markdown(summary)), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
