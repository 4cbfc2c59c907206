"""Names of libraries the analysis does not read, by a module's import statements: which local name stands for
which qualified name (``plt`` -> ``matplotlib.pyplot``), and what a call's function names through them. The engine
knows these names as unknown values; the models that recognise such libraries (entry points, the Trainer model,
array consumers, progress bars) read them here. (:mod:`analyzer.imports` resolves the names the engine follows:
runtime_shim's and the project's.)"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from ..domain import Const, Value

if TYPE_CHECKING:
    from ..engine.flow_state import Frame

#: per module tree (weakly: a tree dropped by the engine drops its entry)
_IMPORTS: weakref.WeakKeyDictionary[ast.Module, dict[str, str]] = weakref.WeakKeyDictionary()


def statements(tree: ast.Module) -> list[ast.AST]:
    """Every statement of ``tree`` at any depth (bodies of functions, classes, branches, handlers), without walking
    expressions (imports and class statements are statements: most of a large module's nodes cannot be one)."""
    out: list[ast.AST] = []
    level: list[ast.AST] = [tree]
    while level:
        out.extend(level)
        level = [child for node in level for child in ast.iter_child_nodes(node)
                 if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))]
    return out


def aliases(tree: ast.Module, roots: tuple[str, ...] | None = None) -> dict[str, str]:
    """Local name -> the dotted path of a ``roots`` package (any package without ``roots``) it is bound to (``from
    transformers import Trainer as T``: ``T`` -> ``transformers.Trainer``), at any depth of the module (imports
    inside functions too)."""
    found: dict[str, str] = {}
    for node in statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if roots is None or alias.name.split(".")[0] in roots:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                        else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and (roots is None or node.module.split(".")[0] in roots):
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """The library path an expression names (``transformers.Trainer``, ``T``), or None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value, names)
        return f"{inner}.{node.attr}" if inner else None
    return None


def library_call_name(func: ast.expr, fr: Frame) -> str | None:
    """``plt.plot`` -> ``matplotlib.pyplot.plot`` in a module that imports ``matplotlib.pyplot as plt``; None: not
    a name the module's top-level imports bind."""
    tree = fr.module.source.tree
    if tree is None:
        return None
    names = _IMPORTS.get(tree)
    if names is None:
        names = _IMPORTS[tree] = aliases(tree)
    return dotted(func, names)


def unknown_library_name(func: Value) -> bool:
    """A called value the analysis does not know (an import of a library it does not read), or that and
    ``None`` (``try: from tqdm import tqdm`` / ``except ImportError: tqdm = None``: calling None raises, so a
    call that returns is the import's). A value the analysis knows (a project function, a modelled library's
    name) is not one."""
    return func.top and all(isinstance(a, Const) and a.value is None for a in func.atoms)
