"""A real OpenAI-compatible server on 127.0.0.1 that drops keep-alive connections after reading a request: what a
load balancer or a server's keep-alive limit does to a client that reuses connections.

It answers the first request on each connection in full (a streamed chat or text completion of ``max_tokens``
tokens, its usage and ``[DONE]``, kept alive), then reads the second request on that connection whole and closes
the connection without a byte of answer (``read_then_close=False``: it closes the idle connection 50 ms after the
answer instead, as a keep-alive timeout does). It keeps a log of every request it read, answered or not: the test's
truth of what was sent.

    with dropping_server() as (url, received):
        ...  # received: [{"tag": "r3", "answered": False}, ...] in the order requests were read
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

ANSWERED_PER_CONNECTION = 1  # requests answered on a connection before the next one read is dropped
IDLE_CLOSE_S = 0.05  # read_then_close=False: an answered connection is closed this long after its answer


def _read_request(conn: socket.socket, buffer: bytearray) -> dict | None:
    """The next request's JSON body, or None when the client closed the connection. A request without a body (a
    client's ``GET /v1/models`` probe) is answered 404 and skipped: this server only completes."""
    while True:
        while b"\r\n\r\n" not in buffer:
            data = conn.recv(65536)
            if not data:
                return None
            buffer += data
        end = buffer.index(b"\r\n\r\n")
        head = buffer[:end].decode("latin-1").split("\r\n")
        lengths = [int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:")]
        if lengths:
            break
        del buffer[: end + 4]
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    length = lengths[0]
    while len(buffer) < end + 4 + length:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    body = bytes(buffer[end + 4: end + 4 + length])
    del buffer[: end + 4 + length]
    request = json.loads(body)
    request["_chat"] = head[0].split(" ")[1].endswith("/chat/completions")
    return request


def _event(obj: dict) -> bytes:
    data = b"data: " + json.dumps(obj).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def _answer(request: dict) -> bytes:
    """A whole streamed answer of ``max_tokens`` tokens, chunked and kept alive."""
    chat, n_out = request["_chat"], int(request.get("max_tokens") or 16)
    prompt = request["messages"][-1]["content"] if chat else request["prompt"]
    events = []
    for i in range(n_out):
        last = "length" if i == n_out - 1 else None
        choice = {"index": 0, "delta": {"content": f" t{i}"}, "finish_reason": last} if chat else \
            {"index": 0, "text": f" t{i}", "finish_reason": last}
        events.append(_event({"id": "x", "object": "chunk", "created": 0, "model": "dropper", "choices": [choice]}))
    n_in = len(prompt.split())
    usage = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}
    events.append(_event({"id": "x", "object": "chunk", "created": 0, "model": "dropper", "choices": [],
                          "usage": usage}))
    events.append(b"%x\r\n%s\r\n" % (len(b"data: [DONE]\n\n"), b"data: [DONE]\n\n"))
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + b"".join(events) + b"0\r\n\r\n"


def _serve_connection(conn: socket.socket, received: list[dict], lock: threading.Lock, read_last: bool) -> None:
    buffer = bytearray()
    with conn:
        for served in range(ANSWERED_PER_CONNECTION + read_last):
            request = _read_request(conn, buffer)
            if request is None:
                return
            prompt = request["messages"][-1]["content"] if request["_chat"] else request["prompt"]
            answered = served < ANSWERED_PER_CONNECTION
            with lock:
                received.append({"tag": prompt.split()[0], "answered": answered})
            if answered:
                conn.sendall(_answer(request))
        if not read_last:
            time.sleep(IDLE_CLOSE_S)
        # the request just read goes unanswered: the connection closes under it


@contextlib.contextmanager
def dropping_server(*, read_then_close: bool = True) -> Iterator[tuple[str, list[dict]]]:
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[dict] = []
    lock = threading.Lock()
    stopping = threading.Event()

    listener.settimeout(0.1)  # so that the accepting thread sees ``stopping``

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(10)
            serve = threading.Thread(target=_serve_connection, args=(conn, received, lock, read_then_close),
                                     daemon=True)
            serve.start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", received
    finally:
        stopping.set()
        listener.close()
        thread.join(timeout=5)
