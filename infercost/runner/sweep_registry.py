"""Sweeps running in this process, one per target, so any page run (another tab, a reload) finds them again.

The app starts each sweep in a background thread (``BenchJob``); without a process-wide registry a reload or a
second click left a sweep running with nobody able to see or cancel it, and two sweeps measured one server at once
(each skewing the other's numbers). No Streamlit here: the app keeps the one ``SWEEPS`` and reads it on every rerun.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field

from infercost.errors import InputError
from infercost.runner.jobs import BenchJob
from infercost.runner.sweep import SweepConfig

IN_PROCESS = "in process (transformers)"  # one in-process sweep at a time: they share this machine's cores


def target_of(config: SweepConfig) -> str:
    """What a sweep measures: a server URL, or this process itself."""
    if config.backend == "transformers":
        return IN_PROCESS
    return (config.options.base_url or "").strip().rstrip("/") or "(no URL)"


@dataclass
class RunningSweep:
    target: str
    job: BenchJob
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    started_at: float = field(default_factory=time.time)

    @property
    def running(self) -> bool:
        return not self.job.finished


class SweepRegistry:
    """At most one running sweep per target; finished ones stay until the next sweep on that target replaces them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sweeps: dict[str, RunningSweep] = {}

    def start(self, job: BenchJob) -> RunningSweep:
        """Start ``job`` unless a sweep against the same target is running (an InputError that says so)."""
        target = target_of(job.config)
        with self._lock:
            current = self._sweeps.get(target)
            if current is not None and current.running:
                raise InputError("target", f"a sweep against {target} is already running: follow or cancel it below")
            entry = RunningSweep(target=target, job=job.start())
            self._sweeps[target] = entry
            return entry

    def running(self) -> list[RunningSweep]:
        with self._lock:
            return [entry for entry in self._sweeps.values() if entry.running]

    def busy(self, target: str) -> bool:
        with self._lock:
            entry = self._sweeps.get(target)
            return entry is not None and entry.running

    def find(self, sweep_id: str) -> RunningSweep | None:
        with self._lock:
            return next((entry for entry in self._sweeps.values() if entry.id == sweep_id), None)


SWEEPS = SweepRegistry()
