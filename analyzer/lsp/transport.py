"""The stdio transport: stdin's bytes through :mod:`.framing` into the protocol, replacing pygls' reader.

pygls' reader trusts the header: a wrong ``Content-Length`` makes it wait for bytes that
never come (or swallow the next message), a header-less message is lost with the one
after it, and a body that is not JSON, or params that do not fit their types, leave a
request unanswered. Here a body that is not JSON gets -32700 (ParseError, id ``null``), a
request that came without a usable header gets -32600, and the stream always goes on.
stdin is read on a daemon thread, so a client that keeps it open after ``exit`` cannot
hold the process; what the server would still send after ``exit`` is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from typing import BinaryIO

from pygls.exceptions import JsonRpcInvalidRequest, JsonRpcParseError

from .framing import Event, Frame, Framer, Skipped
from .protocol import DeviceLintProtocol

log = logging.getLogger("devicelint.lsp")
CHUNK = 1 << 16


def _preview(data: bytes) -> str:
    return repr(data[:80]) + ("..." if len(data) > 80 else "")


class Transport:
    def __init__(self, protocol: DeviceLintProtocol) -> None:
        self.protocol = protocol

    def handle(self, event: Event) -> None:
        """One framed body or skipped run of bytes; a SystemExit (the ``exit`` notification) passes through."""
        if isinstance(event, Skipped):
            log.warning("skipped %d bytes: %s: %s", len(event.data), event.reason, _preview(event.data))
            value = event.value
            if isinstance(value, dict) and "method" in value and "id" in value:
                msg_id = value["id"] if isinstance(value["id"], (int, str)) else None
                self.protocol.send_error(msg_id, JsonRpcInvalidRequest(
                    f"the message came without a valid Content-Length header ({event.reason})"))
            return
        assert isinstance(event, Frame)
        try:
            raw = json.loads(event.body)
        except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
            log.warning("a message that is not JSON: %s: %s", error, _preview(event.body))
            self.protocol.send_error(None, JsonRpcParseError(f"the message is not JSON: {error}"))
            return
        self.protocol.receive(raw)

    async def run(self, stdin: BinaryIO) -> int:
        """Serve until ``exit`` (its status) or the end of the input (1 unless ``shutdown`` came)."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        fd = stdin.fileno()

        def pump() -> None:
            while True:
                try:
                    data = os.read(fd, CHUNK)
                except OSError:
                    data = b""
                loop.call_soon_threadsafe(chunks.put_nowait, data)
                if not data:
                    return

        threading.Thread(target=pump, name="devicelint-lsp-stdin", daemon=True).start()
        framer = Framer()
        while True:
            data = await chunks.get()
            events = framer.feed(data) if data else framer.finish()
            try:
                for event in events:
                    self.handle(event)
            except SystemExit as stop:
                return stop.code if isinstance(stop.code, int) else 1
            if not data:
                log.warning("the client closed the input without the exit notification")
                return 0 if self.protocol._shutdown else 1


class Writer:
    """stdout for pygls. Once closed (``exit``) or unwritable (the client stopped reading), writes are dropped:
    pygls reports a failed write to the client by writing again, without end."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError, ValueError):
                self._stream.close()

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError) as error:
            self.closed = True
            log.error("cannot write to the client any more (%s); messages to it are dropped", error)


def serve_stdio(protocol: DeviceLintProtocol, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Run the protocol over stdin/stdout; the process's exit status."""
    protocol.set_writer(Writer(stdout))
    return asyncio.run(Transport(protocol).run(stdin))
