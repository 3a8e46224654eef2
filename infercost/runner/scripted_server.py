"""A local OpenAI-compatible server whose timing is scripted, and which logs what it actually sent.

It is the ground truth for the runner's accuracy: time to first token, the gap between tokens and tokens per
chunk are set by the script; each send is stamped with ``perf_counter()`` (the same monotonic clock a client on
this machine reads) and written to a JSONL log. Faults (an HTTP error, a hang, a stream dropped or stalled half
way) make the runner's failure handling testable against a real socket; so do malformed responses, sent as real
bytes (``MALFORMED``): a broken ``usage`` or token event, a stream that never ends (keep-alive comments, headers
that never end), a close-delimited stream cut half way, a huge line, invalid UTF-8, a non-SSE body, broken chunked
framing, a redirect, a server that echoes the Authorization header. Answers can also stop early as a real model's do
(``stop_every``: ``finish_reason: "stop"`` before ``max_tokens``), hold ``n`` choices, and be rate-limited with
``Retry-After`` (``rate_limit_every``: a window during which every request gets a 429).

One thread, non-blocking sockets and a ``select()`` loop: ``select`` takes its timeout in microseconds (epoll
rounds up to milliseconds), so the server sleeps until the next send is due instead of spinning, which would
also get a real-time task throttled by the kernel. Pin it to its own core when measuring.

    python -m infercost.runner.scripted_server --ttft-ms 20 --gap-us 58.8 --tokens-per-chunk 4 --log sent.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import itertools
import json
import math
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

_clock = time.perf_counter
EARLY_S = 20e-6  # wake this much before a send is due: waking takes about that long
FAULTS = ("error", "hang", "drop", "stall")
MALFORMED = {  # fault name: what the server does (give it as --fault NAME, on every --fault-every'th request)
    "usage_list": "the usage event's usage is a list",
    "usage_number": "the usage event's usage is a number",
    "usage_text": "usage.completion_tokens is a string",
    "usage_huge": "usage.completion_tokens is 10**12, whatever max_tokens asked for",
    "usage_overflow": "usage.completion_tokens is 2**70, more than a 64-bit integer holds",
    "bad_token": "one token event half way is not JSON",
    "token_shape": "one token event half way has choices as an object, not a list",
    "token_array": "one token event half way is a JSON array, not an object",
    "choices_text": "one event half way has choices as a string",
    "delta_text": "one token event half way has its delta as a string",
    "content_number": "one token event half way has a number for its content (chat) or text (completions)",
    "bad_utf8": "one token event half way holds bytes that are not UTF-8",
    "short": "a well-formed stream with half the tokens asked for (usage says so)",
    "close_drop": "a stream delimited by connection close, closed half way (no [DONE], no finish_reason)",
    "no_terminator": "a chunked stream that ends cleanly but without [DONE] or a finish_reason",
    "keepalive": "after the headers, SSE comments forever (each sooner than any idle timeout)",
    "endless_head": "a status line, then header lines forever",
    "huge_line": "one 24 MiB line with no newline, then a normal end",
    "not_sse": "a 200 with a JSON (non-streaming) body",
    "bad_chunk": "a chunk size that is not hexadecimal",
    "bad_status": "a status line that is not HTTP",
    "redirect": "a 307 to another URL",
    "echo_auth": "a 401 whose body echoes the Authorization header, which /models also echoes in Server",
    "bad_models": "/models answers {\"data\": 5} (the streams are fine)",
}
HUGE_LINE_BYTES = 24 << 20  # over the runner's cap for short outputs (16 MiB + 64 KiB a token)


@dataclass
class Script:
    """Timing and faults. A request may override any field with a ``"script": {...}`` object in its body."""

    ttft_ms: float = 20.0
    gap_us: float = 1000.0  # between consecutive tokens
    tokens_per_chunk: int = 1
    fault: str | None = None  # error | hang | drop | stall, or one of MALFORMED
    fault_every: int = 1  # with ``fault``: every Nth request (server-wide count) gets it; 1 = every request
    keepalive_ms: float = 100.0  # keepalive / endless_head: the gap between the bytes that never end the response
    error_every: int = 0  # every Nth request (server-wide count) gets the fault; 0 = never
    hang_every: int = 0
    drop_every: int = 0
    stall_every: int = 0
    degrade_per_s: float = 0.0  # TTFT and the token gap grow by this fraction per second since the server started
    ttft_ms_per_input_token: float = 0.0  # prefill: TTFT = ttft_ms + this × the prompt's words
    require_auth: str | None = None  # the exact Authorization header every request must send (and a Host header
    # that is this server's host:port, nothing more), or get a 401
    vary_when_busy: int = 0  # a request arriving with this many streams already running (0: never) gets an output
    # of its own from half way on, as batched kernels can change a greedy output under load
    stop_every: int = 0  # a prompt whose CRC-32 is a multiple of this (0: none) ends after a third of max_tokens with
    # finish_reason "stop", as a model that reaches its end of text does; the same prompt stops early every time
    rate_limit_every: int = 0  # every Nth request (0: never) opens a window of retry_after_s during which every
    # request gets a 429 with Retry-After: the time left in the window
    retry_after_s: float = 1.0
    retry_after_date: int = 0  # 1: Retry-After as an HTTP-date (whole seconds, rounded up) instead of seconds
    max_model_len: int = 0  # > 0: /models reports this context, as vLLM does (0: none reported)

    def fault_for(self, n: int) -> str | None:
        if self.fault:
            return self.fault if n % max(1, self.fault_every) == 0 else None
        for name in FAULTS:
            every = getattr(self, f"{name}_every")
            if every and n % every == 0:
                return name
        return None


@dataclass
class _Stream:
    """One streaming response being sent on schedule."""

    conn: _Conn
    entry: dict
    chat: bool
    usage: bool
    n_out: int
    per_chunk: int
    t_first: float
    gap_s: float
    fault: str | None
    sent_tokens: int = 0
    chunk: int = 0
    templates: list[tuple[bytes, int]] = field(default_factory=list)  # per choice: one HTTP chunk holding one SSE
    # event, with %x (size) and %s (the tokens' text), and the bytes of the event without the text
    finish: str | None = None  # a finish_reason sent in an event of its own at the end (an early stop)
    chunked: bool = True  # False: the body ends when the connection closes (no framing)
    usage_obj: object = None  # what the usage event says, when a fault replaces it
    word: str = "t"  # the tokens' stem: " t0 t1 ..."; a varied output switches to its own stem half way

    def due(self) -> float:
        return self.t_first + self.chunk * self.per_chunk * self.gap_s

    def frame(self, payload: bytes) -> bytes:
        return _chunk(payload) if self.chunked else payload


@dataclass
class _Conn:
    sock: socket.socket
    inbuf: bytes = b""
    outbuf: bytes | bytearray = b""
    busy: bool = False  # a response is in progress; later pipelined requests wait
    hung: bool = False
    close_after: bool = False
    t_arrival: float = 0.0
    auth: bool = False
    auth_value: str = ""  # kept only to echo it back (the echo_auth fault); never logged


def _token_template(n: int, chat: bool, chunked: bool = True, index: int = 0) -> tuple[bytes, int]:
    """The bytes of a token event with holes for the chunk size and the text: json.dumps per token is too slow
    to keep 50 streams on schedule from one core. Token text here never needs JSON escaping."""
    obj = _chat_obj(n, {"content": "\0"}, index) if chat else _text_obj(n, "\0", index)
    event = b"data: " + json.dumps(obj, separators=(",", ":")).encode().replace(b"%", b"%%") + b"\n\n"
    before, after = event.split(b"\\u0000")
    fixed_len = len(before) + len(after) - before.count(b"%%") - after.count(b"%%")
    if not chunked:  # nothing to frame: one hole, the text
        return before + b"%s" + after, fixed_len
    return b"%x\r\n" + before + b"%s" + after + b"\r\n", fixed_len


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _event_bytes(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _event(obj: dict) -> bytes:
    return _chunk(_event_bytes(obj))


_SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_SSE_CLOSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
_BAD_TOKEN_EVENTS = {  # sent once, half way through an otherwise good stream
    "bad_token": b'data: {"choices":[{"index":0,"text":" broken"\n\n',
    "token_shape": b'data: {"choices":{"index":0,"text":" shape"}}\n\n',
    "bad_utf8": b'data: {"choices":[{"index":0,"text":" \xff\xfe bad"}]}\n\n',
    "token_array": b'data: [{"index":0,"text":" array","delta":{"content":" array"}}]\n\n',
    "choices_text": b'data: {"choices":"no choices here"}\n\n',
    "delta_text": b'data: {"choices":[{"index":0,"delta":"a string","text":" delta"}]}\n\n',
    "content_number": b'data: {"choices":[{"index":0,"delta":{"content":5},"text":5}]}\n\n',
}
HUGE_USAGE = {"usage_huge": 10**12, "usage_overflow": 2**70}  # completion_tokens these faults report
MAX_CHOICES = 128  # ``n`` as OpenAI bounds it


class ScriptedServer:
    def __init__(self, script: Script, *, host: str = "127.0.0.1", port: int = 0, log: Path | None = None) -> None:
        self.script, self.host = script, host
        self.listener = socket.create_server((host, port), backlog=1024)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.sel = selectors.SelectSelector()  # microsecond timeouts; a benchmark needs far fewer than 1024 sockets
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.heap: list[tuple[float, int, _Stream]] = []
        self.order = itertools.count()
        self.requests = 0
        self.stopping = False
        self.log_path = log
        self.entries: list[dict] = []  # written at exit: writing while streaming would delay the sends
        self.t_started = _clock()
        self.limited_until = 0.0  # perf_counter() when the rate-limit window ends

    # -- loop ---------------------------------------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Until ``stop()``: a signal handler only sets a flag, so no send is ever cut off from its log entry."""
        while not self.stopping:
            timeout = 0.05
            if self.heap:
                timeout = max(0.0, self.heap[0][0] - _clock() - EARLY_S)
            for key, mask in self.sel.select(timeout):
                if key.data is None:
                    self._accept()
                elif mask & selectors.EVENT_READ:
                    self._read(key.data)
                if key.data is not None and mask & selectors.EVENT_WRITE:
                    self._flush(key.data)
            self._send_due()

    def _accept(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while True:
                sock, _ = self.listener.accept()
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.sel.register(sock, selectors.EVENT_READ, _Conn(sock))

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        conn.t_arrival = _clock()  # a request's receive time is when its last bytes arrived, before parsing
        if not data:
            self._close(conn)
            return
        conn.inbuf += data
        self._next_request(conn)

    def _next_request(self, conn: _Conn) -> None:
        """Parse one complete request from the buffer, if there is one and no response is in progress."""
        if conn.busy or conn.hung:
            return
        end = conn.inbuf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = conn.inbuf[:end].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
        length = int(headers.get("content-length", "0"))
        if len(conn.inbuf) < end + 4 + length:
            return
        t_recv = conn.t_arrival
        body, conn.inbuf = conn.inbuf[end + 4: end + 4 + length], conn.inbuf[end + 4 + length:]
        method, path = (head[0].split(" ") + ["", ""])[:2]
        conn.close_after = headers.get("connection", "").lower() == "close"
        conn.auth = "authorization" in headers  # logged as a yes/no: the server never keeps a key either
        conn.auth_value = headers.get("authorization", "") if self.script.fault == "echo_auth" else ""
        refused = self._refused(headers)
        if refused:
            self._reply(conn, 401, {"error": {"message": refused}})
            return
        self._route(conn, method, path.split("?")[0], body, t_recv)

    def _refused(self, headers: dict[str, str]) -> str | None:
        """Why ``require_auth`` refuses these headers (the value sent is never repeated); None when it accepts."""
        if self.script.require_auth is None:
            return None
        if headers.get("host") != f"{self.host}:{self.port}":
            return f"the Host header is not {self.host}:{self.port}"
        if headers.get("authorization") != self.script.require_auth:
            return "wrong or missing Authorization header"
        return None

    # -- responses ----------------------------------------------------------------------------------------------
    def _route(self, conn: _Conn, method: str, path: str, body: bytes, t_recv: float) -> None:
        if method == "GET" and path.endswith("/models"):
            server = f"scripted (you sent {conn.auth_value})" if conn.auth_value else "scripted"
            context = {"max_model_len": self.script.max_model_len} if self.script.max_model_len else {}
            models = 5 if self.script.fault == "bad_models" else [{"id": "scripted", "object": "model", **context}]
            self._reply(conn, 200, {"object": "list", "data": models}, server)
        elif method == "POST" and path.endswith(("/completions", "/chat/completions")):
            try:
                request = json.loads(body)
                if not isinstance(request, dict):
                    raise ValueError("body is not an object")
            except ValueError as error:
                self._reply(conn, 400, {"error": {"message": f"bad JSON: {error}"}})
                return
            self._generate(conn, request, path.endswith("/chat/completions"), t_recv)
        else:
            self._reply(conn, 404, {"error": {"message": f"no route {method} {path}"}})

    def _reply(self, conn: _Conn, status: int, obj: dict, server: str = "scripted", extra: str = "") -> None:
        body = json.dumps(obj).encode()
        reason = {200: "OK", 307: "Temporary Redirect", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                  429: "Too Many Requests", 500: "Internal Server Error"}.get(status, "X")
        head = (f"HTTP/1.1 {status} {reason}\r\nServer: {server}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{extra}")
        self._write(conn, head.encode() + b"\r\n" + body)
        self._done(conn)

    def _malformed_reply(self, conn: _Conn, fault: str) -> bool:
        """Faults answered at once, without a token stream; False when ``fault`` is not one of them."""
        if fault == "echo_auth":
            self._reply(conn, 401, {"error": {"message": f"invalid credentials: {conn.auth_value}"}})
        elif fault == "redirect":
            self._reply(conn, 307, {}, extra="Location: http://127.0.0.1:9/v1/completions\r\n")
        elif fault == "not_sse":
            self._reply(conn, 200, {**_text_obj(self.requests, " t0 t1"), "usage": {"completion_tokens": 2}})
        elif fault == "bad_status":
            self._write(conn, b"HELLO THERE\r\nX: y\r\n\r\nnot http")
            self._close(conn)
        elif fault == "bad_chunk":
            self._write(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                              b"\r\nzz\r\ndata: x\n\n\r\n")
            conn.hung = True
        elif fault == "huge_line":
            self._write(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                              b"\r\n" + _chunk(b"data: " + b"x" * HUGE_LINE_BYTES) + _chunk(b"\n\ndata: [DONE]\n\n")
                        + b"0\r\n\r\n")
            self._done(conn)
        else:
            return False
        return True

    def _generate(self, conn: _Conn, request: dict, chat: bool, t_recv: float) -> None:
        self.requests += 1
        script = Script(**{**asdict(self.script), **_overrides(request.get("script"))})
        prompt = _prompt_text(request, chat)
        words = prompt.split()
        n_out = int(request.get("max_tokens") or request.get("max_completion_tokens") or 16)
        entry = {"n": self.requests, "tag": words[0] if words else "", "t_recv": t_recv, "n_in": len(words),
                 "n_out": 0, "fault": script.fault_for(self.requests), "auth": conn.auth, "chunks": []}
        if self._rate_limited(conn, script):
            self._log({**entry, "fault": "rate_limit"})
            return
        if entry["fault"] == "error":
            self._reply(conn, 500, {"error": {"message": "scripted failure"}})
            self._log(entry)
            return
        if entry["fault"] == "hang":
            conn.hung = True
            self._log(entry)
            return
        if not request.get("stream"):
            self._reply(conn, 400, {"error": {"message": "the scripted server only streams; set stream: true"}})
            return
        if self._malformed_reply(conn, entry["fault"]):
            self._log(entry)
            return
        conn.busy = True
        usage = bool((request.get("stream_options") or {}).get("include_usage"))
        slower = 1 + script.degrade_per_s * (t_recv - self.t_started)  # a server that slows down as it runs
        ttft_ms = (script.ttft_ms + script.ttft_ms_per_input_token * len(words)) * slower
        stream = _Stream(conn, entry, chat, usage, n_out, max(1, script.tokens_per_chunk),
                         t_recv + ttft_ms / 1e3, script.gap_us * slower / 1e6, entry["fault"])
        entry["choices"] = min(MAX_CHOICES, max(1, int(request.get("n") or 1)))
        if script.stop_every and zlib.crc32(prompt.encode()) % script.stop_every == 0:
            stream.n_out, stream.finish, entry["stopped"] = max(1, n_out // 3), "stop", True
        if script.vary_when_busy and len(self.heap) >= script.vary_when_busy:
            stream.word = f"v{self.requests}_"
        self._start_stream(stream, script)
        heapq.heappush(self.heap, (stream.due(), next(self.order), stream))

    def _rate_limited(self, conn: _Conn, script: Script) -> bool:
        """Every ``rate_limit_every``th request opens a window; inside it every request is answered 429 with the
        time left in ``Retry-After``, so a client that retries sooner than it says meets another 429."""
        now = _clock()
        if script.rate_limit_every and now >= self.limited_until and self.requests % script.rate_limit_every == 0:
            self.limited_until = now + script.retry_after_s
        if now >= self.limited_until:
            return False
        left = self.limited_until - now
        if script.retry_after_date:
            when = datetime.now(UTC) + timedelta(seconds=left)
            value = format_datetime(when.replace(microsecond=0) + timedelta(seconds=1), usegmt=True)
        else:
            value = str(math.ceil(left))
        error = {"message": "scripted rate limit", "type": "rate_limit_error", "code": "rate_limit_exceeded"}
        self._reply(conn, 429, {"error": error}, extra=f"Retry-After: {value}\r\n")
        return True

    def _start_stream(self, stream: _Stream, script: Script) -> None:
        fault, conn = stream.fault, stream.conn
        if fault in ("keepalive", "endless_head"):  # bytes forever, one every keepalive_ms: never a response
            stream.gap_s, stream.per_chunk = script.keepalive_ms / 1e3, 1
            head = b"HTTP/1.1 200 OK\r\n" if fault == "endless_head" else _SSE_HEAD
            self._write(conn, head)
            self._log(stream.entry)
            return
        stream.chunked = fault != "close_drop"
        if fault == "short":
            stream.n_out = max(1, stream.n_out // 2)
        stream.usage_obj = {"usage_list": [1, 2, 3], "usage_number": 12}.get(fault or "")
        self._write(conn, _SSE_HEAD if stream.chunked else _SSE_CLOSE_HEAD)
        if stream.chat:  # like OpenAI: a role-only delta first, which carries no token and must not count as one
            role = _chat_obj(stream.entry["n"], {"role": "assistant", "content": ""})
            self._write(conn, stream.frame(_event_bytes(role)))
        stream.templates = [_token_template(stream.entry["n"], stream.chat, stream.chunked, index)
                            for index in range(stream.entry["choices"])]

    def _send_due(self) -> None:
        while self.heap and self.heap[0][0] <= _clock():
            _, _, stream = heapq.heappop(self.heap)
            if stream.conn.sock.fileno() < 0:
                continue
            if self._send_chunk(stream):
                heapq.heappush(self.heap, (stream.due(), next(self.order), stream))

    def _send_chunk(self, stream: _Stream) -> bool:
        """Send the next chunk of tokens; False when the stream has ended (or the fault ended it)."""
        if stream.fault in ("keepalive", "endless_head"):
            line = b": keep-alive\n\n" if stream.fault == "keepalive" else b"X-Pad-%d: waiting\r\n" % stream.chunk
            self._write(stream.conn, _chunk(line) if stream.fault == "keepalive" else line)
            stream.chunk += 1
            return True
        if stream.fault in ("drop", "stall", "close_drop") and stream.sent_tokens >= stream.n_out // 2:
            self._log(stream.entry)
            if stream.fault == "stall":
                stream.conn.hung = True
            else:
                self._close(stream.conn)
            return False
        if stream.fault in _BAD_TOKEN_EVENTS and stream.chunk == max(1, stream.n_out // stream.per_chunk // 2):
            self._write(stream.conn, stream.frame(_BAD_TOKEN_EVENTS[stream.fault]))
        k = min(stream.per_chunk, stream.n_out - stream.sent_tokens)
        word = stream.word if stream.sent_tokens >= stream.n_out // 2 else "t"
        text = "".join([f" {word}{stream.sent_tokens + i}" for i in range(k)]).encode()
        if stream.chunked:
            data = b"".join(template % (fixed_len + len(text), text) for template, fixed_len in stream.templates)
        else:
            data = b"".join(template % text for template, _ in stream.templates)
        t = _clock()
        self._write(stream.conn, data)
        stream.entry["chunks"].append((t, k))
        stream.sent_tokens += k
        stream.chunk += 1
        if stream.sent_tokens < stream.n_out:
            return True
        self._end_stream(stream)
        return False

    def _end_stream(self, stream: _Stream) -> None:
        entry = stream.entry
        entry["n_out"] = stream.sent_tokens
        tail = b""
        for index in range(entry["choices"] if stream.finish else 0):
            obj = (_chat_obj(entry["n"], {}, index) if stream.chat else _text_obj(entry["n"], "", index))
            obj["choices"][0]["finish_reason"] = stream.finish
            tail += stream.frame(_event_bytes(obj))
        if stream.usage:
            completion = stream.sent_tokens * entry["choices"]
            usage = {"prompt_tokens": entry["n_in"], "completion_tokens": completion,
                     "total_tokens": entry["n_in"] + completion}
            if stream.fault == "usage_text":
                usage["completion_tokens"] = str(stream.sent_tokens)
            usage["completion_tokens"] = HUGE_USAGE.get(stream.fault or "", usage["completion_tokens"])
            entry["usage_completion_tokens"] = usage["completion_tokens"]  # what the server billed, in effect
            obj = _chat_obj(entry["n"], None) if stream.chat else _text_obj(entry["n"], None)
            tail += _event({**obj, "choices": [], "usage": stream.usage_obj or usage})
        done = b"" if stream.fault == "no_terminator" else _chunk(b"data: [DONE]\n\n")
        self._write(stream.conn, tail + done + b"0\r\n\r\n")
        self._log(entry)
        stream.conn.busy = False
        self._done(stream.conn)

    def _done(self, conn: _Conn) -> None:
        if conn.close_after:
            self._close(conn)
        else:
            self._next_request(conn)

    # -- socket plumbing ----------------------------------------------------------------------------------------
    def _write(self, conn: _Conn, data: bytes) -> None:
        if conn.sock.fileno() < 0:
            return
        if conn.outbuf:
            conn.outbuf += data
            return
        try:
            sent = conn.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._close(conn)
            return
        if sent < len(data):  # the client is not reading fast enough: queue, and the log shows the delay
            conn.outbuf = bytearray(memoryview(data)[sent:])
            self.sel.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)

    def _flush(self, conn: _Conn) -> None:
        """Send what is queued; a bytearray drops what was sent from its front without copying the rest."""
        if conn.sock.fileno() < 0:
            return
        try:
            sent = conn.sock.send(conn.outbuf)
        except BlockingIOError:
            return
        except OSError:
            self._close(conn)
            return
        del conn.outbuf[:sent]
        if not conn.outbuf:
            conn.outbuf = b""
            self.sel.modify(conn.sock, selectors.EVENT_READ, conn)

    def _close(self, conn: _Conn) -> None:
        if conn.sock.fileno() >= 0:
            self.sel.unregister(conn.sock)
            conn.sock.close()

    def stop(self, *_: object) -> None:
        self.stopping = True

    def _log(self, entry: dict) -> None:
        self.entries.append(entry)

    def write_log(self) -> None:
        if self.log_path is None:
            return
        with open(self.log_path, "a", encoding="utf-8") as out:
            for entry in self.entries:
                first = entry["chunks"][0][0] if entry["chunks"] else None
                last = entry["chunks"][-1][0] if entry["chunks"] else None
                out.write(json.dumps({**entry, "t_first": first, "t_last": last}) + "\n")
        self.entries.clear()


def _overrides(raw: object) -> dict:
    names = {f.name for f in fields(Script)}
    return {k: v for k, v in raw.items() if k in names} if isinstance(raw, dict) else {}


def _prompt_text(request: dict, chat: bool) -> str:
    if chat:
        return " ".join(str(m.get("content", "")) for m in request.get("messages") or [] if isinstance(m, dict))
    prompt = request.get("prompt", "")
    if isinstance(prompt, list):  # token ids: one "word" each
        return " ".join(str(t) for t in prompt)
    return str(prompt)


def _text_obj(n: int, text: str | None, index: int = 0) -> dict:
    choices = [] if text is None else [{"index": index, "text": text, "finish_reason": None}]
    return {"id": f"cmpl-{n}", "object": "text_completion", "model": "scripted", "choices": choices}


def _chat_obj(n: int, delta: dict | None, index: int = 0) -> dict:
    choices = [] if delta is None else [{"index": index, "delta": delta, "finish_reason": None}]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "model": "scripted", "choices": choices}


def read_log(path: Path) -> list[dict]:
    """The server's record of what it sent, one dict per request, in the order requests ended."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


@contextlib.contextmanager
def running(script: Script | None = None, *, log: Path | None = None, cpu: int | None = None,
            wrapper: Sequence[str] = ()) -> Iterator[str]:
    """Start the server in a subprocess (pinned to ``cpu`` with ``taskset`` if given, run under ``wrapper``, e.g.
    ``["nice", "-n", "-20"]``); yield its base URL."""
    script = script or Script()
    cmd = [sys.executable, "-m", "infercost.runner.scripted_server", "--port", "0"]
    for name, value in asdict(script).items():
        if value is not None:
            cmd += [f"--{name.replace('_', '-')}", str(value)]
    if log is not None:
        cmd += ["--log", str(log)]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    cmd = [*wrapper, *cmd]
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        if not line.startswith("READY "):
            raise RuntimeError(f"scripted server did not start: {line!r}")
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="scripted_server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log", type=Path)
    for f in fields(Script):
        kind = {"float": float, "int": int}.get(str(f.type), str)
        faults = "; ".join(f"{name}: {what}" for name, what in MALFORMED.items())
        help_text = f"one of {', '.join(FAULTS)}, or a malformed response: {faults}" if f.name == "fault" else None
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=f.default, help=help_text)
    args = parser.parse_args(argv)
    script = Script(**{f.name: getattr(args, f.name) for f in fields(Script)})
    server = ScriptedServer(script, host=args.host, port=args.port, log=args.log)
    signal.signal(signal.SIGTERM, server.stop)
    signal.signal(signal.SIGINT, server.stop)
    print(f"READY http://{args.host}:{server.port}/v1", flush=True)
    server.serve_forever()
    server.write_log()


if __name__ == "__main__":
    main()
