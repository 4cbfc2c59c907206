"""pytest-lsp helpers: the real server (``python -m devicelint lsp``) in a subprocess, a client that records
every ``publishDiagnostics`` and helpers that wait for them (a generous hang guard, never a timing check)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="the LSP tests need the `lsp` extra (pygls, lsprotocol)")
pytest.importorskip("pytest_lsp", reason="the LSP tests need pytest-lsp (the `dev` extra)")

from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 60.0  # seconds: only stops a broken server from hanging the suite


def _publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # type: ignore[attr-defined]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _publish})
    return client


def server_config() -> ClientServerConfig:
    path = os.pathsep.join([str(ROOT / "tests" / "lsp"), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "DEVICELINT_LSP_PRELOAD": "lsp_hooks"}
    env.pop("RUNTIME_SHIM_RECORD", None)
    return ClientServerConfig(server_command=[sys.executable, "-m", "devicelint", "lsp"], client_factory=make_client,
                              server_env=env)


async def wait_for(predicate: Callable[[], Any], what: str) -> Any:
    """Wait until ``predicate()`` is truthy (it is re-evaluated as messages arrive)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_GUARD
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"the server never sent {what}")
        await asyncio.sleep(0.01)


async def published(client: LanguageClient, uri: str, version: int | None = None, after: int = 0
                    ) -> list[types.Diagnostic]:
    """The diagnostics of the first publication for ``uri`` (of ``version``, when given) after index ``after``."""

    def find() -> Any:
        for params in client.published[after:]:  # type: ignore[attr-defined]
            if params.uri == uri and (version is None or params.version == version):
                return params
        return None

    params = await wait_for(find, f"diagnostics for {uri} (version {version})")
    return list(params.diagnostics)
