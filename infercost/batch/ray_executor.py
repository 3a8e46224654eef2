"""``--executor ray``: each shard is a Ray task on a cluster (``--address``, or a local Ray instance), and the driver
(the process that runs the job) stays the only writer of the job's state.

A shard task runs the same ``drive`` loop as the local executor (bounded concurrency, retries after its main pass)
and streams every attempt's outcome back as it ends (a Ray streaming generator), so the driver commits each record as
it completes, exactly as locally: a killed driver or a lost worker loses only what was in flight. The infercost
package travels to the workers as a ``py_modules`` runtime environment, so a remote cluster needs nothing installed
but Ray and infercost's own requirements.

With ``--backend transformers`` the shards go instead to ``--actors N`` Ray actors (``batch/model_actor.py``), each of
which loads the in-process model once (on a GPU of its own with ``--gpus``) and serves one shard at a time with it,
streaming outcomes back the same way; the actors are made when the run starts and killed when it ends.

The cost cap is checked when a shard is submitted (every record of the shard holds its worst-case cost while the
shard runs); retries inside a running shard are reserved but not refused.
"""

from __future__ import annotations

import asyncio
import math
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator
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

    async def send_all(on_attempt: Callable[[Work, dict, bool], None]) -> None:
        client = HttpClient(base_url, read_timeout=read_timeout_s)
        try:
            await drive(works, send=lambda w: send_record(client, w.record, w.n_in_est, headers),
                        concurrency=concurrency, max_attempts=max_attempts, admit=lambda w: True,
                        on_attempt=on_attempt, should_stop=lambda: None)
        finally:
            await client.close()

    yield from streamed(send_all)


def streamed(run: Callable[[Callable[[Work, dict, bool], None]], Awaitable[None]]) -> Iterator[tuple[int, dict, bool]]:
    """Run ``run(on_attempt)`` on its own event loop in a thread and yield ``(idx, outcome, final)`` per attempt as
    it ends: the body of a Ray streaming generator, whose every item the driver can commit at once."""
    outcomes: queue.SimpleQueue = queue.SimpleQueue()

    def worker() -> None:
        try:
            asyncio.run(run(lambda w, outcome, final: outcomes.put((w.idx, outcome, final))))
        finally:
            outcomes.put(_DONE)

    threading.Thread(target=worker, daemon=True).start()
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
    """Submit shards to Ray, as many at once as there are slots, and commit their outcomes as they come."""
    ray = _connect(job.config.address)
    pool = _ActorPool(ray, job) if job.config.backend == "transformers" else _TaskPool(ray, job)
    try:
        return await _run_shards(job, works, pool, should_stop, ray)
    finally:
        pool.close()


class _TaskPool:
    """Each shard a Ray task sending to the server over HTTP; as many at once as the cluster has CPUs."""

    def __init__(self, ray: Any, job: Any) -> None:
        self.task = ray.remote(num_returns="streaming", max_retries=0)(shard_task)
        self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.per_task = max(1, math.ceil(job.config.concurrency / self.slots))
        self.config = job.config
        self.headers = {**HEADERS, **job.config.auth_headers()}  # to the workers with the task, never stored

    def submit(self, shard: list[Work]) -> tuple[Any, Callable[[], None]]:
        generator = self.task.remote(shard, self.config.base_url, self.headers, self.per_task,
                                     self.config.read_timeout_s, self.config.max_attempts)
        return generator, lambda: None

    def close(self) -> None:
        pass


class _ActorPool:
    """``--actors`` Ray actors, each holding the model; a shard goes to a free one. Each actor serves its shard with
    up to ``--concurrency`` records per static batch. ``workers`` says, at the end, what each actor did."""

    def __init__(self, ray: Any, job: Any) -> None:
        from infercost.batch.model_actor import ModelActor

        config = job.config
        self.ray, self.job, self.config = ray, job, config
        gpus = int(ray.cluster_resources().get("GPU", 0))
        if config.gpus and gpus < config.actors:  # an actor that cannot be placed would wait for ever
            raise InputError("actors", f"{config.actors} actors with a GPU each, but the Ray cluster has {gpus} "
                                       "GPU(s): use fewer actors, or drop --gpus to run on CPUs")
        # two threads: ``identity`` answers while a shard that was told to stop is still running
        actor = ray.remote(num_gpus=1 if config.gpus else 0, max_restarts=0, max_concurrency=2)(ModelActor)
        device = "cuda" if config.gpus else "cpu"
        self.actors = [actor.remote(config.model, device) for _ in range(config.actors)]
        self.free = list(self.actors)
        self.slots = len(self.actors)
        try:
            self._wait_ready()
        except BaseException:
            self._kill()
            raise

    def _wait_ready(self) -> None:
        """Every actor has loaded the model, or the job stops here with one line saying why."""
        try:
            refusals = self.ray.get([actor.ready.remote() for actor in self.actors])
        except self.ray.exceptions.RayActorError as error:  # the constructor raised: out of memory, a CUDA fault
            lines = [line for line in str(error).splitlines() if line.strip()]
            raise InputError("model", f"a Ray actor could not load {self.config.model}: {lines[-1][:300]}") from None
        if refused := next((r for r in refusals if r), None):
            raise InputError(*refused)

    def submit(self, shard: list[Work]) -> tuple[Any, Callable[[], None]]:
        actor = self.free.pop()
        generator = actor.serve_shard.options(num_returns="streaming").remote(
            shard, self.config.concurrency, self.config.max_attempts)
        return generator, lambda: self.free.append(actor)

    def close(self) -> None:
        try:
            self.job.workers = self.ray.get([actor.identity.remote() for actor in self.actors], timeout=60)
        except Exception as error:  # noqa: BLE001 - an actor that died: the job's records say what was done
            self.job.workers = [{"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}]
        finally:
            self._kill()

    def _kill(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)


async def _run_shards(job: Any, works: Iterator[Work], pool: Any, should_stop: Callable[[], str | None],
                      ray: Any) -> str | None:
    running: set[asyncio.Task] = set()
    stopped = None
    for _, group in groupby(works, key=lambda w: w.shard):
        shard = list(group)
        while len(running) >= pool.slots:
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        stopped = stopped or should_stop() or (None if _admit_all(job, shard) else "max_cost")
        if stopped:
            break
        generator, release = pool.submit(shard)
        consumer = asyncio.create_task(_consume(job, generator, {w.idx: w for w in shard}, should_stop, ray,
                                                release))
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
                   ray: Any, release: Callable[[], None]) -> None:
    try:
        await _commit_each(job, generator, works, should_stop, ray)
    finally:
        release()


async def _commit_each(job: Any, generator: Any, works: dict[int, Work], should_stop: Callable[[], str | None],
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
