"""``--executor ray``: each shard is a Ray task on a cluster (``--address``, or a local Ray instance), and the driver
(the process that runs the job) stays the only writer of the job's state.

A shard task runs the same ``drive`` loop as the local executor (bounded concurrency, retries after its main pass)
and streams every attempt's outcome back as it ends (a Ray streaming generator), so the driver commits each record as
it completes, exactly as locally: a killed driver or a lost worker loses only what was in flight. The infercost
package travels to the workers as a ``py_modules`` runtime environment, so a remote cluster needs nothing installed
but Ray and infercost's own requirements.

The cost cap is checked when a shard is submitted (every record of the shard holds its worst-case cost while the
shard runs); retries inside a running shard are reserved but not refused.

Left out: the in-process transformers backend as Ray actors holding the model on a GPU. Its requests are batched
by the model's own generate loop, not sent over HTTP, so it needs a different worker (an actor owning a
``TransformersBackend``) and a GPU cluster to test it on; none was available here.
"""

from __future__ import annotations

import asyncio
import math
import os
import queue
import threading
from collections.abc import Callable, Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

from infercost.batch.executor import Work, drive
from infercost.batch.send import HEADERS, send_record
from infercost.errors import InputError

PACKAGE = Path(__file__).resolve().parents[1]  # infercost/
_DONE = object()


def shard_task(works: list[Work], base_url: str, headers: dict[str, str], concurrency: int, read_timeout_s: float,
               max_attempts: int) -> Iterator[tuple[int, dict, bool]]:
    """Runs on a Ray worker: send one shard's records and yield ``(idx, outcome, final)`` per attempt as it ends."""
    from infercost.runner.http import HttpClient

    outcomes: queue.SimpleQueue = queue.SimpleQueue()

    async def send_all() -> None:
        client = HttpClient(base_url, read_timeout=read_timeout_s)
        try:
            await drive(works, send=lambda w: send_record(client, w.record, w.n_in_est, headers),
                        concurrency=concurrency, max_attempts=max_attempts, admit=lambda w: True,
                        on_attempt=lambda w, outcome, final: outcomes.put((w.idx, outcome, final)),
                        should_stop=lambda: None)
        finally:
            await client.close()

    def run() -> None:
        try:
            asyncio.run(send_all())
        finally:
            outcomes.put(_DONE)

    threading.Thread(target=run, daemon=True).start()
    while (item := outcomes.get()) is not _DONE:
        yield item


def _connect(address: str | None):
    try:
        import ray
    except ImportError:
        raise InputError("executor", "Ray is not installed: pip install ray==2.60.0") from None
    if not ray.is_initialized():
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 runtime_env={"py_modules": [str(PACKAGE)]})
    return ray


async def run_on_ray(job: Any, works: Iterator[Work], *, should_stop: Callable[[], str | None]) -> str | None:
    """Submit shards as Ray tasks, as many at once as the cluster has CPUs, and commit their outcomes as they come."""
    ray = _connect(job.config.address)
    task = ray.remote(num_returns="streaming", max_retries=0)(shard_task)
    slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
    per_task = max(1, math.ceil(job.config.concurrency / slots))
    headers = dict(HEADERS)
    key = os.environ.get(job.config.api_key_env) if job.config.api_key_env else None
    if key:  # goes to the workers with the task, never into the store
        headers["Authorization"] = f"Bearer {key}"
    running: set[asyncio.Task] = set()
    stopped = None
    for _, group in groupby(works, key=lambda w: w.shard):
        shard = list(group)
        while len(running) >= slots:
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        stopped = stopped or should_stop() or (None if _admit_all(job, shard) else "max_cost")
        if stopped:
            break
        generator = task.remote(shard, job.config.base_url, headers, per_task, job.config.read_timeout_s,
                                job.config.max_attempts)
        consumer = asyncio.create_task(_consume(job, generator, {w.idx: w for w in shard}, should_stop, ray))
        running.add(consumer)
        consumer.add_done_callback(running.discard)
    if running:
        await asyncio.gather(*running)
    return stopped or should_stop()


def _admit_all(job: Any, shard: list[Work]) -> bool:
    """Reserve every record of the shard, or none of them."""
    admitted = []
    for work in shard:
        if not job.admit(work):
            job.reserved -= sum(w.worst_cost for w in admitted)
            return False
        admitted.append(work)
    return True


async def _consume(job: Any, generator: Any, works: dict[int, Work], should_stop: Callable[[], str | None],
                   ray: Any) -> None:
    unfinished = dict(works)
    async for ref in generator:
        idx, outcome, final = await ref
        work = works[idx]
        job.on_attempt(work, outcome, final)
        if final:
            unfinished.pop(idx)
        else:
            job.reserved += work.worst_cost  # the task sends it again
        if should_stop():
            ray.cancel(generator)
            break
    for work in unfinished.values():  # stopped before these ended: they stay pending and hold nothing
        job.reserved -= work.worst_cost
