"""One attempt of one batch record against an OpenAI-compatible server, through the runner's HTTP client and SSE
parser (``runner/http.py``, ``runner/sse.py``, ``runner/backends/openai.py``): no second client.

Every request is sent streaming with ``stream_options.include_usage``: the client's idle read timeout then catches a
server that hangs half way (a non-streamed response is silent until it ends), and the usage event gives the tokens
the bill is made of. The stream is reassembled into the body a non-streamed request returns (``chat.completion`` or
``text_completion`` with ``choices`` and ``usage``), which is what an OpenAI batch output line carries in
``response.body``.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from infercost.batch.inputs import BatchRecord
from infercost.runner.backends.openai import StreamSink, parse_response
from infercost.runner.http import HttpClient, Response
from infercost.runner.records import RequestSpec

RETRYABLE = frozenset({"timeout", "dropped", "connect", "retryable_http"})
HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}


def request_body(record: BatchRecord) -> bytes:
    body = {**record.body, "stream": True, "stream_options": {"include_usage": True}}
    return json.dumps(body).encode()


async def send_record(client: HttpClient, record: BatchRecord, n_in_est: int, headers: dict[str, str]) -> dict:
    """One attempt; never raises for server behaviour. Returns the outcome: ``ok`` with the response body, or a
    failure ``kind`` (retryable or not) with its reason; tokens from ``usage`` where the server reported them."""
    sink = StreamSink()
    path = record.url.removeprefix("/v1")
    response = await client.request("POST", path, request_body(record), headers, sink)
    chat = record.url.endswith("/chat/completions")
    spec = RequestSpec(seq=record.idx, prompt="", input_len=n_in_est, output_len=record.max_out or 0)
    measured = parse_response(response, sink, spec, chat=chat)
    latency_ms = ((measured.t_last or time.perf_counter()) - measured.t0) * 1e3
    outcome: dict[str, Any] = {"idx": record.idx, "latency_ms": latency_ms, "request_id": _request_id(response),
                               "status_code": response.status or None}
    if not measured.ok:
        return {**outcome, **_failure(response, measured.status, measured.error)}
    usage_ok = measured.n_in_source == "usage" and measured.n_out_source == "usage"
    body = assemble_body(sink, chat=chat, model=record.body.get("model"))
    return {**outcome, "state": "ok", "kind": "ok", "n_in": measured.n_in, "n_out": measured.n_out,
            "usage_reported": int(usage_ok), "body": json.dumps(body, ensure_ascii=False)}


def _request_id(response: Response) -> str:
    return response.headers.get("x-request-id") or f"req_{uuid.uuid4().hex[:24]}"


def _failure(response: Response, status: str, error: str | None) -> dict[str, Any]:
    """HTTP errors keep the server's status and body (OpenAI puts them in ``response``); transport failures have
    no response. 429 and 5xx are worth retrying, other 4xx are the request's fault and are not."""
    if status == "http_error" and response.status:
        retry = response.status == 429 or response.status >= 500
        return {"state": "failed", "kind": "retryable_http" if retry else "http_error",
                "reason": (error or f"HTTP {response.status}")[:500], "body": _error_body(response)}
    return {"state": "failed", "kind": status, "reason": (error or status)[:500], "body": None}


def _error_body(response: Response) -> str:
    raw = response.body
    try:
        json.loads(raw)
        return raw.decode()
    except ValueError:
        return json.dumps({"error": {"message": raw[:500].decode(errors="replace")}})


def assemble_body(sink: StreamSink, *, chat: bool, model: str | None) -> dict[str, Any]:
    """The streamed events as the one body a non-streamed request returns."""
    texts: dict[int, list[str]] = {}
    finish: dict[int, str | None] = {}
    first: dict[str, Any] = {}
    usage = None
    for data in [*sink.tokens, *sink.others]:
        if data == b"[DONE]":
            continue
        event = json.loads(data)
        first = first or event
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            index = choice.get("index", 0)
            piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
            texts.setdefault(index, []).append(piece or "")
            finish[index] = choice.get("finish_reason") or finish.get(index)
    return {"id": first.get("id"), "object": "chat.completion" if chat else "text_completion",
            "created": first.get("created"), "model": first.get("model") or model,
            "choices": [_choice(i, "".join(texts[i]), finish.get(i), chat) for i in sorted(texts)], "usage": usage}


def _choice(index: int, text: str, finish_reason: str | None, chat: bool) -> dict[str, Any]:
    if chat:
        return {"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
    return {"index": index, "text": text, "finish_reason": finish_reason}
