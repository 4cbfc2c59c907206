"""Import resolution: what each name bound by an ``import`` statement refers to.

Targets are the runtime_shim package (its public names and submodules, so
``import runtime_shim as rs``, ``from runtime_shim import Device as D``,
``from runtime_shim.tensor import Tensor`` all lead to the same model), modules
of the analyzed project (absolute or relative imports, resolved against the
package structure of the analyzed files), names defined in project modules
(resolved by the engine against the module's namespace, or a submodule), and
anything else (unknown to the analysis).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

SHIM = "runtime_shim"
#: This tool's own package, whose ``reveal_device`` is runtime_shim's (``analyzer/__init__.py``).
TOOL_PACKAGE = "devicelint"


@lru_cache(maxsize=1)
def shim_public_names() -> frozenset[str]:
    """The names importable from the runtime_shim package root."""
    import runtime_shim

    return frozenset(getattr(runtime_shim, "__all__", ()))


@lru_cache(maxsize=1)
def shim_submodules() -> frozenset[str]:
    import pkgutil

    import runtime_shim

    names = {f"{SHIM}.{m.name}" for m in pkgutil.iter_modules(runtime_shim.__path__)}
    names.add(f"{SHIM}.executors")
    return frozenset(names)


def is_shim_module(name: str) -> bool:
    return name == SHIM or name.startswith(SHIM + ".")


@dataclass(frozen=True)
class ShimModuleTarget:
    path: str


@dataclass(frozen=True)
class ShimNameTarget:
    name: str


@dataclass(frozen=True)
class ProjectModuleTarget:
    module: str


@dataclass(frozen=True)
class ProjectNameTarget:
    """``from module import name``: an attribute of a project module, or its submodule."""

    module: str
    name: str


@dataclass(frozen=True)
class StarTarget:
    """``from module import *`` of a project module or of runtime_shim."""

    module: str


@dataclass(frozen=True)
class UnknownTarget:
    what: str


Target = ShimModuleTarget | ShimNameTarget | ProjectModuleTarget | ProjectNameTarget | StarTarget | UnknownTarget


@lru_cache(maxsize=4)
def _packages(modules: frozenset[str]) -> frozenset[str]:
    """Every package prefix of a project module (importable too); computed once per project, not per
    component: a run analyses thousands of components against the same module set."""
    return frozenset(name.rsplit(".", i)[0] for name in modules for i in range(name.count(".") + 1))


class Resolver:
    """Resolves import statements against the project's modules and runtime_shim."""

    def __init__(self, project_modules: Iterable[str]) -> None:
        self.modules = frozenset(project_modules)
        self.packages = _packages(self.modules)

    def is_project(self, name: str) -> bool:
        return not is_shim_module(name) and (name in self.modules or name in self.packages)

    def module_target(self, name: str) -> Target:
        if is_shim_module(name):
            if name == SHIM or name in shim_submodules():
                return ShimModuleTarget(name)
            return UnknownTarget(name)
        if self.is_project(name):
            return ProjectModuleTarget(name)
        return UnknownTarget(name)

    def absolute(self, node: ast.ImportFrom, package: str) -> str | None:
        """The absolute module an ``ImportFrom`` names (``None``: beyond the top-level package)."""
        if not node.level:
            return node.module or ""
        parts = package.split(".") if package else []
        up = node.level - 1
        if up > len(parts):
            return None
        base = parts[: len(parts) - up] if up else parts
        if node.module:
            base = [*base, *node.module.split(".")]
        return ".".join(base)

    def resolve(self, node: ast.Import | ast.ImportFrom, package: str) -> list[tuple[str, Target]]:
        """(bound name, target) for each name the statement binds."""
        bound: list[tuple[str, Target]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound.append((alias.asname, self.module_target(alias.name)))
                else:
                    top = alias.name.split(".")[0]
                    bound.append((top, self.module_target(top)))
            return bound
        base = self.absolute(node, package)
        for alias in node.names:
            name = alias.asname or alias.name
            if base is None:
                bound.append((name, UnknownTarget(f"relative import beyond the top-level package: {alias.name}")))
                continue
            if alias.name == "*":
                if is_shim_module(base) or self.is_project(base):
                    bound.append(("*", StarTarget(base)))
                continue
            if is_shim_module(base):
                if alias.name in shim_public_names():
                    bound.append((name, ShimNameTarget(alias.name)))
                else:
                    bound.append((name, self.module_target(f"{base}.{alias.name}")))
            elif base == TOOL_PACKAGE and alias.name == "reveal_device":  # re-exported runtime_shim.reveal_device
                bound.append((name, ShimNameTarget(alias.name)))
            elif self.is_project(base):
                bound.append((name, ProjectNameTarget(base, alias.name)))
            else:
                bound.append((name, UnknownTarget(f"{base}.{alias.name}")))
        return bound
