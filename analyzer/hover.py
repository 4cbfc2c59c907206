"""Hover: the inferred state of the expression under a position (editors).

Reads ``Report.expressions``, filled when the analysis ran with
``Settings.record_expressions``: spans of names, attributes, calls and subscripts
that hold a tensor or device, each with its ``reveal_device`` text.
"""

from __future__ import annotations

from .runner import Report

Span = tuple[int, int, int, int]  # row, column, end_row, end_column: 1-based, characters, end exclusive


def state_at(report: Report, path: str, row: int, column: int) -> tuple[Span, str] | None:
    """The innermost expression of ``path`` whose span contains (row, column), with its state text."""
    best: tuple[Span, str] | None = None
    for line, col, end_line, end_col, text in report.expressions.get(path, ()):
        if not _contains((line, col, end_line, end_col), row, column):
            continue
        if best is None or _inside((line, col, end_line, end_col), best[0]):
            best = ((line, col, end_line, end_col), text)
    return best


def _contains(span: Span, row: int, column: int) -> bool:
    line, col, end_line, end_col = span
    return (line, col) <= (row, column) < (end_line, end_col)


def _inside(inner: Span, outer: Span) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and (inner[2], inner[3]) <= (outer[2], outer[3])
