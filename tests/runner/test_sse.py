"""The SSE decoder: events split on blank lines whatever the line endings and however reads cut the bytes."""

from __future__ import annotations

import pytest

from infercost.runner.sse import EventDecoder, iter_events

STREAM = b'data: {"a":1}\n\n: keep-alive comment\n\nevent: x\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n'
EXPECTED = [b'{"a":1}', b"line one\nline two", b"[DONE]"]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("cut", [1, 2, 3, 7, 1000])
def test_events_survive_any_line_ending_and_any_read_size(newline: bytes, cut: int) -> None:
    stream = STREAM.replace(b"\n", newline)
    segments = [(float(i), stream[i: i + cut]) for i in range(0, len(stream), cut)]
    assert [data for _, data in iter_events(segments)] == EXPECTED


def test_event_time_is_the_read_that_completed_it() -> None:
    segments = [(1.0, b"data: he"), (2.0, b"llo\n"), (3.0, b"\n"), (4.0, b"data: x\n\n")]
    assert list(iter_events(segments)) == [(3.0, b"hello"), (4.0, b"x")]


def test_several_events_in_one_read_share_its_time() -> None:
    assert list(iter_events([(5.0, b"data: a\n\ndata: b\n\n")])) == [(5.0, b"a"), (5.0, b"b")]


def test_an_unterminated_last_event_is_kept_at_close() -> None:
    decoder = EventDecoder()
    assert decoder.feed(1.0, b"data: tail") == []
    assert decoder.close() == [(1.0, b"tail")]


def test_data_without_space_after_colon() -> None:
    assert list(iter_events([(0.0, b"data:{}\n\n")])) == [(0.0, b"{}")]
