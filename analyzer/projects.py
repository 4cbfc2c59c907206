"""A file's project, and the analysis of some of its files as the whole project's run gives it.

A file is analysed with the program it belongs to, not alone: ``devicelint check pkg/train.py``, the
pre-commit hook (which names the staged files) and the editor (the open buffer) all report the findings
``devicelint check .`` gives those files, including the ones whose cause lies in a module they import.

**The project root** of a file is found as ruff and pyright find theirs:

1. the innermost directory of the configuration's ``roots`` (globs; a monorepo's ``packages/*``) that
   holds the file: a root is a project of its own, left out of the projects around it;
2. else the nearest directory at or above the file with a ``pyproject.toml``, ``setup.cfg`` or ``.git``;
3. else the caller's fallback (a directory named on the command line, the editor's workspace folder);
4. else the file's *import root* (the directory above its outermost package, or its own directory):
   its Python files and its packages, not every subdirectory (the file may sit in ``$HOME``).

**The project's files** are discovered under the root with the settings' excludes and ``.gitignore``,
exactly as ``devicelint check`` of the root discovers them: excluded files are no more context than they
are targets (a ``build/`` copy of the package or a virtual environment would otherwise shadow the real
modules), so a target's findings are the ones of ``check .``. A target named explicitly is analysed even
when excluded (unless ``force-exclude``), as a directory run analyses a file named explicitly.

**The analysis** (:func:`analyzer.runner.analyze_project` with ``targets``) chooses the relevant files and
splits them into components (files connected through imports) over the whole project, then analyses only
the components holding the targets, with the run's cache: a file run reads the components ``check .``
cached. An edit in the editor re-analyses the components of the edited buffers the same way; disk
contents, module names and each file's imports are remembered by content, so a keystroke re-parses only
the buffers that changed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from . import discovery, frontend, import_graph
from .notebook import is_notebook
from .runner import Report, analyze_project
from .settings import Settings

MARKERS = ("pyproject.toml", "setup.cfg", ".git")


@dataclass(frozen=True)
class Root:
    """Where a project's files are: ``directory`` (recursively, or with ``recursive`` off its own Python
    files and packages), less the ``nested`` configured roots inside it (projects of their own)."""

    directory: str
    recursive: bool = True
    nested: tuple[str, ...] = ()


def _is_under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def marker_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` with a ``pyproject.toml``, ``setup.cfg`` or ``.git``."""
    return next((directory for directory in discovery.upwards(start)
                 if any(os.path.exists(os.path.join(directory, marker)) for marker in MARKERS)), None)


def import_root(path: str) -> str:
    """The directory a file is imported from: above its outermost package (its own directory when loose)."""
    directory = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(directory, "__init__.py")) or \
            os.path.isfile(os.path.join(directory, "__init__.pyi")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def find_root(path: str, roots: Iterable[str] = (), fallback: str | None = None) -> Root:
    """The project ``path`` belongs to (see the module's documentation); ``roots``: the configured ones
    (absolute), ``fallback``: the directory to use when no marker is found above the file."""
    path = os.path.abspath(path)
    roots = tuple(roots)
    holding = [r for r in roots if _is_under(path, r) and r != path]
    if holding:
        directory = max(holding, key=len)
        recursive = True
    else:
        found = marker_root(os.path.dirname(path))
        if found is None and fallback is not None and _is_under(path, os.path.abspath(fallback)):
            found = os.path.abspath(fallback)
        recursive = found is not None
        directory = found if found is not None else import_root(path)
    nested = tuple(r for r in roots if r != directory and _is_under(r, directory))
    return Root(directory, recursive, nested)


@dataclass
class _DiskFile:
    stamp: tuple[int, int]  # (mtime_ns, size)
    data: bytes


@dataclass
class Analysis:
    """One run over some components: its report and the paths it covered (every member of them)."""

    report: Report
    paths: frozenset[str]
    texts: dict[str, str] = field(default_factory=dict)  # the buffers it read, by path


class Project:
    """The files under ``root`` (discovered with the settings' excludes), analysed with ``settings``.

    ``relative``: name the files as a run from the working directory names them (``check .`` in the
    root gives ``pkg/train.py``), so that a command-line run shares the cache's entries with that run;
    an editor names them by absolute path."""

    def __init__(self, root: str | Root, settings: Settings, recursive: bool = True, relative: bool = False) -> None:
        spec = root if isinstance(root, Root) else Root(os.path.abspath(root), recursive)
        self.root = spec.directory
        self.recursive = spec.recursive  # False: a loose file's directory (say $HOME): its files and packages
        self.nested = spec.nested
        self.settings = settings
        self.relative = relative
        self._paths: list[str] | None = None
        self._disk: dict[str, _DiskFile] = {}
        self.skipped: dict[str, str] = {}  # path -> why it was left out (not a regular file, over the size cap)
        self.named_skipped: list[tuple[str, str]] = []  # of the files named explicitly, in the last sources()
        self._modules: dict[str, tuple[str, bool]] = {}
        self._infos: dict[str, tuple[str, import_graph.FileInfo]] = {}  # path -> (digest, info)

    def forget_files(self) -> None:
        """Rediscover the project's files on the next analysis (a file was saved, created or deleted)."""
        self._paths = None

    def spell(self, path: str) -> str:
        """``path`` as this project names it."""
        if not self.relative:
            return os.path.abspath(path)
        absolute = os.path.abspath(path)
        try:
            relative = os.path.relpath(absolute)
        except ValueError:  # another drive
            return absolute
        return absolute if relative.startswith("..") else relative

    def _discover(self) -> list[str]:
        paths = self._paths  # read once: the server thread may forget them while an analysis runs
        if paths is None:
            top = self.spell(self.root)
            options = dataclasses.replace(self.settings.discovery, force_exclude=False)
            try:
                tops = [top] if self.recursive else self._own_entries(top, options)
                found = discovery.discover(tops, options)
            except (OSError, discovery.PathError):
                found = []
            paths = [self.spell(p) for p in found]
            if self.nested:
                paths = [p for p in paths if not any(_is_under(os.path.abspath(p), n) for n in self.nested)]
            self._paths = paths
        return paths

    def _own_entries(self, top: str, options: discovery.DiscoveryOptions) -> list[str]:
        """A loose root's own Python files and its packages (what a walk of it would not exclude)."""
        patterns = options.patterns()
        out = []
        for name in sorted(os.listdir(self.root)):
            absolute = os.path.join(self.root, name)
            if patterns.matches(absolute, name):
                continue
            if name.endswith(discovery.PYTHON_SUFFIXES) and os.path.isfile(absolute) \
                    or os.path.isfile(os.path.join(absolute, "__init__.py")):
                out.append(os.path.join(top, name))
        return out

    def _read(self, path: str) -> bytes | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        known = self._disk.get(path)
        if known is not None and known.stamp == stamp:
            return known.data
        try:  # a regular file within the size cap only: a FIFO or a device must not block the server
            data = frontend.read_regular(path, self.settings.max_file_size or None)
        except frontend.Skipped as why:
            self.skipped[path] = str(why)
            return None
        except OSError:
            return None
        self._disk[path] = _DiskFile(stamp, data)
        return data

    def _module(self, path: str) -> tuple[str, bool]:
        if path not in self._modules:
            self._modules[path] = frontend.module_name(path)
        return self._modules[path]

    def _info(self, source: frontend.SourceFile) -> import_graph.FileInfo:
        digest = import_graph.digest(source.data)
        known = self._infos.get(source.path)
        if known is not None and known[0] == digest:
            return known[1]
        info = import_graph.file_info(source)
        self._infos[source.path] = (digest, info)
        return info

    def excludes(self, path: str) -> bool:
        """Whether the project's excludes leave ``path`` out (as ruff's editor integration does)."""
        return discovery.is_force_excluded(os.path.abspath(path), self.settings.discovery)

    def contains(self, path: str) -> bool:
        path = os.path.abspath(path)
        if not _is_under(path, self.root) or any(_is_under(path, n) for n in self.nested):
            return False
        return self.recursive or os.path.dirname(path) == self.root or \
            import_root(path) == self.root

    def sources(self, buffers: Mapping[str, str | bytes], extra: Iterable[str] = ()) -> list[frontend.SourceFile]:
        """Every project file, an open buffer's contents (keyed by absolute path) standing in for the file's
        bytes; ``extra``: files to include although discovery leaves them out (named explicitly)."""
        extra = tuple(extra)
        self.named_skipped = []
        paths = list(self._discover())
        known = {os.path.abspath(p) for p in paths}
        named = {os.path.abspath(p) for p in extra}
        # an editor shows a notebook as a notebook document, whose cells this server does not speak to
        for path in [*(b for b in buffers if not is_notebook(b)), *extra]:
            absolute = os.path.abspath(path)
            if absolute not in known and (absolute in named or self.contains(absolute)):
                known.add(absolute)
                paths.append(self.spell(path))
        out = []
        for path in paths:
            contents = buffers.get(os.path.abspath(path))
            # an editor buffer holding a lone surrogate keeps it as bytes that are not UTF-8: that file alone
            # fails to decode (MV901 on it), as a file on disk with such bytes would
            data = contents.encode("utf-8", "surrogatepass") if isinstance(contents, str) else contents
            if data is None:
                data = self._read(path)
            if data is None:
                if path in self.skipped and os.path.abspath(path) in named:  # not a regular file, or too large
                    self.named_skipped.append((path, self.skipped[path]))
                    continue
                if os.path.abspath(path) in named:  # named but unreadable: its MV901
                    out.extend(frontend.load([path]))
                continue  # deleted since discovery
            if is_notebook(path):  # its code cells joined into one program
                out.append(frontend.source_of(path, data))
                continue
            module, is_package = self._module(path)
            out.append(frontend.SourceFile(path, module, is_package, data))
        return out

    def analyze(self, targets: Iterable[str], buffers: Mapping[str, str | bytes], detail: bool = False,
                fixes: bool | None = None, extra: Iterable[str] = ()) -> Analysis:
        """Analyse the components holding ``targets`` (open buffers over the disk), with every project file
        as context. With ``detail``, also each expression's state (hover) and the rules' fixes (code
        actions): a separate run, made when asked for, because both slow down the analysis every edit waits
        for (fixes re-parse the file with libcst). ``fixes`` (default: ``detail``) attaches fixes without
        expression states (the command line)."""
        targets = {os.path.abspath(t) for t in targets}
        sources = self.sources(buffers, extra)
        settings = dataclasses.replace(self.settings, record_expressions=detail)
        unsaved = {s.path for s in sources if os.path.abspath(s.path) in buffers}
        report = analyze_project(sources, settings, fixes=detail if fixes is None else fixes, targets=targets,
                                 file_info=self._info, unsaved=frozenset(unsaved))
        report.skipped.extend(self.named_skipped)
        covered = report.covered if report.covered is not None else frozenset(report.sources)
        paths = frozenset(os.path.abspath(p) for p in covered)
        texts = {p: text for p in paths if isinstance(text := buffers.get(p), str)}
        return Analysis(report, paths, texts)


@dataclass
class FileRun:
    """The findings of some files of one project (``devicelint check FILE...``): ``report`` holds the
    targets' diagnostics only, its sources are the whole project's (for fixes and output)."""

    project: Project
    targets: frozenset[str]  # absolute paths
    report: Report
    stdin_name: str | None = None  # the buffer read from stdin, as the report names it

    def analyze(self, sources: list[frontend.SourceFile]) -> Report:
        """The project's run again over ``sources`` (the same files, some with new contents: fixes)."""
        report = analyze_project(sources, self.project.settings, stdin_name=self.stdin_name, targets=self.targets)
        return restrict(report, self.targets)


def restrict(report: Report, targets: frozenset[str]) -> Report:
    """``report`` with the diagnostics of ``targets`` (absolute paths) only."""
    report.diagnostics = [d for d in report.diagnostics if os.path.abspath(d.file) in targets]
    report.files_seen = len(targets)
    return report


def file_run(project: Project, files: Iterable[str], stdin: tuple[str, bytes] | None = None) -> FileRun:
    """Analyse ``files`` (and the buffer ``stdin``: (its file's path, contents), which replaces that file)
    with their project as context; the report holds their diagnostics only."""
    files = list(files)
    buffers: dict[str, str | bytes] = {}
    stdin_name = None
    if stdin is not None:
        buffers[os.path.abspath(stdin[0])] = stdin[1]
        stdin_name = project.spell(stdin[0])
    named = [*files, *([stdin[0]] if stdin is not None else [])]
    targets = frozenset(os.path.abspath(p) for p in named)
    analysis = project.analyze(targets, buffers, fixes=True, extra=named)
    return FileRun(project, targets, restrict(analysis.report, targets), stdin_name)


def merge(reports: list[Report]) -> Report:
    """Several runs' reports as one (files of several projects)."""
    if len(reports) == 1:
        return reports[0]
    from .diagnostics import Diagnostic

    out = Report()
    for report in reports:
        out.diagnostics.extend(report.diagnostics)
        out.sources.update(report.sources)
        out.files_seen += report.files_seen
        out.files_analyzed += report.files_analyzed
        out.components += report.components
        out.cache_hits += report.cache_hits
        out.cache_misses += report.cache_misses
        out.skipped.extend(report.skipped)
        out.notes.extend(report.notes)
    out.diagnostics.sort(key=Diagnostic.sort_key)
    return out
