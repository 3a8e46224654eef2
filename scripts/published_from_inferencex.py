"""Bundle SemiAnalysis InferenceX sweeps, as inference-sim keeps them, as published closed-loop tables.

    git --git-dir=MIRROR show 129e0b82...:testdata/blis/measurements/inferencex_absolutes.json > inferencex.json
    python scripts/published_from_inferencex.py inferencex.json

inference-sim's file holds, per InferenceX sweep (a scenario: model, GPU, weights, engine, tensor-parallel size; a
shape: 1k1k, 1k8k, 8k1k), the mean TTFT and mean TPOT at each client concurrency of one run from InferenceX's
database dump (``db-dump/2026-09-28``), in microseconds, with InferenceX's config id and the run's date. It has no
throughput, so request throughput is derived by Little's law for a closed loop, as for AIConfigurator's sample.

AIConfigurator's sample (``aic-*``) already bundles InferenceX runs up to its April 2026 dump: a sweep any of whose
points repeats a bundled measurement (the same GPU, engine, shape and concurrency, TTFT and TPOT within 0.01 ms) is
left out, so each run is bundled once. A scenario whose model no bundled config names, or whose layout the name does
not give, is left out too, and counted. Writes one ``ix-*.json`` per sweep into
``infercost/performance/data/published`` (old ones removed first).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "infercost" / "performance" / "data" / "published"
COMMIT = "129e0b823a5a36f7ef8bf1bda8ded5395c3a0ca8"
PATH = "testdata/blis/measurements/inferencex_absolutes.json"
SOURCE = f"https://github.com/inference-sim/inference-sim/blob/{COMMIT}/{PATH}"
GPUS = {"b200": "B200", "b300": "B300", "h100": "H100 SXM", "h200": "H200", "mi300x": "MI300X", "mi355x": "MI355X"}
ENGINES = {"vllm": ("vLLM", "vllm"), "sglang": ("SGLang", "sglang"), "trt": ("TensorRT-LLM", "trtllm")}
SHAPES = {"1k1k": (1024, 1024), "1k8k": (1024, 8192), "8k1k": (8192, 1024)}
# The file's scenario names the architecture; InferenceX's DeepSeek configs serve R1 (AIConfigurator's sample, which
# holds the same config ids' earlier runs, names them DeepSeek-R1).
MODELS = {
    "deepseek-v3": "deepseek-ai/DeepSeek-R1-0528", "deepseek-v4-pro": "deepseek-ai/DeepSeek-V4-Pro",
    "glm-5": "zai-org/GLM-5", "gpt-oss-120b": "openai/gpt-oss-120b", "kimi-k2.5": "moonshotai/Kimi-K2.5",
    "llama-3.1-70b-instruct": "meta-llama/Llama-3.1-70B-Instruct", "minimax-m2.5": "MiniMaxAI/MiniMax-M2.5",
    "qwen3.5-397b-a17b": "Qwen/Qwen3.5-397B-A17B",
}  # fmt: skip
SCENARIO = re.compile(r"^(?P<model>.+)-(?P<gpu>[a-z0-9]+)-(?P<dtype>fp4|fp8|bf16)-(?P<engine>vllm|sglang|trt)"
                      r"-tp(?P<tp>\d+)\.yaml$")  # fmt: skip
DERIVED = {
    "request_throughput": "concurrency / (mean_ttft_ms + (output_len - 1) x mean_tpot_ms) x 1000: Little's law for "
                          "a closed loop whose requests all have exactly output_len tokens (the source has no "
                          "throughput)",
    "output_throughput": "request_throughput x output_len",
}  # fmt: skip
SAME = 0.01  # ms: two exports of one measurement agree to this on both latencies (tests/.../test_published_data.py)
# InferenceX draws each request's prompt and output lengths uniformly over RANGE_RATIO to 1 of the shape's (its
# benchmark template's ``random-range-ratio`` default, which every sweep takes); the engine model simulates that as
# ``length_spread``, the same share either side of the stated lengths: (1 - r) / (1 + r), 1/9.
TEMPLATE = ("https://github.com/SemiAnalysisAI/InferenceX/blob/0a2e309ac18ab9f424b76e5449ddaba5ee9d1c87/"
            ".github/workflows/benchmark-tmpl.yml")
RANGE_RATIO = 0.8
LENGTH_SPREAD = round((1 - RANGE_RATIO) / (1 + RANGE_RATIO), 4)


def bundled_points() -> dict[tuple, list[tuple[float, float]]]:
    """(GPU, engine kind, input, output, concurrency) -> the (TTFT, TPOT) of every bundled table's point there, ours
    left out."""
    seen: dict[tuple, list[tuple[float, float]]] = {}
    for path in OUT.glob("*.json"):
        if path.name.startswith("ix-"):
            continue
        table = json.loads(path.read_text(encoding="utf-8"))
        for point in table["points"]:
            if {"mean_ttft_ms", "mean_tpot_ms"} <= point.keys() and point.get("concurrency"):
                where = (table["hardware"], table.get("engine_kind", ""), table["input_len"], table["output_len"],
                         int(point["concurrency"]))  # fmt: skip
                seen.setdefault(where, []).append((point["mean_ttft_ms"], point["mean_tpot_ms"]))
    return seen


def already_bundled(made: dict, seen: dict[tuple, list[tuple[float, float]]]) -> bool:
    """Whether any point of a table repeats a bundled measurement: the same place, both latencies within SAME."""
    return any(abs(ttft - point["mean_ttft_ms"]) <= SAME and abs(tpot - point["mean_tpot_ms"]) <= SAME
               for point in made["points"]
               for ttft, tpot in seen.get((made["hardware"], made["engine_kind"], made["input_len"],
                                           made["output_len"], point["concurrency"]), ()))  # fmt: skip


def table(anchor: dict, release: str) -> dict | str:
    """One sweep as a published table, or why it is left out."""
    found = SCENARIO.match(anchor["scenario"])
    if not found:
        return "layout not named by the scenario (expert or data parallel)"
    model = MODELS.get(found["model"])
    if model is None:
        return f"no bundled config for {found['model']}"
    if found["gpu"] not in GPUS or anchor["label"] not in SHAPES:
        return f"GPU {found['gpu']} or shape {anchor['label']} not known"
    gpu, gpus, (isl, osl) = GPUS[found["gpu"]], int(found["tp"]), SHAPES[anchor["label"]]
    engine, kind = ENGINES[found["engine"]]
    tpots, ttfts = anchor["absolute_tpot_us"], anchor["absolute_ttft_us"]
    points = []
    for level in sorted(set(tpots) & set(ttfts), key=int):
        ttft, tpot = ttfts[level] / 1000, tpots[level] / 1000
        throughput = int(level) / (ttft + (osl - 1) * tpot) * 1000
        points.append({"concurrency": int(level), "request_throughput": float(f"{throughput:.8g}"),
                       "output_throughput": float(f"{throughput * osl:.8g}"), "mean_ttft_ms": round(ttft, 6),
                       "mean_tpot_ms": round(tpot, 6),
                       "source_id": f"config {anchor['source_config_id']} {anchor['label']} c{level}"})  # fmt: skip
    config, date = anchor["source_config_id"], anchor["source_run_date"]
    dtype = found["dtype"]
    short = model.split("/")[-1]
    notes = (
        f"SemiAnalysis InferenceX, config {config} ({anchor['scenario']}), its run of {date}, from the database dump "
        f"{release} as inference-sim keeps it (mean TTFT and mean TPOT per client concurrency, in microseconds there; "
        f"each sweep's run reproduces InferenceX's own published relatives within 0.5%, per the file). Engine "
        f"version: not stated. Layout: tensor parallel over {gpus} GPU{'s' if gpus > 1 else ''}, as the scenario "
        f"names it (no expert or data parallelism named). Dtype {found['dtype']} as the scenario names it; KV-cache "
        f"dtype not stated. No throughput is published: request_throughput and output_throughput are derived from "
        f"the latencies by Little's law (see derived), which therefore holds by construction, as if every request had "
        f"exactly {isl} input and {osl} output tokens, as the shape {anchor['label']} states. InferenceX draws each "
        f"request's lengths uniformly over {RANGE_RATIO} to 1 of those (random-range-ratio {RANGE_RATIO}, {TEMPLATE}): "
        f"length_spread {LENGTH_SPREAD} is that spread, either side of the stated lengths."
    )  # fmt: skip
    if found["model"] == "deepseek-v3":
        notes += (" The file names the architecture (deepseek-v3); InferenceX's DeepSeek configs serve DeepSeek-R1, "
                  "as AIConfigurator's sample names its earlier runs of the same config ids.")  # fmt: skip
    return {
        "_slug": f"ix-{kind}-unversioned-{short.lower()}-{gpus}x{gpu.split()[0].lower()}-{dtype}-tp{gpus}-dp1-ep1-"
                 f"{isl}in-{osl}out-config{config}",
        "schema_version": 1,
        "name": f"{short}, {engine}, {gpus}x {gpu}, {found['dtype'].upper()} TP{gpus}, {isl} in / {osl} out "
                f"(InferenceX config {config}, {date})",
        "model": model, "hardware": gpu, "gpus_per_replica": gpus, "tensor_parallel": gpus, "pipeline_parallel": 1,
        "data_parallel": 1, "expert_parallel": 1, "moe_tensor_parallel": gpus, "engine": engine, "engine_kind": kind,
        "engine_version": None, "dtype": dtype, "basis": "published", "calibration_set": False,
        "load": "closed_loop", "source": SOURCE, "as_of": date, "input_len": isl, "output_len": osl,
        "run": f"InferenceX config {config}, run of {date}, {release}", "derived": DERIVED,
        "length_spread": LENGTH_SPREAD, "notes": notes,
        "points": points,
    }  # fmt: skip


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    document = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    release = document.get("release_tag", "")
    for old in OUT.glob("ix-*.json"):
        old.unlink()
    seen, skipped, written = bundled_points(), Counter(), 0
    for anchor in document["anchors"]:
        made = table(anchor, release)
        if isinstance(made, str):
            skipped[made] += 1
            continue
        if already_bundled(made, seen):
            skipped["a run already bundled (AIConfigurator's sample)"] += 1
            continue
        path = OUT / f"{made.pop('_slug')}.json"
        path.write_text(json.dumps(made, indent=2) + "\n", encoding="utf-8")
        written += 1
    print(f"{written} tables written; left out: {dict(skipped)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
