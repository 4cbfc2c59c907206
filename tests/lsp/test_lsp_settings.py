"""Settings: ``[tool.devicelint]`` from the nearest pyproject.toml, the client's on top (like CLI flags)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_support import published, server_config
from .test_lsp_server import MOVE, open_file

pytestmark = pytest.mark.asyncio


@pytest.fixture
def ignoring_project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.devicelint]\nignore = ["MV102"]\n', encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(config=server_config())
async def configured(lsp_client: LanguageClient, ignoring_project: Path):
    lsp_client.set_configuration({"select": ["MV1"]}, section="devicelint")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True)),
        root_uri=ignoring_project.as_uri()))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def plain(lsp_client: LanguageClient, ignoring_project: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=ignoring_project.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def test_the_pyproject_configuration_applies(plain: LanguageClient, ignoring_project: Path):
    uri = open_file(plain, ignoring_project / "main.py", MOVE)
    assert await published(plain, uri, 1) == []


async def test_workspace_settings_win_over_pyproject(configured: LanguageClient, ignoring_project: Path):
    uri = open_file(configured, ignoring_project / "main.py", MOVE)
    assert [d.code for d in await published(configured, uri, 1)] == ["MV102"]
    before = len(configured.published)
    configured.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"devicelint": {"select": ["MV1"], "ignore": ["MV102"]}}))
    assert await published(configured, uri, 1, after=before) == []


async def test_invalid_settings_are_reported_and_the_defaults_used(plain: LanguageClient, ignoring_project: Path):
    plain.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"devicelint": {"select": ["NOPE"]}}))
    uri = open_file(plain, ignoring_project / "main.py", MOVE)
    assert await published(plain, uri, 1) == []  # the pyproject's ignore still applies
    assert any("invalid rule selector 'NOPE'" in m.message for m in plain.messages)
