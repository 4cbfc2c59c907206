"""The LSP methods devicelint answers, registered on a :class:`~analyzer.lsp.server.DeviceLintServer`."""

from __future__ import annotations

import os

from lsprotocol import types
from pygls.uris import to_fs_path

from ..hover import state_at
from .actions import FIX_ALL, code_actions
from .convert import lsp_range
from .positions import analyzer_position, split_lines
from .server import DeviceLintServer

CONFIG_SECTION = "devicelint"


def _path(uri: str) -> str | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return os.path.abspath(path) if path is not None else None


def register(server: DeviceLintServer) -> DeviceLintServer:
    @server.feature(types.INITIALIZE)
    def initialize(ls: DeviceLintServer, params: types.InitializeParams) -> None:
        encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16  # pygls chose it
        ls.encoding = getattr(encoding, "value", encoding)
        text_document = params.capabilities.text_document
        ls.push = text_document is None or text_document.diagnostic is None
        workspace = params.capabilities.workspace
        ls.refresh = bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)
        ls.init_options = params.initialization_options
        ls.apply_client_settings(ls.init_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DeviceLintServer, params: types.InitializedParams) -> None:
        try:
            await _read_configuration(ls)
        finally:
            ls.configured.set()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: DeviceLintServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(CONFIG_SECTION), dict):
            ls.apply_client_settings(ls.init_options, settings[CONFIG_SECTION])
        else:
            await _read_configuration(ls)
        ls.schedule(ls.open_documents(), 0)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DeviceLintServer, params: types.DidOpenTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.project_for(path).forget_files()  # a new file may have appeared
            ls.schedule([path], 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DeviceLintServer, params: types.DidChangeTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.schedule([path], ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: DeviceLintServer, params: types.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is None:
            return
        if os.path.basename(path) == "pyproject.toml":
            ls.reset_projects()
            ls.project_for(path)  # re-read now: its error diagnostic goes (or comes) even with no module open
            ls.schedule(ls.open_documents(), 0)
            return
        ls.project_for(path).forget_files()
        ls.schedule([path], 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DeviceLintServer, params: types.DidCloseTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.close(path, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="devicelint", inter_file_dependencies=True,
                                            workspace_diagnostics=False))
    async def pull_diagnostics(ls: DeviceLintServer,
                               params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        path = _path(params.text_document.uri)
        items = []
        if path is not None and path in ls.config_problems:
            items = [ls.config_problems[path]]
        elif path is not None:
            await ls.fresh(path)
            items = ls.lsp_diagnostics(path)
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: DeviceLintServer, params: types.HoverParams) -> types.Hover | None:
        path = _path(params.text_document.uri)
        result = await ls.detailed(path) if path is not None else None
        if path is None or result is None or result.detail is None:
            return None
        lines = split_lines(result.text)
        row, column = analyzer_position(lines, params.position.line, params.position.character, ls.encoding)
        found = state_at(result.detail, path, row, column)
        if found is None:
            return None
        (line, col, end_line, end_col), text = found
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"```text\n{text}\n```"),
            range=lsp_range(lines, line, col, end_line, end_col, ls.encoding))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    async def code_action(ls: DeviceLintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        path = _path(params.text_document.uri)
        result = await ls.detailed(path) if path is not None else None
        if path is None or result is None or result.detail is None:
            return None
        only = [getattr(kind, "value", kind) for kind in params.context.only] if params.context.only else None
        return code_actions(params.text_document.uri, result.text, result.detailed_diagnostics(path), params.range,
                            only, ls.lines_getter(result.detail), ls.encoding) or None

    return server


async def _read_configuration(ls: DeviceLintServer) -> None:
    """The ``devicelint`` section of the client's settings, over ``initializationOptions``."""
    workspace = ls.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return
    try:
        (section,) = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)]))
    except Exception as error:  # noqa: BLE001 - a client that cannot answer keeps the other settings
        ls.log(types.MessageType.Warning, f"devicelint: could not read the client's settings: {error}")
        return
    if isinstance(section, dict):
        ls.apply_client_settings(ls.init_options, section)
