"""A small asyncio HTTP/1.1 client built for measuring, not for convenience.

Why not httpx or aiohttp: a benchmark client must never be the bottleneck. Here each socket read costs one
``perf_counter()``, a copy of the bytes read and de-chunking; nothing is decoded or parsed until the response is
complete. Reads go into one preallocated 256 KiB buffer per connection (``BufferedProtocol``): a plain
``Protocol`` makes asyncio allocate 256 KiB for every ``recv``, which costs more than everything else per chunk.
Connections are kept alive and pooled (as many as there are requests in flight), and a stalled server is
detected by an idle timeout instead of hanging the sweep.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from infercost.runner.sse import Segment

_clock = time.perf_counter
Sink = Callable[[float, bytes], None]


@dataclass
class Response:
    """What arrived: status, headers (lower-case names), body segments stamped at arrival, and how it ended."""

    t0: float
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)
    complete: bool = False
    error: str | None = None  # "timeout: ..." or "dropped: ..." when the response did not finish

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
        self._sink: Sink | None = None

    # -- asyncio callbacks: the hot path ---------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        now = _clock()
        self.data_received(bytes(self._view[:nbytes]), now)

    def data_received(self, data: bytes, now: float | None = None) -> None:
        now = now or _clock()
        self.last_arrival = now
        if self.response is None:
            return  # bytes nobody asked for (a server talking out of turn): ignore
        if self._head is not None:
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                return
            data = self._head[end + 4:]
            self._parse_head(self._head[:end])
            self._head = None
            if not data and not self._finished():
                return
        self._body(now, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.response is not None and self.done is not None and not self.done.done():
            if self._mode == "close" and self._head is None:
                self._finish()  # body delimited by the connection closing: this is its normal end
            else:
                self.response.error = "dropped: connection closed before the response ended"
                self.done.set_result(None)

    # -- one request -----------------------------------------------------------------------------------------------
    def start(self, request: bytes, sink: Sink | None = None) -> Response:
        """Write ``request`` and return the Response that fills as bytes arrive; ``t0`` is taken just before.

        With a ``sink``, the body of a 200 response goes to ``sink(t, bytes)`` as it arrives instead of
        ``Response.segments`` (a streaming decoder that must keep up, such as the SSE one)."""
        loop = asyncio.get_running_loop()
        self._sink = sink
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
        return self.response

    def _parse_head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        response = self.response
        response.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            response.headers[name.strip().lower()] = value.strip()
        keep_alive = response.headers.get("connection", "").lower() != "close"
        if "chunked" in response.headers.get("transfer-encoding", "").lower():
            self._mode, self.reusable = "chunked", keep_alive
        elif "content-length" in response.headers:
            self._mode, self._need, self.reusable = "length", int(response.headers["content-length"]), keep_alive

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
                    break
                line = buf[pos:eol]
                pos = eol + 2
                if self._trailer:
                    if not line:
                        self._finish()
                        break
                    continue
                self._need = int(line.split(b";", 1)[0] or b"0", 16)
                self._trailer = self._need == 0
        return b"".join(out)

    def _finish(self) -> None:
        self.response.complete = True
        if self.done is not None and not self.done.done():
            self.done.set_result(None)


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
        self.host_header = parts.netloc
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
            if not conn.closed and not conn.transport.is_closing():
                return conn
        return await self._connect()

    def _encode(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {self.prefix}{path} HTTP/1.1", f"Host: {self.host_header}",
                 f"Content-Length: {len(body)}", "Connection: keep-alive"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
                      sink: Sink | None = None) -> Response:
        """Send one request and wait for the whole response (or a timeout, or the server dropping it).

        Never raises for server behaviour: a refused connection, a timeout or a dropped stream comes back as
        ``Response.error`` so a sweep counts it and goes on.
        """
        raw = self._encode(method, path, body, headers or {})
        for attempt in (0, 1):
            fresh = not self._idle
            try:
                conn = await self._acquire()
            except (TimeoutError, OSError) as error:
                return Response(t0=_clock(), error=f"connect: {error or type(error).__name__}")
            response = conn.start(raw, sink)
            await self._wait(conn)
            stale = response.error and response.error.startswith("dropped") and not response.segments \
                and response.status == 0 and not fresh
            if not stale or attempt:
                break  # a reused keep-alive connection the server had closed: retry once on a new one
        if response.complete and conn.reusable and not conn.closed:
            conn.response = None
            self._idle.append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        return response

    async def _wait(self, conn: _Connection) -> None:
        """Wait for the response; give up when no byte arrived for ``read_timeout`` s or ``total_timeout`` passed."""
        response, done = conn.response, conn.done
        deadline = response.t0 + self.total_timeout if self.total_timeout else None
        while not done.done():
            timeout = self.read_timeout - (_clock() - conn.last_arrival)
            if deadline is not None:
                timeout = min(timeout, deadline - _clock())
            if timeout <= 0:
                what = "total" if deadline is not None and _clock() >= deadline else "read"
                response.error = f"timeout: no complete response ({what} timeout)"
                conn.reusable = False
                done.set_result(None)
                return
            await asyncio.wait((done,), timeout=timeout)

    async def close(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()
