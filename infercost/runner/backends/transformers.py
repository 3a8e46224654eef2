"""The in-process backend: a transformers model on this machine, run as fixed batches.

Requests of a level go to the engine as one batch (its size is the level's load); the engine times prefill and
every decode step itself (CUDA synchronised), and each request of the batch becomes a record with the same t0.
Generation runs in a worker thread so the event loop can keep a progress bar and a cancel button alive.
"""

from __future__ import annotations

import asyncio
from typing import Any

from infercost.errors import InputError
from infercost.runner.backends import BackendOptions
from infercost.runner.records import RequestRecord, RequestSpec


class TransformersBackend:
    name = "transformers"
    batched = True

    def __init__(self, options: BackendOptions) -> None:
        self.options = options
        self.model: Any = None

    async def start(self) -> dict[str, Any]:
        from infercost.runner.inprocess import load_model

        self.model = await asyncio.to_thread(
            load_model, self.options.model, dtype=self.options.dtype, device=self.options.device,
            trust_remote_code=self.options.trust_remote_code)
        return dict(self.model.info)

    def make_prompt(self, n_tokens: int, seed: int) -> list[int]:
        from infercost.runner.inprocess import make_prompt_ids

        return make_prompt_ids(self.model, n_tokens, seed)

    async def send(self, spec: RequestSpec) -> RequestRecord:
        return (await self.send_batch([spec]))[0]

    async def send_batch(self, specs: list[RequestSpec]) -> list[RequestRecord]:
        """One batch; every request is forced to the longest output asked for (in practice they are all equal)."""
        n_new = max(spec.output_len for spec in specs)
        try:
            timing = await asyncio.to_thread(self.model.generate_timed, [spec.prompt for spec in specs], n_new)
        except InputError:
            raise
        except (RuntimeError, MemoryError) as error:  # out of memory, a CUDA fault: counted, the sweep goes on
            return [RequestRecord(seq=s.seq, t0=0.0, status="engine_error", error=str(error).splitlines()[0][:300],
                                  n_out_expected=s.output_len) for s in specs]
        return [_record(spec, timing, row) for row, spec in enumerate(specs)]

    async def close(self) -> None:
        self.model = None


def _record(spec: RequestSpec, timing: Any, row: int) -> RequestRecord:
    n_out = timing.n_out[row]
    times = timing.token_times[:n_out]
    return RequestRecord(
        seq=spec.seq, t0=timing.t_start, t_first=times[0], t_last=times[-1],
        itl=[b - a for a, b in zip(times, times[1:])], n_in=timing.n_in[row], n_in_source="engine",
        n_out=n_out, n_out_source="engine", n_out_expected=spec.output_len)
