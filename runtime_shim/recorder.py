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
import sysconfig
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


#: How many calls around a failing call a failure record names (``callers``).
MAX_CALLERS = 16
#: Installed code (the standard library, site-packages): never one of the user's calls.
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(sysconfig.get_paths()[key]) + os.sep
                              for key in ("stdlib", "platstdlib", "purelib", "platlib")}))


def call_site(skip: tuple[str, ...] = (), callers: bool = False) -> dict:
    """File and span of the innermost call expression outside this package (and outside ``skip``).

    ``skip`` holds further directory prefixes whose frames are not user code (the torch observer
    passes torch's and the standard library's); when every frame is skipped, the innermost frame
    outside this package is used. With ``callers``, the record also names the user's calls that led
    there, innermost first (``[file, line, col]`` each): a failure caused by an argument is reported at
    one of them.
    """
    frame = sys._getframe(1)
    inside = (_PACKAGE_DIR + os.sep,)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame = frame.f_back
    user = frame
    excluded = inside + tuple(skip)
    if skip:
        while user is not None and os.path.abspath(user.f_code.co_filename).startswith(excluded):
            user = user.f_back
    site = frame_site(user if user is not None else frame)
    if callers:
        outer, chain = (user if user is not None else frame).f_back, []
        while outer is not None and len(chain) < MAX_CALLERS:
            name = outer.f_code.co_filename
            if not name.startswith("<") and not os.path.abspath(name).startswith((*excluded, *_LIBRARY_DIRS)):
                where = frame_site(outer)
                chain.append([where["file"], where["line"], where["col"]])
            outer = outer.f_back
        site["callers"] = chain
    return site


def frame_site(frame) -> dict:
    """File and span of the expression ``frame`` is executing, from CPython's code positions."""
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

    # Callers that are not the Burn dispatch (the torch observer) name their own profile and mode.
    entry.setdefault("profile", SETTINGS.profile)
    entry.setdefault("mode", "virtual" if SETTINGS.virtual else "real")
    assert _sink is not None
    _sink.write(json.dumps(entry) + "\n")


def record_ok(op: str, **extra: object) -> None:
    if ACTIVE:
        _write({**call_site(callers=True), "op": op, "outcome": "ok", **extra})


def record_failure(op: str, error: Exception) -> None:
    if ACTIVE:
        _write({**call_site(callers=True), "op": op,
                "outcome": {"code": getattr(error, "code", None), "message": str(error)}})


def record_finding(op: str, code: str, message: str, site: dict, **extra: object) -> None:
    """A failure found by another observer (torch): same line format, with its own site and extras
    (``profile`` and ``mode`` among them)."""
    if ACTIVE:
        _write({**site, "op": op, "outcome": {"code": code, "message": message}, **extra})


if os.environ.get("RUNTIME_SHIM_RECORD"):
    _open(os.environ["RUNTIME_SHIM_RECORD"])
