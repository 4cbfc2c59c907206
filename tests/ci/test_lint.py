"""The code's own checks, run as CI runs the tests: ruff over the code, the tests and the benchmarks, and mypy
over the analysis (its settings: ``[tool.mypy]`` in pyproject.toml). Both tools are in the ``dev`` extra; they
are found next to the interpreter, never on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.layout import installed_layout
from bench.tools import venv_tool

REPO = Path(__file__).resolve().parents[2]


def dev_tool(name: str) -> str:
    path = venv_tool(name)
    assert path is not None, f"{name} is not installed next to {sys.executable} (the `dev` extra has it)"
    return path


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([dev_tool("ruff"), "check", "--no-cache", "analyzer", "rules", "runtime_shim", "tests",
                           "bench"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    layout = installed_layout(REPO, tmp_path / "src")
    proc = subprocess.run([dev_tool("mypy"), "--config-file", str(REPO / "pyproject.toml"), "--cache-dir",
                           str(tmp_path / "mypy_cache"), "-p", "devicelint"], cwd=layout,
                          capture_output=True, text=True, timeout=600)
    # name the repository's files in the report
    report = (proc.stdout + proc.stderr).replace("devicelint/rules/", "rules/").replace("devicelint/", "analyzer/")
    assert proc.returncode == 0, report
    assert proc.stdout.startswith("Success: no issues found"), report
