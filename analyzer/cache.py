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
* per component (:mod:`analyzer.parallel`), keyed by the set of its paths and
  validated by a digest of every input: each file's path, module name and
  content digest, and the project module names its imports can see. A changed
  file, or a changed module it imports or that imports it, misses.

Writes go to a temporary file renamed over the old one (atomic); a file or an
entry that cannot be read is ignored, never an error; entries not used for 30
days are dropped when the cache is written.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import tempfile
import time
from typing import Any

from . import __version__
from .diagnostics import Diagnostic
from .parallel import FileInfo, digest

CACHE_DIR_NAME = ".devicelint_cache"
FORMAT = "v1"
MAX_AGE = 30 * 24 * 3600
TOUCH_EVERY = 24 * 3600
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by devicelint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The version and the analyzer's own sources (path, size, mtime) of analyzer/, rules/, runtime_shim/."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    parts = [__version__, sys.version]
    for package in ("analyzer", "rules", "runtime_shim"):
        root = os.path.join(top, package)
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    try:
                        stat = os.stat(path)
                    except OSError:
                        continue
                    parts.append(f"{os.path.relpath(path, top)}:{stat.st_size}:{stat.st_mtime_ns}")
    return digest("\n".join(parts).encode(), 32)


def default_dir(project_root: str) -> str:
    return os.environ.get("DEVICELINT_CACHE_DIR") or os.path.join(project_root, CACHE_DIR_NAME)


def _key(*parts: Any) -> str:
    return digest(json.dumps(parts, sort_keys=True, default=list).encode(), 32)


class Cache:
    """One settings key's entries, loaded at the start of a run and written back at its end."""

    def __init__(self, directory: str, engine_key: tuple) -> None:
        self.directory = os.path.abspath(directory)
        self.name = _key(code_fingerprint(), engine_key)[:24]
        self.path = os.path.join(self.directory, FORMAT, self.name + ".json")
        self.files: dict[str, dict[str, Any]] = {}
        self.components: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self.now = int(time.time())
        self.hits = 0
        self.misses = 0
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
                      visible_names: list[str]) -> tuple[str, str]:
        """(slot, key): the slot is the set of paths (one entry per component shape), the key every input."""
        slot = _key([m[0] for m in members], [m[1] for m in members])
        return slot, _key(engine_key, members, visible_names)

    def component(self, slot: str, key: str) -> list[Diagnostic] | None:
        entry = self.components.get(slot)
        if not isinstance(entry, dict) or entry.get("key") != key:
            self.misses += 1
            return None
        try:
            diagnostics = [Diagnostic.from_cache(item) for item in entry["diagnostics"]]
        except (KeyError, TypeError, ValueError):
            self.misses += 1
            return None  # a damaged entry: recompute it
        self._touch(entry)
        self.hits += 1
        return diagnostics

    def put_component(self, slot: str, key: str, diagnostics: list[Diagnostic]) -> None:
        self.components[slot] = {"key": key, "diagnostics": [d.to_cache() for d in diagnostics], "seen": self.now}
        self.dirty = True

    # --- how the files split into components ------------------------------------------------------------

    @staticmethod
    def grouping_key(members: list[tuple[str, str, str, bool, str]],
                     project_modules: frozenset[str]) -> tuple[str, str]:
        """(slot, key) of a run's split into components: (path, absolute path, module, is package, digest) of
        every analysed file, in order, and the project's modules (imports resolve against them)."""
        return _key([m[0] for m in members]), _key(members, sorted(project_modules))

    def grouping(self, slot: str, key: str, files: int) -> list[list[int]] | None:
        """The components computed for these exact inputs, or None (missing, stale or damaged)."""
        entry = self.groups.get(slot)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        groups = entry.get("groups")
        if not isinstance(groups, list) or not all(isinstance(g, list) and g for g in groups):
            return None
        members = [i for g in groups for i in g]
        if not all(type(i) is int for i in members) or sorted(members) != list(range(files)):
            return None  # not a split of these files: recompute it
        self._touch(entry)
        return groups

    def put_grouping(self, slot: str, key: str, groups: list[list[int]]) -> None:
        self.groups[slot] = {"key": key, "groups": groups, "seen": self.now}
        self.dirty = True

    # --- writing ------------------------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries back (atomically); a cache that cannot be written is silently skipped."""
        if not self.dirty:
            return
        oldest = self.now - MAX_AGE
        document = {
            "version": __version__,
            "files": {k: v for k, v in self.files.items() if _fresh(v, oldest)},
            "components": {k: v for k, v in self.components.items() if _fresh(v, oldest)},
            "groups": {k: v for k, v in self.groups.items() if _fresh(v, oldest)},
        }
        try:
            self._prepare()
            directory = os.path.dirname(self.path)
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(document, handle, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
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
