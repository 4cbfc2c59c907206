"""Recording: one JSON line per checked call, naming the call site in user code.

Enabled by ``RUNTIME_SHIM_RECORD=path`` or the :func:`recording` context
manager. The call site is the innermost frame outside ``runtime_shim``, with
the call expression's span from CPython's code positions (3.11+), so it names
the same expression the analyzer reports on. Each line carries the profile and
the mode, so results always say what produced them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import IO

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

#: Fast flag read on every dispatch: recording costs nothing when off.
ACTIVE = False
_sink: IO[str] | None = None


def _open(path: str) -> None:
    global ACTIVE, _sink
    _sink = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - held open while recording; line-buffered
    ACTIVE = True


def _close() -> None:
    global ACTIVE, _sink
    if _sink is not None:
        _sink.close()
    _sink, ACTIVE = None, False


@contextlib.contextmanager
def recording(path: str | os.PathLike) -> Iterator[str]:
    """Append a JSON line per checked call to ``path`` inside the block."""
    global ACTIVE, _sink
    previous = (ACTIVE, _sink)
    _open(os.fspath(path))
    try:
        yield os.fspath(path)
    finally:
        _close()
        ACTIVE, _sink = previous


def call_site() -> dict:
    """File and span of the innermost call expression outside this package."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
    if frame is None:
        return {"file": None, "line": None, "col": None, "end_line": None, "end_col": None}
    line, end_line, col, end_col = frame.f_lineno, None, None, None
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        line, end_line, col, end_col = positions[index]
    filename = frame.f_code.co_filename
    if not filename.startswith("<"):  # "<stdin>", "<string>": no file to resolve
        filename = os.path.abspath(filename)
    return {"file": filename, "line": line, "col": col,
            "end_line": end_line, "end_col": end_col}


def _write(entry: dict) -> None:
    from .modes import SETTINGS

    entry.update(profile=SETTINGS.profile, mode="virtual" if SETTINGS.virtual else "real")
    assert _sink is not None
    _sink.write(json.dumps(entry) + "\n")


def record_ok(op: str, **extra: object) -> None:
    if ACTIVE:
        _write({**call_site(), "op": op, "outcome": "ok", **extra})


def record_failure(op: str, error: Exception) -> None:
    if ACTIVE:
        _write({**call_site(), "op": op,
                "outcome": {"code": getattr(error, "code", None), "message": str(error)}})


if os.environ.get("RUNTIME_SHIM_RECORD"):
    _open(os.environ["RUNTIME_SHIM_RECORD"])
