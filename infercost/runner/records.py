"""Raw per-request facts: what a backend saw for one request, before any metric is computed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OK = "ok"
IN_FLIGHT = "in_flight"  # stored when a measured request is sent, replaced by its outcome when it ends
INTERRUPTED = "interrupted"  # an in-flight request whose sweep was killed (a resumed duration-bound level)
# truncated: a well-formed response with fewer tokens than were forced; dropped: a stream cut before its end
FAILURE_KINDS = ("http_error", "timeout", "dropped", "truncated", "connect", "bad_response", "engine_error",
                 INTERRUPTED)
# The most tokens one request may ask for, in or out: no model reads or writes 10M tokens in one request (the longest
# context windows are about that size). Counts are checked against it before anything is sent or stored.
MAX_REQUEST_TOKENS = 10_000_000


@dataclass(slots=True)
class RequestSpec:
    """One request to send: the prompt (text, or token ids in process), its intended length, the output length."""

    seq: int
    prompt: str | list[int]
    input_len: int  # tokens the prompt was built to have
    output_len: int  # tokens asked for, and forced


@dataclass(slots=True)
class RequestRecord:
    """Times are ``perf_counter()`` seconds; ``itl`` are the gaps between token-bearing chunks (s)."""

    seq: int
    t0: float
    t_first: float | None = None
    t_last: float | None = None
    itl: list[float] = field(default_factory=list)
    n_in: int | None = None
    n_in_source: str | None = None  # usage | tokenizer | prompt
    n_out: int | None = None
    n_out_source: str | None = None  # usage | tokenizer | chunks | engine
    n_out_expected: int | None = None
    status: str = OK
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def as_row(self, **context: Any) -> dict[str, Any]:
        """The record plus where it belongs (run_id, idx, repeat, phase, session) as a store row.

        Not ``dataclasses.asdict``: it deep-copies ``itl``, milliseconds per long request on the event loop."""
        return {**{name: getattr(self, name) for name in self.__slots__}, **context}
