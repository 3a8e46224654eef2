"""A request whose bytes left the client is never sent again behind the caller's back: a POST the server read may
have been billed, so only the caller (which counts attempts and reserves their cost) may decide to send it again.
Against a real server on 127.0.0.1 that closes keep-alive connections after reading a request, or while idle."""

from __future__ import annotations

import asyncio
import json
import time

from infercost.runner.http import HttpClient
from tests.support.dropping_server import dropping_server


def _body(tag: str) -> bytes:
    return json.dumps({"model": "m", "prompt": f"{tag} hello", "max_tokens": 2, "stream": True}).encode()


async def _send(client: HttpClient, tag: str):
    return await client.request("POST", "/completions", _body(tag), {"Content-Type": "application/json"})


def test_a_request_the_server_read_on_a_reused_connection_is_reported_dropped_not_sent_again() -> None:
    async def go(url: str):
        client = HttpClient(url, read_timeout=5)
        try:
            return [await _send(client, "r1"), await _send(client, "r2")]
        finally:
            await client.close()

    with dropping_server() as (url, received):
        first, second = asyncio.run(go(url))
    assert first.complete and first.status == 200
    assert not second.complete and second.error.startswith("dropped")
    assert received == [{"tag": "r1", "answered": True}, {"tag": "r2", "answered": False}]  # r2 went out once


def test_a_pooled_connection_the_server_closed_while_idle_is_not_used() -> None:
    async def go(url: str):
        client = HttpClient(url, read_timeout=5)
        try:
            first = await _send(client, "r1")
            time.sleep(0.3)  # the server's FIN (at 50 ms) comes while the event loop is busy: the pool has not seen it
            return first, await _send(client, "r2")
        finally:
            await client.close()

    with dropping_server(read_then_close=False) as (url, received):
        first, second = asyncio.run(go(url))
    assert first.complete and second.complete and second.status == 200
    assert received == [{"tag": "r1", "answered": True}, {"tag": "r2", "answered": True}]
