"""A faster ``ast.iter_child_nodes`` for whole-tree passes.

``ast.iter_child_nodes`` is a generator over every field, expression contexts
(``Load``/``Store``) and operators included; the engine's indexing passes walk
every node of every file, where that costs a third of their time. Here the
field names that can hold a node are looked up once per node type, and the
context and operator fields are left out (no pass needs them).
"""

from __future__ import annotations

import ast

from .lazy_bodies import LazyBody

# fields that never hold a node a pass needs: contexts, operators, plain identifiers and flags
_SKIPPED = frozenset({"ctx", "op", "ops", "id", "attr", "name", "arg", "module", "level", "kind", "conversion",
                      "is_async", "type_comment", "asname", "lineno", "col_offset", "end_lineno",
                      "end_col_offset"})
# list fields that may hold something other than a node (``None`` keys of ``{**d}``, ``None`` keyword defaults,
# the identifiers of ``global``, ``nonlocal`` and class patterns): filtered; every other list holds nodes only
_MIXED_LISTS = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults"), (ast.Global, "names"),
                          (ast.Nonlocal, "names"), (ast.MatchClass, "kwd_attrs")})
_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node`` that a pass can use (no contexts or operators)."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple((f, (kind, f) in _MIXED_LISTS) for f in kind._fields if f not in _SKIPPED)
    children: list[ast.AST] = []
    for name, mixed in fields:
        value = getattr(node, name, None)
        if type(value) is list or type(value) is LazyBody:  # (a lazy body is parsed here: it is read)
            if mixed:
                children.extend(item for item in value if isinstance(item, ast.AST))
            else:
                children.extend(value)
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def store_targets(stmt: ast.AST) -> list[ast.expr]:
    """The targets a statement stores to or deletes (where an attribute or subscript store can appear)."""
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


_NEW_SCOPES: tuple[type, ...] = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS: tuple[type, ...] = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def scope_nodes(scope: ast.AST, comprehensions: bool = True) -> list[ast.AST]:
    """The nodes of one scope: not those of nested functions, lambdas and classes (scopes of their own), nor,
    with ``comprehensions=False``, those inside comprehensions (whose names are their own too)."""
    stop = _NEW_SCOPES if comprehensions else _NEW_SCOPES + _COMPREHENSIONS
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, stop):
            todo.extend(ast.iter_child_nodes(node))
    return out
