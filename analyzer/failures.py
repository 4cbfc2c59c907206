"""A file the analysis cannot read: the one fact known before any parsing (MV901).

Kept apart from :mod:`analyzer.facts` so the paths that never run the engine (a warm, cached
check; discovery) do not import the abstract domain and runtime_shim with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that could not be decoded or parsed (MV901)."""

    file: str
    line: int
    col: int  # 0-based
    message: str
