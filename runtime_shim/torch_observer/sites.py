"""Where a failure happened in the user's program, and whether a call's result is thrown away."""

from __future__ import annotations

import dis
import os
import sysconfig
import types
from functools import lru_cache

import torch

from .. import recorder

#: Frames under these directories are library code, not the user's program.
LIBRARY_DIRS: tuple[str, ...] = tuple(sorted({
    os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
    *(os.path.abspath(sysconfig.get_paths()[key]) + os.sep
      for key in ("stdlib", "platstdlib", "purelib", "platlib")),
}))
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

_CALLS = {"CALL", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW", "CALL_KW", "CALL_FUNCTION_EX"}


def user_site() -> dict:
    """The record fields (file, line, col, end positions) of the innermost user-code call, and the user's
    calls that led there (``callers``)."""
    return recorder.call_site(skip=LIBRARY_DIRS, callers=True)


def is_user_frame(frame: types.FrameType | None) -> bool:
    if frame is None:
        return False
    filename = os.path.abspath(frame.f_code.co_filename)
    return not filename.startswith((_OWN_DIR, *LIBRARY_DIRS))


@lru_cache(maxsize=4096)
def _discarding_calls(code: types.CodeType) -> frozenset[int]:
    """Offsets of the calls in ``code`` whose result the next instruction pops unused."""
    instructions = list(dis.get_instructions(code))
    return frozenset(ins.offset for ins, nxt in zip(instructions, instructions[1:], strict=False)
                     if ins.opname in _CALLS and nxt.opname == "POP_TOP")


def result_discarded(frame: types.FrameType) -> bool:
    """The call ``frame`` is executing is an expression statement: its result is popped unused.

    Read from the bytecode (the instruction after the ``CALL`` is ``POP_TOP``), so it is exact for
    the call itself and says nothing about results stored and never read later.
    """
    return frame.f_lasti in _discarding_calls(frame.f_code)
