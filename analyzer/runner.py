"""One analysis run: files → facts (front end + engine) → diagnostics (rules) → suppressions.

This is the library entry point (the CLI is a thin layer over :func:`check`).
Later additions slot in here: a cache keyed by content, configuration and
version around :func:`analyze_project`, and parallel parsing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from rules import all_rules

from . import frontend, noqa
from .diagnostics import Diagnostic, Related, Severity
from .engine import Engine
from .facts import FactStore
from .settings import Settings


class InternalError(Exception):
    """The analyzer itself failed (exit code 2)."""


@dataclass
class Report:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_seen: int = 0
    files_analyzed: int = 0
    facts: FactStore | None = None
    sources: dict[str, frontend.SourceFile] = field(default_factory=dict)

    @property
    def findings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_finding]


def check(paths: list[str], settings: Settings | None = None, stdin: tuple[str, bytes] | None = None) -> Report:
    """Analyse ``paths`` (files and directories) and, optionally, one file read from stdin."""
    settings = (settings or Settings()).validate()
    files = frontend.discover(paths)
    if stdin is not None:
        stdin_path = os.path.abspath(stdin[0])
        files = [f for f in files if os.path.abspath(f) != stdin_path]
    sources = frontend.load(files, stdin)
    return analyze_project(sources, settings)


def check_source(text: str, filename: str = "<stdin>.py", settings: Settings | None = None) -> Report:
    """Analyse one program given as text (tests, docs, editors)."""
    return check([], settings, stdin=(filename, text.encode("utf-8")))


def analyze_project(sources: list[frontend.SourceFile], settings: Settings) -> Report:
    report = Report(files_seen=len(sources), sources={s.path: s for s in sources})
    chosen = sources if settings.analyze_everything else frontend.relevant(sources)
    facts = FactStore()
    facts.profile = settings.profile
    parsed = []
    for source in chosen:
        failure = frontend.parse(source)
        if failure is not None:
            facts.file_failures.append(failure)
        else:
            parsed.append(source)
    report.files_analyzed = len(parsed)
    report.facts = facts
    if parsed:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            engine = Engine(parsed, facts, settings.profile, settings.backends,
                            project_modules={s.module for s in sources})
            engine.run()
        except RecursionError as error:
            raise InternalError(f"nesting too deep to analyse: {error}") from error
        except Exception as error:  # noqa: BLE001 - reported as an internal error, never a traceback
            raise InternalError(f"{type(error).__name__}: {error}") from error
        finally:
            sys.setrecursionlimit(limit)
    diagnostics: list[Diagnostic] = []
    for rule in all_rules():
        if settings.selects(rule.code):
            diagnostics.extend(rule.check(facts))
    diagnostics.extend(reveal_notes(facts))
    by_file = {s.path: s for s in sources}
    diagnostics = [_finish(d, by_file) for d in diagnostics]
    if settings.respect_noqa:
        diagnostics = _apply_noqa(diagnostics, by_file)
    report.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
    return report


def reveal_notes(facts: FactStore) -> list[Diagnostic]:
    notes = []
    for site, reveal_facts in facts.reveals_by_site().items():
        texts = sorted({t for f in reveal_facts for t in f.texts})
        text = texts[0] if len(texts) == 1 else " | ".join(sorted({p for t in texts for p in t.split(" | ")}))
        notes.append(Diagnostic("", "reveal", Severity.NOTE, f"reveal_device: {text}", site.file, site.line,
                                site.col + 1, site.end_line, site.end_col + 1))
    return notes


def _char_column(lines: list[str], row: int, byte_column: int) -> int:
    """A 1-based byte column of ast → a 1-based character column."""
    if 1 <= row <= len(lines):
        line = lines[row - 1]
        if line.isascii():
            return byte_column
        return len(line.encode("utf-8")[: byte_column - 1].decode("utf-8", errors="replace")) + 1
    return byte_column


def _finish(d: Diagnostic, by_file: dict[str, frontend.SourceFile]) -> Diagnostic:
    source = by_file.get(d.file)
    lines = source.lines if source is not None else []
    d.column = _char_column(lines, d.row, d.column)
    d.end_column = _char_column(lines, d.end_row, d.end_column)
    finished = []
    for r in d.related:
        related_lines = by_file[r.file].lines if r.file in by_file else []
        finished.append(Related(r.file, r.row, _char_column(related_lines, r.row, r.column), r.message))
    d.related = finished
    return d


def _apply_noqa(diagnostics: list[Diagnostic], by_file: dict[str, frontend.SourceFile]) -> list[Diagnostic]:
    cache: dict[str, noqa.Suppressions] = {}
    kept = []
    for d in diagnostics:
        if not d.is_finding:
            kept.append(d)
            continue
        suppressions = cache.get(d.file)
        if suppressions is None:
            source = by_file.get(d.file)
            text = source.text if source is not None and source.text is not None else _decode_lossy(source)
            suppressions = cache[d.file] = noqa.parse(text)
        if not suppressions.suppresses(d.code, (d.row, d.end_row)):
            kept.append(d)
    return kept


def _decode_lossy(source: frontend.SourceFile | None) -> str:
    if source is None:
        return ""
    return source.data.decode("utf-8", errors="replace")
