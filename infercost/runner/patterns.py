"""Load patterns: how the requests of one level are put to a backend.

Each pattern takes the level's load (a concurrency, a batch size or a rate in requests/s), an iterator of
``RequestSpec`` (finite for a request-count bound, endless for a duration bound), a ``stop()`` predicate (duration
over, or cancelled) and ``done(record)``, called once per request as it completes.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from infercost.runner.records import RequestRecord, RequestSpec

Done = Callable[[RequestRecord], None]
Stop = Callable[[], bool]


async def closed_loop(backend: Any, load: float, specs: Iterator[RequestSpec], stop: Stop, done: Done) -> None:
    """``load`` streams, each sending its next request as soon as the previous one ends (vLLM's max-concurrency)."""

    async def stream() -> None:
        for spec in specs:  # one shared iterator: each spec is taken by exactly one stream
            done(await backend.send(spec))
            if stop():
                return

    await asyncio.gather(*(stream() for _ in range(max(1, int(load)))))


async def fixed_batch(backend: Any, load: float, specs: Iterator[RequestSpec], stop: Stop, done: Done) -> None:
    """Batches of ``load`` requests sent together; the next batch starts when the whole batch has ended."""
    size = max(1, int(load))
    while not stop():
        batch = list(itertools.islice(specs, size))
        if not batch:
            return
        for record in await backend.send_batch(batch):
            done(record)


async def poisson(backend: Any, load: float, specs: Iterator[RequestSpec], stop: Stop, done: Done) -> None:
    """Open loop: arrivals at ``load`` requests/s with exponential gaps, whether or not earlier ones have ended."""
    if load <= 0:
        raise ValueError("rate must be positive")
    rng = random.Random(0)
    tasks: set[asyncio.Task] = set()
    next_at = time.perf_counter()

    async def one(spec: RequestSpec) -> None:
        done(await backend.send(spec))

    for spec in specs:
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if stop():
            break
        task = asyncio.create_task(one(spec))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        next_at += rng.expovariate(load)
    if tasks:
        await asyncio.gather(*tasks)


PATTERNS = {"concurrency": closed_loop, "single": closed_loop, "batch": fixed_batch, "rate": poisson}
