"""Applying fixes to text (ruff's model), and the shared helpers rules build their fixes with.

:func:`apply_fixes` is plain text work and imports nothing heavy: the LSP server and
the CLI call it. The helpers that find spans in the source (:mod:`analyzer.fixes.spans`)
use libcst and are imported only by a rule that builds a fix, so an analysis without
fixable findings never loads libcst.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, Edit, Fix

__all__ = ["FixError", "apply_fixes", "applicable", "line_starts", "offset"]

# CPython's line ends (ast numbers rows by these; str.splitlines also splits on \f, \v, ...)
_LINE_END = re.compile(r"\r\n|\r|\n")


class FixError(ValueError):
    """An edit that points outside the text (a fix computed for another version of the file)."""


def line_starts(text: str) -> list[int]:
    """The offset where each row starts (index 0 is row 1)."""
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


def offset(starts: list[int], text: str, row: int, column: int) -> int:
    """The offset of a 1-based (row, character column); the end of a row is its last column + 1."""
    if not 1 <= row <= len(starts) or column < 1:
        raise FixError(f"position {row}:{column} is outside the text")
    line_end = starts[row] if row < len(starts) else len(text)
    line = text[starts[row - 1]:line_end]
    content = len(line.rstrip("\r\n"))
    if column - 1 > content:
        raise FixError(f"position {row}:{column} is past the end of its line")
    return starts[row - 1] + column - 1


def applicable(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> list[Diagnostic]:
    """The diagnostics whose fix would be applied (safe ones, and unsafe ones when ``unsafe``)."""
    return [d for d in diagnostics if d.fix is not None and d.fix.applies(unsafe)]


def apply_fixes(text: str, diagnostics: list[Diagnostic], unsafe: bool = False) -> tuple[str, list[Diagnostic]]:
    """Apply the fixes of ``diagnostics`` to ``text``: (the new text, the diagnostics whose fixes were applied).

    Like ruff, one pass: fixes are taken in the order of their first edit; a fix whose edits
    overlap (or touch) an edit already taken is left for the next pass, after re-analysis.
    A fix identical to one already applied (two diagnostics, one fix) is applied once and
    reported for both. Unsafe fixes are applied only with ``unsafe``. Raises
    :class:`FixError` when an edit points outside ``text``."""
    starts = line_starts(text)
    candidates = []
    for d in applicable(diagnostics, unsafe):
        assert d.fix is not None
        # stable: two insertions at one place go in the fix's order
        spans = sorted(((offset(starts, text, e.row, e.column), offset(starts, text, e.end_row, e.end_column),
                         e.content) for e in d.fix.edits), key=lambda span: (span[0], span[1]))
        if any(start > end for start, end, _ in spans):
            raise FixError(f"{d.code}: an edit ends before it starts")
        candidates.append((spans, d))
    candidates.sort(key=lambda item: (item[0][0][0], item[0][0][1], item[1].row, item[1].column))

    taken: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    seen: dict[Fix, bool] = {}
    for spans, d in candidates:
        assert d.fix is not None
        if d.fix in seen:
            if seen[d.fix]:
                applied.append(d)
            continue
        ok = not _overlaps(spans) and not any(_conflict(span, other) for span in spans for other in taken)
        seen[d.fix] = ok
        if ok:
            taken.extend(spans)
            applied.append(d)
    out = []
    position = 0
    for start, end, content in sorted(taken, key=lambda span: (span[0], span[1])):
        out.append(text[position:start])
        out.append(content)
        position = end
    out.append(text[position:])
    return "".join(out), applied


def _conflict(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Two edits that overlap or touch: their order would be ambiguous (ruff skips these too)."""
    return a[0] <= b[1] and b[0] <= a[1]


def _overlaps(spans: list[tuple[int, int, str]]) -> bool:
    return any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1))


def edit_between(starts: list[int], text: str, start: int, end: int, content: str) -> Edit:
    """An :class:`Edit` replacing ``text[start:end]`` (offsets) with ``content``."""
    row, column = position(starts, start)
    end_row, end_column = position(starts, end)
    return Edit(row, column, end_row, end_column, content)


def position(starts: list[int], at: int) -> tuple[int, int]:
    """The 1-based (row, character column) of an offset."""
    from bisect import bisect_right

    row = bisect_right(starts, at)
    return row, at - starts[row - 1] + 1
