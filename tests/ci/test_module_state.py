"""What outlives one analysis in a process (the editor's server, the tests): no module of the analysis keeps its
state in module-level containers. The ones written as it runs are caches of pure functions of their keys or the
process's own bookkeeping, each listed here with why; ``functools`` caches are bounded."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: module-level names that functions change, by module: none holds one analysis's state
ALLOWED = {
    "analyzer/choices.py": {"_KEYS"},  # a choice's lasting form (a pure function), forgotten past a bound
    "analyzer/domain.py": {"_DEPTH_FIELDS", "_ITEM_KINDS", "_LOOSE_FIELDS"},  # by atom class
    "analyzer/tree_walk.py": {"_FIELDS"},  # by syntax node class
    "analyzer/engine/model_hooks.py": {"_OWN_HOOKS"},  # by model class
    "analyzer/engine/program.py": {"_SCOPES_BY_TEXT"},  # a function's scope by its text, forgotten past a bound
    "analyzer/cli.py": {"_RETAINED"},  # the command's objects, kept to the process's exit
    "analyzer/scheduler.py": {"_SHARED"},  # one run's sources for its forked workers, emptied after it
    "analyzer/lsp/server.py": {"_gc_pauses", "_gc_was_enabled"},  # the cyclic collector, paused
    "rules/cascades.py": {"_CACHE"},  # by one analysis's facts, weakly: gone with them
    "rules/base.py": {"_ALONE"},  # by one analysis's facts, weakly: gone with them
}
#: ``functools.cache`` over the library tables only (the signatures' texts): bounded by the tables
UNBOUNDED_OVER_TABLES = {("analyzer/models/signatures.py", "parse_signature")}
_CHANGES = {"append", "add", "update", "setdefault", "clear", "pop", "popitem", "extend", "insert", "remove",
            "discard"}


def _sources() -> list[Path]:
    return sorted([*(REPO / "analyzer").rglob("*.py"), *(REPO / "rules").rglob("*.py")])


def _changed_globals(tree: ast.Module) -> set[str]:
    names = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    changed: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed.update(node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.attr in _CHANGES:
                changed.add(node.func.value.id)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Name):
                changed.add(node.value.id)
    return changed & names


def test_no_module_keeps_analysis_state() -> None:
    found = {}
    for path in _sources():
        changed = _changed_globals(ast.parse(path.read_text(encoding="utf-8")))
        extra = changed - ALLOWED.get(str(path.relative_to(REPO)), set())
        if extra:
            found[str(path.relative_to(REPO))] = sorted(extra)
    assert found == {}


def _unbounded(decorator: ast.expr) -> bool:
    """``@cache``, ``@functools.cache``, ``@lru_cache(maxsize=None)`` (``@lru_cache`` alone is bounded)."""
    name = decorator.func if isinstance(decorator, ast.Call) else decorator
    text = ast.unparse(name)
    if text in ("cache", "functools.cache"):
        return True
    return isinstance(decorator, ast.Call) and text in ("lru_cache", "functools.lru_cache") and any(
        k.arg == "maxsize" and isinstance(k.value, ast.Constant) and k.value.value is None for k in decorator.keywords)


def test_function_caches_are_bounded() -> None:
    unbounded = {(str(path.relative_to(REPO)), node.name) for path in _sources()
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(_unbounded(d) for d in node.decorator_list)}
    assert unbounded == UNBOUNDED_OVER_TABLES
