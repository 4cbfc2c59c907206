"""Fixtures of the LSP tests: a project directory and a client connected to the real server."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the LSP tests need the `lsp` extra (pygls, lsprotocol)")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="the LSP tests need pytest-lsp (the `dev` extra)")

from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from .lsp_support import server_config  # noqa: E402


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project directory (the LSP workspace)."""
    (tmp_path / "pyproject.toml").write_text("[tool.devicelint]\n", encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, workspace: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        initialization_options={"debounceMs": 50},
    ))
    yield
    await lsp_client.shutdown_session()
