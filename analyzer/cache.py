"""The cache: results keyed by content, configuration and version.

Layout: ``<cache-dir>/<format>/<settings key>.json``, where the cache directory is
``.devicelint_cache`` in the project root (the configuration file's directory,
else the working directory), ``$DEVICELINT_CACHE_DIR``, the ``cache-dir`` key, or
``--cache-dir`` (each overriding the one before, as in ruff). The directory gets a
``CACHEDIR.TAG`` and a ``.gitignore`` of ``*``.

The settings key covers what the analysis depends on besides the files: the
profile, the target backends, whether relevance is checked, the Python version,
devicelint's version and a fingerprint of its own sources (so an edited analyzer
never reuses stale results). Rule selection, per-file ignores and ``noqa`` are
applied after the cache, so changing them reuses every entry.

Two kinds of entries:

* per file, keyed by path and content digest: the imports, the ``noqa``
  directives, or the MV901 failure (what the runner needs before analysis,
  without parsing the file again);
* per component (:mod:`analyzer.import_graph`), keyed by the set of its paths and
  validated by a digest of every input: each file's path, module name and
  content digest, and the project module names its imports can see. A changed
  file, or a changed module it imports or that imports it, misses the key; the
  entry also keeps its *shape* (the same without the contents) and, per file,
  the semantic digest of :mod:`analyzer.incremental`, so a component whose
  changed files only changed what the analysis does not read (comments, blank
  lines) is still a hit, after parsing the changed files alone;
* how the files split into components, keyed by each file's imports (not its
  content: an edit that changes no import keeps the split);
* per file content (in ``<settings key>.scans.json``, read only by a run that
  analyses a component): the demand sweep's scan of the file as plain data
  (:mod:`analyzer.engine.scan_summary`), so that a component analysed again
  after an edit scans only its changed files.

Paths in keys are as given (relative to the working directory when they are),
and the fingerprint of devicelint's own sources is of their contents, so a
cache directory restored on another machine (CI) is valid there when the
checkout, the configuration, devicelint and the Python version are the same.

Writes go to a temporary file renamed over the old one (atomic: a reader sees
the old document or the new one, never half of one); a file or an entry that
cannot be read is ignored, never an error; entries not used for 30 days are
dropped when the cache is written, and beyond :data:`MAX_COMPONENTS` /
:data:`MAX_FILES` entries the least recently used go first.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from . import __version__
from .diagnostics import Diagnostic
from .import_graph import FileInfo, digest

CACHE_DIR_NAME = ".devicelint_cache"
FORMAT = "v1"
MAX_AGE = 30 * 24 * 3600
TOUCH_EVERY = 24 * 3600
MAX_COMPONENTS = 2000  # component (and grouping) entries kept, most recently used first
MAX_FILES = 100_000  # per-file entries kept
FINGERPRINTS = "fingerprints.json"  # (analyzer sources' stat digest -> content digest), per cache directory
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by devicelint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")


def _analyzer_sources() -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    paths: list[str] = []
    for package in ("analyzer", "rules", "runtime_shim"):
        root = os.path.join(top, package)
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            paths.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".py"))
    return paths


@functools.lru_cache(maxsize=1)
def _stat_fingerprint() -> str:
    """The version and the analyzer's own sources (path, size, mtime): cheap, but local to one checkout."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [__version__, sys.version, top]
    for path in _analyzer_sources():
        try:
            stat = os.stat(path)
        except OSError:
            continue
        parts.append(f"{os.path.relpath(path, top)}:{stat.st_size}:{stat.st_mtime_ns}")
    return digest("\n".join(parts).encode(), 32)


@functools.lru_cache(maxsize=1)
def _content_fingerprint() -> str:
    """The version and the contents of the analyzer's own sources (the same on every machine)."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [__version__.encode(), sys.version.encode()]
    for path in _analyzer_sources():
        try:
            with open(path, "rb") as handle:
                parts.append(os.path.relpath(path, top).encode() + b"\0" + handle.read())
        except OSError:
            continue
    return digest(b"\0\0".join(parts), 32)


def code_fingerprint(directory: str | None = None) -> str:
    """What identifies this devicelint: the contents of its sources, remembered in ``directory`` (a cache
    directory) under their stat fingerprint, so that a run reads them only after they (or their mtimes:
    a fresh checkout) changed."""
    stat_key = _stat_fingerprint()
    path = os.path.join(directory, FINGERPRINTS) if directory else None
    known: dict[str, Any] = {}
    if path is not None:
        with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
            with open(path, encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict):
                known = loaded
    found = known.get(stat_key)
    if isinstance(found, str):
        return found
    content = _content_fingerprint()
    if path is not None and os.path.isdir(directory or ""):
        known = {stat_key: content}  # one checkout's entry: older ones are of sources that no longer exist
        with contextlib.suppress(OSError):
            _write_atomic(path, known)
    return content


def default_dir(project_root: str) -> str:
    return os.environ.get("DEVICELINT_CACHE_DIR") or os.path.join(project_root, CACHE_DIR_NAME)


def _key(*parts: Any) -> str:
    return digest(json.dumps(parts, sort_keys=True, default=list).encode(), 32)


class Cache:
    """One settings key's entries, loaded at the start of a run and written back at its end."""

    def __init__(self, directory: str, engine_key: tuple) -> None:
        self.directory = os.path.abspath(directory)
        self.name = _key(code_fingerprint(self.directory), engine_key)[:24]
        self.path = os.path.join(self.directory, FORMAT, self.name + ".json")
        self.files: dict[str, dict[str, Any]] = {}
        self.components: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self.scans_path = os.path.join(self.directory, FORMAT, self.name + ".scans.json")
        self._scans: dict[str, dict[str, Any]] | None = None  # content digest -> entry (read on first use)
        self.scans_dirty = False
        self.now = int(time.time())
        self.hits = 0
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError, UnicodeDecodeError):
            return  # no cache yet, or a broken one: start empty
        if not isinstance(document, dict):
            return
        files, components = document.get("files"), document.get("components")
        if isinstance(files, dict):
            self.files = files
        if isinstance(components, dict):
            self.components = components
        groups = document.get("groups")
        if isinstance(groups, dict):
            self.groups = groups

    # --- files ----------------------------------------------------------------------------------------

    def file_info(self, path: str, digest: str) -> FileInfo | None:
        entry = self.files.get(path)
        if not isinstance(entry, dict) or entry.get("digest") != digest:
            return None
        try:
            info = FileInfo.from_json(entry["info"])
        except (KeyError, TypeError, ValueError):
            return None  # a damaged entry: recompute it
        self._touch(entry)
        return info

    def _touch(self, entry: dict[str, Any]) -> None:
        """Mark an entry used (at most once a day, so that a warm run with no change writes nothing)."""
        seen = entry.get("seen")
        if not isinstance(seen, int) or seen < self.now - TOUCH_EVERY:
            entry["seen"] = self.now
            self.dirty = True

    def put_file_info(self, path: str, digest: str, info: FileInfo) -> None:
        self.files[path] = {"digest": digest, "info": info.to_json(), "seen": self.now}
        self.dirty = True

    # --- components ------------------------------------------------------------------------------------

    @staticmethod
    def component_key(engine_key: tuple, members: list[tuple[str, str, str, bool, str]],
                      visible_names: list[str]) -> tuple[str, str, str]:
        """(slot, key, shape): the slot is the set of paths (one entry per component shape), the key every
        input, the shape every input but the files' contents."""
        slot = _key([m[0] for m in members], [m[1] for m in members])
        shape = _key(engine_key, [m[:4] for m in members], visible_names)
        return slot, _key(engine_key, members, visible_names), shape

    def component(self, slot: str, key: str) -> list[Diagnostic] | None:
        entry = self.components.get(slot)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        return self._diagnostics(entry)

    def _diagnostics(self, entry: dict[str, Any]) -> list[Diagnostic] | None:
        try:
            diagnostics = [Diagnostic.from_cache(item) for item in entry["diagnostics"]]
        except (KeyError, TypeError, ValueError):
            return None  # a damaged entry: recompute it
        self._touch(entry)
        self.hits += 1
        return diagnostics

    def component_members(self, slot: str, shape: str) -> tuple[list[Any], list[str]] | None:
        """(per file [content digest, semantic digest, rows, rows' digest], the files holding a fix) of the
        entry of ``slot`` if it has this shape (:mod:`analyzer.incremental` decides whether it still holds)."""
        entry = self.components.get(slot)
        if not isinstance(entry, dict) or entry.get("shape") != shape:
            return None
        members, fixed = entry.get("members"), entry.get("fixed")
        if not isinstance(members, list) or not isinstance(fixed, list):
            return None
        return members, fixed

    def renew_component(self, slot: str, key: str, digests: list[str]) -> list[Diagnostic] | None:
        """The diagnostics of ``slot``'s entry, now valid for ``key`` (the files' new content ``digests``)."""
        entry = self.components[slot]
        diagnostics = self._diagnostics(entry)
        if diagnostics is not None:
            entry["key"] = key
            for record, now in zip(entry["members"], digests, strict=True):
                record[0] = now
            self.dirty = True
        return diagnostics

    def put_component(self, slot: str, key: str, diagnostics: list[Diagnostic], shape: str | None = None,
                      members: list[list[Any]] | None = None, fixed: list[str] | None = None) -> None:
        entry: dict[str, Any] = {"key": key, "diagnostics": [d.to_cache() for d in diagnostics], "seen": self.now}
        if shape is not None and members is not None:
            entry.update(shape=shape, members=members, fixed=sorted(fixed or ()))
        self.components[slot] = entry
        self.dirty = True

    # --- how the files split into components ------------------------------------------------------------

    @staticmethod
    def grouping_key(members: list[tuple[str, str, str, bool, str]],
                     project_modules: frozenset[str]) -> tuple[str, str]:
        """(slot, key) of a run's split into components: (path, path in keys, module, is package, content
        digest) of every analysed file, in order, and the project's modules (imports resolve against them)."""
        return _key([m[0] for m in members]), _key(members, sorted(project_modules))

    @staticmethod
    def imports_key(members: list[tuple[str, str, str, bool, str]], imports: list[list[Any]],
                    project_modules: frozenset[str]) -> str:
        """What the split depends on: the files' paths, modules and imports (not their other contents)."""
        return _key([m[:4] for m in members], imports, sorted(project_modules))

    def grouping(self, slot: str, key: str, files: int,
                 imports_key: Callable[[], str] | None = None) -> list[list[int]] | None:
        """The components computed for these exact inputs, or None (missing, stale or damaged). When the
        contents changed, ``imports_key`` (computed only then) may still show the same imports."""
        entry = self.groups.get(slot)
        if not isinstance(entry, dict):
            return None
        if entry.get("key") != key and (imports_key is None or entry.get("imports") != imports_key()):
            return None
        groups = entry.get("groups")
        if not isinstance(groups, list) or not all(isinstance(g, list) and g for g in groups):
            return None
        members = [i for g in groups for i in g]
        if not all(type(i) is int for i in members) or sorted(members) != list(range(files)):
            return None  # not a split of these files: recompute it
        if entry.get("key") != key:
            entry["key"] = key
            self.dirty = True
        self._touch(entry)
        return groups

    def put_grouping(self, slot: str, key: str, groups: list[list[int]], imports_key: str | None = None) -> None:
        self.groups[slot] = {"key": key, "imports": imports_key, "groups": groups, "seen": self.now}
        self.dirty = True

    # --- the demand sweep's scans, by file content -----------------------------------------------------

    def _scan_entries(self) -> dict[str, dict[str, Any]]:
        if self._scans is None:
            self._scans = {}
            try:
                with open(self.scans_path, encoding="utf-8") as handle:
                    document = json.load(handle)
            except (OSError, ValueError, UnicodeDecodeError):
                return self._scans  # none yet, or a broken one: start empty
            entries = document.get("scans") if isinstance(document, dict) else None
            if isinstance(entries, dict):
                self._scans = entries
        return self._scans

    def scan_summary(self, digest: str) -> dict[str, Any] | None:
        """The scan summary kept for a file of content ``digest`` (checked: a damaged one is None)."""
        from .engine import scan_summary

        entry = self._scan_entries().get(digest)
        if not isinstance(entry, dict):
            return None
        summary = entry.get("scan")
        if not scan_summary.valid(summary):
            return None
        summary[scan_summary.CHANGED] = False
        seen = entry.get("seen")
        if not isinstance(seen, int) or seen < self.now - TOUCH_EVERY:
            entry["seen"] = self.now
            self.scans_dirty = True
        return summary

    def put_scan_summary(self, digest: str, summary: dict[str, Any]) -> None:
        from .engine import scan_summary

        if summary.get(scan_summary.CHANGED):
            kept = {k: v for k, v in summary.items() if k != scan_summary.CHANGED}
            self._scan_entries()[digest] = {"scan": kept, "seen": self.now}
            self.scans_dirty = True

    # --- writing ------------------------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries back (atomically); a cache that cannot be written is silently skipped."""
        oldest = self.now - MAX_AGE
        if self.scans_dirty and self._scans is not None:
            try:
                self._prepare()
                _write_atomic(self.scans_path, {"version": __version__,
                                                "scans": _bounded(self._scans, oldest, MAX_FILES)})
                self.scans_dirty = False
            except OSError:
                pass
        if not self.dirty:
            return
        document = {
            "version": __version__,
            "files": _bounded(self.files, oldest, MAX_FILES),
            "components": _bounded(self.components, oldest, MAX_COMPONENTS),
            "groups": _bounded(self.groups, oldest, MAX_COMPONENTS),
        }
        try:
            self._prepare()
            _write_atomic(self.path, document)
        except OSError:
            return
        self.dirty = False

    def _prepare(self) -> None:
        os.makedirs(os.path.join(self.directory, FORMAT), exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Created by devicelint\n*\n")):
            path = os.path.join(self.directory, name)
            if not os.path.exists(path):
                with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)


def usable_dir(directory: str) -> str | None:
    """Why a cache directory the user named cannot be used (it cannot be created, or is not a
    directory one can write in), or None. Creates it, as the run would."""
    try:
        os.makedirs(directory, exist_ok=True)
    except FileExistsError:
        return "it exists and is not a directory"
    except OSError as error:
        return f"cannot create it: {error.strerror or error}"
    if not os.path.isdir(directory):
        return "it is not a directory"
    try:  # os.access says yes to root everywhere: a real write is the only honest test
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        return f"cannot write in it: {error.strerror or error}"
    return None


def _write_atomic(path: str, document: Any) -> None:
    """Write ``document`` as JSON to a temporary file in ``path``'s directory, then rename it over ``path``."""
    fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # one string: ``json.dumps`` encodes in C, ``json.dump`` to a file in Python (ten times slower)
            handle.write(json.dumps(document, separators=(",", ":")))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _bounded(entries: dict[str, Any], oldest: int, most: int) -> dict[str, Any]:
    """The entries used since ``oldest``, at most ``most`` of them (the most recently used)."""
    fresh = {k: v for k, v in entries.items() if _fresh(v, oldest)}
    if len(fresh) <= most:
        return fresh
    newest = sorted(fresh, key=lambda k: fresh[k]["seen"], reverse=True)[:most]
    return {k: fresh[k] for k in newest}


def _fresh(entry: Any, oldest: int) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("seen"), int) and entry["seen"] >= oldest


def clean(directory: str) -> bool:
    """Remove a cache directory (``devicelint clean``); False when there was none."""
    import shutil

    if not os.path.isdir(directory):
        return False
    if not os.path.exists(os.path.join(directory, "CACHEDIR.TAG")):
        raise OSError(f"{directory} does not look like a devicelint cache (no CACHEDIR.TAG); not removing it")
    shutil.rmtree(directory)
    return True
