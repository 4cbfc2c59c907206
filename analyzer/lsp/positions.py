"""Positions: the analyzer's 1-based rows and 1-based character columns ↔ LSP's 0-based lines and code units.

LSP counts columns in the negotiated position encoding (UTF-16 code units unless the
client offers another): a character outside the Basic Multilingual Plane is two
UTF-16 units, four UTF-8 ones. Rows split on ``\\n``, ``\\r\\n`` and ``\\r`` (LSP's line
ends, and the ones CPython's ``ast`` counts). Pure text work: no pygls here.
"""

from __future__ import annotations

import re

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The rows of ``text`` without their line ends (a final line end opens an empty last row)."""
    return _LINE_END.split(text)


def _units(char: str, encoding: str) -> int:
    if encoding == UTF32:
        return 1
    point = ord(char)
    if encoding == UTF8:
        return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
    return 2 if point > 0xFFFF else 1


def to_units(line: str, characters: int, encoding: str = UTF16) -> int:
    """The code units of the first ``characters`` characters of ``line`` (past its end: counted as ASCII)."""
    head = line[:characters]
    if head.isascii() or encoding == UTF32:
        return characters
    return sum(_units(c, encoding) for c in head) + max(0, characters - len(head))


def from_units(line: str, units: int, encoding: str = UTF16) -> int:
    """The characters that ``units`` code units of ``line`` cover (a split surrogate pair counts whole)."""
    if line.isascii() or encoding == UTF32:
        return units
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line) + max(0, units - count)


def lsp_position(lines: list[str], row: int, column: int, encoding: str = UTF16) -> tuple[int, int]:
    """A 1-based (row, character column) as a 0-based (line, code-unit character)."""
    line = lines[row - 1] if 1 <= row <= len(lines) else ""
    return max(row - 1, 0), to_units(line, max(column - 1, 0), encoding)


def analyzer_position(lines: list[str], line: int, character: int, encoding: str = UTF16) -> tuple[int, int]:
    """A 0-based (line, code-unit character) as a 1-based (row, character column)."""
    text = lines[line] if 0 <= line < len(lines) else ""
    return line + 1, from_units(text, character, encoding) + 1
