"""A small asyncio HTTP/1.1 client built for measuring, not for convenience.

Why not httpx or aiohttp: a benchmark client must never be the bottleneck. Here each socket read costs one
``perf_counter()``, a copy of the bytes read and de-chunking; nothing is decoded or parsed until the response is
complete. Reads go into one preallocated 256 KiB buffer per connection (``BufferedProtocol``): a plain ``Protocol``
makes asyncio allocate 256 KiB for every ``recv``, which costs more than everything else per chunk. Connections are
kept alive and pooled (as many as there are requests in flight), and a stalled server is detected by an idle timeout
instead of hanging the sweep. A request is never sent twice behind the caller's back: a pooled connection the server
has closed is noticed before the request is written (its socket is readable: the server's FIN or stray bytes) and a
fresh one is taken; once a request's bytes have left this process, a dropped connection is the caller's failure to
count and retry (a POST the server read may have been billed). A server that keeps sending without ever finishing
(SSE comments, headers that never end) meets the request's total deadline, and one that sends more than a response
could need meets a byte cap. A server that breaks HTTP (a status line that is not one, a chunk size that is not
hexadecimal) ends that request with ``bad_response: ...``: never an exception out of an asyncio callback.
"""

from __future__ import annotations

import asyncio
import resource
import select
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from infercost.runner.sse import Segment

_clock = time.perf_counter
Sink = Callable[[float, bytes], None]
MAX_HEAD_BYTES = 64 * 1024  # a response's status line and headers
MAX_CHUNK_LINE_BYTES = 4096  # a chunk-size line with its extensions
DEFAULT_MAX_BODY_BYTES = 256 << 20


FILES_BESIDE_CONNECTIONS = 64  # descriptors a process needs besides its connections: stdio, the store, files, the loop


def make_room_for(connections: int) -> None:
    """Let this process open ``connections`` sockets at once: raise its soft limit on open files (``ulimit -n``)
    towards the hard one if it is short. ValueError, saying what would fit, when even the hard limit is."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = connections + FILES_BESIDE_CONNECTIONS
    if soft == resource.RLIM_INFINITY or need <= soft:
        return
    if hard == resource.RLIM_INFINITY or need <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        return
    fits = max(0, hard - FILES_BESIDE_CONNECTIONS)
    raise ValueError(f"{connections} connections need about {need} open files, but this process may open {hard} "
                     f"(ulimit -n): use {fits} or fewer, or raise the limit")


class ProtocolError(ValueError):
    """The server's bytes are not HTTP/1.1 as it must be spoken; the message says what was wrong."""


@dataclass
class Response:
    """What arrived: status, headers (lower-case names), body segments stamped at arrival, and how it ended."""

    t0: float
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)
    complete: bool = False
    error: str | None = None  # "timeout: ...", "dropped: ..." or "bad_response: ..." when it did not finish

    @property
    def body(self) -> bytes:
        return b"".join(data for _, data in self.segments)


READ_BUFFER = 256 * 1024


class _Connection(asyncio.BufferedProtocol):
    """One keep-alive connection; parses exactly one response at a time."""

    def __init__(self) -> None:
        self._buffer = bytearray(READ_BUFFER)
        self._view = memoryview(self._buffer)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.response: Response | None = None
        self.done: asyncio.Future | None = None
        self.last_arrival = 0.0
        self.reusable = False
        self.unsent = False  # the last request's write failed at once: not one byte of it left this process
        self._sink: Sink | None = None
        self._received = 0  # body bytes of this response so far
        self._max_body = DEFAULT_MAX_BODY_BYTES

    # -- asyncio callbacks: the hot path ---------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        now = _clock()
        try:  # free unless raised (zero-cost exceptions); raised, it fails this request, not the event loop
            self.data_received(bytes(self._view[:nbytes]), now)
        except ValueError as error:  # ProtocolError, or the SSE decoder's StreamError
            self.abort(f"bad_response: {error}")

    def data_received(self, data: bytes, now: float | None = None) -> None:
        now = now or _clock()
        self.last_arrival = now
        if self.response is None:
            return  # bytes nobody asked for (a server talking out of turn): ignore
        if self._head is not None:
            data = self._read_head(data)
            if data is None or (not data and self._finished()):
                return
        self._received += len(data)
        if self._received > self._max_body:
            raise ProtocolError(f"response body over {self._max_body} bytes")
        self._body(now, data)

    def _read_head(self, data: bytes) -> bytes | None:
        """Collect the status line and headers; the body bytes that came with them, or None while incomplete."""
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            if len(self._head) > MAX_HEAD_BYTES:
                raise ProtocolError(f"response headers over {MAX_HEAD_BYTES} bytes")
            return None
        head, rest = self._head[:end], self._head[end + 4:]
        self._parse_head(head)
        if 100 <= self.response.status < 200:  # an interim response (100 Continue, 103 Early Hints): skip it
            self._head = b""
            self.response.status, self.response.headers = 0, {}
            return self._read_head(rest) if rest else None
        self._head = None
        return rest

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.response is not None and self.done is not None and not self.done.done():
            if self._mode == "close" and self._head is None:
                self._finish()  # body delimited by the connection closing: this is its normal end
            else:
                self.response.error = "dropped: connection closed before the response ended"
                self.done.set_result(None)

    def abort(self, error: str) -> None:
        """End the current response as failed and close the connection (what is left of it cannot be trusted)."""
        self.reusable = False
        if self.response is not None and self.done is not None and not self.done.done():
            self.response.error = error
            self.done.set_result(None)
        if self.transport is not None:
            self.transport.close()

    # -- one request -----------------------------------------------------------------------------------------------
    def start(self, request: bytes, sink: Sink | None = None, max_body: int = DEFAULT_MAX_BODY_BYTES) -> Response:
        """Write ``request`` and return the Response that fills as bytes arrive; ``t0`` is taken just before.

        With a ``sink``, the body of a 200 response goes to ``sink(t, bytes)`` as it arrives instead of
        ``Response.segments`` (a streaming decoder that must keep up, such as the SSE one)."""
        loop = asyncio.get_running_loop()
        self._sink = sink
        self._received, self._max_body = 0, max_body
        self.done = loop.create_future()
        self._head: bytes | None = b""
        self._mode = "close"
        self._need = 0  # bytes left in the current chunk (chunked) or body (content-length)
        self._skip = 0  # CRLF after a chunk still to skip
        self._partial = b""  # an incomplete chunk-size line
        self._trailer = False
        self.reusable = False
        self.response = Response(t0=_clock())
        self.last_arrival = self.response.t0
        self.transport.write(request)  # type: ignore[union-attr]
        # A transport closing right after write() was closed before it (write() then does nothing) or its first
        # send() failed (nothing is handed to the kernel before a send succeeds): the server got none of it.
        self.unsent = self.transport.is_closing()  # type: ignore[union-attr]
        return self.response

    def idle_and_open(self) -> bool:
        """Whether this pooled connection can take a request: open, and nothing to read. An idle keep-alive
        socket that is readable holds the server's FIN (it closed the connection, and the event loop has not
        seen it yet) or bytes nobody asked for; writing a request there could lose it after the server read it."""
        if self.closed or self.transport is None or self.transport.is_closing():
            return False
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return True
        poller = select.poll()  # not select(): it cannot take descriptors over 1023
        poller.register(sock.fileno(), select.POLLIN)
        return not poller.poll(0)

    def _parse_head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if not parts[0].startswith("HTTP/") or len(parts) < 2 or not (parts[1].isdigit() and len(parts[1]) == 3):
            raise ProtocolError(f"not an HTTP status line: {lines[0][:80]!r}")
        response = self.response
        response.status = int(parts[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            response.headers[name.strip().lower()] = value.strip()
        keep_alive = response.headers.get("connection", "").lower() != "close"
        if "chunked" in response.headers.get("transfer-encoding", "").lower():
            self._mode, self.reusable = "chunked", keep_alive
        elif "content-length" in response.headers:
            length = response.headers["content-length"]
            if not length.isdigit():
                raise ProtocolError(f"Content-Length is not a number: {length[:40]!r}")
            self._mode, self._need, self.reusable = "length", int(length), keep_alive

    def _finished(self) -> bool:
        if self._mode == "length" and self._need == 0:
            self._finish()
            return True
        return False

    def _body(self, now: float, data: bytes) -> None:
        if self._mode == "chunked":
            data = self._dechunk(data)
        elif self._mode == "length":
            data = data[: self._need]
            self._need -= len(data)
        if data:
            if self._sink is not None and self.response.status == 200:
                self._sink(now, data)
            else:
                self.response.segments.append((now, data))
        if self._mode == "length" and self._need == 0:
            self._finish()

    def _dechunk(self, data: bytes) -> bytes:
        """Strip chunked framing from one read; marks the response complete at the terminating chunk."""
        out = []
        buf = self._partial + data if self._partial else data
        self._partial = b""
        pos, size = 0, len(buf)
        while pos < size:
            if self._need:
                piece = buf[pos: pos + self._need]
                out.append(piece)
                self._need -= len(piece)
                pos += len(piece)
                if not self._need:
                    self._skip = 2
            elif self._skip:
                step = min(self._skip, size - pos)
                self._skip -= step
                pos += step
            else:
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    self._partial = buf[pos:]
                    if len(self._partial) > MAX_CHUNK_LINE_BYTES:
                        raise ProtocolError("malformed chunked encoding: a chunk-size line that never ends")
                    break
                line = buf[pos:eol]
                pos = eol + 2
                if self._trailer:
                    if not line:
                        self._finish()
                        break
                    continue
                self._need = _chunk_size(line)
                self._trailer = self._need == 0
        return b"".join(out)

    def _finish(self) -> None:
        self.response.complete = True
        if self.done is not None and not self.done.done():
            self.done.set_result(None)


def _chunk_size(line: bytes) -> int:
    size = line.split(b";", 1)[0].strip()
    try:
        value = int(size, 16)
    except ValueError:
        value = -1
    if value < 0 or not size:
        raise ProtocolError(f"malformed chunked encoding: chunk size {line[:40]!r} is not hexadecimal")
    return value


class HttpClient:
    """Keep-alive connections to one origin, opened on demand so there are as many as requests in flight."""

    def __init__(self, base_url: str, *, connect_timeout: float = 10.0, read_timeout: float = 60.0,
                 total_timeout: float | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http(s) URL, got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl = ssl.create_default_context() if parts.scheme == "https" else None
        self.prefix = parts.path.rstrip("/")
        self.host_header = parts.netloc.rpartition("@")[2]  # never userinfo: credentials have a header of their own
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self._idle: list[_Connection] = []

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, conn = await asyncio.wait_for(
            loop.create_connection(_Connection, self.host, self.port, ssl=self.ssl), self.connect_timeout
        )
        return conn

    async def _acquire(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if conn.idle_and_open():
                return conn
            if conn.transport is not None:
                conn.transport.close()
        return await self._connect()

    async def preconnect(self, count: int) -> None:
        """Open up to ``count`` idle connections now, as a warm-up would, so that no measured request pays for one."""
        for _ in range(count - len(self._idle)):
            try:
                self._idle.append(await self._connect())
            except (TimeoutError, OSError):
                return  # the requests will meet the same error, and record it

    def _encode(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {self.prefix}{path} HTTP/1.1", f"Host: {self.host_header}",
                 f"Content-Length: {len(body)}", "Connection: keep-alive"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
                      sink: Sink | None = None, *, total_timeout: float | None = None,
                      max_body: int = DEFAULT_MAX_BODY_BYTES) -> Response:
        """Send one request and wait for the whole response (or a timeout, or the server dropping it).

        ``total_timeout`` (s, default the client's) bounds the whole request, however steadily bytes arrive;
        ``max_body`` bounds its body. Never raises for server behaviour: a refused connection, a timeout, a dropped
        stream or broken HTTP comes back as ``Response.error`` so a sweep counts it and goes on.
        """
        raw = self._encode(method, path, body, headers or {})
        total = total_timeout or self.total_timeout
        for _ in (0, 1):  # a second time only for a request that provably never left this process
            try:
                conn = await self._acquire()
            except (TimeoutError, OSError) as error:
                return Response(t0=_clock(), error=f"connect: {error or type(error).__name__}")
            response = conn.start(raw, sink, max_body)
            if not conn.unsent:
                break
            conn.transport.close()  # type: ignore[union-attr]
        else:
            return Response(t0=response.t0, error="connect: the connection closed before the request was written")
        await self._wait(conn, total)
        if response.complete and conn.reusable and not conn.closed:
            conn.response = None
            self._idle.append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        return response

    async def _wait(self, conn: _Connection, total_timeout: float | None) -> None:
        """Wait for the response; give up when no byte arrived for ``read_timeout`` s or ``total_timeout`` passed."""
        response, done = conn.response, conn.done
        deadline = response.t0 + total_timeout if total_timeout else None
        while not done.done():
            timeout = self.read_timeout - (_clock() - conn.last_arrival)
            if deadline is not None:
                timeout = min(timeout, deadline - _clock())
            if timeout <= 0:
                if deadline is not None and _clock() >= deadline:
                    why = f"the response did not complete within the request deadline of {total_timeout:g} s"
                else:
                    why = f"no byte for {self.read_timeout:g} s (idle timeout)"
                conn.abort(f"timeout: {why}")
                return
            await asyncio.wait((done,), timeout=timeout)

    async def close(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()
