"""A raw JSON-RPC client for the LSP tests: the real server (``python -m devicelint lsp``) in a subprocess, fed
raw bytes (malformed ones too), its framed output read on a thread. Every wait is bounded by a generous hang
guard that only stops a broken server from hanging the suite (never a timing check)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 60.0  # seconds


def frame(message: dict[str, Any] | bytes, length: int | None = None) -> bytes:
    """A message with its header (``length``: a deliberately wrong Content-Length)."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def request(msg_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


class RawServer:
    """The server process; ``received`` holds every message it sent, in order."""

    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("RUNTIME_SHIM_RECORD", None)
        self.process = subprocess.Popen([sys.executable, "-m", "devicelint", "lsp"], cwd=cwd, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.received: list[dict[str, Any]] = []
        self._inbox: queue.Queue[dict[str, Any] | str] = queue.Queue()
        self.stderr = b""
        self._stdout_reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._stdout_reader.start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    # ------------------------------------------------------------------ the server's output

    def _read_stdout(self) -> None:
        """Framed messages onto the inbox; a string there says why no more will come."""
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:  # the header: the server's own framing must be exact
                line = stream.readline()
                if not line:
                    self._inbox.put("the server closed its output")
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length" and value.strip().isdigit():
                    length = int(value)
            body = stream.read(length) if length is not None else b""
            try:
                self._inbox.put(json.loads(body))
            except ValueError:
                self._inbox.put(f"the server sent a malformed message: {line!r} {body[:200]!r}")
                return

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line

    def next_message(self, deadline: float) -> dict[str, Any]:
        try:
            message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            message = "the server sent nothing more"
        if isinstance(message, str):
            self._inbox.put(message)  # stays closed for the next reader
            raise AssertionError(f"{message}; its stderr:\n{self.stderr.decode(errors='replace')}")
        self.received.append(message)
        return message

    def wait_for(self, predicate: Any, what: str) -> dict[str, Any]:
        """The first message (already received or still to come) that ``predicate`` accepts."""
        for message in self.received:
            if predicate(message):
                return message
        deadline = time.monotonic() + HANG_GUARD
        while True:
            try:
                message = self.next_message(deadline)
            except AssertionError as error:
                raise AssertionError(f"waiting for {what}: {error}") from None
            if predicate(message):
                return message

    def response(self, msg_id: int | str | None) -> dict[str, Any]:
        return self.wait_for(lambda m: "method" not in m and m.get("id") == msg_id and ("result" in m or "error" in m),
                             f"the response to {msg_id!r}")

    def notified(self, method: str, predicate: Any = lambda params: True) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("method") == method and "id" not in m and predicate(m.get("params")),
                             f"a {method} notification")["params"]

    # ------------------------------------------------------------------ the client's input

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    def call(self, msg_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
        self.send(request(msg_id, method, params))
        return self.response(msg_id)

    def initialize(self, root: Path, msg_id: int | str = "init") -> dict[str, Any]:
        answer = self.call(msg_id, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                                                   "initializationOptions": {"debounceMs": 0}})
        self.send(notification("initialized", {}))
        return answer

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        text = path.read_text(encoding="utf-8") if text is None else text
        self.send(notification("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": version, "text": text}}))
        return path.as_uri()

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict[str, Any]]:
        params = self.notified("textDocument/publishDiagnostics",
                               lambda p: p["uri"] == uri and (version is None or p.get("version") == version))
        return params["diagnostics"]

    def wait_exit(self) -> int:
        """The exit status (stdin stays open: the server must not need its end to exit)."""
        try:
            status = self.process.wait(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            raise AssertionError("the server did not exit") from None
        self._stderr_reader.join(timeout=HANG_GUARD)  # all of stderr read
        return status

    def close_input(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=HANG_GUARD)
        for reader in (self._stdout_reader, self._stderr_reader):  # they end at the pipes' end
            reader.join(timeout=HANG_GUARD)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):  # a broken pipe on stdin: the server is gone anyway
                    stream.close()
