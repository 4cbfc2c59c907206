"""Names of frameworks in a module's import statements, read as syntax, for the model that must know them before
the module runs: the entry points (a decorator such as ``@click.command()`` or ``@pytest.fixture``, a
``LightningModule`` base, ``fire.Fire(main)``, found before any function is called). Which local name stands for
which qualified name (``pl`` -> ``pytorch_lightning``). Calls and class bases the analysis evaluates name libraries
by value instead (:mod:`.library_refs`; the Trainer model's ``Trainer`` subclasses and ``TrainingArguments``).
(:mod:`analyzer.imports` resolves the names the engine follows: runtime_shim's and the project's.)"""

from __future__ import annotations

import ast

from ..lazy_bodies import may_hold


def statements(tree: ast.Module, word: bytes | None = None) -> list[ast.AST]:
    """Every statement of ``tree`` at any depth (bodies of functions, classes, branches, handlers), without walking
    expressions (imports and class statements are statements: most of a large module's nodes cannot be one).
    With ``word``, a function body not parsed yet whose text lacks it is left out (it holds no statement a caller
    looking for that word needs: :func:`analyzer.lazy_bodies.may_hold`)."""
    out: list[ast.AST] = []
    level: list[ast.AST] = [tree]
    while level:
        out.extend(level)
        if word is not None:
            level = [node for node in level if may_hold(node, word)]
        level = [child for node in level for child in ast.iter_child_nodes(node)
                 if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))]
    return out


def aliases(tree: ast.Module, roots: tuple[str, ...]) -> dict[str, str]:
    """Local name -> the dotted path of a ``roots`` package it is bound to (``from click import command as cmd``:
    ``cmd`` -> ``click.command``), at any depth of the module (imports inside functions too)."""
    found: dict[str, str] = {}
    for node in statements(tree, b"import"):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                        else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in roots:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """The library path an expression names (``click.command``, ``cmd``), or None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value, names)
        return f"{inner}.{node.attr}" if inner else None
    return None
