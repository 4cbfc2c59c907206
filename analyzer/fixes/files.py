"""Fixing files: apply fixes, re-analyse, repeat until stable; then diff or write atomically.

The CLI's ``--fix``, ``--fix-only`` and ``--diff`` run :func:`fix_report` (everything in memory),
then either :func:`unified_diff` or :func:`write` each changed file. A file keeps its encoding,
its BOM and its line endings: fixes edit the decoded text (the BOM removed, as the analysis sees
it), and the text is encoded back with the encoding it was read with. A write goes to a
temporary file in the same directory, which then replaces the file (``os.replace``), with the
file's permission bits: a file is either the old one or the new one, never half-written.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import stat
import sys
import tempfile
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic
from ..frontend import SourceFile
from . import apply_fixes

if TYPE_CHECKING:
    from ..runner import Report

#: At most this many rounds of "apply, re-analyse" (ruff stops after 100; a fix here never
#: needs more than two: the second takes what the first left because of overlapping edits).
MAX_PASSES = 10
SYNTAX_CODE = "MV901"  # a fix that makes a file unparsable is reverted


@dataclass
class FileFix:
    """One file being fixed: its bytes as read, how to encode it back, its current text."""

    path: str
    original: bytes
    encoding: str
    original_text: str
    text: str
    applied: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def read(cls, source: SourceFile) -> FileFix:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(source.data).readline)
        text = source.data.decode(encoding).removeprefix("\ufeff")  # utf-8-sig has removed it already
        return cls(source.path, source.data, encoding, text, text)

    def encoded(self) -> bytes:
        """The current text in the file's own encoding (``utf-8-sig`` writes the BOM back)."""
        return self.text.encode(self.encoding)

    @property
    def changed(self) -> bool:
        return self.text != self.original_text


@dataclass
class FixOutcome:
    """What fixing did: the final analysis of the fixed texts, the files that changed, what was reverted."""

    report: Report  # the analysis of the fixed texts
    files: dict[str, FileFix]
    reverted: list[str] = field(default_factory=list)  # files whose fixes broke their syntax (a bug)

    @property
    def applied(self) -> list[Diagnostic]:
        return [d for f in self.files.values() for d in f.applied]


Analyze = Callable[[list[SourceFile]], "Report"]


def fix_report(report: Report, analyze: Analyze, unsafe: bool = False, passes: int = MAX_PASSES) -> FixOutcome:
    """Apply the applicable fixes of ``report``'s findings, re-analyse with ``analyze`` (the fixed
    sources → a new report), and repeat until nothing more applies or ``passes`` rounds ran."""
    files: dict[str, FileFix] = {}
    reverted: list[str] = []
    for _ in range(passes):
        pending: dict[str, list[Diagnostic]] = {}
        for d in report.findings:
            if d.fix is not None and d.fix.applies(unsafe) and d.file not in reverted:
                pending.setdefault(d.file, []).append(d)
        before: dict[str, str] = {}
        for path, diagnostics in pending.items():
            source = report.sources.get(path)
            if source is None or source.failure is not None:
                continue
            current = files.get(path) or FileFix.read(source)
            text, applied = apply_fixes(current.text, diagnostics, unsafe)
            if text != current.text:
                before[path] = current.text
                current.text = text
                current.applied.extend(applied)
                files[path] = current
        if not before:
            break
        report = analyze(_sources(report, files))
        broken = [path for path in before if any(d.code == SYNTAX_CODE and d.file == path
                                                 for d in report.findings)]
        if broken:
            for path in broken:
                files[path].text = before[path]
                files[path].applied = [d for d in files[path].applied if d not in pending[path]]
                reverted.append(path)
            report = analyze(_sources(report, files))
    return FixOutcome(report, {path: f for path, f in files.items() if f.changed}, reverted)


def _sources(report: Report, files: dict[str, FileFix]) -> list[SourceFile]:
    """Fresh (unparsed) sources of the project, the fixed files with their new bytes."""
    out = []
    for source in report.sources.values():
        data = files[source.path].encoded() if source.path in files else source.data
        out.append(SourceFile(source.path, source.module, source.is_package, data, failure=source.failure,
                              cells=source.cells))
    return out


def unified_diff(fix: FileFix, name: str) -> str:
    """The change as a unified diff (``--- name`` / ``+++ name``)."""
    lines = difflib.unified_diff(fix.original_text.splitlines(keepends=True), fix.text.splitlines(keepends=True),
                                 fromfile=name, tofile=name)
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


class NotWritten(Exception):
    """A fixed file that was deliberately left as it is (read-only, or changed since it was read)."""


def write(fix: FileFix) -> None:
    """Write the fixed file atomically: a temporary file in the same directory replaces it, only if the
    file is still the bytes that were analysed (:class:`NotWritten` otherwise, or when it is read-only)."""
    write_atomic(fix.path, fix.encoded(), expected=fix.original)


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path``'s content with ``data``; with ``expected``, only while the file still holds those
    bytes (a line the user saved during the run is never lost). A file without write permission for the
    user (its own mode bits: the rename would bypass them, even for root) is not replaced."""
    target = os.path.realpath(path)  # a symlink stays a symlink: its target is rewritten
    directory = os.path.dirname(target) or "."
    info = os.stat(target)
    mode = stat.S_IMODE(info.st_mode)
    if not _may_write(info) or not os.access(target, os.W_OK):
        raise NotWritten("the file is read-only")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        if expected is not None and _current(target) != expected:  # as late as possible: right before the rename
            raise NotWritten("it changed during the run")
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _may_write(info: os.stat_result) -> bool:
    """Whether the file's own mode bits let this user write it (for root, who may write anything: whether
    anyone may, so a 0444 file stays read-only). ``os.access`` then covers ACLs and read-only mounts."""
    if not hasattr(os, "geteuid"):  # Windows: the read-only attribute is the owner's write bit
        return bool(info.st_mode & stat.S_IWUSR)
    uid = os.geteuid()
    if uid == info.st_uid:
        return bool(info.st_mode & stat.S_IWUSR)
    if uid == 0:
        return bool(info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    if info.st_gid in (os.getegid(), *os.getgroups()):
        return bool(info.st_mode & stat.S_IWGRP)
    return bool(info.st_mode & stat.S_IWOTH)


def _current(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def print_text(fix: FileFix | None, source: SourceFile) -> None:
    """``check --fix -``: the (fixed) source on stdout, in its own encoding."""
    data = fix.encoded() if fix is not None else source.data
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
