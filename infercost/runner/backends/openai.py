"""Any OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, Ollama): streaming completions or chat.

The HTTP client stamps each read when it arrives, then hands it to a ``StreamSink``: the SSE decoder and one
regular expression (a choice whose text, content or reasoning is a non-empty string: DESIGN's "token-bearing
chunk") keep the token times as they come, so a finished stream needs almost no work. Only the event carrying
``usage`` is decoded as JSON, after the stream ended. Work per read stays small and even: when 50 streams end
together, nothing piles up on the event loop while other streams' bytes wait for their timestamps.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from itertools import pairwise
from typing import Any

from infercost.errors import InputError
from infercost.runner.backends import BackendOptions
from infercost.runner.http import HttpClient, Response
from infercost.runner.records import RequestRecord, RequestSpec
from infercost.runner.sse import EventDecoder

_TOKEN_BEARING = re.compile(rb'"(?:text|content|reasoning_content|reasoning)"\s*:\s*"(?!")')
# Common English words that nearly every BPE vocabulary holds as one token with its leading space.
WORDS = (
    "the of and to in is was for on that with as by at from his her an are were which this be or had not but "
    "one all their they has been have its who more new can other after first time two may some into people only "
    "over would year city state world when most water used also between made such many three part under work "
    "long known while where life south north west east group high large small game house music name place "
    "family early school found home power form river line body light book field road point story team land "
    "air sea army war art film data report market company order system service level church station club"
).split()
PATHS = {"completions": "/completions", "chat": "/chat/completions"}


class OpenAIBackend:
    name = "openai"
    batched = False

    def __init__(self, options: BackendOptions) -> None:
        if not options.base_url:
            raise InputError("base_url", "the openai backend needs --base-url, e.g. http://127.0.0.1:8000/v1")
        if options.api not in PATHS:
            raise InputError("api", f"{options.api!r} is not one of {', '.join(PATHS)}")
        self.options = options
        self.chat = options.api == "chat"
        try:
            self.client = HttpClient(options.base_url, read_timeout=options.read_timeout_s,
                                     total_timeout=options.total_timeout_s)
        except ValueError as error:
            raise InputError("base_url", str(error)) from None
        self.headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        key = os.environ.get(options.api_key_env) if options.api_key_env else None
        if key:  # read from the environment at start; never written anywhere
            self.headers["Authorization"] = f"Bearer {key}"
        self.count_tokens = _token_counter(options.tokenizer)

    async def start(self) -> dict[str, Any]:
        """Ask the server what it is: ``/models`` and its Server header (the engine half of the fingerprint)."""
        response = await self.client.request("GET", "/models", headers=self.headers)
        if response.error and response.status == 0:
            raise InputError("base_url", f"cannot reach {self.options.base_url}: {response.error}")
        models = []
        if response.status == 200:
            try:
                models = [m.get("id") for m in json.loads(response.body).get("data", [])]
            except (ValueError, AttributeError):
                models = []
        return {"engine": "openai-compatible", "base_url": self.options.base_url, "api": self.options.api,
                "server": response.headers.get("server"), "served_models": models, "model": self.options.model}

    def make_prompt(self, n_tokens: int, seed: int) -> str:
        rng = random.Random(seed)
        return f"r{seed}" + "".join(" " + rng.choice(WORDS) for _ in range(max(0, n_tokens - 1)))

    def body(self, spec: RequestSpec) -> bytes:
        body: dict[str, Any] = {"model": self.options.model, "max_tokens": spec.output_len, "stream": True,
                                "stream_options": {"include_usage": True}, "temperature": 0.0}
        if self.chat:
            body["messages"] = [{"role": "user", "content": spec.prompt}]
        else:
            body["prompt"] = spec.prompt
        if self.options.force_output:
            body.update(min_tokens=spec.output_len, ignore_eos=True)
        body.update(self.options.extra_body)
        return json.dumps(body).encode()

    async def send(self, spec: RequestSpec) -> RequestRecord:
        sink = StreamSink()
        response = await self.client.request("POST", PATHS[self.options.api], self.body(spec), self.headers, sink)
        return parse_response(response, sink, spec, chat=self.chat, count_tokens=self.count_tokens)

    async def send_batch(self, specs: list[RequestSpec]) -> list[RequestRecord]:
        return list(await asyncio.gather(*(self.send(spec) for spec in specs)))

    async def close(self) -> None:
        await self.client.close()


def _token_counter(tokenizer_id: str | None):
    if not tokenizer_id:
        return None
    from infercost.tokenizers import get_tokenizer

    return get_tokenizer(tokenizer_id).count


class StreamSink:
    """Decodes an SSE body as it arrives: token-event times in ``times``, their payloads and the other events."""

    __slots__ = ("decoder", "times", "tokens", "others")

    def __init__(self) -> None:
        self.decoder = EventDecoder()
        self.times: list[float] = []
        self.tokens: list[bytes] = []  # payloads of token-bearing events (decoded only to count with a tokenizer)
        self.others: list[bytes] = []  # role-only deltas, usage, errors, [DONE]

    def __call__(self, t: float, chunk: bytes) -> None:
        for when, data in self.decoder.feed(t, chunk):
            self._event(when, data)

    def close(self) -> None:
        for when, data in self.decoder.close():
            self._event(when, data)

    def _event(self, t: float, data: bytes) -> None:
        if _TOKEN_BEARING.search(data):
            self.times.append(t)
            self.tokens.append(data)
        else:
            self.others.append(data)


def parse_response(response: Response, sink: StreamSink, spec: RequestSpec, *, chat: bool,
                   count_tokens=None) -> RequestRecord:
    """A finished (or failed) streaming response to a record. Pure apart from the optional token counter."""
    record = RequestRecord(seq=spec.seq, t0=response.t0, n_out_expected=spec.output_len)
    if response.status == 0:
        kind = (response.error or "connect: no response").split(":", 1)[0]
        return _failed(record, kind if kind in ("timeout", "dropped") else "connect", response.error)
    if response.status != 200:
        return _failed(record, "http_error", f"HTTP {response.status}: {response.body[:300].decode(errors='replace')}")
    sink.close()
    times = sink.times
    if times:
        record.t_first, record.t_last = times[0], times[-1]
        record.itl = [b - a for a, b in pairwise(times)]
    if response.error:  # timed out or dropped after the headers: partial times kept, the request failed
        return _failed(record, response.error.split(":", 1)[0], response.error)
    errors = [data for data in sink.others if data.startswith(b'{"error"')]
    if errors:
        return _failed(record, "http_error", "error event in stream: " + errors[0][:300].decode(errors="replace"))
    try:
        usage = _usage(sink.others) or _usage(sink.tokens[-1:])
    except ValueError as error:
        return _failed(record, "bad_response", f"undecodable event: {error}")
    if not times:
        return _failed(record, "bad_response", "the stream carried no tokens")
    _count(record, usage, sink.tokens, spec, chat, count_tokens, len(times))
    return record


def _failed(record: RequestRecord, status: str, error: str | None) -> RequestRecord:
    record.status, record.error = status, error
    return record


def _usage(events: list[bytes]) -> dict | None:
    """The last ``usage`` object any of these events carries (decoded lazily, newest first)."""
    for data in reversed(events):
        if b'"usage"' in data and data != b"[DONE]":
            usage = json.loads(data).get("usage")
            if usage:
                return usage
    return None


def _count(record: RequestRecord, usage: dict | None, tokens: list[bytes], spec: RequestSpec, chat: bool, count_tokens,
           n_chunks: int) -> None:
    """n_in / n_out from the server's usage where reported, else a tokenizer, else the prompt and chunk counts."""
    if usage and usage.get("completion_tokens") is not None:
        record.n_out, record.n_out_source = int(usage["completion_tokens"]), "usage"
    elif count_tokens is not None:
        record.n_out, record.n_out_source = count_tokens(_text(tokens, chat)), "tokenizer"
    else:
        record.n_out, record.n_out_source = n_chunks, "chunks"
    if usage and usage.get("prompt_tokens") is not None:
        record.n_in, record.n_in_source = int(usage["prompt_tokens"]), "usage"
    elif count_tokens is not None and isinstance(spec.prompt, str):
        record.n_in, record.n_in_source = count_tokens(spec.prompt), "tokenizer"
    else:
        record.n_in, record.n_in_source = spec.input_len, "prompt"


def _text(tokens: list[bytes], chat: bool) -> str:
    """The generated text (only needed when counting with a tokenizer, so only decoded then)."""
    parts = []
    for data in tokens:
        choice = (json.loads(data).get("choices") or [{}])[0]
        if chat:
            delta = choice.get("delta") or {}
            parts.append(delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning") or "")
        else:
            parts.append(choice.get("text") or "")
    return "".join(parts)
