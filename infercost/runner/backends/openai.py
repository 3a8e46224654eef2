"""Any OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, Ollama): streaming completions or chat.

The HTTP client stamps each read when it arrives, then hands it to a ``StreamSink``: the SSE decoder and one
regular expression (a choice whose text, content or reasoning is a non-empty string: DESIGN's "token-bearing
chunk") keep the token times as they come, so a finished stream needs almost no work. Only the event carrying
``usage`` is decoded as JSON, after the stream ended. Work per read stays small and even: when 50 streams end
together, nothing piles up on the event loop while other streams' bytes wait for their timestamps.

What a server sends is checked, never trusted: a ``usage`` that is not an object of whole numbers, a token event
that does not decode, bytes that are not UTF-8, a stream without its terminator (``[DONE]`` or a
``finish_reason``), or fewer tokens than were forced make the request a failure with the reason, not a crash.
"""

from __future__ import annotations

import asyncio
import json
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
_FINISHED = re.compile(rb'"finish_reason"\s*:\s*"')
MAX_BODY_BASE_BYTES = 16 << 20  # a response may hold this much plus PER_TOKEN for each token asked for
MAX_BODY_PER_TOKEN_BYTES = 64 << 10  # ~200 bytes is usual; logprobs with top_logprobs=20 stay far under this

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


class BadResponse(ValueError):
    """What the server sent is not an OpenAI-compatible stream; the message says what was wrong."""


class Truncated(Exception):
    """The stream ended early: ``dropped`` (no terminator) or ``truncated`` (fewer tokens than forced)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind


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
        try:  # /models and other small calls: the idle timeout plus 10 s in all
            self.client = HttpClient(options.base_url, read_timeout=options.read_timeout_s,
                                     total_timeout=options.read_timeout_s + 10)
        except ValueError as error:
            raise InputError("base_url", str(error)) from None
        self.headers = {"Content-Type": "application/json", "Accept": "text/event-stream", **options.auth_headers()}
        self.count_tokens = _token_counter(options.tokenizer)

    async def start(self) -> dict[str, Any]:
        """Ask the server what it is: ``/models`` and its Server header (the engine half of the fingerprint)."""
        response = await self.client.request("GET", "/models", headers=self.headers)
        if response.error and response.status == 0:
            raise InputError("base_url", f"cannot reach {self.options.base_url}: {response.error}")
        models = _served_models(response.body) if response.status == 200 else []
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
        return (await self._exchange(spec))[0]

    async def send_for_text(self, spec: RequestSpec) -> tuple[RequestRecord, list[str] | None]:
        """The record and the output as the stream's pieces (one per token-bearing event), for consistency checks;
        None when the request failed. Not for measured requests: decoding every event costs the hot path time."""
        record, sink = await self._exchange(spec)
        if not record.ok:
            return record, None
        try:
            return record, [_text([data], self.chat) for data in sink.tokens]
        except BadResponse:
            return record, None

    async def _exchange(self, spec: RequestSpec) -> tuple[RequestRecord, StreamSink]:
        sink = StreamSink()
        response = await self.client.request(
            "POST", PATHS[self.options.api], self.body(spec), self.headers, sink,
            total_timeout=self.options.request_deadline_s(spec.output_len),
            max_body=MAX_BODY_BASE_BYTES + MAX_BODY_PER_TOKEN_BYTES * spec.output_len)
        record = parse_response(response, sink, spec, chat=self.chat, count_tokens=self.count_tokens,
                                forced=self.options.force_output)
        return record, sink

    async def send_batch(self, specs: list[RequestSpec]) -> list[RequestRecord]:
        return list(await asyncio.gather(*(self.send(spec) for spec in specs)))

    async def preconnect(self, count: int) -> None:
        """Connections for a resumed level, whose warm-up was done by an earlier session."""
        await self.client.preconnect(count)

    async def close(self) -> None:
        await self.client.close()


def _served_models(body: bytes) -> list[str]:
    """The model ids of a ``/models`` answer; whatever is not one (malformed JSON or shape) is left out."""
    try:
        listing = json.loads(body)
    except ValueError:
        return []
    data = listing.get("data") if isinstance(listing, dict) else None
    items = data if isinstance(data, list) else []
    return [item["id"] for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)]


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
                   count_tokens=None, forced: bool = True) -> RequestRecord:
    """A finished (or failed) streaming response to a record. Pure apart from the optional token counter.

    ``forced``: the output length was forced, so a server reporting fewer tokens than asked truncated the output."""
    record = RequestRecord(seq=spec.seq, t0=response.t0, n_out_expected=spec.output_len)
    if response.status == 0:
        kind = (response.error or "connect: no response").split(":", 1)[0]
        return _failed(record, kind if kind in ("timeout", "dropped", "bad_response") else "connect", response.error)
    if response.status != 200:
        return _failed(record, "http_error", _http_error(response))
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
    if not times:
        kind = response.headers.get("content-type", "no Content-Type")
        return _failed(record, "bad_response", f"the stream carried no tokens ({kind[:60]})")
    try:
        _count(record, _stream_usage(sink), sink.tokens, spec, chat, count_tokens, len(times))
        _check_end(record, sink, forced)
    except BadResponse as error:
        return _failed(record, "bad_response", str(error))
    except Truncated as error:
        return _failed(record, error.kind, str(error))
    return record


def _check_end(record: RequestRecord, sink: StreamSink, forced: bool) -> None:
    """A stream is whole when it ended with ``[DONE]`` or a ``finish_reason`` and, with a forced length, the
    server's own count is not short of it. (Chunk and tokenizer counts are not the server's and are not held to it.)"""
    last = sink.tokens[-1:] + sink.others[-3:]
    if b"[DONE]" not in sink.others and not any(_FINISHED.search(data) for data in last):
        raise Truncated("dropped", f"the stream ended without [DONE] or a finish_reason, after {len(sink.times)} "
                                   "token-bearing chunks")
    if forced and record.n_out_source == "usage" and record.n_out < (record.n_out_expected or 0):
        raise Truncated("truncated", f"the server reported {record.n_out} completion tokens where "
                                     f"{record.n_out_expected} were forced")


def _http_error(response: Response) -> str:
    where = response.headers.get("location")
    if 300 <= response.status < 400 and where:
        return f"HTTP {response.status}: redirect to {where[:200]} (not followed: give --base-url the final URL)"
    return f"HTTP {response.status}: {response.body[:300].decode(errors='replace')}"


def _failed(record: RequestRecord, status: str, error: str | None) -> RequestRecord:
    record.status, record.error = status, error
    return record


def _stream_usage(sink: StreamSink) -> dict | None:
    """The stream's usage (in its own event, or in the last token event), its text checked to be UTF-8."""
    try:
        b"".join(sink.tokens).decode("utf-8")  # microseconds, once per request; the text must be text
    except UnicodeDecodeError as error:
        raise BadResponse(f"a token event is not UTF-8 ({error.reason} at byte {error.start})") from None
    return _usage(sink.others) or _usage(sink.tokens[-1:])


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError both are
        raise BadResponse(f"undecodable event: {error}; event starts {data[:80]!r}") from None


def _usage(events: list[bytes]) -> dict | None:
    """The last ``usage`` object any of these events carries (decoded lazily, newest first)."""
    for data in reversed(events):
        if b'"usage"' in data and data != b"[DONE]":
            event = _json(data)
            usage = event.get("usage") if isinstance(event, dict) else None
            if usage is None:
                continue
            if not isinstance(usage, dict):
                raise BadResponse(f"usage is a {type(usage).__name__}, not an object: {str(usage)[:80]}")
            return usage
    return None


MAX_COUNT = 2**63 - 1  # a store's INTEGER (SQLite's and PostgreSQL's BIGINT): no count of tokens comes near it


def _whole(usage: dict, name: str) -> int | None:
    value = usage.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadResponse(f"usage.{name} is {value!r:.80}, not a whole number")
    if value > MAX_COUNT:
        raise BadResponse(f"usage.{name} is {value:.3e}, more than any response holds (a 64-bit count)")
    return value


def _count(record: RequestRecord, usage: dict | None, tokens: list[bytes], spec: RequestSpec, chat: bool, count_tokens,
           n_chunks: int) -> None:
    """n_in / n_out from the server's usage where reported, else a tokenizer, else the prompt and chunk counts."""
    usage = usage or {}
    n_out, n_in = _whole(usage, "completion_tokens"), _whole(usage, "prompt_tokens")
    if n_out is not None:
        record.n_out, record.n_out_source = n_out, "usage"
    elif count_tokens is not None:
        record.n_out, record.n_out_source = count_tokens(_text(tokens, chat)), "tokenizer"
    else:
        record.n_out, record.n_out_source = n_chunks, "chunks"
    if n_in is not None:
        record.n_in, record.n_in_source = n_in, "usage"
    elif count_tokens is not None and isinstance(spec.prompt, str):
        record.n_in, record.n_in_source = count_tokens(spec.prompt), "tokenizer"
    else:
        record.n_in, record.n_in_source = spec.input_len, "prompt"


def _text(tokens: list[bytes], chat: bool) -> str:
    """The generated text (only needed when counting with a tokenizer, so only decoded then)."""
    parts = []
    keys = ("content", "reasoning_content", "reasoning") if chat else ("text",)
    for data in tokens:
        _, choices = event_choices(data)
        if not choices:
            raise BadResponse(f"a token event's choices is not a list of objects; event starts {data[:80]!r}")
        parts.append(choice_text(choices[0], data, chat, keys))
    return "".join(parts)


def event_choices(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One stream event decoded and checked: an object whose ``choices``, where it has any, are objects."""
    event = _json(data)
    if not isinstance(event, dict):
        raise BadResponse(f"an event is a JSON {type(event).__name__}, not an object; event starts {data[:80]!r}")
    choices = event.get("choices")
    if choices is None:
        return event, []
    if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
        raise BadResponse(f"a token event's choices is not a list of objects; event starts {data[:80]!r}")
    return event, choices


def choice_text(choice: dict[str, Any], data: bytes, chat: bool, keys: tuple[str, ...]) -> str:
    """The text a choice of a stream event adds (the first of ``keys`` that it, or its delta for chat, holds),
    checked to be a string; "" for none."""
    source = choice.get("delta") if chat else choice
    if source is None:
        return ""
    if not isinstance(source, dict):
        raise BadResponse(f"a token event's delta is not an object; event starts {data[:80]!r}")
    text = next((source[key] for key in keys if source.get(key) not in (None, "")), "")
    if not isinstance(text, str):
        raise BadResponse(f"a token event's text is a {type(text).__name__}; event starts {data[:80]!r}")
    return text
