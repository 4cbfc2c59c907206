"""Where a command-line tool is: next to the running interpreter first (a venv's ``bin/``, which need not be on
PATH), then on PATH. Tests and benchmarks use it for every tool they run (ruff, git, nvim, taskset)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def venv_tool(name: str) -> str | None:
    """The executable ``name`` beside ``sys.executable`` (what this environment installed), else None."""
    beside = Path(sys.executable).parent / (f"{name}.exe" if os.name == "nt" else name)
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def find_tool(name: str) -> str | None:
    """The executable ``name`` beside ``sys.executable``, else on PATH (system tools: git, nvim, taskset), else
    None."""
    return venv_tool(name) or shutil.which(name)
