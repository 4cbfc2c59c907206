"""Code actions: a rule's fix as a quick fix, "suppress with ``# noqa: CODE``", and fix-all (safe fixes only)."""

from __future__ import annotations

from lsprotocol import types

from .. import noqa
from ..diagnostics import Diagnostic, Edit
from ..fixes import FixError, apply_fixes
from .convert import LinesOf, text_edit, to_lsp
from .positions import UTF16, split_lines, to_units

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.devicelint"
QUICK_FIX = types.CodeActionKind.QuickFix.value


def _wanted(kind: str, only: list[str] | None) -> bool:
    """LSP's ``only`` filter: a requested kind covers its sub-kinds (``source`` covers ``source.fixAll.x``)."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _edit_action(title: str, kind: str, uri: str, edits: list[types.TextEdit],
                 diagnostics: list[types.Diagnostic] | None = None, preferred: bool | None = None
                 ) -> types.CodeAction:
    return types.CodeAction(title=title, kind=kind, diagnostics=diagnostics, is_preferred=preferred,
                            edit=types.WorkspaceEdit(changes={uri: edits}))


def noqa_edit(d: Diagnostic, text: str) -> Edit | None:
    """The edit that suppresses ``d`` on its line: a code added to the line's ``# noqa: ...``, or a new
    comment at the end of the line (None: a bare ``# noqa`` there already covers every code)."""
    lines = split_lines(text)
    if not 1 <= d.row <= len(lines):
        return None
    for directive in noqa.parse(text).directives:
        if directive.row == d.row and not directive.file_level:
            if directive.codes is None:
                return None
            return Edit(d.row, directive.end_column, d.row, directive.end_column, f", {d.code}")
    line = lines[d.row - 1]
    content = len(line.rstrip())
    return Edit(d.row, content + 1, d.row, len(line) + 1, f"  # noqa: {d.code}")


def fix_all_edit(text: str, diagnostics: list[Diagnostic], encoding: str = UTF16) -> types.TextEdit | None:
    """One edit replacing the document with every safe fix applied (None: nothing to fix)."""
    try:
        fixed, applied = apply_fixes(text, diagnostics, unsafe=False)
    except FixError:
        return None  # the fixes were computed for another text
    if not applied or fixed == text:
        return None
    lines = split_lines(text)
    end = types.Position(len(lines) - 1, to_units(lines[-1], len(lines[-1]), encoding))
    return types.TextEdit(types.Range(types.Position(0, 0), end), fixed)


def _on_lines(d: Diagnostic, selection: types.Range) -> bool:
    """Whether ``d`` shares a line with ``selection`` (a cursor anywhere on the line asks for its actions)."""
    return d.row - 1 <= selection.end.line and selection.start.line <= d.end_row - 1


def code_actions(uri: str, text: str, diagnostics: list[Diagnostic], selection: types.Range,
                 only: list[str] | None, lines_of: LinesOf, encoding: str = UTF16) -> list[types.CodeAction]:
    """The actions for the findings of one document (``diagnostics``, computed for ``text``) under ``selection``."""
    lines = split_lines(text)
    findings = [d for d in diagnostics if d.is_finding and d.code]
    actions: list[types.CodeAction] = []
    for d in findings:
        if not _on_lines(d, selection):
            continue
        lsp = [to_lsp(d, lines_of, encoding)]
        if d.fix is not None and _wanted(QUICK_FIX, only):
            edits = [text_edit(e, lines, encoding) for e in d.fix.edits]
            title = f"devicelint ({d.code}): {d.fix.message}" + ("" if d.fix.is_safe else " (unsafe)")
            actions.append(_edit_action(title, QUICK_FIX, uri, edits, lsp, preferred=d.fix.is_safe))
        suppress = noqa_edit(d, text)
        if suppress is not None and _wanted(QUICK_FIX, only):
            actions.append(_edit_action(f"devicelint ({d.code}): suppress with `# noqa: {d.code}`", QUICK_FIX,
                                        uri, [text_edit(suppress, lines, encoding)], lsp))
    if _wanted(FIX_ALL, only):
        edit = fix_all_edit(text, findings, encoding)
        if edit is not None:
            actions.append(_edit_action("devicelint: fix all safely fixable problems", FIX_ALL, uri, [edit]))
    return actions
