"""Bundle dstack's DeepSeek-R1 benchmark (8x MI300X and 8x H200; SGLang, vLLM, TensorRT-LLM) as published tables.

    C=7f37e6697725e58dd09b9ef190b62ce19f01d45e
    git --git-dir=MIRROR show $C:Deepseek-R1/raw_data/online_results.csv > online.csv
    git --git-dir=MIRROR show $C:Deepseek-R1/raw_data/offline_results.csv > offline.csv
    python scripts/published_from_dstack.py online.csv offline.csv [QPS.csv 405B_OFFLINE.csv]

The optional second pair is the same repository's Llama-3.1-405B comparison at commit 06c957ab
(``comparison/h100sxm5_vs_mi300x/csv_data/qps_comparison.csv`` and ``throughput_comparsion.csv``): vLLM
``benchmark_serving.py`` at request rates 16, 32 and 1000 on ShareGPT, and ``benchmark_throughput.py`` batches.

``online_results.csv`` holds ``sglang.bench_serving`` summaries (closed loops at ``--max-concurrency``, random prompts
of exactly 3200 tokens, or SGLang's generated-shared-prefix prompts); ``offline_results.csv`` holds vLLM
``benchmark_throughput.py`` summaries (a batch of N prompts submitted at once). Engine versions and launch flags are
the README's at the same commit. Writes ``dstack-*.json`` into ``infercost/performance/data/published``.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "infercost" / "performance" / "data" / "published"
COMMIT = "7f37e6697725e58dd09b9ef190b62ce19f01d45e"
BASE = f"https://github.com/dstackai/benchmarks/blob/{COMMIT}/Deepseek-R1"
AS_OF = "2025-03-18"  # the commit's date
MODEL = "deepseek-ai/DeepSeek-R1"
GPUS = {"mi300x": "MI300X", "mi300": "MI300X", "h200": "H200"}
# What the README at the commit says each run was: engine, version, image and launch flags, and the layout they make.
SETUPS = {
    ("h200", "sglang"): dict(engine="SGLang 0.4.3.post2", engine_kind="sglang", engine_version="0.4.3.post2",
                             tensor_parallel=1, data_parallel=8, expert_parallel=1, moe_tensor_parallel=8,
                             launch="lmsysorg/sglang:latest, sglang.launch_server --tp 8 --enable-dp-attention "
                                    "(SGLang 0.4.3's server_args sets dp_size = tp_size with DP attention: attention "
                                    "data-parallel over 8 ranks, MoE tensor-parallel over 8)"),
    ("mi300x", "sglang"): dict(engine="SGLang 0.4.2.post4", engine_kind="sglang", engine_version="0.4.2.post4",
                               tensor_parallel=8, launch="rocm/sglang-staging:20250212, sglang.launch_server --tp 8"),
    ("h200", "vllm"): dict(engine="vLLM 0.7.4.dev181+gf35f8e22", engine_kind="vllm",
                           engine_version="0.7.4.dev181+gf35f8e22", tensor_parallel=8,
                           launch="vllm/vllm-openai:v0.7.3 upgraded to the nightly wheel, VLLM_ATTENTION_BACKEND="
                                  "FLASHMLA, vllm serve --tensor-parallel-size 8"),
    ("mi300x", "vllm"): dict(engine="vLLM 0.7.3.dev138+g21f6ca217", engine_kind="vllm",
                             engine_version="0.7.3.dev138+g21f6ca217", tensor_parallel=8,
                             launch="rocm/vllm-dev:vllm-ds3-staging-0217, vllm serve --tensor-parallel-size 8 "
                                    "--max-model-len 32768"),
    ("h200", "trt-llm"): dict(engine="TensorRT-LLM 0.17.post1.dev (PyTorch backend, trtllm-serve)",
                              engine_kind="trtllm", engine_version="0.17.post1.dev", tensor_parallel=8,
                              expert_parallel=4, moe_tensor_parallel=2,
                              launch="an image built from TensorRT-LLM commit 9b931c0f, trtllm-serve --backend pytorch "
                                     "--max_batch_size 512 --max_num_tokens 16384 --tp_size 8 --ep_size 4"),
}  # fmt: skip
OFFLINE_SETUPS = {
    ("mi300", "vllm"): SETUPS[("mi300x", "vllm")],
    ("h200", "vllm"): SETUPS[("h200", "vllm")],
    ("mi300", "sglang"): {**SETUPS[("mi300x", "sglang")], "launch": "benchmark_throughput.py --backend sglang "
                                                                    "--tensor-parallel-size 8"},
    ("h200", "sglang"): dict(engine="SGLang 0.4.3.post2", engine_kind="sglang", engine_version="0.4.3.post2",
                             tensor_parallel=8, launch="benchmark_throughput.py --backend sglang "
                                                       "--tensor-parallel-size 8 (no DP attention)"),
    ("h200", "trt-llm"): dict(engine="TensorRT-LLM (deepseek branch, C++ engine)", engine_kind="trtllm",
                              engine_version=None, tensor_parallel=8, dtype="bf16",
                              launch="benchmark_throughput_trt.py on an engine built from TensorRT-LLM's deepseek "
                                     "branch (convert_checkpoint.py --dtype bfloat16 --tp_size 8, trtllm-build "
                                     "--gemm_plugin bfloat16 --max_batch_size 2048 --max_num_tokens 16384): BF16 "
                                     "weights, not the checkpoint's FP8; the branch's version is not stated"),
}  # fmt: skip
LATENCIES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2el"}
LITTLE_NOTE_ABOVE = 0.05


def number(text: str) -> float:
    return float(text)


def online_point(row: dict[str, str]) -> dict[str, float]:
    point = {"concurrency": int(row["max_concurrency"]), "request_throughput": number(row["request_throughput"]),
             "output_throughput": number(row["output_throughput"])}  # fmt: skip
    for source, name in LATENCIES.items():
        for stat in ("mean", "median", "p99"):
            point[f"{stat}_{name}_ms"] = number(row[f"{stat}_{source}_ms"])
    return point


def little_gap(point: dict[str, float]) -> float:
    return point["concurrency"] / point["request_throughput"] / (point["mean_e2el_ms"] / 1000) - 1


def layout(setup: dict) -> dict[str, int]:
    return {"tensor_parallel": setup["tensor_parallel"], "pipeline_parallel": 1,
            "data_parallel": setup.get("data_parallel", 1), "expert_parallel": setup.get("expert_parallel", 1),
            "moe_tensor_parallel": setup.get("moe_tensor_parallel", setup["tensor_parallel"])}  # fmt: skip


def layout_text(parallel: dict[str, int]) -> str:
    return (f"TP{parallel['tensor_parallel']} attention-DP{parallel['data_parallel']}, MoE TP"
            f"{parallel['moe_tensor_parallel']} EP{parallel['expert_parallel']}")


def online_tables(rows: list[dict[str, str]]) -> list[dict]:
    groups: dict[tuple, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        output_len = round(number(row["total_output_tokens"]) / number(row["completed"]))
        groups[(row["GPU"], row["backend"], row["dataset_name"], output_len)].append(row)
    tables = []
    for (gpu, backend, dataset, output_len), members in sorted(groups.items()):
        setup = SETUPS[(gpu, backend)]
        parallel = layout(setup)
        points = sorted((online_point(r) for r in members), key=lambda p: p["concurrency"])
        input_lens = sorted({number(r["total_input_tokens"]) / number(r["completed"]) for r in members})
        input_len = round(sum(input_lens) / len(input_lens))
        gaps = {p["concurrency"]: little_gap(p) for p in points}
        shared = dataset == "generated-shared-prefix"
        prompts = ("SGLang's generated-shared-prefix prompts (--gsp-num-groups 10 --gsp-prompts-per-group 50 "
                   "--gsp-system-prompt-len 2000 --gsp-question-len 1200 --gsp-output-len 800): each group of 50 "
                   "shares a 2000-token system prompt, so a prefix cache can skip most of a prompt's prefill; "
                   "input_len is the mean prompt length total_input_tokens / completed "
                   f"({', '.join(f'{x:.1f}' for x in input_lens)})"
                   if shared else
                   f"random prompts of exactly 3200 tokens and outputs of exactly {output_len} "
                   "(--random-range-ratio 1)")  # fmt: skip
        completed = sorted({r["completed"] for r in members})
        notes = (
            f"dstack's DeepSeek-R1 benchmark (raw_data/online_results.csv at the pinned commit; engine details and "
            f"commands from Deepseek-R1/README.md there). {GPUS[gpu]} x8, {setup['launch']}. Layout "
            f"{layout_text(parallel)}. Load: a closed loop, sglang.bench_serving with --max-concurrency "
            f"(request rate inf), {', '.join(completed)} of 500 prompts completed; {prompts}. Latencies are the "
            f"summary's mean, median and p99 (mean_e2e_latency_ms recorded as mean_e2el_ms); std columns left out. "
            f"The CSV's own 'concurrency' column (the mean number of requests in flight) is left out: for "
            f"TensorRT-LLM it reads 111 to 1192 at --max-concurrency 4 to 128, which cannot be. Weights: the "
            f"checkpoint's native FP8 (block-quantised); the KV-cache dtype is not stated. Little's law "
            f"(concurrency / request_throughput vs mean E2E latency) holds to "
            + ", ".join(f"{gap:+.1%} at {level}" for level, gap in gaps.items()) + "."
        )  # fmt: skip
        if any(gap > LITTLE_NOTE_ABOVE for gap in gaps.values()):
            notes += (" Above 5% the loop was not full all the time (the summary's duration includes the ramp-up "
                      "and the drain of the last requests, at 500 prompts and 128 users a large share of the run).")
        if "499" in completed:
            notes += " One request failed (499 of 500 completed)."
        kind = "sharedprefix" if shared else "random"
        slug = (f"dstack-{setup['engine_kind']}-deepseek-r1-8x{GPUS[gpu].lower()}-fp8-{kind}-{input_len}in-"
                f"{output_len}out")
        tables.append({
            "_slug": slug,
            "schema_version": 1,
            "name": f"DeepSeek-R1, {setup['engine']}, 8x {GPUS[gpu]}, FP8 {layout_text(parallel)}, {input_len} in / "
                    f"{output_len} out{' (shared-prefix prompts)' if shared else ''} (dstack benchmark)",
            "model": MODEL, "hardware": GPUS[gpu], "gpus_per_replica": 8, **parallel,
            "engine": setup["engine"], "engine_kind": setup["engine_kind"], "engine_version": setup["engine_version"],
            "dtype": "fp8", "basis": "published", "calibration_set": False, "load": "closed_loop",
            "source": f"{BASE}/raw_data/online_results.csv", "as_of": AS_OF,
            "input_len": input_len, "output_len": output_len,
            **({"shared_prefix_tokens": 2000} if shared else {}),
            "notes": notes, "points": points,
        })  # fmt: skip
    return tables


def offline_tables(rows: list[dict[str, str]]) -> list[dict]:
    groups: dict[tuple, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        groups[(row["GPU"], row["backend"], int(row["input_len"]), int(row["output_len"]))].append(row)
    tables = []
    for (gpu, backend, input_len, output_len), members in sorted(groups.items()):
        setup = OFFLINE_SETUPS[(gpu, backend)]
        dtype = setup.get("dtype", "fp8")
        parallel = layout(setup)
        points = []
        for row in sorted(members, key=lambda r: int(r["num_requests"])):
            elapsed = number(row["elapsed_time"])
            points.append({"concurrency": None, "num_requests": int(row["num_requests"]), "input_len": input_len,
                           "output_len": output_len, "request_throughput": number(row["requests_per_second"]),
                           "output_throughput": float(f"{number(row['total_output_tokens']) / elapsed:.8g}"),
                           "total_token_throughput": number(row["tokens_per_second"])})  # fmt: skip
        tables.append({
            "_slug": f"dstack-{setup['engine_kind']}-deepseek-r1-8x{GPUS[gpu].lower()}-{dtype}-offline-{input_len}in-"
                     f"{output_len}out",
            "schema_version": 1,
            "name": f"DeepSeek-R1, {setup['engine']}, 8x {GPUS[gpu]}, {dtype.upper()} TP8, offline batches, "
                    f"{input_len} in / "
                    f"{output_len} out (dstack benchmark)",
            "model": MODEL, "hardware": GPUS[gpu], "gpus_per_replica": 8, **parallel,
            "engine": setup["engine"], "engine_kind": setup["engine_kind"], "engine_version": setup["engine_version"],
            "dtype": dtype, "basis": "published", "calibration_set": False, "load": "offline",
            "source": f"{BASE}/raw_data/offline_results.csv", "as_of": AS_OF, "input_len": None, "output_len": None,
            "notes": (
                f"dstack's DeepSeek-R1 benchmark (raw_data/offline_results.csv at the pinned commit; engine details "
                f"from Deepseek-R1/README.md there). {GPUS[gpu]} x8, {setup['launch']}; vLLM's benchmark_throughput.py "
                f"(dstack's copy, which also drives SGLang's offline engine; TensorRT-LLM has its own port) "
                f"--max-model-len 32768 with --num-prompts N: N prompts of exactly {input_len} tokens submitted at "
                f"once, each generating exactly {output_len}; one point per N (num_requests). "
                f"request_throughput is the CSV's "
                f"requests_per_second, total_token_throughput its tokens_per_second (prompt and output tokens), "
                f"output_throughput derived as total_output_tokens / elapsed_time. The engine versions are the "
                f"serving runs' (the README does not give the offline runs' separately)."
            ),
            "derived": {"output_throughput": "total_output_tokens / elapsed_time (the CSV's columns)"},
            "points": points,
        })  # fmt: skip
    return tables


LLAMA_COMMIT = "06c957ab51572ca18db9c1f4bb254a9eb86df4d7"
LLAMA_BASE = f"https://github.com/dstackai/benchmarks/blob/{LLAMA_COMMIT}/comparison/h100sxm5_vs_mi300x"
LLAMA_AS_OF = "2024-12-05"  # the last commit that changed csv_data ("Clean directory structure", 85a2fe17)
# The comparison's GPU labels, as its README describes them; "2FP8-amd" rows are not described there and are left out.
LLAMA_SETUPS = {
    "8xH100 1FP8-meta": dict(gpu="H100 SXM", gpus=8, model="meta-llama/Llama-3.1-405B-FP8",
                             version="0.6.3.post2.dev308+gb489fc3c",
                             launch="nvcr.io/nvidia/pytorch:23.10-py3 with vLLM, vllm serve --tensor-parallel-size 8 "
                                    "--max-model-len 91680 (chunked prefill on, max-num-batched-tokens 512, "
                                    "max-num-seqs 512 per the CSV)"),
    "8xMi300x 1FP8-meta": dict(gpu="MI300X", gpus=8, model="meta-llama/Llama-3.1-405B-FP8",
                               version="0.6.3.dev109+gcb3b2b9b.d20241010",
                               launch="ghcr.io/embeddedllm/vllm-rocm:cb3b2b9, vllm serve -tp 8 "
                                      "--enable-chunked-prefill=False --num-scheduler-step 15 --max-num-seqs 1024"),
    "8xMi300x 1FP8-amd": dict(gpu="MI300X", gpus=8, model="amd/Llama-3.1-405B-Instruct-FP8-KV",
                              version="0.6.4.dev4+gc9fc1608",
                              launch="vLLM -tp 8, num-scheduler-step 15 (serving) / 1 (offline), max-num-seqs 1024"),
    "4xMi300x 1FP8-amd": dict(gpu="MI300X", gpus=4, model="amd/Llama-3.1-405B-Instruct-FP8-KV", version=None,
                              launch="vLLM -tp 4, num-scheduler-step 15, max-num-seqs 1024 (the README gives no "
                                     "environment for the 4-GPU runs: version not stated)"),
}  # fmt: skip
LLAMA_SETUPS["8xMi300 1FP8-amd"] = LLAMA_SETUPS["8xMi300x 1FP8-amd"]  # the offline CSV's spelling


def llama_engine(setup: dict) -> dict:
    return {"engine": f"vLLM {setup['version']}" if setup["version"] else "vLLM", "engine_kind": "vllm",
            "engine_version": setup["version"]}


def llama_slug(setup: dict, what: str) -> str:
    return (f"dstack-vllm-llama-3.1-405b-{'amd-fp8-kv' if setup['model'].startswith('amd/') else 'fp8'}-"
            f"{setup['gpus']}x{setup['gpu'].lower().replace(' ', '-')}-{what}")


def llama_table(setup: dict, what: str, title: str, load: str, csv_name: str) -> dict:
    """What every table of the 405B comparison shares: the setup, the engine, the source file, no table-wide shape."""
    return {
        "_slug": llama_slug(setup, what),
        "schema_version": 1,
        "name": f"Llama-3.1-405B FP8 ({setup['model']}), vLLM, {setup['gpus']}x {setup['gpu']}, TP{setup['gpus']}, "
                f"{title} (dstack benchmark)",
        "model": setup["model"], "hardware": setup["gpu"], "gpus_per_replica": setup["gpus"],
        "tensor_parallel": setup["gpus"], "pipeline_parallel": 1, **llama_engine(setup),
        "dtype": "fp8", "basis": "published", "calibration_set": False, "load": load,
        "source": f"{LLAMA_BASE}/csv_data/{csv_name}", "as_of": LLAMA_AS_OF, "input_len": None, "output_len": None,
    }  # fmt: skip


def request_rate_tables(rows: list[dict[str, str]]) -> list[dict]:
    """vLLM benchmark_serving.py at a request rate (Poisson arrivals, no concurrency cap), ShareGPT prompts."""
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if row["gpu"] in LLAMA_SETUPS:
            groups[row["gpu"]].append(row)
    tables = []
    for label, members in sorted(groups.items()):
        setup = LLAMA_SETUPS[label]
        points = []
        for row in sorted(members, key=lambda r: number(r["request_rate"])):
            completed = number(row["completed"])
            point = {"request_rate": number(row["request_rate"]),
                     "input_len": float(f"{number(row['total_input_tokens']) / completed:.8g}"),
                     "output_len": float(f"{number(row['total_output_tokens']) / completed:.8g}"),
                     "request_throughput": number(row["request_throughput"]),
                     "output_throughput": number(row["output_throughput"]),
                     "total_token_throughput": number(row["total_token_throughput"])}  # fmt: skip
            for name in ("ttft", "tpot", "itl"):
                for stat in ("mean", "median", "p99"):
                    point[f"{stat}_{name}_ms"] = number(row[f"{stat}_{name}_ms"])
            points.append(point)
        tables.append({
            **llama_table(setup, "sharegpt-request-rate", "ShareGPT at request rates 16/32/1000", "request_rate",
                          "qps_comparison.csv"),
            "notes": (
                f"dstack's Llama-3.1-405B comparison of 8x H100 SXM5 and MI300X (csv_data/qps_comparison.csv, rows "
                f"'{label}'; environment and commands from the README at the pinned commit). {setup['launch']}. "
                f"Load: vLLM benchmark_serving.py --dataset-name sharegpt --num-prompts 1000 --request-rate QPS "
                f"(Poisson arrivals, no concurrency cap; 1000/s is in effect a burst of all 1000 prompts). Prompts "
                f"and outputs vary in length: each point's input_len/output_len are the means total tokens / "
                f"completed (derived); outputs end at the model's EOS, so the two checkpoints' lengths differ "
                f"(about 121 vs 180 tokens per request for the same prompts). Latencies are the summary's mean, "
                f"median and p99. With 15-step multi-step scheduling the MI300X runs' mean TPOT is far above the "
                f"median (e.g. 1569 vs 418 ms at 16/s for the meta checkpoint): a few requests stall. Little's law "
                f"cannot be checked: an open loop, and the CSV has no end-to-end latency."
            ),
            "derived": {"output_throughput": "the CSV's own; input_len/output_len per point = total tokens / "
                                             "completed"},
            "points": points,
        })  # fmt: skip
    return tables


def llama_offline_tables(rows: list[dict[str, str]]) -> list[dict]:
    groups: dict[tuple, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if row["gpu"] in LLAMA_SETUPS:
            groups[(LLAMA_SETUPS[row["gpu"]]["model"], LLAMA_SETUPS[row["gpu"]]["gpu"],
                    LLAMA_SETUPS[row["gpu"]]["gpus"], row["gpu"], int(row["input_len"]),
                    int(row["output_len"]))].append(row)  # fmt: skip
    tables = []
    for (_, _, _, label, input_len, output_len), members in sorted(groups.items()):
        setup = LLAMA_SETUPS[label]
        points = [{"concurrency": None, "num_requests": int(row["num_requests"]), "input_len": input_len,
                   "output_len": output_len, "request_throughput": number(row["requests_per_second"]),
                   "output_throughput": float(f"{number(row['requests_per_second']) * output_len:.8g}"),
                   "total_token_throughput": number(row["tokens_per_second"])}
                  for row in sorted(members, key=lambda r: int(r["num_requests"]))]  # fmt: skip
        tables.append({
            **llama_table(setup, f"offline-{input_len}in-{output_len}out",
                          f"offline batches, {input_len} in / {output_len} out", "offline",
                          "throughput_comparsion.csv"),
            "notes": (
                f"dstack's Llama-3.1-405B comparison (csv_data/throughput_comparsion.csv, rows '{label}'; commands "
                f"from the README at the pinned commit): vLLM benchmark_throughput.py --input-len {input_len} "
                f"--output-len {output_len} --tensor-parallel-size {setup['gpus']} --max-model-len 91680 "
                f"--num-prompts N (MI300X: --enforce-eager; --num-scheduler-step 15 for the meta checkpoint, 1 "
                f"otherwise). {setup['launch']}. One point per batch size N. request_throughput is the CSV's "
                f"requests_per_second; total_token_throughput its tokens_per_second (prompt and output tokens: "
                f"total_num_tokens = N x (input + output)); output_throughput derived as requests_per_second x "
                f"{output_len}."
            ),
            "derived": {"output_throughput": f"requests_per_second x output_len ({output_len})"},
            "points": points,
        })  # fmt: skip
    return tables


def main(argv: list[str]) -> int:
    online = list(csv.DictReader(open(argv[0], encoding="utf-8-sig")))
    offline = list(csv.DictReader(open(argv[1], encoding="utf-8-sig")))
    for old in OUT.glob("dstack-*.json"):
        old.unlink()
    tables = online_tables(online) + offline_tables(offline)
    if len(argv) == 4:
        tables += request_rate_tables(list(csv.DictReader(open(argv[2], encoding="utf-8-sig"))))
        tables += llama_offline_tables(list(csv.DictReader(open(argv[3], encoding="utf-8-sig"))))
    for document in tables:
        path = OUT / f"{document.pop('_slug')}.json"
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"{len(online)} online rows, {len(offline)} offline rows, {len(tables)} tables", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
