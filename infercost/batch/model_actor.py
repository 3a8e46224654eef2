"""The in-process transformers backend for a batch job: a Ray actor loads the model once, in its constructor, and
serves whole shards with it.

The actor holds the same engine ``infercost serve`` puts behind HTTP (``runner/server.py``): its ``Server`` object,
without the HTTP, turns each record's body (chat or completions) into token ids and the OpenAI body the route would
return, with ``usage``, and its worker thread decodes whatever requests are waiting as one static batch. A shard runs
through the same ``drive`` loop as everywhere else (at most ``concurrency`` records in flight, so batches of up to
that size; retries after its main pass), and every attempt's outcome is streamed back to the driver as it ends, in the
shape ``send.send_record`` gives the HTTP path. The driver alone writes the job's state.

Without Ray (``--executor local``), ``run_in_process`` makes one ``ModelActor`` as a plain object in the job's own
process and drives every record through it.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from infercost.batch.executor import Work, drive
from infercost.errors import InputError

_LOADS = 0  # models loaded by this process: an actor loads once, whatever the number of shards it serves


class ModelActor:
    """Made a Ray actor by the driver (``ray.remote(num_gpus=...)(ModelActor)``); one model, many shards."""

    def __init__(self, model: str, device: str = "auto", dtype: str = "auto") -> None:
        global _LOADS
        from infercost.runner.inprocess import load_model
        from infercost.runner.server import Server

        self.records = 0
        self.refused: tuple[str, str] | None = None
        try:
            loaded = load_model(model, dtype=dtype, device=device)
        except InputError as error:  # kept for the driver, which says it in one line (a raise here is a traceback)
            self.refused = (error.field, error.reason)
            return
        _LOADS += 1
        self.server = Server(loaded, served_name=model)
        self.server.worker.start()

    def ready(self) -> tuple[str, str] | None:
        """None once the model is loaded; ``(field, reason)`` when the model named cannot be."""
        return self.refused

    def identity(self) -> dict[str, Any]:
        """Which process this is, how often it loaded a model, and how many records it answered."""
        return {"pid": os.getpid(), "loads": _LOADS, "records": self.records,
                "device": str(self.server.model.device)}

    def serve_shard(self, works: list[Work], concurrency: int, max_attempts: int) -> Iterator[tuple[int, dict, bool]]:
        """Run one shard's records and yield ``(idx, outcome, final)`` per attempt as it ends."""
        from infercost.batch.ray_executor import streamed

        self.server.worker.max_batch = concurrency

        async def run(on_attempt) -> None:
            await drive(works, send=self.answer, concurrency=concurrency, max_attempts=max_attempts,
                        admit=lambda w: True, on_attempt=on_attempt, should_stop=lambda: None)

        yield from streamed(run)

    async def answer(self, work: Work) -> dict[str, Any]:
        """One attempt; never raises for a record's fault or the engine's. A bad request is a 400 (not retried), an
        engine failure a 500 (retried), as the same engine behind HTTP answers them."""
        t0 = time.perf_counter()
        outcome: dict[str, Any] = {"idx": work.idx, "request_id": f"req_{uuid.uuid4().hex[:24]}"}
        try:
            body = await self.server.respond(work.record.url, work.record.body)
        except InputError as error:
            return {**outcome, **_failed(400, "http_error", str(error), error.field), "latency_ms": _ms(t0)}
        except Exception as error:  # noqa: BLE001 - out of memory, a CUDA fault: this record fails, the shard goes on
            reason = f"engine error: {type(error).__name__}: {error}"
            return {**outcome, **_failed(500, "retryable_http", reason, None), "latency_ms": _ms(t0)}
        self.records += 1
        usage = body["usage"]
        return {**outcome, "latency_ms": _ms(t0), "status_code": 200, "state": "ok", "kind": "ok",
                "n_in": usage["prompt_tokens"], "n_out": usage["completion_tokens"], "usage_reported": 1,
                "body": json.dumps(body, ensure_ascii=False)}


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _failed(status: int, kind: str, reason: str, field: str | None) -> dict[str, Any]:
    error = {"message": reason, "type": "invalid_request_error" if status < 500 else "server_error",
             "param": field, "code": status}
    return {"status_code": status, "state": "failed", "kind": kind, "reason": reason[:500],
            "body": json.dumps({"error": error})}


async def run_in_process(job: Any, works: Iterator[Work], *, should_stop: Callable[[], str | None]) -> str | None:
    """The local executor for the transformers backend: the model in this process, batches of ``--concurrency``."""
    import asyncio

    actor = await asyncio.to_thread(ModelActor, job.config.model, "cuda" if job.config.gpus else "auto")
    if actor.refused:
        raise InputError(*actor.refused)
    actor.server.worker.max_batch = job.config.concurrency
    try:
        return await drive(works, send=actor.answer, concurrency=job.config.concurrency,
                           max_attempts=job.config.max_attempts, admit=job.admit, on_attempt=job.on_attempt,
                           should_stop=should_stop)
    finally:
        await asyncio.to_thread(actor.server.worker.stop)
