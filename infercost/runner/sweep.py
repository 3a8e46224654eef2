"""A sweep: levels of load against one backend, every request stored as it ends, resumable after a kill.

Three steps, kept apart: ``run_sweep`` records raw per-request facts into the store, ``calculate_metrics`` (pure)
summarises a level from what the store holds, and ``run_summary`` reports a run (median over repeats).

A measured request is stored as ``in_flight`` when it is sent and replaced by its outcome when it ends. A resumed
level first settles what a killed session left in flight (sent again, or failed as ``interrupted`` where the level
is bounded by time), and does not warm up again once its measurement had started.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import random
import sys
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from infercost import store
from infercost.errors import InputError
from infercost.runner.backends import BACKENDS, BATCHED_BACKENDS, Backend, BackendOptions
from infercost.runner.client_monitor import energy_kwh_per_mtok, watching_client
from infercost.runner.consistency import agreement, same_prompt_outputs
from infercost.runner.metrics import calculate_metrics, combine_repeats, shape_warnings, ttft_by_input_length
from infercost.runner.patterns import PATTERNS
from infercost.runner.records import IN_FLIGHT, MAX_REQUEST_TOKENS, RequestRecord, RequestSpec
from infercost.runner.soak import soak_summary
from infercost.runner.writer import RecordWriter


@dataclass
class SweepConfig:
    """What to measure. Stored with the run (as JSON) so ``--resume`` can continue it exactly."""

    backend: str
    options: BackendOptions
    pattern: str = "concurrency"  # concurrency | single | batch | rate
    levels: list[float] = field(default_factory=lambda: [1, 5, 20, 50])  # streams, batch sizes or requests/s
    input_tokens: int = 128
    output_tokens: int = 128
    mixed: tuple[int, int, float] | None = None  # (short, long, fraction long) input lengths instead of one
    requests: int | None = None  # per level and repeat; default: enough for a few rounds at the level's load
    duration_s: float | None = None  # per level and repeat: stop sending new requests after this long
    warmup: int | None = None  # per level, excluded from metrics; default: one per stream (opens the connections)
    repeats: int = 1
    seed: int = 0
    slo_ms: dict[str, float] = field(default_factory=dict)
    window_s: float | None = None  # soak: summarise each level per window of this many seconds, and test for drift
    input_lengths: list[int] | None = None  # input-length sweep: every level cycles through these prompt lengths
    consistency: int | None = None  # after each level: the same prompt this many times at temperature 0, compared

    def __post_init__(self) -> None:
        _check(self.backend in BACKENDS, "backend", f"{self.backend!r} is not one of {', '.join(BACKENDS)}")
        _check(self.pattern in PATTERNS, "pattern", f"{self.pattern!r} is not one of {', '.join(PATTERNS)}")
        if self.pattern == "single":
            self.levels = [1]
        if self.backend in BATCHED_BACKENDS:  # in process there is no server to queue requests: fixed batches
            _check(self.pattern != "rate", "pattern", "the in-process backend runs fixed batches; rate needs a server")
            self.pattern = "batch" if self.pattern == "concurrency" else self.pattern
        _check(bool(self.levels) and all(v > 0 for v in self.levels), "concurrency", "levels must be positive")
        for name in ("input_tokens", "output_tokens"):  # a count over the bound would not fit a store's integer
            _check(1 <= getattr(self, name) <= MAX_REQUEST_TOKENS, name, f"must be from 1 to {MAX_REQUEST_TOKENS:,}")
        _check(self.repeats >= 1, "repeats", "must be at least 1")
        _check(self.requests is None or self.requests >= 1, "requests", "must be at least 1")
        _check(self.duration_s is None or self.duration_s > 0, "duration", "must be positive")
        _check(self.warmup is None or self.warmup >= 0, "warmup", "must be 0 or more")
        _check(self.consistency is None or self.consistency >= 2, "consistency", "needs at least 2 requests")
        _check(self.window_s is None or self.window_s > 0, "windows", "must be positive (seconds per window)")
        if self.input_lengths is not None:
            _check(len(self.input_lengths) >= 1 and all(MAX_REQUEST_TOKENS >= int(n) == n >= 1
                                                        for n in self.input_lengths),
                   "input_tokens", f"lengths must be whole numbers from 1 to {MAX_REQUEST_TOKENS:,}")
            _check(self.mixed is None, "mixed", "give either --mixed or several --input-tokens, not both")
        if self.mixed is not None:
            short, long, fraction = self.mixed
            _check(1 <= short and 1 <= long and 0 <= fraction <= 1, "mixed",
                   "need SHORT:LONG:FRACTION, e.g. 128:2048:0.2")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepConfig:
        data = dict(data)
        data["options"] = BackendOptions(**data["options"])
        if data.get("mixed") is not None:
            data["mixed"] = tuple(data["mixed"])
        return cls(**data)

    def requests_per_level(self, load: float) -> int | None:
        if self.requests is not None:
            return self.requests
        if self.duration_s is not None:
            return None
        return max(10, math.ceil(10 * load)) if self.pattern == "rate" else max(10, 3 * int(load))

    def warmup_per_level(self, load: float) -> int:
        if self.warmup is not None:
            return self.warmup
        return 0 if self.pattern == "rate" else max(1, int(load))


def parse_levels(text: str, field_name: str = "concurrency", highest: float | None = None) -> list[float]:
    """``"1,5,20,50"`` to numbers; the CLI and the app read load levels the same way (``highest``: a caller's own
    ceiling under ``LEVEL_BOUNDS``, said in the same message)."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(field_name, f"expected comma-separated numbers, got {text!r}") from None
    _check(bool(values), field_name, "give at least one value")
    low, high, unit = LEVEL_BOUNDS[field_name]
    high = min(high, highest) if highest is not None else high
    for value in values:  # inf would never finish a level, 1e-300 requests/s would wait forever for the first
        _check(low <= value <= high, field_name, f"each level must be from {low:g} to {high:g} {unit} (got {value:g})")
    return values


LEVEL_BOUNDS = {  # field -> (lowest, highest, unit): a level a sweep can finish in hours, on one client machine
    "concurrency": (1, 100_000, "streams or batch size"),
    "rate": (0.001, 100_000, "requests/s"),
}


def _check(ok: bool, field_name: str, reason: str) -> None:
    if not ok:
        raise InputError(field_name, reason)


@dataclass
class Progress:
    """Counters a progress bar or the app reads; ``on_change`` is called on every update (keep it cheap)."""

    level: int = 0
    levels: int = 0
    load: float = 0
    done: int = 0
    failed: int = 0
    planned: int | None = None
    phase: str = "starting"
    run_id: str | None = None  # known once the run is stored, before the first request
    on_change: Callable[[Progress], None] | None = None

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)


def request_seed(config: SweepConfig, idx: int, repeat: int, seq: int, phase: str) -> int:
    """Stable across processes (unlike ``hash``): a resumed sweep rebuilds the very same prompts."""
    return zlib.crc32(f"{config.seed}/{idx}/{repeat}/{seq}/{phase}".encode())


def spec_for(config: SweepConfig, backend: Backend, idx: int, repeat: int, seq: int, phase: str) -> RequestSpec:
    """The same (level, repeat, seq) always gives the same request, so a resumed sweep re-sends what was lost."""
    seed = request_seed(config, idx, repeat, seq, phase)
    n_in = config.input_tokens
    if config.input_lengths:  # each length in turn, so every length is measured all through the level
        n_in = config.input_lengths[seq % len(config.input_lengths)]
    elif config.mixed is not None:
        short, long, fraction = config.mixed
        n_in = long if random.Random(seed).random() < fraction else short
    return RequestSpec(seq=seq, prompt=backend.make_prompt(n_in, seed), input_len=n_in, output_len=config.output_tokens)


def _specs(config: SweepConfig, backend: Backend, idx: int, repeat: int, seqs: Iterator[int], phase: str):
    return (spec_for(config, backend, idx, repeat, seq, phase) for seq in seqs)


def _pending_seqs(total: int | None, stored: set[int]) -> Iterator[int]:
    """Sequence numbers still to send: the missing ones of a count-bounded level, or new ones past the last."""
    if total is not None:
        return iter([seq for seq in range(total) if seq not in stored])
    start = max(stored) + 1 if stored else 0
    return iter(range(start, 1 << 62))


@contextlib.contextmanager
def quiet_interpreter() -> Iterator[None]:
    """While measuring: no cyclic garbage collection pauses (records are freed by reference counting; a collection
    runs after the level), and a short GIL switch interval so the record-writer thread can never hold the event
    loop off a socket for the default 5 ms."""
    interval = sys.getswitchinterval()
    gc.disable()
    sys.setswitchinterval(0.0002)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.enable()
        gc.collect()


class Sweep:
    """One process working on one run: a backend, a record writer and the run's plan."""

    def __init__(self, config: SweepConfig, db_path: str | Path | None, run_id: str | None,
                 progress: Progress, cancel: threading.Event) -> None:
        self.config, self.db_path, self.run_id = config, db_path, run_id
        self.progress, self.cancel = progress, cancel
        self.db = store.connect(db_path)
        self.backend: Backend = BACKENDS[config.backend](config.options)
        self.writer: RecordWriter | None = None
        self.session = 0

    async def run(self) -> None:
        """Start the backend first: a server that cannot be reached leaves no empty run behind."""
        secrets = self.config.options.secrets()
        self.writer = RecordWriter(self.db_path, secrets)
        try:
            engine = await self.backend.start()
            if self.run_id is None:
                self.run_id = create_run(self.config, self.db_path, engine)
            elif not store.get_run(self.db, self.run_id)["engine"]:
                store.set_run_engine(self.db, self.run_id, engine, secrets)
            self.progress.run_id = self.run_id
            self.session = store.next_session(self.db, self.run_id)
            store.set_run_status(self.db, self.run_id, "running")
            levels = store.get_levels(self.db, self.run_id)
            self.progress.levels = len(levels)
            for level in levels:
                if self.cancel.is_set():
                    break
                if level["status"] != "done":
                    await self.run_level(level)
        finally:
            await self.backend.close()
            self.writer.close()

    async def run_level(self, level: dict[str, Any]) -> None:
        idx, repeat, load = level["idx"], level["repeat"], level["load"]
        pattern = PATTERNS["batch" if self.backend.batched else self.config.pattern]
        total = self.config.requests_per_level(load)
        resumed = bool(store.stored_seqs(self.db, self.run_id, idx, repeat))  # its measurement had started
        store.settle_in_flight(self.db, self.run_id, idx, repeat, resend=total is not None)
        stored = store.stored_seqs(self.db, self.run_id, idx, repeat)
        p = self.progress
        p.level, p.load, p.done, p.failed = idx * self.config.repeats + repeat + 1, load, len(stored), 0
        p.planned = total
        await self._warm_up(pattern, idx, repeat, load, resumed)
        p.phase = "measuring"
        p.changed()
        deadline = self._deadline(idx, repeat)
        stop = lambda: self.cancel.is_set() or time.perf_counter() >= deadline  # noqa: E731
        specs = _specs(self.config, self.backend, idx, repeat, _pending_seqs(total, stored), "measure")
        announced = _Announced(self.backend, self._announcer(idx, repeat))
        client: dict[str, Any] = {}
        with quiet_interpreter():
            async with watching_client(client, gpu=_server_is_local(self.config.options.base_url)):
                await pattern(announced, load, specs, stop, self._recorder(idx, repeat, "measure"))
        self.writer.flush()
        observed: dict[str, Any] = {"client": client}
        if self.config.consistency and not self.cancel.is_set():
            observed["consistency"] = await self._consistency(idx, load)
        if not self.cancel.is_set():
            summary = summarise_level(self.db, self.run_id, self.config, idx, repeat, load, observed=observed)
            extras = getattr(self.backend, "level_extras", None)  # the in-process backend adds its roofline
            if extras is not None:
                summary.update(extras(summary, load, self.config.input_tokens, self.config.output_tokens))
                store.finish_level(self.db, self.run_id, idx, repeat, summary)

    async def _consistency(self, idx: int, load: float) -> dict[str, Any]:
        """The same prompt ``consistency`` times at the level's concurrency (not stored as measurements)."""
        if not hasattr(self.backend, "send_for_text"):
            return {"status": f"skipped: the {self.config.backend} backend does not return output text"}
        self.progress.phase = "consistency"
        self.progress.changed()
        spec = spec_for(self.config, self.backend, idx, 0, 0, "consistency")
        outputs = await same_prompt_outputs(self.backend, spec, self.config.consistency, max(1, int(load)))
        return agreement(outputs)

    async def _warm_up(self, pattern, idx: int, repeat: int, load: float, resumed: bool) -> None:
        """Warm-up requests, once per level: a resumed level only opens its connections again."""
        warmup = self.config.warmup_per_level(load)
        if resumed:
            preconnect = getattr(self.backend, "preconnect", None)
            if preconnect is not None:
                await preconnect(max(1, int(load)))
            return
        if warmup:
            self.progress.phase = "warm-up"
            self.progress.changed()
            specs = _specs(self.config, self.backend, idx, repeat, iter(range(warmup)), "warmup")
            await pattern(self.backend, load, specs, self.cancel.is_set, self._recorder(idx, repeat, "warmup"))

    def _announcer(self, idx: int, repeat: int) -> Callable[[RequestSpec], None]:
        """Stores a measured request as in flight just before it is sent (its t0 is taken later, by the client)."""
        context = {"run_id": self.run_id, "idx": idx, "repeat": repeat, "phase": "measure", "session": self.session,
                   "status": IN_FLIGHT, "itl": b""}
        put = self.writer.put

        def announce(spec: RequestSpec) -> None:
            put({**context, "seq": spec.seq, "t0": time.perf_counter()})

        return announce

    def _deadline(self, idx: int, repeat: int) -> float:
        """Now plus what is left of the level's duration (a resumed level already used some)."""
        if self.config.duration_s is None:
            return math.inf
        used = calculate_metrics(store.get_requests(self.db, self.run_id, idx, repeat))["duration"]
        return time.perf_counter() + max(0.0, self.config.duration_s - used)

    def _recorder(self, idx: int, repeat: int, phase: str) -> Callable[[RequestRecord], None]:
        context = {"run_id": self.run_id, "idx": idx, "repeat": repeat, "phase": phase, "session": self.session}
        writer, progress = self.writer, self.progress

        def done(record: RequestRecord) -> None:
            writer.put(record.as_row(**context))
            if phase == "measure":
                progress.done += 1
                progress.failed += not record.ok
                progress.changed()

        return done


class _Announced:
    """The backend, with every measured request announced (stored as in flight) before it is sent."""

    def __init__(self, backend: Backend, announce: Callable[[RequestSpec], None]) -> None:
        self.backend, self.announce = backend, announce
        self.batched = backend.batched

    async def send(self, spec: RequestSpec) -> RequestRecord:
        self.announce(spec)
        return await self.backend.send(spec)

    async def send_batch(self, specs: list[RequestSpec]) -> list[RequestRecord]:
        for spec in specs:
            self.announce(spec)
        return await self.backend.send_batch(specs)


def summarise_level(db, run_id: str, config: SweepConfig, idx: int, repeat: int, load: float, *,
                    observed: dict[str, Any] | None = None) -> dict[str, Any]:
    """calculate_metrics over the stored records, plus what the level was (and, in a soak or input-length sweep,
    its windows and drift or its prefill fit; ``observed``: what was seen beside the records, such as the client's
    own load and the consistency check); stored as the level's summary."""
    records = store.get_requests(db, run_id, idx, repeat)
    run = store.get_run(db, run_id)
    summary = calculate_metrics(records, slo_ms=config.slo_ms or None)
    if config.window_s:
        summary.update(soak_summary(records, config.window_s))
    if config.mixed is not None:  # the lengths asked for: input_len alone would read as the only one
        summary["mixed"] = list(config.mixed)
    if config.input_lengths and len(config.input_lengths) > 1:
        summary["input_lengths"] = list(config.input_lengths)
        summary["input_sweep"] = ttft_by_input_length(records, config.input_lengths)
    summary.update(observed or {})
    gpu = (summary.get("client") or {}).get("gpu") or {}
    if gpu.get("mean_power_w"):
        summary["energy_kwh_per_mtok"] = energy_kwh_per_mtok(gpu["mean_power_w"], summary["duration"],
                                                             summary["total_output_tokens"])
    key = "rate" if config.pattern == "rate" else ("batch_size" if config.pattern == "batch" else "concurrency")
    summary.update({key: load, "pattern": config.pattern, "input_len": config.input_tokens,
                    "output_len": config.output_tokens, "backend": config.backend, "model": config.options.model,
                    "hardware": _hardware_name(run["hardware"])})
    if key != "concurrency":
        summary.setdefault("concurrency", load if key == "batch_size" else None)
    store.finish_level(db, run_id, idx, repeat, summary)
    return summary


def _server_is_local(base_url: str | None) -> bool:
    """NVML sees this machine's GPUs: worth sampling only when the server runs here (or in process)."""
    if not base_url:
        return True
    host = (urllib.parse.urlsplit(base_url).hostname or "").lower()
    return host in ("127.0.0.1", "localhost", "::1")


def _hardware_name(hardware: dict[str, Any]) -> str | None:
    gpus = hardware.get("gpus") or []
    return f"{len(gpus)}x {gpus[0].get('name')}" if gpus else hardware.get("cpu")


def _fingerprint() -> dict[str, Any]:
    from infercost.runner.hardware import fingerprint

    return fingerprint()


def create_run(config: SweepConfig, db_path: str | Path | None, engine: dict[str, Any] | None = None) -> str:
    """Store the run and its plan (every level and repeat, pending), in one transaction, before the first request."""
    plan = [(idx, repeat, config.pattern, float(load)) for idx, load in enumerate(config.levels)
            for repeat in range(config.repeats)]
    hardware = _fingerprint()
    db = store.connect(db_path)
    try:
        return store.create_run(db, backend=config.backend, model=config.options.model, config=_config_dict(config),
                                hardware=hardware, engine=engine or {}, plan=plan,
                                secrets=config.options.secrets())
    finally:
        db.close()


def _config_dict(config: SweepConfig) -> dict[str, Any]:
    return asdict(config)  # options hold the *name* of the API key variable, never the key


def load_config(db_path: str | Path | None, run_id: str) -> SweepConfig:
    db = store.connect(db_path)
    try:
        return SweepConfig.from_dict(store.get_run(db, run_id)["config"])
    finally:
        db.close()


def run_sweep(config: SweepConfig | None = None, *, db_path: str | Path | None = None, resume: str | None = None,
              progress: Progress | None = None, cancel: threading.Event | None = None) -> str:
    """Run (or with ``resume=RUN_ID`` continue) a sweep; returns the run id. Blocks until done or cancelled."""
    if resume:
        config = load_config(db_path, resume)
    if config is None:
        raise InputError("config", "give a sweep configuration or a run id to resume")
    cancel = cancel or threading.Event()
    sweep = Sweep(config, db_path, resume, progress or Progress(), cancel)
    status = "interrupted"
    try:
        asyncio.run(sweep.run())
        status = "cancelled" if cancel.is_set() else "done"
    finally:
        if sweep.run_id is not None:
            store.set_run_status(sweep.db, sweep.run_id, status)
        sweep.db.close()
    return sweep.run_id  # type: ignore[return-value]


def run_summary(db_path: str | Path | None, run_id: str) -> dict[str, Any]:
    """``{"run_id", "status", "levels": [...]}``: one summary per level, the median over its repeats."""
    db = store.connect(db_path)
    try:
        run = store.get_run(db, run_id)
    finally:
        db.close()
    by_idx: dict[int, list[dict]] = {}
    for level in run["levels"]:
        if level["summary"] is not None:
            by_idx.setdefault(level["idx"], []).append(level["summary"])
    levels = [combine_repeats(by_idx[idx]) for idx in sorted(by_idx)]
    return {"run_id": run_id, "status": run["status"], "backend": run["backend"], "model": run["model"],
            "levels": levels, "warnings": shape_warnings(levels)}

