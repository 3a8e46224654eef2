"""A sweep running in a background thread, for the app: progress to read, a cancel to press.

The thread owns its own event loop (``run_sweep`` calls ``asyncio.run``); the app only reads ``progress`` and
``state`` and may set ``cancel``. Cancelling stops new requests; those in flight finish and are stored.

One sweep per target at a time in a process (``target_of``: the server's URL, or the model in process): a second
``start()`` for a busy target is an InputError, and ``running_job(target)`` finds the one that runs (after a page
reload, say) so it can be watched or cancelled. ``unfinished_runs`` lists stored runs of a target that did not
finish (a process that died leaves ``running``), to resume with ``BenchJob(config, resume=run_id)``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infercost import store
from infercost.errors import InputError
from infercost.runner.sweep import Progress, SweepConfig, run_summary, run_sweep

_RUNNING: dict[str, BenchJob] = {}  # target -> the job running against it, in this process
_RUNNING_LOCK = threading.Lock()


def target_of(config: SweepConfig | dict[str, Any]) -> str:
    """What a sweep puts load on: the base URL for a server, ``backend:model`` in process (config or stored dict)."""
    if isinstance(config, SweepConfig):
        backend, options = config.backend, {"base_url": config.options.base_url, "model": config.options.model}
    else:
        backend, options = config.get("backend"), config.get("options") or {}
    if backend == "openai" and options.get("base_url"):
        return str(options["base_url"]).rstrip("/")
    return f"{backend}:{options.get('model')}"


def running_job(target: str) -> BenchJob | None:
    """The job running against ``target`` in this process, if any."""
    with _RUNNING_LOCK:
        job = _RUNNING.get(target)
    return job if job is not None and not job.finished else None


def unfinished_runs(db_path: str | Path | None, target: str) -> list[dict[str, Any]]:
    """Stored runs against ``target`` that did not finish (``running`` or ``interrupted``), newest first. A run that
    says ``running`` while ``running_job(target)`` is None was left by a process that died (or runs elsewhere)."""
    db = store.connect(db_path)
    try:
        runs = store.list_runs(db)
    finally:
        db.close()
    return [run for run in runs if run["status"] in ("running", "interrupted") and run["source"] == "infercost"
            and target_of(run["config"]) == target]


@dataclass
class BenchJob:
    config: SweepConfig
    db_path: str | Path | None = None
    progress: Progress = field(default_factory=Progress)
    cancel: threading.Event = field(default_factory=threading.Event)
    run_id: str | None = None
    error: str | None = None
    finished: bool = False
    resume: str | None = None  # a stored run id to continue (its stored settings are used)
    _thread: threading.Thread | None = None

    @property
    def target(self) -> str:
        return target_of(self.config)

    def start(self) -> BenchJob:
        """Start in the background; an InputError when a sweep against the same target is running already."""
        with _RUNNING_LOCK:
            busy = _RUNNING.get(self.target)
            if busy is not None and not busy.finished:
                raise InputError("base_url", f"a sweep against {self.target} is running already; cancel it first")
            _RUNNING[self.target] = self
        self._thread = threading.Thread(target=self._run, name="bench-job", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.run_id = run_sweep(None if self.resume else self.config, db_path=self.db_path, resume=self.resume,
                                    progress=self.progress, cancel=self.cancel)
        except Exception as error:  # noqa: BLE001 - shown in the app as one line, the app keeps running
            self.error = str(error).splitlines()[0] if str(error) else type(error).__name__
        finally:
            self.finished = True
            with _RUNNING_LOCK:
                if _RUNNING.get(self.target) is self:
                    del _RUNNING[self.target]

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
