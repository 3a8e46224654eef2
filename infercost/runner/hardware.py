"""The hardware and software a measurement ran on, so a number always comes with what produced it.

No personal data: no hostname, user name or paths; only models, counts, sizes and versions.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

import psutil

_NVIDIA_SMI_TIMEOUT_S = 10


def fingerprint() -> dict[str, Any]:
    """CPU, memory, GPUs and library versions, as plain JSON-able data."""
    import torch
    import transformers

    return {
        "cpu": cpu_model(),
        "cpu_cores_logical": os.cpu_count(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "memory_bytes": psutil.virtual_memory().total,
        "os": platform.system(),
        "machine": platform.machine(),
        "gpus": gpus(),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
    }


def cpu_model() -> str:
    """``model name`` from /proc/cpuinfo on Linux; what ``platform`` knows elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpus() -> list[dict[str, Any]]:
    """One entry per CUDA device: torch's view, with the driver's (nvidia-smi) where it is installed."""
    import torch

    if not torch.cuda.is_available():
        return []
    smi = _nvidia_smi("name,memory.total,driver_version,power.limit")
    found = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        entry: dict[str, Any] = {
            "name": props.name,
            "memory_bytes": props.total_memory,
            "compute_capability": f"{props.major}.{props.minor}",
            "multiprocessors": props.multi_processor_count,
        }
        if index < len(smi):
            _name, memory_mib, driver, power_limit = smi[index]
            entry.update(driver=driver, memory_total_mib=_number(memory_mib), power_limit_w=_number(power_limit))
        found.append(entry)
    return found


@dataclass(frozen=True)
class GpuLimits:
    """What bounds a GPU: the catalog's datasheet figures for the GPU this machine has."""

    gpu: str  # the catalog's name, e.g. "H100 SXM"
    memory_bandwidth_gbps: float
    peak_bf16_tflops: float


def gpu_limits(facts: dict[str, Any] | None = None, index: int = 0) -> GpuLimits | None:
    """Bandwidth and peak compute of this machine's GPU from the pricing catalog; None without a GPU or for one the
    catalog does not list (then pass the figures by hand)."""
    from infercost.pricing import bundled_gpu_specs, canonical_gpu_name

    found = (facts or fingerprint())["gpus"]
    if index >= len(found):
        return None
    name = canonical_gpu_name(found[index]["name"])
    spec = next((s for s in bundled_gpu_specs() if s.gpu == name), None)
    if spec is None:
        return None
    return GpuLimits(spec.gpu, spec.memory_bandwidth_gbps, spec.bf16_dense_tflops)


def gpu_power_watts(index: int = 0) -> float | None:
    """Power draw of one GPU now, from nvidia-smi; None without it."""
    rows = _nvidia_smi("power.draw")
    if index >= len(rows):
        return None
    return _number(rows[index][0])


def _nvidia_smi(fields: str) -> list[list[str]]:
    """Rows of ``nvidia-smi --query-gpu`` as strings; empty when nvidia-smi is absent or fails."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return []
    try:
        result = subprocess.run([binary, f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                                capture_output=True, text=True, timeout=_NVIDIA_SMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    return [[cell.strip() for cell in line.split(",")] for line in result.stdout.splitlines() if line.strip()]


def _number(text: str) -> float | None:
    """nvidia-smi prints ``[N/A]`` or ``[Not Supported]`` for what a GPU does not report."""
    try:
        return float(text)
    except ValueError:
        return None
