"""Report helpers shared by the benchmarks: markdown tables and JSON files (no numpy/torch)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], text_columns: int = 1) -> str:
    """A GitHub markdown table: the first ``text_columns`` columns left-aligned, the numbers right-aligned."""
    rule = ["---"] * text_columns + ["---:"] * (len(headers) - text_columns)
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` (parents created); nothing when ``path`` is None."""
    if path is None:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
