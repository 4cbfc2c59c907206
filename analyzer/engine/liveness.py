"""Which local names a loop's body can read before assigning them (syntactically, conservatively).

A loop runs to a fixpoint of the state at its head. A name the body always assigns before reading it
(a temporary: ``v = cfgs[k]; tag = v.tag``) cannot change what the body computes, so two heads that
differ only in such names give the same iteration (:meth:`ControlFlow.stmt_For`). Without this, every
loop with a temporary ran its body once more only to find that nothing it reads had changed.

"Before" is over every path: a name assigned in one branch, in a nested loop's body, a ``try`` or a
``match``, or by a walrus, is not assigned for what follows; a read anywhere in a nested function,
lambda or comprehension counts where it is written; names declared ``global`` or ``nonlocal`` and
deleted names are always read. Over-approximating the reads only costs an iteration.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def loop_reads(node: ast.For | ast.AsyncFor | ast.While) -> frozenset[str]:
    """The names an iteration of ``node``'s body (with a ``while`` loop's test, after a ``for`` loop's
    target is assigned) may read before assigning them."""
    if isinstance(node, ast.While):
        return frozenset(_loads(node.test) | _block_reads(node.body, set()))
    return frozenset(_block_reads(node.body, _names(node.target)))


def _block_reads(body: Iterable[ast.stmt], assigned: set[str]) -> set[str]:
    """Names read in ``body`` before an assignment that every path to the read passes (``assigned``: those
    assigned before the block; updated as the block assigns more)."""
    reads: set[str] = set()
    for stmt in body:
        reads |= _stmt_reads(stmt, assigned) - assigned
        assigned |= _assigns(stmt)
        if isinstance(stmt, ast.Delete):
            assigned -= _names_in(stmt.targets)
    return reads


def _stmt_reads(stmt: ast.stmt, assigned: set[str]) -> set[str]:
    if isinstance(stmt, (ast.Global, ast.Nonlocal)):
        return set(stmt.names)
    if isinstance(stmt, ast.Delete):
        return _loads_all(stmt.targets) | _names_in(stmt.targets)
    if isinstance(stmt, ast.AugAssign):  # ``x += 1`` reads x
        return _loads(stmt.value) | _loads(stmt.target) | _names(stmt.target)
    if isinstance(stmt, ast.If):
        return _loads(stmt.test) | _block_reads(stmt.body, set(assigned)) | _block_reads(stmt.orelse, set(assigned))
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        inner = _block_reads(stmt.body, set(assigned) | _names(stmt.target))
        return _loads(stmt.iter) | _loads(stmt.target) | inner | _block_reads(stmt.orelse, set(assigned))
    if isinstance(stmt, ast.While):
        return _loads(stmt.test) | _block_reads(stmt.body, set(assigned)) | _block_reads(stmt.orelse, set(assigned))
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        reads = _loads_all([item.context_expr for item in stmt.items])
        reads |= _loads_all([item.optional_vars for item in stmt.items if item.optional_vars is not None])
        inner = set(assigned) | _names_in([item.optional_vars for item in stmt.items if item.optional_vars])
        return reads | _block_reads(stmt.body, inner)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        reads = _block_reads(stmt.body, set(assigned)) | _block_reads(stmt.orelse, set(assigned)) \
            | _block_reads(stmt.finalbody, set(assigned))
        for handler in stmt.handlers:
            if handler.type is not None:
                reads |= _loads(handler.type)
            reads |= _block_reads(handler.body, set(assigned))
        return reads
    return _loads(stmt)  # a simple statement, a match, a def or class (their defaults, decorators, bodies)


def _assigns(stmt: ast.stmt) -> set[str]:
    """The names ``stmt`` assigns on every path through it (compound statements: only ``with``'s own)."""
    if isinstance(stmt, ast.Assign):
        return _names_in(stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return _names(stmt.target) if stmt.value is not None else set()
    if isinstance(stmt, ast.AugAssign):
        return _names(stmt.target)
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).partition(".")[0] for alias in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _names_in([item.optional_vars for item in stmt.items if item.optional_vars is not None])
    return set()


def _names(target: ast.expr) -> set[str]:
    """The names a store target binds (``a``, ``a, (b, *c)``; not ``a.x`` or ``a[i]``)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return _names_in(target.elts)
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return set()


def _names_in(targets: Iterable[ast.expr]) -> set[str]:
    out: set[str] = set()
    for target in targets:
        out |= _names(target)
    return out


def _loads(node: ast.AST) -> set[str]:
    """Every name loaded anywhere in ``node``, nested functions, lambdas and comprehensions included."""
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Store)}


def _loads_all(nodes: Iterable[ast.AST]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        out |= _loads(node)
    return out
