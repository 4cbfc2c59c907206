"""The code's own checks, run as CI runs the tests: ruff over the code, the tests and the benchmarks, and mypy
over the analysis (its settings: ``[tool.mypy]`` in pyproject.toml). Both tools are in the ``dev`` extra; they
are found next to the interpreter, never on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def venv_tool(name: str) -> str:
    path = Path(sys.executable).parent / (f"{name}.exe" if os.name == "nt" else name)
    assert path.is_file(), f"{name} is not installed next to {sys.executable} (the `dev` extra has it)"
    return str(path)


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([venv_tool("ruff"), "check", "--no-cache", "analyzer", "rules", "runtime_shim", "tests",
                           "bench"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    proc = subprocess.run([venv_tool("mypy"), "--cache-dir", str(tmp_path / "mypy_cache")], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout
