"""Output formats: ``concise`` (one line per finding), ``full`` (with the source and related
locations) and ``json`` (a list of objects, ruff's shape plus ``severity`` and ``related``).

A new format is a function ``(diagnostics, sources) -> str`` added to :data:`FORMATS`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from .diagnostics import Diagnostic
from .frontend import SourceFile

DOCS_URL = "https://devicelint.invalid/rules/{code}"


def _flat(message: str) -> str:
    return " ".join(message.split())


def _display(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def concise(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    lines = []
    for d in diagnostics:
        label = f"{d.code} [{d.severity}]" if d.code else f"{d.severity}:"
        lines.append(f"{_display(d.file)}:{d.row}:{d.column}: {label} {_flat(d.message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def full(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    blocks = []
    for d in diagnostics:
        label = f"{d.code} [{d.severity}]" if d.code else f"{d.severity}:"
        block = [f"{_display(d.file)}:{d.row}:{d.column}: {label} {d.name}"]
        block.extend("  " + line if line else "" for line in d.message.strip().splitlines())
        source = sources.get(d.file)
        if source is not None and 1 <= d.row <= len(source.lines):
            text = source.lines[d.row - 1]
            width = len(str(d.row))
            block.append(f"{' ' * width} |")
            block.append(f"{d.row} | {text}")
            end = d.end_column if d.end_row == d.row else len(text) + 1
            block.append(f"{' ' * width} | {' ' * (d.column - 1)}{'^' * max(1, end - d.column)}")
        for r in d.related:
            block.append(f"  = related: {_display(r.file)}:{r.row}:{r.column}: {r.message}")
        blocks.append("\n".join(block))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def as_json(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    return json.dumps([d.to_json(DOCS_URL.format(code=d.code) if d.code else None) for d in diagnostics],
                      indent=2) + "\n"


FORMATS: dict[str, Callable[[list[Diagnostic], dict[str, SourceFile]], str]] = {
    "concise": concise,
    "full": full,
    "json": as_json,
}
