"""Sending a job's records: bounded concurrency, retries after the main pass, and a stop that lets in-flight requests
finish. The same ``drive`` loop runs in the job's own process (``local``, the default) and inside each Ray task
(``ray``); the process that owns the job is always the only one that writes its state.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass

from infercost.batch.inputs import BatchRecord
from infercost.batch.send import RETRYABLE

RETRY_BACKOFF_S = 0.2  # doubled per attempt, capped: a server that just failed gets a moment
RETRY_BACKOFF_MAX_S = 5.0


@dataclass(slots=True)
class Work:
    record: BatchRecord
    shard: int
    attempts: int  # attempts already made (a resumed record keeps its count)
    pass_: int
    n_in_est: int
    worst_cost: float  # USD reserved while this attempt is in flight

    @property
    def idx(self) -> int:
        return self.record.idx


Send = Callable[[Work], Awaitable[dict]]
OnAttempt = Callable[[Work, dict, bool], None]  # (work, outcome, final)


def backoff_s(attempts: int) -> float:
    return min(RETRY_BACKOFF_S * 2 ** max(0, attempts - 1), RETRY_BACKOFF_MAX_S)


async def _go_on() -> None:
    return None


async def drive(works: Iterable[Work], *, send: Send, concurrency: int, max_attempts: int,
                admit: Callable[[Work], bool], on_attempt: OnAttempt, should_stop: Callable[[], str | None],
                hold: Callable[[], Awaitable[None]] = _go_on) -> str | None:
    """Send every work item once, then the retryable failures again (up to ``max_attempts`` in all), with at most
    ``concurrency`` in flight. Before each send it awaits ``hold()`` (the job waits there while its store refuses
    writes); ``admit`` may refuse an item (the cost cap): then nothing more is sent. Returns why it stopped early
    (``should_stop``'s answer, or ``max_cost``), or None when everything was sent.

    A server's ``Retry-After`` (an outcome's ``retry_after_s``) holds every send, not just that record's retry: a
    rate limit is the server's, and a record sent into it would only spend an attempt on another 429."""
    slots = asyncio.Semaphore(concurrency)
    in_flight: set[asyncio.Task] = set()
    retries: deque[Work] = deque()
    loop = asyncio.get_running_loop()
    hold_until = 0.0  # loop time before which nothing is sent

    async def attempt(work: Work) -> None:
        nonlocal hold_until
        try:
            if work.attempts:
                await asyncio.sleep(backoff_s(work.attempts))
            while (held_s := hold_until - loop.time()) > 0:  # a 429 that came while this one waited holds it too
                await asyncio.sleep(held_s)
            outcome = await send(work)
        finally:
            slots.release()
        if outcome.get("retry_after_s") is not None:
            hold_until = max(hold_until, loop.time() + outcome["retry_after_s"])
        work.attempts += 1
        retry = outcome.get("kind") in RETRYABLE and work.attempts < max_attempts
        outcome["attempts"] = work.attempts
        on_attempt(work, outcome, not retry)
        if retry:
            retries.append(work)

    errors: list[BaseException] = []

    def ended(task: asyncio.Task) -> None:
        in_flight.discard(task)
        if not task.cancelled() and task.exception() is not None:
            errors.append(task.exception())  # the store failed: stop sending, and say why

    stopped = None
    async for work in _main_then_retries(works, retries, in_flight):
        await slots.acquire()
        await hold()
        stopped = "error" if errors else should_stop() or (None if admit(work) else "max_cost")
        if stopped:
            slots.release()
            break
        task = asyncio.create_task(attempt(work))
        in_flight.add(task)
        task.add_done_callback(ended)
    if in_flight:
        await asyncio.wait(set(in_flight))
    if errors:
        raise errors[0]
    return stopped


async def _main_then_retries(works: Iterable[Work], retries: deque[Work],
                             in_flight: set[asyncio.Task]) -> AsyncIterator[Work]:
    for work in works:
        yield work
    while retries or in_flight:
        if retries:
            yield retries.popleft()
        else:
            await asyncio.wait(set(in_flight), return_when=asyncio.FIRST_COMPLETED)
