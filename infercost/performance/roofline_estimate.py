"""Throughput points for hardware nobody measured: roofline bounds, scaled by what real engines achieve.

A closed loop of ``c`` requests cycles through one prefill each and ``output_len`` decode steps, so one cycle
takes ``c × prefill + output_len × step(c)`` at best. Prefill is bound by compute, a decode step by memory
bandwidth (weights once, plus every request's KV cache). Real engines reach a fraction of the bound: the
``efficiency`` that a measured profile of the nearest setup shows, stated beside every estimate.
Tensor parallelism over ``gpus`` is taken as ideal (bandwidth, compute and memory add up), which an estimate says.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from infercost.performance.roofline import (
    ModelShape,
    decode_step_seconds,
    kv_bytes_per_token,
    prefill_bound_seconds,
    weight_bytes,
)
from infercost.costmodel.selfhost import ThroughputPoint

DEFAULT_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
MEMORY_HEADROOM = 0.9  # activations, CUDA graphs and fragmentation take the rest


@dataclass(frozen=True)
class Hardware:
    bandwidth_gbps: float  # GB/s per GPU
    peak_tflops: float  # dense, per GPU, in the model's dtype
    memory_gb: float  # per GPU
    gpus: int = 1


def fits_in_memory(shape: ModelShape, hw: Hardware, *, dtype: str, concurrency: int, tokens: float) -> bool:
    """Weights plus every request's full KV cache must fit in the GPUs' memory."""
    needed = weight_bytes(shape.n_params, dtype) + concurrency * tokens * kv_bytes_per_token(shape, dtype)
    return needed <= hw.memory_gb * 1e9 * hw.gpus * MEMORY_HEADROOM


def roofline_point(shape: ModelShape, hw: Hardware, *, dtype: str, concurrency: int, input_len: float,
                   output_len: float, efficiency: float = 1.0) -> ThroughputPoint:  # fmt: skip
    """One concurrency's point at ``efficiency`` × the bound (1.0 is the bound itself)."""
    bandwidth, tflops = hw.bandwidth_gbps * hw.gpus, hw.peak_tflops * hw.gpus
    prefill = prefill_bound_seconds(shape, batch=1, input_len=int(input_len), dtype=dtype, bandwidth_gbps=bandwidth,
                                    peak_tflops=tflops) / efficiency  # fmt: skip
    step = decode_step_seconds(shape, batch=concurrency, context=input_len + output_len / 2, dtype=dtype,
                               bandwidth_gbps=bandwidth) / efficiency  # fmt: skip
    cycle = concurrency * prefill + output_len * step
    tpot = (cycle - prefill) / max(output_len - 1, 1)
    latency = {"mean_ttft_ms": prefill * 1e3, "mean_tpot_ms": tpot * 1e3, "mean_e2el_ms": cycle * 1e3}
    return ThroughputPoint(concurrency, concurrency / cycle, concurrency * output_len / cycle, latency)


def roofline_points(shape: ModelShape, hw: Hardware, *, dtype: str, input_len: float, output_len: float,
                    efficiency: float = 1.0, concurrencies: Sequence[int] = DEFAULT_CONCURRENCIES) -> list[ThroughputPoint]:  # fmt: skip
    """Points at each concurrency whose KV caches fit; none if even the weights do not."""
    tokens = input_len + output_len
    return [
        roofline_point(
            shape, hw, dtype=dtype, concurrency=c, input_len=input_len, output_len=output_len, efficiency=efficiency
        )  # fmt: skip
        for c in concurrencies
        if fits_in_memory(shape, hw, dtype=dtype, concurrency=c, tokens=tokens)
    ]


def measured_efficiency(points: Sequence[ThroughputPoint], shape: ModelShape, hw: Hardware, *, dtype: str,
                        input_len: float, output_len: float) -> float:  # fmt: skip
    """Median of measured / bound request throughput over a profile's points: how close that engine came."""
    ratios = [
        p.request_throughput
        / roofline_point(
            shape, hw, dtype=dtype, concurrency=int(p.concurrency), input_len=input_len, output_len=output_len
        ).request_throughput  # fmt: skip
        for p in points
        if p.request_throughput > 0
    ]
    if not ratios:
        raise ValueError("no measured point with throughput > 0")
    return statistics.median(ratios)
