"""The one server-sent-events parser. It works on bytes already timestamped at arrival, so parsing never delays
a timestamp: the client records ``(perf_counter(), bytes)`` per socket read and this module runs afterwards.

An event's time is the arrival of the read that completed it (the blank line that ends it), which is when a
client could first act on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Segment = tuple[float, bytes]  # (perf_counter() when the bytes arrived, the bytes)


def iter_events(segments: Iterable[Segment]) -> Iterator[tuple[float, bytes]]:
    """Yield ``(arrival time, data)`` for each event: its ``data:`` lines joined by ``\\n`` (per the SSE spec).

    Lines end in ``\\n``, ``\\r\\n`` or ``\\r``; comments (``:``) and other fields (``event:``, ``id:``) are skipped.
    A final event not closed by a blank line is still yielded: some servers end the stream without one.
    """
    pending = b""
    data: list[bytes] = []
    t = 0.0
    for t, chunk in segments:
        lines = (pending + chunk).splitlines(keepends=True)
        pending = b""
        if lines and (not lines[-1].endswith((b"\n", b"\r")) or lines[-1].endswith(b"\r")):
            pending = lines.pop()  # incomplete, or a lone \r whose \n may be in the next read
        for line in lines:
            line = line.rstrip(b"\r\n")
            if not line:
                if data:
                    yield t, b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
    if pending.rstrip(b"\r\n").startswith(b"data:"):
        value = pending.rstrip(b"\r\n")[5:]
        data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield t, b"\n".join(data)
