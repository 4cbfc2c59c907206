"""The framer alone: every malformed input ends in events, and the message after it is always framed."""

from __future__ import annotations

import json

import pytest
from devicelint.lsp.framing import Frame, Framer, Skipped

REQUEST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover",
                      "params": {"text": "é😀 Content-Length: 5"}}, ensure_ascii=False).encode()
NEXT = b'{"jsonrpc":"2.0","id":2,"method":"shutdown"}'


def framed(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def events_of(data: bytes, chunk: int) -> list:
    framer = Framer()
    events = []
    for start in range(0, len(data), chunk):
        events += framer.feed(data[start:start + chunk])
    return events + framer.finish()


CASES = {
    "exact": (framed(REQUEST), [Frame(REQUEST)]),
    "several header fields, LF only": (b"Content-Type: x\ncontent-length:%d\n\n" % len(REQUEST) + REQUEST,
                                       [Frame(REQUEST)]),
    "length too large": (framed(REQUEST, 10_000), [Frame(REQUEST)]),
    "length counts characters, not bytes": (framed(REQUEST, len(REQUEST.decode())), [Frame(REQUEST)]),
    "length cut inside a string": (framed(REQUEST, 12), [Frame(REQUEST)]),
    "length zero": (framed(REQUEST, 0), [Frame(REQUEST)]),
    "length not a number": (b"Content-Length: ten\r\n\r\n" + REQUEST, [Skipped(REQUEST, "", json.loads(REQUEST))]),
    "negative length": (b"Content-Length: -3\r\n\r\n" + REQUEST, [Skipped(REQUEST, "", json.loads(REQUEST))]),
    "no header": (REQUEST, [Skipped(REQUEST, "", json.loads(REQUEST))]),
    "no empty line after the header": (b"Content-Length: %d\r\n" % len(REQUEST) + REQUEST,
                                       [Skipped(b"Content-Length: %d\r\n" % len(REQUEST), ""), Frame(REQUEST)]),
    "not JSON": (framed(b"hello"), [Frame(b"hello")]),
    "garbage lines": (b"hello\r\nworld: \xff\r\n\r\n", None),
}
RECOVERED = ("length counts characters, not bytes", "length cut inside a string", "length zero")


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("chunk", [1, 7, 1 << 16], ids=["bytewise", "chunks", "at-once"])
def test_the_next_message_is_framed_whatever_came_before(name: str, chunk: int):
    data, expected = CASES[name]
    events = events_of(data + framed(NEXT), chunk)
    assert events[-1] == Frame(NEXT), events
    # a length too small is recovered from only when the body's rest has arrived with it (else: a parse
    # error for the cut body, then its rest skipped); the next message is framed either way
    if expected is not None and (chunk == 1 << 16 or name not in RECOVERED):
        assert [(type(e), e.data if isinstance(e, Skipped) else e.body) for e in events[:-1]] == \
            [(type(e), e.data if isinstance(e, Skipped) else e.body) for e in expected]


def test_a_message_cut_short_by_the_end_of_input_is_reported():
    framer = Framer()
    assert framer.feed(framed(REQUEST)[:-5]) == []
    (event,) = framer.finish()
    assert isinstance(event, Skipped) and "ended" in event.reason


def test_a_large_body_in_small_chunks_is_one_frame():
    body = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"text": "a = 1\n" * 50_000}}).encode()
    assert events_of(framed(body) + framed(NEXT), 4096) == [Frame(body), Frame(NEXT)]
