"""Cutting the client's byte stream into messages, whatever arrives (pure byte work: no pygls here).

A message is ``Content-Length: N`` (with other header fields, if any), an empty line,
then N bytes of JSON. Clients get this wrong in every way: a wrong length, no length,
no header at all, a body that is not JSON or is cut short. The framer never waits for
bytes that a broken header promised: a valid JSON text cannot hold a raw line end, so
``Content-Length: N`` followed by one always starts a new message, and the framer
resynchronises there; other bytes that are not a message are skipped a line at a time
and handed back as :class:`Skipped`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# A header line that starts a message; it cannot occur inside a JSON text (no raw control characters there).
_MARKER = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.I)
_FIELD = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:[^\r\n]*\r?\n")
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n", re.I)
_PARTIAL_FIELD = re.compile(rb"[A-Za-z][A-Za-z0-9-]*([ \t]*:[^\r\n]*)?")
_LINE_END = re.compile(rb"\r?\n")
_SPACE = b" \t\r\n"
_RESCAN = 64  # bytes before the scanned end searched again (a marker may straddle two reads)
MAX_HEADER = 8192  # a "header" longer than this is garbage


@dataclass(frozen=True)
class Frame:
    """A body framed by a ``Content-Length`` header (it may still not be JSON)."""

    body: bytes


@dataclass(frozen=True)
class Skipped:
    """Bytes that are no framed message; ``reason`` says why. ``value``: the JSON value they hold, if any."""

    data: bytes
    reason: str
    value: object = None


Event = Frame | Skipped


def _json_prefix(data: bytes | bytearray) -> tuple[object, int] | None:
    """The JSON value at the start of ``data`` (after blanks) and where it ends; None when there is none."""
    try:
        text = data.decode("utf-8")
        start = len(text) - len(text.lstrip())
        value, end = json.JSONDecoder().raw_decode(text, start)
    except (UnicodeDecodeError, ValueError):
        return None
    return value, len(text[:end].encode("utf-8"))


class Framer:
    """Feed it bytes as they arrive; it returns the events they complete."""

    def __init__(self) -> None:
        self._buffer = bytearray()  # grows in place: a large body arrives in many reads
        self._length: int | None = None  # reading a body of this many bytes
        self._headerless = False  # reading a body whose header had no valid length
        self._scanned = 0  # the body's bytes already searched for a marker

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def finish(self) -> list[Event]:
        """The end of the stream: what is left is a message cut short (or blanks)."""
        rest, self._buffer = bytes(self._buffer), bytearray()
        self._length, self._headerless = None, False
        if rest.strip(_SPACE):
            return [Skipped(rest, "the input ended inside a message")]
        return []

    # ------------------------------------------------------------------ one step of the state machine

    def _step(self, events: list[Event]) -> bool:
        """Consume one event's bytes from the buffer; False when more bytes are needed."""
        if self._length is not None:
            return self._body(events)
        if self._headerless:
            return self._unframed(events, "a header without a valid Content-Length")
        stripped = self._buffer.lstrip(_SPACE)
        self._buffer = stripped
        if not stripped:
            return False
        if _FIELD.match(stripped):
            return self._header(events)
        if _PARTIAL_FIELD.fullmatch(stripped) and len(stripped) < MAX_HEADER:
            return False  # a header line still arriving
        return self._unframed(events, "a message without a Content-Length header")

    def _header(self, events: list[Event]) -> bool:
        position, length = 0, None
        while True:
            field = _FIELD.match(self._buffer, position)
            if field is None:
                break
            found = _LENGTH.fullmatch(field.group())
            if found is not None:
                length = int(found.group(1))
            position = field.end()
        rest = self._buffer[position:]
        end = _LINE_END.match(rest)
        if end is None and (not rest or rest == b"\r" or (_PARTIAL_FIELD.fullmatch(rest) and len(rest) < MAX_HEADER)):
            return False  # the rest of the header is on its way
        if end is None:  # a line that is neither a header field nor the empty line that ends the header
            events.append(Skipped(bytes(self._buffer[:position]), "a header not ended by an empty line"))
            self._buffer = rest
        else:
            self._buffer = rest[end.end():]
        self._scanned = 0
        self._length = length
        self._headerless = length is None
        return True

    def _body(self, events: list[Event]) -> bool:
        assert self._length is not None
        available = min(len(self._buffer), self._length)
        marker = _MARKER.search(self._buffer, max(0, self._scanned - _RESCAN), available)
        self._scanned = available
        if marker is not None:
            # the next message starts inside this one: the length was wrong (too large)
            events.append(Frame(bytes(self._buffer[:marker.start()])))
            self._buffer = self._buffer[marker.start():]
        elif len(self._buffer) >= self._length:
            end = self._length
            after = self._buffer[end:end + 1]
            if after and after not in _SPACE and not after.isalpha():
                # the length stops inside the body (say it counted characters, not bytes): the JSON value
                # that starts here, when it reaches past the length, is the body
                prefix = _json_prefix(self._buffer)
                if prefix is not None and prefix[1] > end:
                    end = prefix[1]
            events.append(Frame(bytes(self._buffer[:end])))
            self._buffer = self._buffer[end:]
        else:
            return False
        self._length = None
        self._scanned = 0
        return True

    def _unframed(self, events: list[Event], reason: str) -> bool:
        """Bytes that do not start with a header: a JSON value when one is complete, else up to the next header."""
        prefix = _json_prefix(self._buffer)
        if prefix is not None:
            value, end = prefix
            events.append(Skipped(bytes(self._buffer[:end]), reason, value))
            self._buffer = self._buffer[end:]
            self._headerless = False
            return True
        # not (yet) a JSON value: skip to a header inside the first line, else past that line
        marker = _MARKER.search(self._buffer)
        newline = self._buffer.find(b"\n")
        if marker is not None and (newline < 0 or marker.start() <= newline):
            cut = marker.start()
        elif newline >= 0:
            cut = newline + 1
        else:
            return False  # wait: the value is incomplete, or the line goes on
        if cut > 0:
            events.append(Skipped(bytes(self._buffer[:cut]), reason))
            self._buffer = self._buffer[cut:]
        self._headerless = False
        return True
