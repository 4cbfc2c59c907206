"""A module's demand-sweep scan as plain data: what the engine reads of it, kept across runs by content.

The demand sweep (:mod:`analyzer.engine.demand`) scans every module of a large component before the first
pass: which functions mention a device source, which names may hold a module, which functions assign each
attribute name, and (when a function is skipped) what it may change. All of it is a function of the file's
bytes alone, except a skipped function's effects, which also depend on its receiver (``self`` of a method,
from how it is defined) and on the names of its module that may hold a project module
(:meth:`DemandSweep.module_names`, from the project's modules). The summary holds these as JSON values, so
the cache (:mod:`analyzer.cache`) keeps one per file content and a later run restores them instead of
scanning the file again (the scan was a tenth of a library's analysis):

* ``imported``: the names an import binds (with the module they come from) and top-level aliases;
* ``functions``: per function or lambda the scan reached, by its position (:func:`position`), whether it
  mentions a device source and its effects per receiver (``""``: none), computed when a run first needed
  them, valid while ``module_names`` holds what the run saw (effects for other module names are dropped);
* ``writers``: per attribute name, the ``def`` statements (line, column) with a statement assigning it;
* ``scopes``: per ``def`` a run analysed, its scope (:func:`analyzer.engine.program.scope_info`: the names it
  binds and loads, whether it yields, the names it declares ``global``), added as runs first need them.

A function's position is unique in a file (two functions never start at the same place), and a run that
needs what a summary does not hold (a lambda the scan did not reach, an effect not computed yet, other
module names) computes it from the tree as a run without the summary does.
"""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

FORMAT = 1
CHANGED = "changed"  # set on a summary a run built or extended (the cache then writes it back)


def position(node: ast.AST) -> str:
    """The key of a function's node in its summary: where it starts and ends."""
    return f"{node.lineno}:{node.col_offset}:{node.end_lineno}:{node.end_col_offset}"  # type: ignore[attr-defined]


def new(imported: dict[str, str | None], mentions: dict[str, bool],
        writers: dict[str, list[list[int]]]) -> dict[str, Any]:
    return {"format": FORMAT, "imported": imported, "functions": {key: [flag, {}] for key, flag in mentions.items()},
            "writers": writers, "module_names": None, "scopes": {}, CHANGED: True}


def valid(summary: Any) -> TypeGuard[dict[str, Any]]:
    """Does ``summary`` (read from a cache file) have the shape :func:`new` gives? Checked once per file."""
    if not isinstance(summary, dict) or summary.get("format") != FORMAT:
        return False
    imported, functions, writers = summary.get("imported"), summary.get("functions"), summary.get("writers")
    names, scopes = summary.get("module_names"), summary.get("scopes")
    if not (isinstance(imported, dict) and isinstance(functions, dict) and isinstance(writers, dict)
            and isinstance(scopes, dict)):
        return False
    for scope in scopes.values():
        if not (isinstance(scope, list) and len(scope) == 4 and isinstance(scope[2], bool)
                and all(isinstance(part, list) and all(isinstance(n, str) for n in part)
                        for part in (scope[0], scope[1], scope[3]))):
            return False
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        return False
    if not all(isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in imported.items()):
        return False
    for entry in functions.values():
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], bool)
                and isinstance(entry[1], dict)):
            return False
        for effects in entry[1].values():
            if not (isinstance(effects, list) and len(effects) == 5
                    and all(isinstance(part, list) and all(isinstance(s, str) for s in part) for part in effects)):
                return False
    return all(isinstance(owners, list) and all(isinstance(o, list) and len(o) == 2
                                                and all(type(i) is int for i in o) for o in owners)
               for owners in writers.values())


def effects(summary: dict[str, Any], key: str, receiver: str | None,
            module_names: frozenset[str]) -> list[list[str]] | None:
    """The effects of the function at ``key`` stored for this receiver and these module names, or None."""
    names = summary["module_names"]
    if names is None or len(names) != len(module_names) or not module_names.issuperset(names):
        return None
    entry = summary["functions"].get(key)
    return entry[1].get(receiver or "") if entry is not None else None


def put_effects(summary: dict[str, Any], key: str, receiver: str | None, module_names: frozenset[str],
                found: list[list[str]]) -> None:
    """Keep the effects a run computed (effects kept for other module names are dropped first)."""
    entry = summary["functions"].get(key)
    if entry is None:
        return  # a lambda the module's scan did not reach: scanned alone each time, as without a summary
    names = summary["module_names"]
    if names is None or len(names) != len(module_names) or not module_names.issuperset(names):
        for other in summary["functions"].values():
            other[1].clear()
        summary["module_names"] = sorted(module_names)
    entry[1][receiver or ""] = found
    summary[CHANGED] = True


def scope(summary: dict[str, Any], node: ast.AST) -> tuple[set[str], set[str], bool, frozenset[str]] | None:
    """The scope of the ``def`` at ``node`` a run stored, or None."""
    found = summary["scopes"].get(position(node))
    return (set(found[0]), set(found[1]), found[2], frozenset(found[3])) if found is not None else None


def put_scope(summary: dict[str, Any], node: ast.AST,
              found: tuple[set[str], set[str], bool, frozenset[str]]) -> None:
    summary["scopes"][position(node)] = [sorted(found[0]), sorted(found[1]), found[2], sorted(found[3])]
    summary[CHANGED] = True
