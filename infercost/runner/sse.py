"""The one server-sent-events parser.

It is fed bytes that were already timestamped at arrival: ``feed(t, bytes)`` per socket read returns the events
that read completed, each stamped with ``t`` (when a client could first act on it). The common case, one read
holding exactly one single-line event, takes a fast path of a few byte comparisons, so the decoder can run as
bytes arrive without delaying the next timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Segment = tuple[float, bytes]  # (perf_counter() when the bytes arrived, the bytes)


class EventDecoder:
    """Incremental SSE decoding: lines end in ``\\n``, ``\\r\\n`` or ``\\r``; an empty line ends an event; ``data:``
    lines are joined with ``\\n``; comments (``:``) and other fields (``event:``, ``id:``) are skipped."""

    def __init__(self) -> None:
        self._pending = b""  # an incomplete line
        self._more: list[bytes] = []  # later pieces of it: a long line is joined once, not copied on every read
        self._data: list[bytes] = []  # data lines of the event being read
        self._t = 0.0

    def feed(self, t: float, chunk: bytes) -> list[tuple[float, bytes]]:
        self._t = t
        if (not self._pending and not self._data and chunk.startswith(b"data: ") and chunk.endswith(b"\n\n")
                and chunk.find(b"\n") == len(chunk) - 2 and b"\r" not in chunk):
            return [(t, chunk[6:-2])]  # fast path
        if self._pending and b"\n" not in chunk and b"\r" not in chunk:
            self._more.append(chunk)  # still inside one long line
            return []
        if self._more:
            self._pending, self._more = b"".join([self._pending, *self._more]), []
        events = []
        lines = (self._pending + chunk).splitlines(keepends=True)
        self._pending = b""
        if lines and (not lines[-1].endswith((b"\n", b"\r")) or lines[-1].endswith(b"\r")):
            self._pending = lines.pop()  # incomplete, or a lone \r whose \n may come in the next read
        for line in lines:
            self._line(line.rstrip(b"\r\n"), events)
        return events

    def close(self) -> list[tuple[float, bytes]]:
        """End of stream: an event not closed by a blank line still counts (some servers end without one)."""
        events: list[tuple[float, bytes]] = []
        if self._pending:
            self._line(b"".join([self._pending, *self._more]).rstrip(b"\r\n"), events)
            self._pending, self._more = b"", []
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[tuple[float, bytes]]) -> None:
        if not line:
            if self._data:
                events.append((self._t, b"\n".join(self._data)))
                self._data = []
        elif line.startswith(b"data:"):
            value = line[5:]
            self._data.append(value[1:] if value.startswith(b" ") else value)


def iter_events(segments: Iterable[Segment]) -> Iterator[tuple[float, bytes]]:
    """All events of a whole stream of timestamped segments."""
    decoder = EventDecoder()
    for t, chunk in segments:
        yield from decoder.feed(t, chunk)
    yield from decoder.close()
