"""The analyzer's diagnostics and edits as lsprotocol types (positions via :mod:`analyzer.lsp.positions`)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types
from pygls.uris import from_fs_path

from ..diagnostics import Diagnostic, Edit, Severity, rules_page_uri
from .positions import UTF16, lsp_position

SOURCE = "devicelint"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}

LinesOf = Callable[[str], list[str]]  # a file's rows (the open buffer's, else the analysed text's)


def uri_of(path: str) -> str:
    return from_fs_path(path) or f"file://{path}"


def lsp_range(lines: list[str], row: int, column: int, end_row: int, end_column: int,
              encoding: str = UTF16) -> types.Range:
    start = lsp_position(lines, row, column, encoding)
    end = lsp_position(lines, end_row, end_column, encoding)
    return types.Range(types.Position(*start), types.Position(*end))


def _code_description(d: Diagnostic) -> types.CodeDescription | None:
    """A link to the rule's documentation: LSP wants an absolute URI, so the installed page's ``file:`` URI
    (none when the docs are not installed next to the analyzer)."""
    href = rules_page_uri(d.code, d.name) if d.code else None
    return types.CodeDescription(href=href) if href else None


def to_lsp(d: Diagnostic, lines_of: LinesOf, encoding: str = UTF16) -> types.Diagnostic:
    """One diagnostic; its related locations (where each state came from) as related information."""
    lines = lines_of(d.file)
    related = []
    for r in d.related:
        position = types.Position(*lsp_position(lines_of(r.file), r.row, r.column, encoding))
        related.append(types.DiagnosticRelatedInformation(
            types.Location(uri_of(r.file), types.Range(position, position)), r.message))
    return types.Diagnostic(
        range=lsp_range(lines, d.row, d.column, d.end_row, d.end_column, encoding),
        message=d.message,
        severity=_SEVERITY[d.severity],
        code=d.code or None,
        code_description=_code_description(d),
        source=SOURCE,
        related_information=related or None,
    )


def text_edit(edit: Edit, lines: list[str], encoding: str = UTF16) -> types.TextEdit:
    return types.TextEdit(lsp_range(lines, edit.row, edit.column, edit.end_row, edit.end_column, encoding),
                          edit.content)
