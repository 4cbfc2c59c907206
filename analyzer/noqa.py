"""Suppression comments: ``# noqa: MV102``, ``# noqa: MV102, MV105``, bare ``# noqa``, and the
file-level ``# devicelint: noqa`` (all codes) or ``# devicelint: noqa: MV150`` (those codes),
which must stand alone on their line.

Comments are read with ``tokenize`` (a ``# noqa`` inside a string does not count).
A line directive suppresses a finding that starts or ends on its line. Each
directive remembers what it suppressed, so that the unused ones can be reported
(MV902, :mod:`rules.mv902_unused_suppression`).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

_CODES = r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)"
_NOQA = re.compile(r"#\s*noqa(?![\w-])(?::\s*" + _CODES + ")?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*devicelint\s*:\s*noqa(?![\w-])(?::\s*" + _CODES + ")?", re.IGNORECASE)
ALL = frozenset({"*"})


@dataclass(frozen=True)
class Directive:
    """One ``noqa`` comment: where it is (1-based character columns, end exclusive) and its codes."""

    row: int
    column: int
    end_column: int
    codes: tuple[str, ...] | None  # upper-cased, in order, duplicates kept; None: every code
    file_level: bool = False

    def covers(self, code: str) -> bool:
        return self.codes is None or code.upper() in self.codes

    def to_json(self) -> list[Any]:
        return [self.row, self.column, self.end_column, list(self.codes) if self.codes is not None else None,
                self.file_level]

    @classmethod
    def from_json(cls, item: list[Any]) -> Directive:
        row, column, end_column, codes, file_level = item
        if not (isinstance(row, int) and isinstance(column, int) and isinstance(end_column, int)
                and isinstance(file_level, bool) and (codes is None or all(isinstance(c, str) for c in codes))):
            raise ValueError("malformed directive")
        return cls(row, column, end_column, tuple(codes) if codes is not None else None, file_level)


@dataclass
class Suppressions:
    """The directives of one file."""

    directives: list[Directive] = field(default_factory=list)

    @property
    def file_level(self) -> bool:
        """A file-level directive without codes: the whole file is exempt."""
        return any(d.file_level and d.codes is None for d in self.directives)

    @property
    def lines(self) -> dict[int, frozenset[str]]:
        """row -> codes suppressed there ({"*"}: all)."""
        out: dict[int, frozenset[str]] = {}
        for d in self.directives:
            if d.file_level:
                continue
            old = out.get(d.row, frozenset())
            out[d.row] = ALL if d.codes is None or old == ALL else old | frozenset(d.codes)
        return out

    def match(self, code: str, rows: tuple[int, ...]) -> Directive | None:
        """The directive that suppresses a finding of ``code`` on ``rows`` (file-level ones first)."""
        for d in self.directives:
            if d.file_level and d.covers(code):
                return d
        for row in rows:
            for d in self.directives:
                if d.row == row and not d.file_level and d.covers(code):
                    return d
        return None

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        return self.match(code, rows) is not None

    def to_json(self) -> list[Any]:
        return [d.to_json() for d in self.directives]

    @classmethod
    def from_json(cls, items: list[Any]) -> Suppressions:
        return cls([Directive.from_json(item) for item in items])


def comments(text: str) -> list[tuple[int, int, str, bool]]:
    """(row, 0-based character column, comment text, whether the comment is alone on its line)."""
    out = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                alone = not token.line[: token.start[1]].strip()
                out.append((token.start[0], token.start[1], token.string, alone))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        out = []
        for row, line in enumerate(text.splitlines(), 1):  # a file that does not tokenize: plain scan
            index = line.find("#")
            if index >= 0:
                out.append((row, index, line[index:], not line[:index].strip()))
    return out


def _codes(match: re.Match[str]) -> tuple[str, ...] | None:
    codes = match.group("codes")
    if not codes:
        return None
    return tuple(c.upper() for c in re.split(r"[\s,]+", codes) if c)


def might_have_directives(data: bytes | str) -> bool:
    """A cheap look before tokenizing: no "noqa" anywhere, no directive."""
    if isinstance(data, bytes):
        return re.search(rb"(?i)noqa", data) is not None
    return re.search(r"(?i)noqa", data) is not None


OUR_CODE = re.compile(r"MV\d+")  # a code of ours (directive codes are read upper-cased)


def may_matter(text: str) -> bool:
    """Could ``text`` hold a directive that changes what devicelint reports: a file-level one, a bare ``# noqa``,
    or one naming a code of ours? (``# noqa: E501`` is another tool's: suppressing nothing of ours, MV902
    leaves it alone.) A look with the directive patterns at the raw text, before tokenizing it."""
    if _FILE_NOQA.search(text):
        return True
    for match in _NOQA.finditer(text):
        codes = _codes(match)
        if codes is None or any(OUR_CODE.fullmatch(code) for code in codes):
            return True
    return False


def parse(text: str) -> Suppressions:
    found = Suppressions()
    if not might_have_directives(text):
        return found
    for row, column, comment, alone in comments(text):
        if alone:
            file_match = _FILE_NOQA.search(comment)
            if file_match:
                found.directives.append(Directive(row, column + file_match.start() + 1,
                                                  column + file_match.end() + 1, _codes(file_match), True))
                continue
        for match in _NOQA.finditer(comment):
            found.directives.append(Directive(row, column + match.start() + 1, column + match.end() + 1,
                                              _codes(match)))
    return found
