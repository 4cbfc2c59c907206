"""The qualified name a call's function stands for through its module's imports, for libraries the analysis
does not read (their names are unknown values to the engine: a model recognises them by name)."""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from ..domain import Const, Value

if TYPE_CHECKING:
    from ..engine.flow_state import Frame

#: per module tree (weakly: a tree dropped by the engine drops its entry)
_IMPORTS: weakref.WeakKeyDictionary[ast.Module, dict[str, str]] = weakref.WeakKeyDictionary()


def _imports(tree: ast.Module | None) -> dict[str, str]:
    """The names a module's top-level imports bind, and the qualified names they stand for."""
    if tree is None:
        return {}
    cached = _IMPORTS.get(tree)
    if cached is not None:
        return cached
    names: dict[str, str] = {}
    for statement in _top_level(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.partition(".")[0]
                    names[root] = root
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                names[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
    _IMPORTS[tree] = names
    return names


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module's top level, those in ``try``/``if`` blocks there included (``try: from
    tqdm.auto import tqdm`` / ``except ImportError``)."""
    out: list[ast.stmt] = []
    for statement in body:
        out.append(statement)
        if isinstance(statement, ast.Try):
            out.extend(_top_level([*statement.body, *(s for h in statement.handlers for s in h.body)]))
        elif isinstance(statement, ast.If):
            out.extend(_top_level([*statement.body, *statement.orelse]))
    return out


def qualified_name(func: ast.expr, imports: dict[str, str]) -> str | None:
    """``plt.plot`` -> ``matplotlib.pyplot.plot`` through the imports; None: not an imported name."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in imports:
        return None
    return ".".join([imports[func.id], *reversed(parts)])


def library_call_name(func: ast.expr, fr: Frame) -> str | None:
    """``plt.plot`` -> ``matplotlib.pyplot.plot`` in a module that imports ``matplotlib.pyplot as plt``; None: not
    a name the module's top-level imports bind."""
    return qualified_name(func, _imports(fr.module.source.tree))


def unknown_library_name(func: Value) -> bool:
    """A called value the analysis does not know (an import of a library it does not read), or that and
    ``None`` (``try: from tqdm import tqdm`` / ``except ImportError: tqdm = None``: calling None raises, so a
    call that returns is the import's). A value the analysis knows (a project function, a modelled library's
    name) is not one."""
    return func.top and all(isinstance(a, Const) and a.value is None for a in func.atoms)
