"""Smoke test of bench/lsp_latency.py: --quick drives the real server over stdio, exits 0 and prints its table.

Only the shape of the result is checked (a row with a latency per edit and the same diagnostics the server
published), never a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the LSP bench needs the `lsp` extra (pygls, lsprotocol)")

ROOT = Path(__file__).resolve().parents[2]


def test_lsp_latency_quick(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "RUNTIME_SHIM_RECORD"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "lsp_latency.py"), "--quick", "--json", str(result)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| --- |" in done.stdout, done.stdout
    payload = json.loads(result.read_text(encoding="utf-8"))
    assert payload["summary"] in done.stdout and payload["debounce_ms"] == 0
    (row,) = payload["rows"]
    assert row["lines"] >= 200 and len(row["samples_ms"]) == payload["edits"] == 8
    assert row["diagnostics"] > 0  # the fixtures' failures, as the server published them
    assert row["lsp_ms"]["median"] <= row["lsp_ms"]["p95"]
