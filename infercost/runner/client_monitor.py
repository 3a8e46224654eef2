"""Was the client the bottleneck? The runner's own CPU use and event-loop lag while a level runs, and GPU telemetry
(NVML) where this machine has NVIDIA GPUs.

A level is flagged when the client, not the server, set the pace: its process used (nearly) a whole core (the event
loop is one thread, so one core is its ceiling), or the loop's periodic timer ran late by more than a request's
timing can tolerate (a late loop reads bytes late, which inflates TTFT and ITL and throttles how fast it sends).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

TICK_S = 0.01  # the loop-lag probe's period
CPU_BUSY_FRACTION = 0.9  # of one core
LAG_P95_LIMIT_MS = 20.0  # a P95 lateness above this means the loop could not keep up with the sockets
GPU_SAMPLE_S = 0.5


async def _probe_lag(lags_s: list[float], stop: asyncio.Event) -> None:
    """Sleep TICK_S again and again; how much later than asked each wake-up came is the loop's lag."""
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(TICK_S)
        lags_s.append(max(0.0, time.perf_counter() - asked - TICK_S))


def client_verdict(cpu_s: float, wall_s: float, lags_s: list[float]) -> dict[str, Any]:
    """Pure: the numbers and the flag. ``cpu_fraction`` is process CPU time over wall time (1.0 = one whole core)."""
    cpu_fraction = cpu_s / wall_s if wall_s > 0 else 0.0
    lag_ms = np.asarray(lags_s or [0.0]) * 1e3
    p95_lag_ms, max_lag_ms = float(np.percentile(lag_ms, 95)), float(lag_ms.max())
    reasons = []
    if cpu_fraction >= CPU_BUSY_FRACTION:
        reasons.append(f"the client used {cpu_fraction:.0%} of a core (its event loop runs on one)")
    if p95_lag_ms > LAG_P95_LIMIT_MS:
        reasons.append(f"its event loop ran {p95_lag_ms:.1f} ms late at P95 (limit {LAG_P95_LIMIT_MS:g} ms)")
    return {"cpu_fraction": cpu_fraction, "p95_loop_lag_ms": p95_lag_ms, "max_loop_lag_ms": max_lag_ms,
            "client_bound": bool(reasons), "reasons": reasons}


def energy_kwh_per_mtok(mean_power_w: float, duration_s: float, output_tokens: int) -> float | None:
    """Measured energy per million output tokens: the GPUs' whole board power (idle draw included, as the
    electricity bill sees it) over the level's duration, divided by the tokens it produced."""
    if output_tokens <= 0 or duration_s <= 0:
        return None
    return mean_power_w * duration_s / 3.6e6 / output_tokens * 1e6


class GpuSampler:
    """Utilisation, memory and power of every local NVIDIA GPU, sampled on a thread; "no GPU: skipped" otherwise."""

    def __init__(self) -> None:
        self.samples: list[dict[str, float]] = []
        self.skipped: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import pynvml  # nvidia-ml-py: optional

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        except ImportError:
            self.skipped = "no GPU: skipped (nvidia-ml-py is not installed; pip install nvidia-ml-py to sample one)"
            return
        except Exception as error:  # noqa: BLE001  no driver or no device: both mean "no GPU here"
            self.skipped = f"no GPU: skipped (NVML could not start: {error})"
            return
        if not self._handles:
            self.skipped = "no GPU: skipped (NVML found no device)"

    def start(self) -> None:
        if self.skipped is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="nvml-sampler")
            self._thread.start()

    def _run(self) -> None:
        nvml = self._nvml
        while not self._stop.wait(GPU_SAMPLE_S):
            for i, handle in enumerate(self._handles):
                util = nvml.nvmlDeviceGetUtilizationRates(handle)
                memory = nvml.nvmlDeviceGetMemoryInfo(handle)
                self.samples.append({"gpu": i, "t": time.perf_counter(), "util_pct": float(util.gpu),
                                     "memory_used_gib": memory.used / 2**30,
                                     "power_w": nvml.nvmlDeviceGetPowerUsage(handle) / 1e3})

    def stop(self) -> dict[str, Any]:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
        if self.skipped is not None:
            return {"status": self.skipped}
        if not self.samples:
            return {"status": "sampled", "samples": 0}
        util = [s["util_pct"] for s in self.samples]
        power_by_time: dict[float, float] = {}
        for s in self.samples:  # one tick samples every GPU: sum their power
            power_by_time[round(s["t"], 1)] = power_by_time.get(round(s["t"], 1), 0.0) + s["power_w"]
        return {"status": "sampled", "samples": len(self.samples), "mean_util_pct": float(np.mean(util)),
                "max_memory_used_gib": max(s["memory_used_gib"] for s in self.samples),
                "mean_power_w": float(np.mean(list(power_by_time.values())))}


@contextlib.asynccontextmanager
async def watching_client(result: dict[str, Any], *, gpu: bool = False) -> AsyncIterator[None]:
    """Around a level: fills ``result`` with ``client_verdict`` and, with ``gpu``, the NVML summary under ``gpu``."""
    lags: list[float] = []
    stop = asyncio.Event()
    sampler = GpuSampler() if gpu else None
    if sampler is not None:
        sampler.start()
    probe = asyncio.ensure_future(_probe_lag(lags, stop))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        yield
    finally:
        cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
        stop.set()
        await probe
        result.update(client_verdict(cpu_s, wall_s, lags))
        if sampler is not None:
            result["gpu"] = sampler.stop()
