"""``check --add-noqa``: a ``# noqa: MVxxx`` directive on each line with a finding, as ruff's ``--add-noqa``.

A finding's directive goes on its first line (a directive suppresses a finding that starts or ends on its
line), or on its last when a comment cannot end the first (inside a multi-line string, after a backslash
continuation). A line that already has a ``# noqa: CODES`` directive gets the new codes added to it (what
follows the codes, a reason, stays); any other line gets ``  # noqa: CODES`` at its end, after a comment it
may have. The file keeps its encoding, BOM and line endings, and is written atomically, only if it still
holds the bytes that were analyzed.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from .. import noqa
from ..diagnostics import Diagnostic
from ..frontend import SourceFile
from ..notebook import is_notebook
from ..settings import ALWAYS_REPORTED
from .files import FileFix

#: codes no directive is added for: MV901 cannot be suppressed; an unused directive (MV902) is removed, not
#: suppressed
NOT_ADDED = ALWAYS_REPORTED | {"MV902"}


@dataclass
class NoqaEdit:
    """One file with directives added: its new text, and how many lines gained or changed a directive."""

    fix: FileFix
    added: int


def add_noqa(source: SourceFile, findings: Iterable[Diagnostic]) -> NoqaEdit | None:
    """The file with a directive for each of ``findings`` (``None``: nothing to add, or a notebook)."""
    if is_notebook(source.path):
        return None  # fixes and directives are never written into a notebook (cells have no lines of their own)
    fix = FileFix.read(source)
    lines = fix.text.splitlines(keepends=True)
    closed = _rows_a_comment_cannot_end(fix.text, len(lines))
    codes: dict[int, set[str]] = defaultdict(set)
    for finding in findings:
        if finding.code in NOT_ADDED or not finding.is_finding:
            continue
        row = next((r for r in (finding.row, finding.end_row) if 1 <= r <= len(lines) and r not in closed), None)
        if row is not None:
            codes[row].add(finding.code)
    if not codes:
        return None
    directives = {d.row: d for d in noqa.parse(fix.text).directives if not d.file_level and d.codes is not None}
    for row, new in codes.items():
        lines[row - 1] = _with_codes(lines[row - 1], new, directives.get(row))
    text = "".join(lines)
    if _parses(fix.text) and not _parses(text):
        return None  # never write a file the directives would break (a line this module misjudged)
    fix.text = text
    return NoqaEdit(fix, len(codes))


def _with_codes(line: str, codes: set[str], directive: noqa.Directive | None) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if directive is not None:  # ``# noqa: E501 -- reason`` -> ``# noqa: E501, MV102 -- reason``
        old = list(dict.fromkeys(directive.codes or ()))
        merged = old + sorted(code for code in codes if code not in old)
        start, end = directive.column - 1, directive.end_column - 1
        return f"{body[:start]}# noqa: {', '.join(merged)}{body[end:]}{ending}"
    return f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}{ending}"


def _rows_a_comment_cannot_end(text: str, count: int) -> set[int]:
    """Rows whose end is inside a token (a multi-line string) or continued by a backslash."""
    closed: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] < token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
                closed.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, count + 1))  # a file that does not tokenize: no line is known to take a comment
    for row, line in enumerate(text.splitlines(), 1):
        if line.endswith("\\") and row not in closed:
            closed.add(row)
    return closed


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
