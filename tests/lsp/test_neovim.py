"""A real editor as the client: Neovim headless attaches its built-in LSP client to ``devicelint lsp``.

CI installs Debian's ``neovim`` (``.ci/run``); without ``nvim`` on PATH the test is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.tools import find_tool

pytest.importorskip("pygls", reason="`devicelint lsp` needs the `lsp` extra (pygls, lsprotocol)")

ROOT = Path(__file__).resolve().parents[2]
NVIM = find_tool("nvim")
PROGRAM = """\
from runtime_shim import Device, Tensor

w = Tensor.zeros([2], Device.flex().autodiff())
x = "é"; out = w.to_device(Device.ndarray())
"""


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (CI installs Debian's neovim package)")
def test_neovim_shows_the_servers_diagnostics(tmp_path: Path) -> None:
    fixture = tmp_path / "model.py"
    fixture.write_text(PROGRAM, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.devicelint]\n", encoding="utf-8")
    out = tmp_path / "diagnostics.json"
    env = {**os.environ,
           "DEVICELINT_NVIM_CMD": json.dumps([sys.executable, "-m", "devicelint", "lsp"]),
           "DEVICELINT_NVIM_FILE": str(fixture), "DEVICELINT_NVIM_OUT": str(out),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("RUNTIME_SHIM_RECORD", None)
    done = subprocess.run([NVIM, "--headless", "--clean", "-n", "-c", f"luafile {ROOT / 'tests/lsp/nvim_client.lua'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim wrote nothing (exit {done.returncode}): {done.stdout}{done.stderr}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["waited"] is True and result["client"] == "devicelint"
    (diagnostic,) = result["diagnostics"]
    assert diagnostic["code"] == "MV102" and diagnostic["source"] == "devicelint"
    assert diagnostic["message"].startswith("Cannot move between autodiff and non-autodiff instances.")
    assert diagnostic["severity"] == 1  # vim.diagnostic.severity.ERROR
    # Neovim turns LSP's UTF-16 columns into byte columns: "é" is two bytes before the move
    line = PROGRAM.splitlines()[3]
    assert (diagnostic["lnum"], diagnostic["col"]) == (3, line.encode().index(b"w.to_device"))
