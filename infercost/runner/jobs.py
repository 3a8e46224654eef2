"""A sweep running in a background thread, for the app: progress to read, a cancel to press.

The thread owns its own event loop (``run_sweep`` calls ``asyncio.run``); the app only reads ``progress`` and
``state`` and may set ``cancel``. Cancelling stops new requests; those in flight finish and are stored.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infercost.runner.sweep import Progress, SweepConfig, run_summary, run_sweep


@dataclass
class BenchJob:
    config: SweepConfig
    db_path: str | Path | None = None
    progress: Progress = field(default_factory=Progress)
    cancel: threading.Event = field(default_factory=threading.Event)
    run_id: str | None = None
    error: str | None = None
    finished: bool = False
    _thread: threading.Thread | None = None

    def start(self) -> BenchJob:
        self._thread = threading.Thread(target=self._run, name="bench-job", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.run_id = run_sweep(self.config, db_path=self.db_path, progress=self.progress, cancel=self.cancel)
        except Exception as error:  # noqa: BLE001 - shown in the app as one line, the app keeps running
            self.error = str(error).splitlines()[0] if str(error) else type(error).__name__
        finally:
            self.finished = True

    def wait(self, timeout_s: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout_s)
        return self.finished

    @property
    def fraction(self) -> float:
        """Share of the sweep done: finished levels plus the current level's share."""
        p = self.progress
        if self.finished:
            return 1.0
        if not p.levels:
            return 0.0
        within = p.done / p.planned if p.planned else 0.0
        return min(1.0, (p.level - 1 + within) / p.levels)

    def summary(self) -> dict[str, Any] | None:
        return run_summary(self.db_path, self.run_id) if self.run_id else None


def comparison_rows(db_path: str | Path | None, run_ids: list[str]) -> list[dict[str, Any]]:
    """One row per (run, level) with the numbers the app plots: the load, throughputs, per-user speed, latencies."""
    rows = []
    for run_id in run_ids:
        summary = run_summary(db_path, run_id)
        for level in summary["levels"]:
            load = level.get("concurrency") or level.get("batch_size") or level.get("rate")
            rows.append({"run": f"{run_id} ({summary['model']})", "load": load, **{
                key: level.get(key) for key in (
                    "output_throughput", "request_throughput", "median_user_tokens_per_s", "completed", "failed",
                    "p50_ttft_ms", "p95_ttft_ms", "p99_ttft_ms", "p50_tpot_ms", "p95_tpot_ms", "p99_tpot_ms",
                    "median_ttft_ms", "median_tpot_ms")}})
    return rows
