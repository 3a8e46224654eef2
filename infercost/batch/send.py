"""One attempt of one batch record against an OpenAI-compatible server, through the runner's HTTP client and SSE
parser (``runner/http.py``, ``runner/sse.py``, ``runner/backends/openai.py``): no second client.

Every request is sent streaming with ``stream_options.include_usage``: the client's idle read timeout then catches a
server that hangs half way (a non-streamed response is silent until it ends), and the usage event gives the tokens
the bill is made of. The stream is reassembled into the body a non-streamed request returns (``chat.completion`` or
``text_completion`` with ``choices`` and ``usage``), which is what an OpenAI batch output line carries in
``response.body``.

A record succeeds when the server answered it whole (HTTP 200 and a stream that ended with ``[DONE]`` or a
``finish_reason``), whatever its length: an answer that stops before ``max_tokens`` is the normal case, and forced
lengths belong to benchmarks (DESIGN, "Reliability rules"). Whatever else ends an attempt (an HTTP error, a stream cut
short, an event that is not what OpenAI's format says, the request's total deadline) is a failure whose ``reason``
starts with its code, ``code: message``, which the output line's ``error`` object carries.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from infercost.batch.inputs import BatchRecord
from infercost.runner.backends import request_deadline_s
from infercost.runner.backends.openai import BadResponse, StreamSink, choice_text, event_choices, parse_response
from infercost.runner.http import HttpClient, Response
from infercost.runner.records import RequestSpec

RETRYABLE = frozenset({"timeout", "dropped", "connect", "retryable_http"})
HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}
UNCAPPED_OUTPUT_TOKENS = 4096  # a record without max_tokens gets the deadline of this many tokens (68 min)
RETRY_AFTER_MAX_S = 60.0  # a server's Retry-After is honoured up to this long; a longer one waits this long
_DELAY_SECONDS = re.compile(r"\d+(?:\.\d+)?")  # float() of a long one is inf: the bound


def request_body(record: BatchRecord) -> bytes:
    body = {**record.body, "stream": True, "stream_options": {"include_usage": True}}
    return json.dumps(body).encode()


async def send_record(client: HttpClient, record: BatchRecord, n_in_est: int, headers: dict[str, str]) -> dict:
    """One attempt; never raises for server behaviour. Returns the outcome: ``ok`` with the response body, or a
    failure ``kind`` (retryable or not) with its reason; tokens from ``usage`` where the server reported them."""
    sink = StreamSink()
    path = record.url.removeprefix("/v1")
    deadline_s = request_deadline_s(client.read_timeout, record.max_out or UNCAPPED_OUTPUT_TOKENS)
    response = await client.request("POST", path, request_body(record), headers, sink, total_timeout=deadline_s)
    chat = record.url.endswith("/chat/completions")
    spec = RequestSpec(seq=record.idx, prompt="", input_len=n_in_est, output_len=record.max_out or 0)
    measured = parse_response(response, sink, spec, chat=chat, forced=False)
    latency_ms = ((measured.t_last or time.perf_counter()) - measured.t0) * 1e3
    outcome: dict[str, Any] = {"idx": record.idx, "latency_ms": latency_ms, "request_id": _request_id(response),
                               "status_code": response.status or None}
    if not measured.ok:
        return {**outcome, **_failure(response, measured.status, measured.error)}
    try:
        body = assemble_body(sink, chat=chat, model=record.body.get("model"), choices=record.choices)
    except BadResponse as error:
        return {**outcome, **_failure(response, "bad_response", str(error))}
    usage_ok = measured.n_in_source == "usage" and measured.n_out_source == "usage"
    return {**outcome, "state": "ok", "kind": "ok", "n_in": measured.n_in, "n_out": measured.n_out,
            "usage_reported": int(usage_ok), "body": json.dumps(body, ensure_ascii=False)}


def _request_id(response: Response) -> str:
    return response.headers.get("x-request-id") or f"req_{uuid.uuid4().hex[:24]}"


def _failure(response: Response, status: str, error: str | None) -> dict[str, Any]:
    """HTTP errors keep the server's status and body (OpenAI puts them in ``response``); other failures have no
    response body, and their reason starts with their code. 429 and 5xx are worth retrying, after the wait a
    ``Retry-After`` asks for; other 4xx are the request's fault and are not."""
    if status == "http_error" and response.status not in (0, 200):
        retry = response.status == 429 or response.status >= 500
        failure = {"state": "failed", "kind": "retryable_http" if retry else "http_error",
                   "reason": (error or f"HTTP {response.status}")[:500], "body": _error_body(response)}
        wait_s = retry_after_s(response.headers.get("retry-after")) if retry else None
        return failure if wait_s is None else {**failure, "retry_after_s": wait_s}
    code = "stream_error" if status == "http_error" else status  # an error event inside a 200 stream
    reason = error or code
    reason = reason if reason.startswith(f"{code}:") or reason == code else f"{code}: {reason}"
    return {"state": "failed", "kind": code, "reason": reason[:500], "body": None}


def retry_after_s(value: str | None) -> float | None:
    """The wait a ``Retry-After`` header asks for (delay-seconds or an HTTP-date, RFC 9110 10.2.3), at most
    ``RETRY_AFTER_MAX_S``; None when there is none or it cannot be read."""
    value = (value or "").strip()
    if not value:
        return None
    if _DELAY_SECONDS.fullmatch(value):
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        seconds = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp() - datetime.now(UTC).timestamp()
    return min(max(0.0, seconds), RETRY_AFTER_MAX_S)


def _error_body(response: Response) -> str:
    raw = response.body
    try:
        json.loads(raw)
        return raw.decode()
    except ValueError:
        return json.dumps({"error": {"message": raw[:500].decode(errors="replace")}})


def assemble_body(sink: StreamSink, *, chat: bool, model: str | None, choices: int = 1) -> dict[str, Any]:
    """The streamed events as the one body a non-streamed request returns. Every event is checked (an object,
    choices a list of objects, a delta an object, text a string, an index of one of the ``choices`` asked for): one
    that is not raises BadResponse, which fails the record, not the job."""
    texts: dict[int, list[str]] = {}
    finish: dict[int, str | None] = {}
    first: dict[str, Any] = {}
    usage = None
    keys = ("content",) if chat else ("text",)
    for data in [*sink.tokens, *sink.others]:
        if data == b"[DONE]":
            continue
        event, listed = event_choices(data)
        first = first or event
        usage = event.get("usage") or usage
        for choice in listed:
            index = _index(choice, choices, data)
            texts.setdefault(index, []).append(choice_text(choice, data, chat, keys))
            reason = choice.get("finish_reason")
            if reason is not None and not isinstance(reason, str):
                raise BadResponse(f"a finish_reason is a {type(reason).__name__}; event starts {data[:80]!r}")
            finish[index] = reason or finish.get(index)
    return {"id": first.get("id"), "object": "chat.completion" if chat else "text_completion",
            "created": first.get("created"), "model": first.get("model") or model,
            "choices": [_choice(i, "".join(texts[i]), finish.get(i), chat) for i in sorted(texts)], "usage": usage}


def _index(choice: dict[str, Any], choices: int, data: bytes) -> int:
    index = choice.get("index")
    index = 0 if index is None else index  # a server that sends one choice may leave its index out
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < choices:
        raise BadResponse(f"a choice's index is {json.dumps(index)[:20]}, not one of the {choices} asked for; "
                          f"event starts {data[:80]!r}")
    return index


def _choice(index: int, text: str, finish_reason: str | None, chat: bool) -> dict[str, Any]:
    if chat:
        return {"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
    return {"index": index, "text": text, "finish_reason": finish_reason}
