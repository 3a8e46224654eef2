"""How well the engine model predicts the published tables kept out of its calibration (issue 22's vLLM, SGLang
and TensorRT-LLM sweeps of MoE and dense models on H100 to B300 and MI300X), per model kind and engine.

    python -m bench.held_out_accuracy            # shape and one_shape transfers, per kind and engine
    python -m bench.held_out_accuracy --transfer gpu --json
    python -m bench.held_out_accuracy --write      # every transfer, stored for predictions calibrated on these tables
    python -m bench.held_out_accuracy --write-docs # the tables in docs/engine-model.md and README.md, stored errors
    python -m bench.held_out_accuracy --write-calibrations  # each held-out setup's calibration, stored (--write too)

Each (kind, engine) slice is validated on its own (``validation.validate``): a table predicted from its setup's
tables of other shapes (``shape``), from one of them (``one_shape``), from the same model on other GPUs (``gpu``,
and from the one setup a roofline would pick, ``nearest``, or would pick with no engine release named,
``any_release``); and across slices, from the same setup under another
release of its engine (``engine_version``) or another engine (``engine``), each error counted in the predicted
table's slice (``validation.engine_transfer``); and as a model nobody measured, from the priors alone, the MoE ones
taken over the other model families (``model``: ``validation.model_transfer``).
Prints the median / p90 |relative error| of output throughput, mean TTFT and mean TPOT, the leave-one-setup-out
coverage of each p10..p90 range, and how many tables the engine model could not predict at all (a refusal is a
miss), with the reasons; and each engine's TTFT prompt-length slope, for dense and MoE models apart, over these and
the calibration set's setups of several prompt lengths, which the engine presets carry (``EngineConfig.prompt_slope``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

from bench.prediction_accuracy import ENGINE_MODEL_DOC, replace_between
from infercost.performance.expected_error import HELD_OUT_CALIBRATIONS_PATH, HELD_OUT_ERROR_PATH
from infercost.performance.predict import calibrate_held_out_groups
from infercost.performance.profiles import held_out_profiles, unpredictable_reason, validation_tables
from infercost.performance.validation import (
    ENGINE_TRANSFERS,
    HELD_OUT_TRANSFERS,
    Errors,
    dense_computes,
    dense_weight_reads,
    engine_transfer,
    model_transfer,
    moe_coefficients,
    prompt_slopes,
    validate,
)

HELD_OUT_MARKER = "held-out-accuracy"
REPORTED = {"request_throughput": "output throughput", "mean_ttft_ms": "mean TTFT", "mean_tpot_ms": "mean TPOT"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transfer", action="append", choices=HELD_OUT_TRANSFERS,
                        help="transfers (default: shape, one_shape)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--write-docs", action="store_true", help="write the stored errors' table into "
                        "docs/engine-model.md (with --write: this run's)")
    parser.add_argument("--write", action="store_true", help=f"run every transfer and store the errors in "
                        f"{HELD_OUT_ERROR_PATH.name}")  # fmt: skip
    parser.add_argument("--write-calibrations", action="store_true", help=f"store each held-out setup's "
                        f"calibration in {HELD_OUT_CALIBRATIONS_PATH.name} (also done by --write), and stop")
    args = parser.parse_args(argv)
    if args.write or args.write_calibrations:
        write_calibrations()
        if not args.write:
            return 0
    if args.write_docs and not args.write:
        write_docs(json.loads(HELD_OUT_ERROR_PATH.read_text(encoding="utf-8")))
        return 0
    profiles = [p for p in held_out_profiles() if p.closed_loop]
    refused: dict[str, int] = defaultdict(int)
    for profile in profiles:
        reason = unpredictable_reason(profile)
        if reason:
            refused[reason] += 1
    held_out = validation_tables(profiles)
    slices = defaultdict(list)
    for table in held_out:
        kind = table.setup.shape.kind
        slices[kind, table.group[1].split()[0]].append(table)
    summary = {"tables": len(profiles), "predicted": len(profiles) - sum(refused.values()),
               "refused": dict(refused), "slices": {}}  # fmt: skip
    transfers = HELD_OUT_TRANSFERS if args.write else args.transfer or ("shape", "one_shape")
    errors = {}
    for (kind, engine), tables in sorted(slices.items()):
        print(f"  {kind} {engine}: {len(tables)} tables", file=sys.stderr)
        errors[kind, engine], _ = validate(tables, transfers)
    for kind in sorted({kind for kind, _ in slices}):  # across slices: another engine's source, other models' priors
        every_engine = [t for (k, _), tables in slices.items() if k == kind for t in tables]
        errors_for = lambda engine, kind=kind: errors.setdefault((kind, engine), Errors())  # noqa: E731
        if set(transfers) & set(ENGINE_TRANSFERS):
            print(f"  {kind}: between engine releases and engines", file=sys.stderr)
            engine_transfer(every_engine, errors_for)
        if "model" in transfers:
            print(f"  {kind}: as a model nobody measured", file=sys.stderr)
            model_transfer(every_engine, errors_for)
    for (kind, engine), slice_errors in sorted(errors.items()):
        summary["slices"][f"{kind}/{engine}"] = slice_errors.summary()
    summary["prompt_slopes"] = prompt_slopes([*held_out, *validation_tables()])
    print(f"  TTFT prompt-length slope per engine and kind (EngineConfig.prompt_slope): {summary['prompt_slopes']}",
          file=sys.stderr)  # fmt: skip
    summary["moe_coefficients"] = moe_coefficients(held_out)
    print(f"  MoE setups' median coefficients (calibrate.MOE_PRIOR): {summary['moe_coefficients']}", file=sys.stderr)
    summary["dense_compute"] = dense_computes(held_out)
    print(f"  dense compute per engine (EngineConfig.dense_compute_prior): {summary['dense_compute']}",
          file=sys.stderr)  # fmt: skip
    summary["dense_weight_reads"] = dense_weight_reads(held_out)
    print(f"  dense FP8 weight reads per generation (engine.DENSE_WEIGHT_READ_SHARE): "
          f"{summary['dense_weight_reads']}", file=sys.stderr)
    if args.write:
        HELD_OUT_ERROR_PATH.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.write_docs:
        write_docs(summary)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(held_out_table(summary))
    return 0


def write_calibrations() -> None:
    """Each held-out setup's calibration and misfit flag, which a roofline reads instead of fitting them again."""
    stored = calibrate_held_out_groups(lambda group: print(f"  calibrating {group}", file=sys.stderr))
    HELD_OUT_CALIBRATIONS_PATH.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")


def held_out_table(summary: dict) -> str:
    """The summary as the Markdown docs/engine-model.md shows: what was refused, then the errors per slice."""
    refused = sorted(summary["refused"].items(), key=lambda kv: -kv[1])
    lines = [f"{summary['predicted']} of {summary['tables']} held-out closed-loop tables predicted"
             + ("; refused:" if refused else ", none refused."), ""]  # fmt: skip
    lines += [f"- {count} {reason}" for reason, count in refused] + ([""] if refused else [])
    lines += ["| kind / engine | transfer | metric | n | median | p90 | range coverage |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, transfers in summary["slices"].items():
        for transfer, metrics in transfers.items():
            for metric, label in REPORTED.items():
                row = metrics.get(metric)
                if row:
                    lines.append(f"| {name} | {transfer} | {label} | {row['n']} | {row['median_abs']:.1%} | "
                                 f"{row['p90_abs']:.1%} | {row['coverage']:.0%} |")
    return "\n".join(lines)


README = ENGINE_MODEL_DOC.parents[1] / "README.md"
README_MARKER = "held-out-summary"
README_TRANSFERS = {"shape": "other shapes, same setup", "nearest": "other GPUs, same release",
                    "any_release": "other GPUs, release not named", "engine": "another engine",
                    "model": "nothing of that model (priors)"}  # fmt: skip


def readme_table(summary: dict) -> str:
    """The README's short form: per model kind and engine, the median |error| of throughput / TTFT / TPOT for the
    moves a person makes most, and how often the p10..p90 range held the measured value there."""
    lines = ["| kind / engine | predicted from | throughput | TTFT | TPOT | range held |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, transfers in summary["slices"].items():
        for transfer, label in README_TRANSFERS.items():
            rows = transfers.get(transfer, {})
            if all(metric in rows for metric in REPORTED):
                figures = " | ".join(f"{rows[metric]['median_abs']:.0%}" for metric in REPORTED)
                lines.append(f"| {name} | {label} | {figures} | {rows['request_throughput']['coverage']:.0%} |")
    return "\n".join(lines)


def write_docs(summary: dict) -> None:
    text = ENGINE_MODEL_DOC.read_text(encoding="utf-8")
    ENGINE_MODEL_DOC.write_text(replace_between(text, HELD_OUT_MARKER, held_out_table(summary)), encoding="utf-8")
    README.write_text(replace_between(README.read_text(encoding="utf-8"), README_MARKER, readme_table(summary)),
                      encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
