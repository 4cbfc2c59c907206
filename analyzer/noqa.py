"""Suppression comments: ``# noqa: MV102``, bare ``# noqa``, file-level ``# devicelint: noqa``.

Comments are read with ``tokenize`` (so a ``# noqa`` inside a string does not
count), only for files that have diagnostics.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*devicelint\s*:\s*noqa\b", re.IGNORECASE)
ALL = frozenset({"*"})


@dataclass
class Suppressions:
    file_level: bool = False
    lines: dict[int, frozenset[str]] = field(default_factory=dict)  # row -> codes ({"*"}: all)

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.file_level:
            return True
        for row in rows:
            codes = self.lines.get(row)
            if codes is not None and (codes == ALL or code.upper() in codes):
                return True
        return False


def comments(text: str) -> list[tuple[int, str, bool]]:
    """(row, comment text, whether the comment is alone on its line)."""
    out = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                alone = not token.line[: token.start[1]].strip()
                out.append((token.start[0], token.string, alone))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        for row, line in enumerate(text.splitlines(), 1):  # a file that does not tokenize: plain scan
            index = line.find("#")
            if index >= 0:
                out.append((row, line[index:], not line[:index].strip()))
    return out


def parse(text: str) -> Suppressions:
    found = Suppressions()
    for row, comment, alone in comments(text):
        if alone and _FILE_NOQA.search(comment):
            found.file_level = True
        for match in _NOQA.finditer(comment):
            codes = match.group("codes")
            if codes:
                new = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
                old = found.lines.get(row, frozenset())
                found.lines[row] = ALL if old == ALL else old | new
            else:
                found.lines[row] = ALL
    return found
