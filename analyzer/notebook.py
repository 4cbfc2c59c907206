"""Jupyter notebooks (``.ipynb``), analysed cell by cell as ruff does.

The code cells are joined into one program, in order (a notebook runs its cells top to bottom, sharing
one namespace), and analysed as a Python file; each finding is then reported at its cell and its row
inside that cell (``analysis.ipynb:cell 3:2:5``). Cells are numbered as the notebook shows them, from 1,
markdown and raw cells included. IPython syntax (``%magic``, ``!shell``, ``x = !ls``, ``obj?``, a
``%%cell`` magic), wherever IPython reads it (at the start of a logical line, indented in a block too), is
replaced by ``pass``-like lines of the same count and indentation, so rows and blocks still line up.
Fixes are never written into a notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

SUFFIX = ".ipynb"

# at the start of a statement (after its indentation): %time x, !pip install; and obj? / obj??
_MAGIC = re.compile(r"^()(?:[%!]|[\w.]+\?{1,2}\s*$)")
_ASSIGNED_MAGIC = re.compile(r"^()([\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*[%!]")  # files = !ls


class NotebookError(ValueError):
    """A ``.ipynb`` file that is not a notebook (not JSON, or not nbformat's structure)."""


@dataclass(frozen=True)
class CellMap:
    """Where each code cell sits in the joined program: (cell number, first row, row count), rows 1-based."""

    cells: tuple[tuple[int, int, int], ...]

    def locate(self, row: int) -> tuple[int, int]:
        """The (cell number, row inside the cell) of a row of the joined program."""
        for number, first, count in self.cells:
            if first <= row < first + count:
                return number, row - first + 1
        if self.cells:  # past the end (an end position on the last line): the last cell
            number, first, _count = self.cells[-1]
            return number, max(row - first + 1, 1)
        return 1, row


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def to_program(data: bytes) -> tuple[bytes, CellMap]:
    """The notebook's code cells joined as one program (UTF-8), and where each cell went."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise NotebookError(f"not a notebook: invalid JSON ({error})") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a notebook: no `cells` list")
    language = _language(document)
    if language is not None and language.lower() != "python":
        raise NotebookError(f"its language is {language}: only Python notebooks are analysed")
    lines: list[str] = []
    placed: list[tuple[int, int, int]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a notebook: cell {number} has no source text")
        cell_lines = _python_lines(source.splitlines())
        placed.append((number, len(lines) + 1, len(cell_lines)))
        lines.extend(cell_lines)
    text = "".join(line + "\n" for line in lines)
    return text.encode("utf-8", "surrogatepass"), CellMap(tuple(placed))


def _language(document: dict) -> str | None:
    metadata = document.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


def _python_lines(lines: list[str]) -> list[str]:
    """The cell's lines with IPython syntax made into Python of the same line count.

    IPython reads ``%``, ``!`` and ``obj?`` as its own where a logical line starts, indented too (``if
    logger == "Comet":`` then ``    %pip install comet_ml``), so such a line keeps its indentation as a
    ``pass``; inside brackets, a string or after a ``\\`` it is Python (``('a %s'`` then ``   % x)``)."""
    if lines and lines[0].lstrip().startswith("%%"):  # a cell magic: the cell is not Python
        return ["pass  # cell magic"] + ["" for _ in lines[1:]]
    out = []
    python = _PythonState()
    continued = False  # the line before was IPython syntax ending in ``\``: this one is part of it
    for line in lines:
        if continued:
            out.append("")
            continued = line.rstrip().endswith("\\")
            continue
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        assigned = _ASSIGNED_MAGIC.match(body) if python.at_statement_start() else None
        if assigned:
            out.append(f"{indent}{assigned.group(2)} = None  # magic")
        elif python.at_statement_start() and _MAGIC.match(body):
            out.append(f"{indent}pass  # magic")
        else:
            out.append(line)
            python.read(line)
            continue
        continued = line.rstrip().endswith("\\")
    return out


class _PythonState:
    """Where a cell's Python stands at the end of a line: open brackets, an open string, a ``\\`` continuation.

    Only enough of Python's lexer to tell a new logical line (where IPython looks for its syntax) from the
    rest of a statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the open string's delimiter
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def read(self, line: str) -> None:
        index, end = 0, len(line)
        commented = False
        while index < end:
            char = line[index]
            if self.quote is not None:
                if char == "\\":  # an escape, or (raw strings too) never the string's end
                    index += 2
                elif line.startswith(self.quote, index):
                    index += len(self.quote)
                    self.quote = None
                else:
                    index += 1
                continue
            if char == "#":
                commented = True
                break
            if char in "'\"":
                self.quote = char * 3 if line.startswith(char * 3, index) else char
                index += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            index += 1
        ends_in_backslash = line.endswith("\\") and not commented
        if self.quote is not None and len(self.quote) == 1 and not ends_in_backslash:
            self.quote = None  # an unterminated one-line string: a syntax error the parser reports
        self.continued = self.quote is None and ends_in_backslash
