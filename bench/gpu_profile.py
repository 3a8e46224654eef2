"""Measure a model in process on a GPU at fixed batch sizes and write a bundled *measured* throughput profile.

    python -m bench.gpu_profile                      # random:llama-3.1-8b, bf16, batches 1,8,32,64, 512 in / 128 out
    python -m bench.gpu_profile --device cpu --model random:tiny-llama --bandwidth-gbps 20 --out /tmp/p.json

Each batch size: one warm-up batch (discarded), then ``--repeats`` timed batches; prefill (TTFT) and every decode
step are timed with CUDA synchronised. Printed and stored per batch: throughput, TTFT, TPOT, and the percentage of
the memory-bandwidth roofline the decode reached (bandwidth and peak FLOPs from the pricing catalog's GPU specs, or
``--bandwidth-gbps`` / ``--peak-tflops``). A time budget keeps the run under 8 minutes on an H200: batches not
reached are left out and the file says so. Output: ``infercost/performance/data/measured/<slug>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from infercost.performance.roofline import (
    ModelShape,
    decode_tokens_per_s,
    prefill_bound_seconds,
    roofline_pct,
)
from infercost.pricing import canonical_gpu_name
from infercost.runner.hardware import fingerprint, gpu_limits
from infercost.runner.inprocess import BatchTiming, InProcessModel, load_model, make_prompt_ids

MEASURED_DIR = Path(__file__).resolve().parents[1] / "infercost" / "performance" / "data" / "measured"
SHORT_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="random:llama-3.1-8b")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="auto", help="auto: bf16 on CUDA, float32 on CPU")
    parser.add_argument("--batches", default="1,8,32,64", help="comma-separated batch sizes")
    parser.add_argument("--input-len", type=int, default=512)
    parser.add_argument("--output-len", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bandwidth-gbps", type=float, help="memory bandwidth, GB/s (default: the GPU's spec)")
    parser.add_argument("--peak-tflops", type=float, help="dense bf16 peak, TFLOPS (default: the GPU's spec)")
    parser.add_argument("--time-budget-s", type=float, default=390, help="stop starting new batches after this")
    parser.add_argument("--out", type=Path, help="output file (default: bundled/measured/<slug>.json)")
    return parser.parse_args(argv)


def hardware_name(facts: dict[str, Any], device: str) -> str:
    if device.startswith("cuda") and facts["gpus"]:
        driver_name = facts["gpus"][0]["name"]
        return canonical_gpu_name(driver_name) or driver_name
    return facts["cpu"]


def hardware_limits(facts: dict[str, Any], args: argparse.Namespace) -> tuple[float | None, float | None]:
    """(bandwidth GB/s, peak TFLOPS): the flags, else the catalog's datasheet figures for this GPU, else None."""
    limits = gpu_limits(facts) if args.device.startswith("cuda") else None
    bandwidth = args.bandwidth_gbps or (limits.memory_bandwidth_gbps if limits else None)
    peak = args.peak_tflops or (limits.peak_bf16_tflops if limits else None)
    return bandwidth, peak


def measure_batch(model: InProcessModel, batch: int, args: argparse.Namespace) -> tuple[list[BatchTiming], float]:
    """Warm-up, then the timed repeats; also the peak device memory in GiB (0 on CPU)."""
    import torch

    prompts = [make_prompt_ids(model, args.input_len, seed=batch * 1000 + i) for i in range(batch)]
    model.generate_timed(prompts, max_new_tokens=min(args.output_len, 4))  # warm-up, discarded
    if model.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(model.device)
    timings = [model.generate_timed(prompts, args.output_len) for _ in range(args.repeats)]
    peak = torch.cuda.max_memory_allocated(model.device) / 2**30 if model.device.type == "cuda" else 0.0
    return timings, peak


def point(batch: int, timings: list[BatchTiming], shape: ModelShape, args: argparse.Namespace, dtype: str,
          limits: tuple[float | None, float | None]) -> dict[str, Any]:
    """One concurrency point with vLLM's field names: every request of a batch shares its batch's timings, so the
    percentiles run over repeats; throughputs use the median batch time."""
    ttft_ms = [t.ttft_s * 1e3 for t in timings]
    tpot_ms = [t.tpot_s * 1e3 for t in timings]
    e2e_s = statistics.median(t.e2e_s for t in timings)
    decode_tps = batch / (statistics.median(tpot_ms) / 1e3)
    result = {
        "concurrency": batch,
        "completed": batch * len(timings),
        "request_throughput": batch / e2e_s,
        "output_throughput": batch * args.output_len / e2e_s,
        "total_token_throughput": batch * (args.input_len + args.output_len) / e2e_s,
        "mean_ttft_ms": statistics.fmean(ttft_ms), "median_ttft_ms": statistics.median(ttft_ms),
        "p95_ttft_ms": percentile(ttft_ms, 95),
        "mean_tpot_ms": statistics.fmean(tpot_ms), "median_tpot_ms": statistics.median(tpot_ms),
        "p95_tpot_ms": percentile(tpot_ms, 95),
        "decode_tokens_per_s": decode_tps,
        "prefill_tokens_per_s": batch * args.input_len / (statistics.median(ttft_ms) / 1e3),
        "roofline_pct": None, "prefill_roofline_pct": None,
    }
    bandwidth, peak = limits
    if bandwidth:
        context = args.input_len + args.output_len / 2  # mean KV length over the decode
        bound = decode_tokens_per_s(shape, batch=batch, context=context, dtype=dtype, bandwidth_gbps=bandwidth)
        result.update(roofline_decode_tokens_per_s=bound, roofline_pct=roofline_pct(decode_tps, bound))
    if bandwidth and peak:
        bound_s = prefill_bound_seconds(shape, batch=batch, input_len=args.input_len, dtype=dtype,
                                        bandwidth_gbps=bandwidth, peak_tflops=peak)
        result["prefill_roofline_pct"] = roofline_pct(bound_s, statistics.median(ttft_ms) / 1e3)  # time: bound/real
    return result


def percentile(values: list[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), without numpy."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def slug(*parts: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", "-".join(parts).lower()).strip("-")


def render(points: list[dict[str, Any]]) -> str:
    columns = [("batch", "concurrency", "{:>5}"), ("TTFT ms", "median_ttft_ms", "{:>9.1f}"),
               ("TPOT ms", "median_tpot_ms", "{:>8.2f}"), ("out tok/s", "output_throughput", "{:>10.1f}"),
               ("decode tok/s", "decode_tokens_per_s", "{:>12.1f}"),
               ("roofline tok/s", "roofline_decode_tokens_per_s", "{:>14.1f}"),
               ("% roofline", "roofline_pct", "{:>10.1f}"), ("prefill %", "prefill_roofline_pct", "{:>9.1f}")]
    lines = ["  ".join(f"{title:>{len(fmt.format(0))}}" for title, _key, fmt in columns)]
    for row in points:
        cells = []
        for _title, key, fmt in columns:
            value = row.get(key)
            cells.append(fmt.format(value) if value is not None else f"{'-':>{len(fmt.format(0))}}")
        lines.append("  ".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    facts = fingerprint()
    model = load_model(args.model, dtype=args.dtype, device=args.device)
    print(f"loaded {args.model} on {model.device} as {model.info['dtype']} in {time.monotonic() - started:.1f} s",
          file=sys.stderr)
    dtype = model.info["dtype"]
    shape = model.shape
    hardware = hardware_name(facts, str(model.device))
    limits = hardware_limits(facts, args)
    points, notes = [], []
    for batch in (int(b) for b in args.batches.split(",")):
        if time.monotonic() - started > args.time_budget_s:
            notes.append(f"batch {batch} not measured: time budget of {args.time_budget_s:.0f} s spent")
            continue
        try:
            timings, peak_gib = measure_batch(model, batch, args)
        except RuntimeError as error:  # out of memory: the batches that fit still count
            notes.append(f"batch {batch} failed: {str(error).splitlines()[0][:200]}")
            continue
        points.append({**point(batch, timings, shape, args, dtype, limits), "peak_memory_gib": peak_gib})
        print(render(points[-1:]).splitlines()[-1], file=sys.stderr)
    print(render(points))
    for note in notes:
        print(note, file=sys.stderr)
    engine = f"transformers {model.info['transformers']}"
    gpus = f"1x {hardware}" if model.device.type == "cuda" else "cpu"
    short = SHORT_DTYPES.get(dtype, dtype)
    document = {
        "schema_version": 1,
        "name": f"{args.model} ({'random weights, ' if model.info['random_weights'] else ''}{engine}, eager), "
                f"{gpus}, {short}, {args.input_len} in / {args.output_len} out",
        "model": args.model, "hardware": hardware, "gpus_per_replica": 1, "engine": "transformers",
        "engine_version": model.info["transformers"], "dtype": short, "basis": "measured", "run_id": None,
        "source": "bench/gpu_profile.py", "as_of": dt.date.today().isoformat(),
        "fingerprint": {**facts, "engine": model.info}, "input_len": args.input_len, "output_len": args.output_len,
        "repeats": args.repeats, "memory_bandwidth_gbps": limits[0], "peak_tflops": limits[1],
        "notes": "Fixed batches in process (concurrency = batch size); warm-up discarded; TTFT is the batch's "
                 "prefill, TPOT its mean decode step; percentiles over repeats; roofline_pct is decode tokens/s "
                 "over the memory-bandwidth bound at the mean context. " + " ".join(notes),
        "points": points,
    }
    name = slug("transformers", args.model.removeprefix("random:"), gpus, short,
                f"{args.input_len}in-{args.output_len}out")
    out = args.out or MEASURED_DIR / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0 if points else 1


if __name__ == "__main__":
    raise SystemExit(main())
