"""Backends: how a request reaches an engine. ``BACKENDS[name](options)`` builds one.

Every backend turns ``RequestSpec`` into ``RequestRecord`` and never raises for engine behaviour (errors, hangs,
dropped streams become a record with a failure status), so a sweep counts failures and goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from infercost.runner.credentials import Credentials
from infercost.runner.records import RequestRecord, RequestSpec


@dataclass
class BackendOptions(Credentials):
    """Everything a backend may need; each backend reads the fields that concern it."""

    model: str
    base_url: str | None = None  # openai; credentials in it are taken out (``Credentials``)
    api: str = "completions"  # openai: completions | chat
    api_key_env: str = "OPENAI_API_KEY"  # openai: the variable holding the key; the key itself is never stored
    force_output: bool = True  # openai: send min_tokens and ignore_eos so the output length is what was asked
    extra_body: dict[str, Any] = field(default_factory=dict)  # openai: merged into every request body
    read_timeout_s: float = 60.0  # openai: no byte for this long means the server hangs
    total_timeout_s: float | None = None  # openai: cap on one whole request; None: request_deadline_s()
    tokenizer: str | None = None  # count tokens with this tokenizer id where the server reports no usage
    dtype: str = "auto"  # transformers
    device: str = "auto"  # transformers
    trust_remote_code: bool = False  # transformers

    def request_deadline_s(self, output_tokens: int) -> float:
        """``total_timeout_s``, or by default ``request_deadline_s`` of the idle timeout and the tokens asked for."""
        if self.total_timeout_s:
            return self.total_timeout_s
        return request_deadline_s(self.read_timeout_s, output_tokens)


SECONDS_PER_OUTPUT_TOKEN = 1.0


def request_deadline_s(read_timeout_s: float, output_tokens: int) -> float:
    """The whole-request deadline: the idle timeout (which covers the wait for the first byte) plus
    ``SECONDS_PER_OUTPUT_TOKEN`` per token asked for: a stream slower than that is useless, and one that never ends
    (keep-alive comments, headers that never end) must not hang a sweep or a batch job."""
    return read_timeout_s + SECONDS_PER_OUTPUT_TOKEN * output_tokens


class Backend(Protocol):
    name: str
    batched: bool  # True: requests of one level run as fixed batches (in process); False: independent streams

    async def start(self) -> dict[str, Any]:
        """Connect or load; return the engine fingerprint stored with the run."""

    def make_prompt(self, n_tokens: int, seed: int) -> str | list[int]:
        """A prompt of about ``n_tokens`` tokens, different for every seed (no shared prefix to cache)."""

    async def send(self, spec: RequestSpec) -> RequestRecord: ...

    async def send_batch(self, specs: list[RequestSpec]) -> list[RequestRecord]: ...

    async def close(self) -> None: ...


def _openai(options: BackendOptions) -> Backend:
    from infercost.runner.backends.openai import OpenAIBackend

    return OpenAIBackend(options)


def _transformers(options: BackendOptions) -> Backend:
    from infercost.runner.backends.transformers import TransformersBackend  # imports torch: only when asked for

    return TransformersBackend(options)


BACKENDS: dict[str, Callable[[BackendOptions], Backend]] = {"openai": _openai, "transformers": _transformers}
BATCHED_BACKENDS = frozenset({"transformers"})  # run a level as fixed batches: its load is a batch size

__all__ = ["BACKENDS", "BATCHED_BACKENDS", "SECONDS_PER_OUTPUT_TOKEN", "Backend", "BackendOptions",
           "request_deadline_s"]
