"""Where a command-line tool is: next to the running interpreter first (a venv's ``bin/``, which need not be on
PATH), then on PATH. Tests and benchmarks use it for every tool they run (ruff, mypy, git, bash, nvim, taskset), and
the commit a benchmark ran on (:func:`git_revision`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def venv_tool(name: str) -> str | None:
    """The executable ``name`` beside ``sys.executable`` (what this environment installed), else None."""
    beside = Path(sys.executable).parent / (f"{name}.exe" if os.name == "nt" else name)
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def find_tool(name: str) -> str | None:
    """The executable ``name`` beside ``sys.executable``, else on PATH (system tools: git, nvim, taskset), else
    None."""
    return venv_tool(name) or shutil.which(name)


def tool(name: str) -> str:
    """What to run for ``name``: :func:`find_tool`'s path, or the bare name when it is found nowhere (the run then
    fails with ``FileNotFoundError``, which callers that can do without the tool catch)."""
    return find_tool(name) or name


def git_revision() -> str | None:
    """The repo's commit, ``-dirty`` when the working tree differs from it; None outside a git checkout or
    without git."""
    try:
        done = subprocess.run([tool("git"), "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None
