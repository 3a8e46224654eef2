"""Do outputs stay the same? One prompt sent N times at temperature 0 at a level's concurrency, outputs compared.

Greedy decoding is deterministic in principle, yet batched kernels reduce in a different order at another batch
size, so under load an engine can change a greedy output from some token on. Users should see it, per level.

Tokens here are the stream's pieces (one per token-bearing event): one token each on engines that stream token by
token (vLLM, SGLang, TGI, llama.cpp, ``infercost serve``); an engine that sends several per event is compared more
coarsely, which the ``unit`` field says.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

from infercost.runner.records import RequestSpec


def agreement(outputs: Sequence[Sequence[str] | None]) -> dict[str, Any]:
    """Pure: how many outputs equal the most common one, and the mean share of token positions that agree with it
    (positions past the shorter output count as disagreeing). Failed requests (None) are counted apart."""
    done = [tuple(o) for o in outputs if o is not None]
    out: dict[str, Any] = {"requests": len(outputs), "failed": len(outputs) - len(done), "unit": "stream piece"}
    if not done:
        return {**out, "identical": 0, "distinct_outputs": 0, "token_agreement": None}
    reference, identical = Counter(done).most_common(1)[0]
    shares = [sum(a == b for a, b in zip(reference, o, strict=False)) / max(len(reference), len(o), 1) for o in done]
    return {**out, "identical": identical, "distinct_outputs": len(set(done)),
            "token_agreement": sum(shares) / len(shares), "all_identical": identical == len(done)}


async def same_prompt_outputs(backend: Any, spec: RequestSpec, count: int, concurrency: int) -> list[list[str] | None]:
    """``count`` copies of ``spec``, at most ``concurrency`` in flight (the level's load): each output's pieces."""
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one() -> list[str] | None:
        async with limit:
            return (await backend.send_for_text(spec))[1]

    return list(await asyncio.gather(*(one() for _ in range(count))))
