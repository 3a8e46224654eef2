"""How well the engine model predicts bundled tables it was not fitted to (``infercost.performance.validation``).

    python -m bench.prediction_accuracy            # every transfer, printed as a table
    python -m bench.prediction_accuracy --write    # and store the errors the app and reports show beside predictions
    python -m bench.prediction_accuracy --transfer shape --json
    python -m bench.prediction_accuracy --write-docs   # the table in docs/engine-model.md, from the stored errors

Prints how many bundled tables the engine model cannot simulate yet, per reason (an architecture it has no shape
for, a layout or dtype it does not simulate, a GPU without a datasheet), then, per transfer (shape, one_shape, gpu),
the median, p90 and max |relative error| of request throughput,
mean/p95 TTFT and mean/p95 TPOT, the cross-GPU best-throughput ratio error, and whether each target is met. With the
gpu transfer it also checks the offline cross-GPU ratio: TensorRT-LLM's perf-overview throughput of H200, GH200, A100
and L40S relative to H100 at the same shape, predicted from H100 closed-loop calibrations alone (per-GPU median signed
error and the skipped points on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from infercost.docs_cli import DOCS
from infercost.performance.expected_error import CALIBRATIONS_PATH, EXPECTED_ERROR_PATH, expected_errors
from infercost.performance.predict import calibrate_bundled_groups
from infercost.performance.profiles import offline_tables, validation_skips, validation_tables
from infercost.performance.validation import (
    METRICS,
    TARGETS,
    TRANSFERS,
    meets_targets,
    offline_ratio_summary,
    offline_ratios,
    ratio_summary,
    validate,
)

ENGINE_MODEL_DOC = DOCS / "engine-model.md"
TABLE_MARKER = "prediction-accuracy"  # <!-- prediction-accuracy:start --> ... :end --> in that page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transfer", action="append", choices=TRANSFERS, help="transfers to run (default: all)")
    parser.add_argument("--write", action="store_true",
                        help=f"store the summary in {EXPECTED_ERROR_PATH.name} and each bundled setup's calibration "
                        f"in {CALIBRATIONS_PATH.name}")  # fmt: skip
    parser.add_argument("--write-docs", action="store_true",
                        help=f"write the table in docs/{ENGINE_MODEL_DOC.name} from the stored errors (with --write: "
                        "from this run's) and run nothing else")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if args.write_docs and not args.write:
        write_docs(expected_errors())
        return 0
    tables = validation_tables()
    started = time.perf_counter()
    errors, ratios = validate(tables, args.transfer or TRANSFERS, progress=lambda s: print(f"  {s}", file=sys.stderr))
    skipped = validation_skips()  # bundled tables the engine model cannot simulate yet (MoE, FP4, B300, ...)
    summary = {"tables": len(tables), "skipped_tables": skipped, "transfers": errors.summary(),
               "cross_gpu_ratio": ratio_summary(ratios),
               "targets": {k: {"median_abs": m, "p90_abs": p} for k, (m, p) in TARGETS.items()}}  # fmt: skip
    transfers = summary["transfers"]
    summary["met"] = {t: meets_targets(transfers, t, ratios if t == "gpu" else ()) for t in transfers}
    if "gpu" in (args.transfer or TRANSFERS):
        summary["offline_ratio"] = offline_ratio_summary(*offline_ratios(offline_tables(), tables))
        _print_offline_breakdown(summary["offline_ratio"])
    if args.write:
        EXPECTED_ERROR_PATH.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        CALIBRATIONS_PATH.write_text(json.dumps(calibrate_bundled_groups(), indent=1) + "\n", encoding="utf-8")
    if args.write_docs:
        write_docs(summary)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{len(tables)} tables, {time.perf_counter() - started:.0f} s; {sum(skipped.values())} published tables "
          f"skipped as not yet predictable:")
    for reason, count in skipped.items():
        print(f"  {count} {reason}")
    print(accuracy_table(summary))
    return 0


def _row(transfer: str, metric: str, row: dict, target: tuple[float, float] | None, met: object) -> str:
    target_text = f"{target[0]:.0%} / {target[1]:.0%}" if target else ""
    coverage = f"{row['coverage']:.0%}" if isinstance(row.get("coverage"), float) else ""
    return (f"| {transfer} | {metric} | {row['n']} | {row['median_abs']:.1%} | {row['p90_abs']:.1%} | "
            f"{row['max_abs']:.0%} | {coverage} | {target_text} | {met} |")


def accuracy_table(summary: dict) -> str:
    """The harness's summary as the Markdown table docs/engine-model.md shows (and the console prints)."""
    targets = {metric: (row["median_abs"], row["p90_abs"]) for metric, row in summary["targets"].items()}
    lines = ["| transfer | metric | n | median | p90 | max | p10..p90 range coverage | target (median / p90) | met |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for transfer, metrics in summary["transfers"].items():
        for metric in METRICS:
            if metrics.get(metric):
                met = summary["met"][transfer].get(metric, "")
                lines.append(_row(transfer, metric, metrics[metric], targets.get(metric), met))
    if summary.get("cross_gpu_ratio"):
        met = summary["met"].get("gpu", {}).get("cross_gpu_ratio")
        lines.append(_row("gpu", "cross-GPU best-throughput ratio", summary["cross_gpu_ratio"],
                          targets["cross_gpu_ratio"], met))
    offline = summary.get("offline_ratio", {})
    if offline.get("n"):
        lines.append(_row("gpu", "offline cross-GPU ratio (perf-overview)", offline, targets["cross_gpu_ratio"],
                          offline["met"]))
    return "\n".join(lines)


def replace_between(text: str, marker: str, body: str) -> str:
    """``text`` with what lies between ``<!-- marker:start -->`` and ``<!-- marker:end -->`` replaced by ``body``."""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise SystemExit(f"expected one {start} before one {end}")
    head, rest = text.split(start)
    return f"{head}{start}\n{body}\n{end}{rest.split(end)[1]}"


def write_docs(summary: dict) -> None:
    """Replace the table between the markers in docs/engine-model.md with the one this summary gives."""
    text = ENGINE_MODEL_DOC.read_text(encoding="utf-8")
    ENGINE_MODEL_DOC.write_text(replace_between(text, TABLE_MARKER, accuracy_table(summary)), encoding="utf-8")


def _print_offline_breakdown(offline: dict) -> None:
    """Which GPU the offline ratio is off on, and which points it could not score, on stderr."""
    for breakdown in ("by_gpu", "by_setup"):
        for name, row in offline[breakdown].items():
            print(f"  offline ratio {name} / H100: n {row['n']}, median signed error {row['median_signed']:+.1%}",
                  file=sys.stderr)
    for reason, count in offline["skipped"].items():
        print(f"  offline ratio skipped {count} points: {reason}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
