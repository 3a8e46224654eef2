"""The in-process backend: a transformers model on this machine, run as fixed batches.

Requests of a level go to the engine as one batch (its size is the level's load); the engine times prefill and
every decode step itself (CUDA synchronised), and each request of the batch becomes a record with the same t0.
Generation runs in a worker thread so the event loop can keep a progress bar and a cancel button alive.
"""

from __future__ import annotations

import asyncio
from itertools import pairwise
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

    def level_extras(self, summary: dict[str, Any], load: float, input_len: int, output_len: int) -> dict[str, Any]:
        """On a GPU the catalog knows: the memory-bandwidth roofline of this level and the percentage reached."""
        from infercost.runner.hardware import gpu_limits

        if self.model is None or self.model.device.type != "cuda":
            return {}
        limits = gpu_limits()
        if limits is None:
            return {}
        return roofline_fields(self.model.shape(), self.model.info["dtype"], int(load), input_len, output_len,
                               summary, limits.memory_bandwidth_gbps, limits.peak_bf16_tflops)


def roofline_fields(shape: Any, dtype: str, batch: int, input_len: int, output_len: int, summary: dict[str, Any],
                    bandwidth_gbps: float, peak_tflops: float) -> dict[str, Any]:
    """Decode: aggregate tokens/s (batch / median TPOT) against the bandwidth bound at the mean context; prefill:
    the bound time of the batch's prefill against the median TTFT. Pure: numbers in, numbers out."""
    from infercost.performance.roofline import decode_tokens_per_s, prefill_bound_seconds, roofline_pct

    fields: dict[str, Any] = {"memory_bandwidth_gbps": bandwidth_gbps}
    bound = decode_tokens_per_s(shape, batch=batch, context=input_len + output_len / 2, dtype=dtype,
                                bandwidth_gbps=bandwidth_gbps)
    fields["decode_roofline_tokens_per_s"] = bound
    if summary.get("median_tpot_ms"):
        fields["decode_roofline_pct"] = roofline_pct(batch / (summary["median_tpot_ms"] / 1e3), bound)
    prefill_s = prefill_bound_seconds(shape, batch=batch, input_len=input_len, dtype=dtype,
                                      bandwidth_gbps=bandwidth_gbps, peak_tflops=peak_tflops)
    fields["prefill_roofline_ms"] = prefill_s * 1e3
    if summary.get("median_ttft_ms"):
        fields["prefill_roofline_pct"] = roofline_pct(prefill_s * 1e3, summary["median_ttft_ms"])
    return fields


def _record(spec: RequestSpec, timing: Any, row: int) -> RequestRecord:
    n_out = timing.n_out[row]
    times = timing.token_times[:n_out]
    return RequestRecord(
        seq=spec.seq, t0=timing.t_start, t_first=times[0], t_last=times[-1],
        itl=[b - a for a, b in pairwise(times)], n_in=timing.n_in[row], n_in_source="engine",
        n_out=n_out, n_out_source="engine", n_out_expected=spec.output_len)
