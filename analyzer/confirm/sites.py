"""Call sites: the runtime's records and the analyzer's diagnostics, on one coordinate system.

A site is a call expression: (file, row, column, end row, end column), rows 1-based,
columns 1-based *characters* (the analyzer's convention). The runtime records CPython's
code positions: 0-based UTF-8 *byte* columns, converted here with the file's text. The
torch observer writes the same records (failures only, profile ``torch-<version>``):
their sites are :attr:`Observed.torch`.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Severity
from .reveal import REVEAL_PREFIX

Span = tuple[int, int, int, int]  # row, column, end row, end column (1-based, characters)
Place = tuple[str, int, int]  # real path, row, column (1-based, characters)

#: The torch observer's records name their profile ``torch-<version>`` (runtime_shim's: a Burn profile).
TORCH_PROFILE_PREFIX = "torch-"
#: Codes of the rules about a call (MV1xx: Burn dispatch, MV2xx: PyTorch); MV9xx are about the analysis.
CALL_CODE_PREFIXES = ("MV1", "MV2")


@dataclass
class Observed:
    """What the runtime did at one site, over every execution of every program."""

    executions: int = 0
    failures: dict[str, int] = field(default_factory=dict)  # code -> failed executions
    messages: dict[str, str] = field(default_factory=dict)  # code -> one message
    reveals: list[str] = field(default_factory=list)
    ops: set[str] = field(default_factory=set)
    programs: set[str] = field(default_factory=set)
    profiles: set[str] = field(default_factory=set)  # what the runtime ran under (a program may switch)
    # recorded by the torch observer: failures only (executions are the failures), at the innermost
    # user frame's position, which the analyzer's diagnostic for the same failure shares the line of
    torch: bool = False
    # the executions that came through each call of the user's that led here, (file, row, column) ->
    # [executions, {code: failed executions}]: a finding reported at such a call is judged on them
    via: dict[Place, list] = field(default_factory=dict)


@dataclass
class Predicted:
    """What the analyzer said at one site."""

    errors: dict[str, str] = field(default_factory=dict)  # code -> message
    warnings: dict[str, str] = field(default_factory=dict)
    reveals: list[str] = field(default_factory=list)  # the notes' texts ("A | B")
    # findings reported at the call that passed their failing operands, whose failing call is this site
    moved: list[Moved] = field(default_factory=list)
    # findings at this call of a rule ``reported_at_setup``: judged where the runtime failed through it, if it did
    setup: list[Moved] = field(default_factory=list)


@dataclass(frozen=True)
class Moved:
    """A finding reported at a call further out (``file``, ``span``) than the call that fails (the site)."""

    code: str
    error: bool
    message: str
    file: str  # real path
    span: Span

    @property
    def place(self) -> Place:
        return (self.file, self.span[0], self.span[1])


class Lines:
    """Each file's lines (read once) to turn byte columns into character columns, and its method
    calls that CPython reports from another start than the analyzer (see :meth:`reported_start`)."""

    def __init__(self) -> None:
        self._files: dict[str, list[bytes] | None] = {}
        self._moved: dict[str, dict[Span, tuple[int, int]]] = {}

    def _lines(self, path: str) -> list[bytes] | None:
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
                # CPython's columns count bytes of the UTF-8 form of the decoded line
                text = data.decode(encoding).removeprefix("\ufeff")
                self._files[path] = [line.encode("utf-8") for line in text.splitlines(keepends=True)]
            except (OSError, SyntaxError, LookupError, UnicodeDecodeError):
                self._files[path] = None
        return self._files[path]

    def char_column(self, path: str, row: int, byte_col: int) -> int:
        """The 0-based character column of ``byte_col`` on line ``row``."""
        lines = self._lines(path)
        if lines is None or not 1 <= row <= len(lines):
            return byte_col
        return len(lines[row - 1][:byte_col].decode("utf-8", errors="ignore"))


    def reported_start(self, path: str, span: Span) -> tuple[int, int] | None:
        """Where CPython 3.11+ starts the code position of the call at ``span``, when not at its start.

        A method call whose ``obj.name`` part spans lines (``x.f(\n...\n).g(y)``) is reported from
        ``name`` on the attribute's last line (CPython's ``update_start_location_to_match_attr``, for
        method calls without ``*args``/``**kwargs``); the recorder gives that position, the analyzer
        the expression's start."""
        if path not in self._moved:
            self._moved[path] = self._method_starts(path)
        return self._moved[path].get(span)

    def _method_starts(self, path: str) -> dict[Span, tuple[int, int]]:
        lines = self._lines(path)
        if lines is None:
            return {}
        try:
            tree = ast.parse(b"".join(lines))
        except (SyntaxError, ValueError):
            return {}
        moved = {}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            func = node.func
            if func.end_lineno is None or func.end_col_offset is None or node.end_lineno is None \
                    or node.end_col_offset is None or node.lineno == func.end_lineno:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue  # not compiled as a method call: CPython keeps the call's own start
            span = (node.lineno, self.char_column(path, node.lineno, node.col_offset) + 1, node.end_lineno,
                    self.char_column(path, node.end_lineno, node.end_col_offset) + 1)
            start = func.end_col_offset - len(func.attr.encode("utf-8"))
            moved[span] = (func.end_lineno, self.char_column(path, func.end_lineno, start) + 1)
        return moved


def record_span(record: dict, lines: Lines) -> tuple[str, Span] | None:
    """The site of one runtime record (None: no usable position)."""
    path, row, col = record.get("file"), record.get("line"), record.get("col")
    end_row, end_col = record.get("end_line"), record.get("end_col")
    if not isinstance(path, str) or path.startswith("<") or not (
            isinstance(row, int) and isinstance(col, int) and isinstance(end_row, int) and isinstance(end_col, int)):
        return None
    path = os.path.realpath(path)
    return path, (row, lines.char_column(path, row, col) + 1, end_row, lines.char_column(path, end_row, end_col) + 1)


def observe(records: Iterable[dict], program: str, files: set[str], lines: Lines,
            into: dict[str, dict[Span, Observed]]) -> None:
    """Add one program's records (in ``files``, real paths) to ``into[file][span]``."""
    for record in records:
        site = record_span(record, lines)
        if site is None or site[0] not in files:
            continue
        seen = into.setdefault(site[0], {}).setdefault(site[1], Observed())
        seen.executions += 1
        outcome = record.get("outcome")
        for caller in record.get("callers") or ():
            if isinstance(caller, list) and len(caller) == 3 and isinstance(caller[0], str) \
                    and isinstance(caller[1], int) and isinstance(caller[2], int):
                path = os.path.realpath(caller[0])
                counts = seen.via.setdefault((path, caller[1], lines.char_column(path, caller[1], caller[2]) + 1),
                                             [0, {}])
                counts[0] += 1
                if isinstance(outcome, dict):
                    code = str(outcome.get("code"))
                    counts[1][code] = counts[1].get(code, 0) + 1
        seen.programs.add(program)
        seen.ops.add(str(record.get("op")))
        if isinstance(record.get("profile"), str):
            seen.profiles.add(record["profile"])
            seen.torch = seen.torch or record["profile"].startswith(TORCH_PROFILE_PREFIX)
        outcome = record.get("outcome")
        if isinstance(outcome, dict):
            code = str(outcome.get("code"))
            seen.failures[code] = seen.failures.get(code, 0) + 1
            seen.messages.setdefault(code, str(outcome.get("message")))
        if record.get("op") == "reveal_device" and isinstance(record.get("reveal"), str):
            seen.reveals.append(record["reveal"])


def predict(diagnostics: Iterable[Diagnostic], into: dict[str, dict[Span, Predicted]]) -> None:
    """Add the analyzer's findings about calls (MV1xx, MV2xx) and reveal notes to ``into[file][span]``; a finding
    reported at the call that passed its operands goes to the call inside that fails (its inner location)."""
    for d in diagnostics:
        span = (d.row, d.column, d.end_row, d.end_column)
        site = into.setdefault(os.path.realpath(d.file), {})
        if d.severity is Severity.NOTE:
            if d.message.startswith(REVEAL_PREFIX):
                site.setdefault(span, Predicted()).reveals.append(d.message.removeprefix(REVEAL_PREFIX))
        elif not d.code.startswith(CALL_CODE_PREFIXES):
            continue  # MV9xx are about the analysis itself, never about a call
        elif d.inner is not None:
            inner = (d.inner.row, d.inner.column, d.inner.row, d.inner.column)
            into.setdefault(os.path.realpath(d.inner.file), {}).setdefault(inner, Predicted()).moved.append(
                Moved(d.code, d.severity is Severity.ERROR, d.message, os.path.realpath(d.file), span))
        else:
            target = site.setdefault(span, Predicted())
            (target.errors if d.severity is Severity.ERROR else target.warnings).setdefault(d.code, d.message)
            if _reported_at_setup(d.code):
                target.setup.append(Moved(d.code, d.severity is Severity.ERROR, d.message,
                                          os.path.realpath(d.file), span))


def _reported_at_setup(code: str) -> bool:
    from ..rules import rule_by_code  # (the rules, imported where a confirm run predicts)

    rule = rule_by_code(code)
    return rule is not None and rule.reported_at_setup
