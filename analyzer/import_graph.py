"""The import graph: which analysed files are connected through imports, and so form one unit of analysis.

The engine is interprocedural across the project, so a file's diagnostics
depend on the files it imports (their values and functions) *and* on the files
that import it (the calling contexts they create). The unit is therefore a
*component*: the files connected through imports, in either direction. Each
component is analysed by its own :class:`~analyzer.engine.Engine`, which sees
exactly the modules the whole-project engine would reach from those files:

* edges are computed the way the engine resolves names (``find_module``: a
  module of the same root first, else the first module of that name; a module
  reached as ``ModuleRef`` makes all its submodules reachable, since
  ``pkg.sub`` can be read as an attribute; ``from pkg import name`` reaches
  ``pkg`` and ``pkg.name``; relative imports against the file's package);
* every import counts, wherever it is (function bodies, ``if``, ``try``).

Components are independent (nothing flows between them), so they can run in
parallel, in any order (:mod:`analyzer.scheduler`), and are cached separately
(:mod:`analyzer.cache`): a component's key holds the content of each of its
files, so a changed imported module invalidates every file that can see it,
and nothing else. What a file contributes (its imports, its suppression
comments) is a :class:`FileInfo`, cached by the file's content (:func:`digest`).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import frontend, noqa

try:  # the blake2 module alone: `import hashlib` loads OpenSSL first, 2 ms of a cached run's 60
    from _blake2 import blake2b
except ImportError:  # an interpreter without it
    from hashlib import blake2b


# --------------------------------------------------------------------------- what each file needs


@dataclass
class FileInfo:
    """What the runner needs of a relevant file before analysis (cached by content)."""

    failure: tuple[int, int, str] | None = None  # MV901: (line, 0-based col, message)
    imports: list[list[Any]] = field(default_factory=list)  # ["i", name, has_asname] / ["f", level, module, names]
    directives: list[noqa.Directive] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"failure": list(self.failure) if self.failure else None, "imports": self.imports,
                "directives": [d.to_json() for d in self.directives]}

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> FileInfo:
        failure = item["failure"]
        if failure is not None:
            line, col, message = failure
            if not (isinstance(line, int) and isinstance(col, int) and isinstance(message, str)):
                raise ValueError("malformed failure")
            failure = (line, col, message)
        imports = item["imports"]
        if not isinstance(imports, list) or not all(map(_valid_spec, imports)):
            raise ValueError("malformed import")
        return cls(failure, imports, [noqa.Directive.from_json(d) for d in item["directives"]])


def _valid_spec(spec: Any) -> bool:
    if not isinstance(spec, list) or not spec:
        return False
    if spec[0] == "i":
        return len(spec) == 3 and isinstance(spec[1], str) and isinstance(spec[2], bool)
    if spec[0] == "f":
        return (len(spec) == 4 and isinstance(spec[1], int) and isinstance(spec[2], str)
                and isinstance(spec[3], list) and all(isinstance(n, str) for n in spec[3]))
    return False


def file_info(source: frontend.SourceFile) -> FileInfo:
    """Parse ``source`` (leaving its tree on it) and collect its imports and suppression comments."""
    failure = frontend.parse(source)
    if failure is not None:
        return FileInfo(failure=(failure.line, failure.col, failure.message))
    assert source.tree is not None and source.text is not None
    text = source.text
    # ``noqa.parse`` first looks for "noqa" with a case-insensitive regex, which scans an ASCII text about a
    # hundred times slower than ``in`` on its lower case (milliseconds per edit on a 1,000-line buffer): an
    # ASCII text without it has no directive (``str.lower`` maps only A-Z to a-z there)
    maybe = not text.isascii() or "noqa" in text.lower()
    # only the directives that can change a finding of ours are kept (the editor's quick fix reads them all)
    return FileInfo(imports=import_specs(source.tree),
                    directives=noqa.parse(text).directives if maybe and noqa.may_matter(text) else [])


def import_specs(tree: ast.Module) -> list[list[Any]]:
    """Every import statement, wherever it is (imports are statements: only statement lists are walked)."""
    specs: list[list[Any]] = []
    stack: list[Any] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            specs.extend(["i", alias.name, alias.asname is not None] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            specs.append(["f", node.level, node.module or "", [alias.name for alias in node.names]])
        else:
            for name in _BLOCKS:
                block = getattr(node, name, None)
                if block:
                    stack.extend(block)
    return specs


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # statement lists (handlers, cases hold bodies)


def digest(data: bytes, size: int = 16) -> str:
    return blake2b(data, digest_size=size).hexdigest()


# --------------------------------------------------------------------------- components


def module_root(source: frontend.SourceFile) -> str:
    """The directory absolute imports of ``source`` start from (as the engine computes it)."""
    directory = os.path.dirname(os.path.abspath(source.path))
    for _ in range(source.module.count(".") + (1 if source.is_package else 0)):
        directory = os.path.dirname(directory)
    return directory


def absolute_base(level: int, module: str, package: str) -> str | None:
    """The module a ``from`` import names (``None``: beyond the top-level package), as the resolver does."""
    if not level:
        return module
    parts = package.split(".") if package else []
    up = level - 1
    if up > len(parts):
        return None
    base = parts[: len(parts) - up] if up else parts
    if module:
        base = [*base, *module.split(".")]
    return ".".join(base)


class _Resolution:
    """The engine's name resolution over the analysed files, for computing edges."""

    def __init__(self, sources: list[frontend.SourceFile], project_modules: Iterable[str]) -> None:
        from .imports import is_shim_module  # here: a cached run computes no edges

        self.roots = [module_root(s) for s in sources]
        self.by_name: dict[str, list[int]] = {}
        for i, source in enumerate(sources):
            if not is_shim_module(source.module):
                self.by_name.setdefault(source.module, []).append(i)
        names = set(project_modules) | set(self.by_name)
        self.children: dict[str, set[str]] = {}
        for name in names:
            parts = name.split(".")
            for depth in range(1, len(parts)):
                self.children.setdefault(".".join(parts[:depth]), set()).add(".".join(parts[: depth + 1]))
        self._memo: dict[tuple[str, str], frozenset[int]] = {}

    def find(self, name: str, root: str) -> int | None:
        candidates = self.by_name.get(name)
        if not candidates:
            return None
        for i in candidates:
            if self.roots[i] == root:
                return i
        return candidates[0]

    def reach(self, name: str, root: str) -> frozenset[int]:
        """Files reached through a ``ModuleRef`` to ``name`` made from ``root``: the module, and every
        submodule (an attribute of a module reference can name one), each resolved as the engine does."""
        key = (name, root)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        self._memo[key] = frozenset()  # (names form a tree: no cycles, but be safe)
        from .imports import is_shim_module

        out: set[int] = set()
        if not is_shim_module(name):
            found = self.find(name, root)
            next_root = root
            if found is not None:
                out.add(found)
                next_root = self.roots[found]
            for child in self.children.get(name, ()):
                out |= self.reach(child, next_root)
        result = self._memo[key] = frozenset(out)
        return result


def edges(sources: list[frontend.SourceFile], infos: list[FileInfo],
          project_modules: Iterable[str]) -> list[set[int]]:
    """For each file, the files its imports can reach directly."""
    from .imports import is_shim_module

    resolution = _Resolution(sources, project_modules)
    out: list[set[int]] = []
    for i, (source, info) in enumerate(zip(sources, infos, strict=True)):
        reached: set[int] = set()
        root = resolution.roots[i]
        for spec in info.imports:
            if spec[0] == "i":
                _kind, name, has_asname = spec
                # `import a.b.c` binds `a` (everything under it is reachable); `import a.b.c as x` binds a.b.c
                reached |= resolution.reach(name if has_asname else name.split(".")[0], root)
            else:
                _kind, level, module, names = spec
                base = absolute_base(level, module, source.package)
                if not base or is_shim_module(base):
                    continue
                found = resolution.find(base, root)  # `from base import ...` loads base itself
                if found is not None:
                    reached.add(found)
                base_root = resolution.roots[found] if found is not None else root
                for name in names:
                    if name != "*":  # a star import copies base's namespace: base's own edges cover it
                        reached |= resolution.reach(f"{base}.{name}", base_root)
        reached.discard(i)
        out.append(reached)
    return out


def components(sources: list[frontend.SourceFile], infos: list[FileInfo],
               project_modules: Iterable[str]) -> list[list[int]]:
    """The files connected through imports (either direction), each list in the files' order."""
    from .models.entry_points import fixture_links  # (the engine is imported only where it runs)

    parent = list(range(len(sources)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    links = [(i, j) for i, reached in enumerate(edges(sources, infos, project_modules)) for j in reached]
    links += fixture_links([source.path or "" for source in sources])  # pytest's conftest.py fixtures
    for i, j in links:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(sources)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda group: group[0])


def import_tops(sources: list[frontend.SourceFile], infos: list[FileInfo]) -> set[str]:
    """The top-level names a group of files imports (what of the project's module names they can see)."""
    tops: set[str] = set()
    for source, info in zip(sources, infos, strict=True):
        for spec in info.imports:
            if spec[0] == "i":
                tops.add(spec[1].split(".")[0])
            else:
                base = absolute_base(spec[1], spec[2], source.package)
                if base:
                    tops.add(base.split(".")[0])
    return tops
