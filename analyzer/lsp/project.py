"""One project as the editor sees it: the files on disk, the open buffers over them, and what to analyse.

An edit re-analyses only the *components* (:mod:`analyzer.parallel`: files connected through
imports, either direction) that hold the edited buffers, with every project module's name
known, so a file's diagnostics are the ones ``devicelint check`` of the saved project would
give. Editing module A therefore re-checks the open modules importing A: they share its
component. Disk contents, module names and each file's imports are remembered by content,
so a keystroke re-parses only the buffers that changed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import discovery, frontend, parallel
from ..runner import Report, analyze_project
from ..settings import Settings


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
    """The files under ``root`` (discovered with the settings' excludes), analysed with ``settings``."""

    def __init__(self, root: str, settings: Settings, recursive: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.settings = settings
        self.recursive = recursive  # False: a loose file's directory (say $HOME): its own files only
        self._paths: list[str] | None = None
        self._disk: dict[str, _DiskFile] = {}
        self._modules: dict[str, tuple[str, bool]] = {}
        self._infos: dict[str, tuple[str, parallel.FileInfo]] = {}  # path -> (digest, info)

    def forget_files(self) -> None:
        """Rediscover the project's files on the next analysis (a file was saved, created or deleted)."""
        self._paths = None

    def _discover(self) -> list[str]:
        paths = self._paths  # read once: the server thread may forget them while an analysis runs
        if paths is None:
            try:
                top = [os.path.join(self.root, name) for name in sorted(os.listdir(self.root))
                       if name.endswith(".py")] if not self.recursive else [self.root]
                found = discovery.discover(top, self.settings.discovery)
            except (OSError, discovery.PathError):
                found = []
            paths = self._paths = [os.path.abspath(p) for p in found]
        return paths

    def _read(self, path: str) -> bytes | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        known = self._disk.get(path)
        if known is not None and known.stamp == stamp:
            return known.data
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        self._disk[path] = _DiskFile(stamp, data)
        return data

    def _module(self, path: str) -> tuple[str, bool]:
        if path not in self._modules:
            self._modules[path] = frontend.module_name(path)
        return self._modules[path]

    def _info(self, source: frontend.SourceFile) -> parallel.FileInfo:
        digest = parallel.digest(source.data)
        known = self._infos.get(source.path)
        if known is not None and known[0] == digest:
            return known[1]
        info = parallel.file_info(source)
        self._infos[source.path] = (digest, info)
        return info

    def excludes(self, path: str) -> bool:
        """Whether the project's excludes leave ``path`` out (as ruff's editor integration does)."""
        return discovery.is_force_excluded(os.path.abspath(path), self.settings.discovery)

    def sources(self, buffers: dict[str, str]) -> list[frontend.SourceFile]:
        """Every project file, an open buffer's text standing in for the file's bytes."""
        paths = list(self._discover())
        known = set(paths)
        paths.extend(p for p in buffers if p not in known and self.contains(p))
        out = []
        for path in paths:
            text = buffers.get(path)
            # a buffer holding a lone surrogate keeps it as bytes that are not UTF-8: that file alone fails to
            # decode (MV901 on it), as a file on disk with such bytes would
            data = text.encode("utf-8", "surrogatepass") if text is not None else self._read(path)
            if data is None:
                continue  # deleted since discovery
            module, is_package = self._module(path)
            out.append(frontend.SourceFile(path, module, is_package, data))
        return out

    def contains(self, path: str) -> bool:
        path = os.path.abspath(path)
        return path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)

    def analyze(self, targets: Iterable[str], buffers: dict[str, str], detail: bool = False) -> Analysis:
        """Analyse the components holding ``targets`` (open buffers over the disk). With ``detail``, also each
        expression's state (hover) and the rules' fixes (code actions): a separate run, made when asked for,
        because both slow down the analysis every edit waits for (fixes re-parse the file with libcst)."""
        sources = self.sources(buffers)
        project_modules = frozenset(s.module for s in sources)
        targets = {os.path.abspath(t) for t in targets}
        chosen = sources if self.settings.analyze_everything else frontend.relevant(sources,
                                                                                          self.settings.torch_rules())
        parsed, infos = [], []
        for source in chosen:
            info = self._info(source)  # parses a changed buffer (its tree then serves the analysis)
            if info.failure is None:
                parsed.append(source)
                infos.append(info)
        wanted = set(targets)
        for group in parallel.components(parsed, infos, project_modules):
            members = {parsed[i].path for i in group}
            if members & targets:
                wanted |= members
        subset = [s for s in sources if s.path in wanted]
        settings = dataclasses.replace(self.settings, record_expressions=detail)
        report = analyze_project(subset, settings, project_modules=project_modules, fixes=detail)
        texts = {p: buffers[p] for p in wanted if p in buffers}
        return Analysis(report, frozenset(wanted), texts)
