"""The language server's state: open documents' latest analyses, projects, debounced re-checks, crash reports.

Analyses run one at a time on a worker thread, so the event loop keeps reading
messages (an edit arriving mid-analysis cancels the stale one: its result is
dropped, and the next run starts as soon as the worker is free). ``didOpen`` and
``didSave`` analyse at once; ``didChange`` after ``debounceMs`` of quiet.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
import threading
import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__, config
from ..diagnostics import Diagnostic
from ..projects import Analysis, Project, find_root
from ..runner import Report
from ..scheduler import TRACEBACK_NOTE
from ..settings import Settings, SettingsError
from . import config_report
from .config_report import check_globs, file_of
from .convert import LinesOf, to_lsp, uri_of
from .options import ClientOptions, build_settings, find_config, parse_client_options
from .positions import UTF16, split_lines
from .protocol import DeviceLintProtocol
from .transport import serve_stdio

log = logging.getLogger("devicelint.lsp")
ANALYSIS_STACK = 256 * 1024 * 1024  # the engine recurses deeply (the CLI raises the recursion limit too)
_gc_pauses = 0  # analyses (on the event loop's thread) running with the cyclic collector paused
_gc_was_enabled = True


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while an analysis runs and its diagnostics are published.

    An analysis allocates hundreds of thousands of objects, mostly freed by reference counting; with the
    collector on, every ``threshold0`` allocations it walks the young objects (the engine's live state among
    them) and, now and then, the whole heap of the server: the tail of the latency. Paused, the garbage of one
    analysis waits for the collection that runs after the publish (memory: one analysis' worth). Nested and
    overlapping uses (they all run on the event loop's thread) resume it when the last one ends."""
    global _gc_pauses, _gc_was_enabled
    if _gc_pauses == 0:
        _gc_was_enabled = gc.isenabled()
        gc.disable()
    _gc_pauses += 1
    try:
        yield
    finally:
        _gc_pauses -= 1
        if _gc_pauses == 0 and _gc_was_enabled:
            gc.enable()


@dataclass
class FileResult:
    """The latest analysis of one open document."""

    version: int | None
    text: str
    diagnostics: list[Diagnostic]
    report: Report
    detail: Report | None = None  # the same text analysed with expression states and fixes (when asked)

    def detailed_diagnostics(self, path: str) -> list[Diagnostic]:
        assert self.detail is not None
        return [d for d in self.detail.diagnostics if d.file == path]


class DeviceLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("devicelint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=DeviceLintProtocol)
        self.client_options = ClientOptions()
        self.init_options: object = None
        self.encoding = UTF16
        self.push = True  # push diagnostics (clients that pull get them by asking)
        self.refresh = False  # a pulling client that takes workspace/diagnostic/refresh
        self.projects: dict[tuple[str, str | None], Project] = {}
        self._project_keys: dict[str, tuple[str, str | None]] = {}  # directory -> project key
        self.results: dict[str, FileResult] = {}  # path -> latest analysis of the open document
        self.members: dict[str, frozenset[str]] = {}  # path -> the paths analysed with it last time
        self._dirty: set[str] = set()
        self._pending: asyncio.Task | None = None
        self._lock: asyncio.Lock | None = None
        self._executor: ThreadPoolExecutor | None = None
        self.config_problems: dict[str, types.Diagnostic] = {}  # configuration file -> its error, as published
        self.configured = asyncio.Event()  # set once the client's settings are read (analyses wait for it)

    # ------------------------------------------------------------------ documents and projects

    def open_documents(self) -> dict[str, tuple[str, int | None, str]]:
        """path -> (uri, version, text) of every open ``file:`` Python document (a ``.py``/``.pyi`` file, or
        one the client calls ``python``: a configuration file open beside them is neither analysed nor
        a stand-in for a module)."""
        out = {}
        for uri, document in list(self.workspace.text_documents.items()):
            path = to_fs_path(uri) if uri.startswith("file:") else None
            if path is not None and (path.endswith((".py", ".pyi")) or document.language_id == "python"):
                out[os.path.abspath(path)] = (uri, document.version, document.source)
        return out

    def lines_getter(self, report: Report | None = None) -> LinesOf:
        """A file's rows: the open buffer's, else the analysed text's (each split once per call site)."""
        documents = self.open_documents()
        cache: dict[str, list[str]] = {}

        def lines_of(path: str) -> list[str]:
            if path not in cache:
                document = documents.get(path)
                source = report.sources.get(path) if report is not None else None
                cache[path] = split_lines(document[2]) if document is not None else \
                    source.lines if source is not None else []
            return cache[path]

        return lines_of

    def workspace_root(self, path: str) -> str | None:
        """The innermost workspace folder holding ``path`` (None: it is in none)."""
        best = None
        for folder in self.workspace.folders.values():
            root = to_fs_path(folder.uri)
            if root and (path + os.sep).startswith(root.rstrip(os.sep) + os.sep):
                best = root if best is None or len(root) > len(best) else best
        if best is None and self.workspace.root_path and path.startswith(self.workspace.root_path.rstrip(os.sep)
                                                                           + os.sep):
            best = self.workspace.root_path
        return best

    def project_for(self, path: str) -> Project:
        directory = os.path.dirname(path)
        key = self._project_keys.get(directory)
        if key is None or key not in self.projects:
            problem: Exception | None = None
            try:
                found = find_config(path)
            except config.ConfigError as error:
                problem, found = error, None
            base = found or config.Config(None, directory, {})
            # the project `devicelint check FILE` analyses the file with (analyzer.projects.find_root)
            root = find_root(path, base.roots(), fallback=self.workspace_root(path))
            key = (root.directory, found.path if found is not None else None)
            if key not in self.projects:
                settings = None
                if found is not None:
                    try:
                        check_globs(found)
                        settings = build_settings(found, self.client_options)
                    except (SettingsError, config.ConfigError) as error:
                        problem = error
                if settings is None:
                    settings = self._default_settings(root.directory)
                self.report_config(found.path if found is not None else file_of(problem) if problem else None,
                                   problem)
                self.projects[key] = Project(root, settings)
            self._project_keys[directory] = key
        return self.projects[key]

    def _default_settings(self, root: str) -> Settings:
        try:
            return build_settings(config.Config(None, root, {}), self.client_options)
        except (SettingsError, config.ConfigError):
            return build_settings(config.Config(None, root, {}), ClientOptions())

    def report_config(self, path: str | None, problem: Exception | None) -> None:
        """A configuration error shown (and as a diagnostic on the file), or the file's old error cleared."""
        if problem is not None:
            message = str(problem) if path is None or str(problem).startswith(path) else f"{path}: {problem}"
            self.show_error(f"devicelint: {message} (using the default settings)")
        if path is None:
            return
        if problem is not None:
            self.config_problems[path] = config_report.diagnostic(path, str(problem), self.encoding)
            items = [self.config_problems[path]]
        elif self.config_problems.pop(path, None) is not None:
            items = []
        else:
            return
        if self.push:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri_of(path), diagnostics=items))
        elif self.refresh:
            self.workspace_diagnostic_refresh(None)  # a pulling client asks again (pyproject.toml's answer changed)

    def reset_projects(self) -> None:
        """Settings changed (client or ``pyproject.toml``): rebuild every project on the next analysis."""
        self.projects.clear()
        self._project_keys.clear()

    def apply_client_settings(self, *layers: object) -> None:
        merged: dict = {}
        for layer in layers:
            if isinstance(layer, dict):
                merged.update(layer.get("devicelint", layer) if isinstance(layer.get("devicelint"), dict) else layer)
        try:
            self.client_options = parse_client_options(merged)
        except (SettingsError, config.ConfigError) as error:
            self.show_error(f"devicelint: invalid settings: {error} (using the defaults)")
            self.client_options = ClientOptions()
        if self.client_options.unknown:
            self.log(types.MessageType.Warning,
                     f"devicelint: unknown settings ignored: {', '.join(self.client_options.unknown)}")
        self.reset_projects()

    # ------------------------------------------------------------------ messages to the client

    def log(self, kind: types.MessageType, message: str) -> None:
        log.log(logging.ERROR if kind == types.MessageType.Error else logging.INFO, "%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_error(self, message: str) -> None:
        self.log(types.MessageType.Error, message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def report_failure(self, error: BaseException, paths: Iterable[str]) -> None:
        """An exception inside the analysis: logged with its traceback, shown in one line; the server goes on."""
        names = ", ".join(sorted(os.path.basename(p) for p in paths))
        trace = "".join(traceback.format_exception(error))
        self.log(types.MessageType.Error, f"devicelint: analysing {names} failed:\n{trace}")
        self.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Error,
            message=f"devicelint: internal error while analysing {names}: {type(error).__name__}: {error} "
                    "(the traceback is in the log; please report it)"))

    def report_failed_components(self, report: Report) -> None:
        """MV903 findings (the analysis failed on a component, the rest went on): their tracebacks logged and
        each shown in one line, as an exception escaping the analysis would be."""
        for note in report.notes:
            if note.name != TRACEBACK_NOTE:
                continue
            name = os.path.basename(note.file)
            last = (note.message.strip().splitlines() or [""])[-1]
            self.log(types.MessageType.Error, f"devicelint: analysing {name} failed:\n{note.message}")
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error,
                message=f"devicelint: internal error while analysing {name}: {last} "
                        "(the traceback is in the log; please report it)"))

    def publish(self, path: str, uri: str, version: int | None, diagnostics: list[Diagnostic],
                report: Report | None) -> None:
        if not self.push:
            return
        lines_of = self.lines_getter(report)
        items = [to_lsp(d, lines_of, self.encoding) for d in diagnostics]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items,
                                                                              version=version))

    def lsp_diagnostics(self, path: str) -> list[types.Diagnostic]:
        result = self.results.get(path)
        if result is None:
            return []
        lines_of = self.lines_getter(result.report)
        return [to_lsp(d, lines_of, self.encoding) for d in result.diagnostics]

    # ------------------------------------------------------------------ scheduling

    @property
    def debounce(self) -> float:
        return self.client_options.debounce_ms / 1000

    def schedule(self, paths: Iterable[str], delay: float) -> None:
        """Re-check ``paths`` after ``delay`` seconds; a later call restarts the wait (and drops a stale run)."""
        self._dirty.update(paths)
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
        self._pending = asyncio.ensure_future(self._run_after(delay))

    async def _run_after(self, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await self.flush()

    async def flush(self) -> None:
        """Analyse what is waiting now."""
        await self.configured.wait()
        async with self._analysis_lock():
            targets, self._dirty = self._dirty, set()
            try:
                await self.analyze(targets)
            except asyncio.CancelledError:
                self._dirty |= targets  # superseded: the next run picks them up
                raise

    async def fresh(self, path: str) -> FileResult | None:
        """The analysis of the open document's current text (analysing it now when the latest is stale)."""
        document = self.open_documents().get(path)
        if document is None:
            return None
        result = self.results.get(path)
        if result is None or result.text != document[2]:
            self._dirty.add(path)
            await self.flush()
            result = self.results.get(path)
        return result if result is not None and result.text == document[2] else None

    async def detailed(self, path: str) -> FileResult | None:
        """The open document's latest analysis, with its detailed run (expression states, fixes) made if needed."""
        result = await self.fresh(path)
        if result is None:
            return None
        if result.detail is None:
            buffers = {p: text for p, (_uri, _version, text) in self.open_documents().items()}
            async with self._analysis_lock():
                loop = asyncio.get_running_loop()
                try:
                    with gc_paused():
                        analysis = await loop.run_in_executor(self._worker(), self.project_for(path).analyze,
                                                              {path}, buffers, True)
                except Exception as error:  # noqa: BLE001 - reported; the request gets no answer, the server goes on
                    self.report_failure(error, [path])
                    return None
            if any(d.code == "MV903" for d in analysis.report.diagnostics):
                self.report_failed_components(analysis.report)
                return None  # what it failed on has no detail to give
            if analysis.texts.get(path) == result.text:
                result.detail = analysis.report
        return result if result.detail is not None else None

    def _analysis_lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def _worker(self) -> ThreadPoolExecutor:
        if self._executor is None:
            previous = threading.stack_size(ANALYSIS_STACK)
            try:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="devicelint-analysis")
                self._executor.submit(lambda: None).result()  # start the thread while the size is set
            finally:
                threading.stack_size(previous)
        return self._executor

    # ------------------------------------------------------------------ analysis

    async def analyze(self, paths: Iterable[str]) -> None:
        """Analyse ``paths`` (with every open module sharing a component with them) and publish."""
        documents = self.open_documents()
        targets = {p for p in paths if p in documents}
        for path in list(targets):  # a module that left the component still needs its diagnostics redone
            targets |= {p for p in self.members.get(path, ()) if p in documents}
        buffers = {path: text for path, (_uri, _version, text) in documents.items()}
        by_project: dict[int, tuple[Project, set[str]]] = {}
        for path in sorted(targets):
            project = self.project_for(path)
            if project.excludes(path):
                self.results.pop(path, None)
                self.publish(path, documents[path][0], documents[path][1], [], None)
                continue
            by_project.setdefault(id(project), (project, set()))[1].add(path)
        loop = asyncio.get_running_loop()
        for project, project_targets in by_project.values():
            with gc_paused():  # through the publish: the collection runs after the client has the results
                try:
                    analysis = await loop.run_in_executor(self._worker(), project.analyze, project_targets, buffers)
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # noqa: BLE001 - a failing analysis must not take the server down
                    self.report_failure(error, project_targets)
                    continue
                self.report_failed_components(analysis.report)
                self._store(analysis, documents)

    def _store(self, analysis: Analysis, documents: dict[str, tuple[str, int | None, str]]) -> None:
        by_file: dict[str, list[Diagnostic]] = {}
        for d in analysis.report.diagnostics:
            by_file.setdefault(d.file, []).append(d)
        current = self.open_documents()
        others_changed = False
        for path in analysis.paths:
            if path not in documents or path not in analysis.texts:
                continue
            uri, version, text = documents[path]
            now = current.get(path)
            if now is None or now[2] != text:
                continue  # edited (or closed) meanwhile: a newer analysis is on its way
            diagnostics = by_file.get(path, [])
            previous = self.results.get(path)
            others_changed |= previous is not None and previous.text == text and previous.diagnostics != diagnostics
            self.results[path] = FileResult(version, text, diagnostics, analysis.report)
            self.members[path] = analysis.paths
            self.publish(path, uri, version, diagnostics, analysis.report)
        if others_changed and not self.push and self.refresh:
            self.workspace_diagnostic_refresh(None)  # an unedited module's findings changed: ask to pull again

    def close(self, path: str, uri: str) -> None:
        """A closed document: its diagnostics cleared; the modules analysed with it re-read it from disk."""
        self.results.pop(path, None)
        others = self.members.pop(path, frozenset()) - {path}
        if self.push and path not in self.config_problems:  # a configuration error stays until it is fixed
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        documents = self.open_documents()
        if any(p in documents for p in others):
            self.schedule([p for p in others if p in documents], 0)

    def serve(self) -> int:
        """Serve over stdin/stdout (a reader that survives malformed messages); the exit status."""
        assert isinstance(self.protocol, DeviceLintProtocol)
        self._stop_event = threading.Event()
        try:
            return serve_stdio(self.protocol, sys.stdin.buffer, sys.stdout.buffer)
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        super().shutdown()
