"""AIConfigurator's predictions of a deterministic sample of its silicon sample's ``agg`` rows, offline.

Run where ``aiconfigurator`` is installed (a separate virtualenv: it pins its own numpy/pandas), not in infercost's
environment; it imports nothing of infercost:

    python -m venv /tmp/aicenv && /tmp/aicenv/bin/pip install aiconfigurator==0.12.0
    AIC_ALLOW_UNLISTED_VERSIONS=1 /tmp/aicenv/bin/python scripts/aiconfigurator_predictions.py --every 6 \\
        --systems SYSTEMS > infercost/performance/data/published/aic-predictions-aiconfigurator-0.12.0.csv

(SYSTEMS: ``aic-core/src/aiconfigurator_core/systems`` of github.com/ai-dynamo/aiconfigurator at the commit the CSV's
header names, which holds the databases of every engine version the sample names; the wheel ships only the current
ones.)

It predicts every ``--every``-th ``agg`` row of the sample (sorted by ``id``) the way AIConfigurator's own
``tools/accuracy_regression_testing/predict_silicon_sample.py`` does (``cli_estimate`` with the row's model, system,
backend, version, shape, quantisation, batch size and layout; a version without a perf database is retried with the
default database), and writes ``id,predicted_ttft_ms,predicted_tpot_ms,status`` (status ``ok``, ``ok-default-db``
where the row's version had no database, or ``error: <class>``), one row at a time, so an interrupted run keeps what
it did. ``bench/aiconfigurator_same_points.py`` compares these predictions with infercost's on the same points.

No network: HuggingFace configs are read from AIConfigurator's bundled ``model_configs`` directory, into which this
script links, under the sample's names, the configs of the same checkpoints bundled under other names
(``ALIASES``); it points ``AICONFIGURATOR_MODEL_CONFIGS_PATH`` at that copy.
"""

from __future__ import annotations

import argparse
import csv
import importlib.resources
import json
import os
import re
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

# The sample's model ids that AIConfigurator 0.12.0 bundles no config for -> (config, hf_quant_config) of the same
# architecture that it does bundle (a quant config is None, a bundled name, or a dict written as is).
ALIASES: dict[str, tuple[str, str | dict | None]] = {
    "meta-llama/Llama-3.1-70B": ("meta-llama/Meta-Llama-3.1-70B", None),
    "meta-llama/Llama-3.1-8B-Instruct": ("meta-llama/Meta-Llama-3.1-8B", None),
    "nvidia/Llama-3.1-8B-Instruct-FP8": ("meta-llama/Meta-Llama-3.1-8B", "nvidia/Llama-3.1-70B-Instruct-FP8"),
    "zhipuai/GLM-5": ("zai-org/GLM-5", None),
    "nvidia/DeepSeek-R1-NVFP4": ("nvidia/DeepSeek-V3.1-NVFP4", "nvidia/DeepSeek-V3.1-NVFP4"),
    "nvidia/Qwen3-32B-NVFP4": ("Qwen/Qwen3-32B", {"producer": {"name": "modelopt"}, "quantization": {
        "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}}),
}
PARALLEL_FIELDS = ("batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")


def model_configs_with_aliases() -> Path:
    """A directory with AIConfigurator's bundled model configs and the ALIASES under the sample's names."""
    bundled = Path(str(importlib.resources.files("aiconfigurator_core") / "model_configs"))
    target = Path(tempfile.mkdtemp(prefix="aic-model-configs-"))
    for path in bundled.iterdir():
        (target / path.name).symlink_to(path)
    for name, (config, quant) in ALIASES.items():
        stem = name.replace("/", "--")
        if not (target / f"{stem}_config.json").exists():
            (target / f"{stem}_config.json").symlink_to(bundled / f"{config.replace('/', '--')}_config.json")
        if isinstance(quant, str):
            quant_config = bundled / f"{quant.replace('/', '--')}_hf_quant_config.json"
            (target / f"{stem}_hf_quant_config.json").symlink_to(quant_config)
        elif isinstance(quant, dict):
            (target / f"{stem}_hf_quant_config.json").write_text(json.dumps(quant), encoding="utf-8")
    return target


def estimate_args(row: dict[str, str]) -> dict:
    return dict(model_path=row["model_path"], system_name=row["system"], mode="agg", backend_name=row["backend"],
                backend_version=row["backend_version"] or None, isl=int(row["isl"]), osl=int(row["osl"]),
                gemm_quant_mode=row["gemm_quant_mode"] or None, moe_quant_mode=row["moe_quant_mode"] or None,
                **{f: int(row[f]) for f in PARALLEL_FIELDS if row.get(f)})  # fmt: skip


def failure_class(error: Exception) -> str:
    """A short, stable class of a failure: the exception type and its message's first words, numbers masked."""
    message = re.sub(r"\d+(\.\d+)*", "N", str(error).splitlines()[0] if str(error) else "")
    message = re.sub(r"[,\"]", " ", message)
    return f"error: {type(error).__name__}: {' '.join(message.split()[:12])}"


def predict(row: dict[str, str], systems: Path | None = None) -> tuple[float, float, str]:
    from aiconfigurator.cli.api import cli_estimate

    args = estimate_args(row) | ({"systems_paths": str(systems)} if systems else {})
    with redirect_stdout(sys.stderr):
        try:
            result = cli_estimate(**args)
            status = "ok"
        except Exception as error:  # noqa: BLE001 - retried as predict_silicon_sample.py retries, else raised
            if args["backend_version"] is None or not re.search("perf database", str(error), re.IGNORECASE):
                raise
            args["backend_version"] = None
            result = cli_estimate(**args)
            status = "ok-default-db"
    return result.ttft, result.tpot, status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sample", nargs="?", type=Path, help="silicon_sample.csv (default: the one the wheel ships)")
    parser.add_argument("--every", type=int, default=10, help="predict every N-th agg row by id (default 10)")
    parser.add_argument("--systems", type=Path, help="a systems directory (AICONFIGURATOR_SYSTEMS_PATH) to use "
                        "instead of the wheel's, e.g. the repository's at the sample's commit: every engine version")
    parser.add_argument("--offset", type=int, default=0, help="start at this index of the sorted agg rows")
    args = parser.parse_args(argv)
    bundled_sample = importlib.resources.files("aiconfigurator_core") / "systems" / "silicon_sample.csv"
    sample = args.sample or Path(str(bundled_sample))
    if args.systems:
        os.environ["AICONFIGURATOR_SYSTEMS_PATH"] = str(args.systems)
    os.environ.setdefault("AICONFIGURATOR_MODEL_CONFIGS_PATH", str(model_configs_with_aliases()))
    from aiconfigurator_core.sdk.common import DefaultHFModels

    DefaultHFModels.update(ALIASES)  # the SDK reads a model's config offline only for these ids
    with sample.open(newline="") as f:
        rows = sorted((r for r in csv.DictReader(f) if r["mode"] == "agg"), key=lambda r: r["id"])
    chosen = rows[args.offset :: args.every]
    print(f"{len(chosen)} of {len(rows)} agg rows", file=sys.stderr)
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["id", "predicted_ttft_ms", "predicted_tpot_ms", "status"])
    for i, row in enumerate(chosen):
        try:
            ttft, tpot, status = predict(row, args.systems)
            writer.writerow([row["id"], f"{ttft:.4f}", f"{tpot:.4f}", status])
        except Exception as error:  # noqa: BLE001 - every failure is recorded, by class
            writer.writerow([row["id"], "", "", failure_class(error)])
        sys.stdout.flush()
        print(f"{i + 1}/{len(chosen)} {row['id']}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
