"""The HTTP client against a real socket server that cuts its bytes anywhere: chunked, sized and close-delimited
bodies, and a keep-alive connection the server closed in between."""

from __future__ import annotations

import asyncio

import pytest

from infercost.runner.http import HttpClient

EVENTS = [b"data: one\n\n", b"data: two\n\n", b"data: [DONE]\n\n"]
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(e), e) for e in EVENTS) + b"0\r\nX-Trailer: 1\r\n\r\n")
SIZED = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"
CLOSED = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"


async def serve(response: bytes, piece: int, *, close_after: bool = False):
    """Answer every request on a connection with ``response``, written ``piece`` bytes at a time."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.readuntil(b"\r\n\r\n"):
            for start in range(0, len(response), piece):
                writer.write(response[start: start + piece])
                await writer.drain()
                await asyncio.sleep(0)
            if close_after or b"Connection: close" in response:
                break
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def fetch(response: bytes, piece: int, *, times: int = 1, close_after: bool = False):
    async def go():
        server = await serve(response, piece, close_after=close_after)
        port = server.sockets[0].getsockname()[1]
        client = HttpClient(f"http://127.0.0.1:{port}/v1", read_timeout=5)
        results = []
        for _ in range(times):
            results.append(await client.request("GET", "/x"))
            await asyncio.sleep(0.05)
        await client.close()
        server.close()
        return results

    return asyncio.run(go())


@pytest.mark.parametrize("piece", [1, 2, 5, 4096])
def test_chunked_body_with_extensions_and_trailer(piece: int) -> None:
    [response] = fetch(CHUNKED, piece)
    assert response.complete and response.status == 200 and response.body == b"".join(EVENTS)
    assert all(t >= response.t0 for t, _ in response.segments)


@pytest.mark.parametrize("piece", [1, 4096])
def test_sized_and_close_delimited_bodies(piece: int) -> None:
    [sized] = fetch(SIZED, piece)
    [closed] = fetch(CLOSED, piece)
    assert (sized.status, sized.body, sized.complete) == (404, b"not found", True)
    assert (closed.status, closed.body, closed.complete) == (200, b"until the end", True)


def test_keep_alive_reuse_and_a_connection_the_server_closed() -> None:
    kept = fetch(CHUNKED, 4096, times=3)
    closed = fetch(CHUNKED, 4096, times=3, close_after=True)  # the client must notice and reconnect
    assert all(r.complete and r.body == b"".join(EVENTS) for r in kept + closed)
