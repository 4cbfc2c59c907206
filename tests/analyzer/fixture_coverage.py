"""Which flow constructs each fixture marker exercises: the rule × construct matrix.

For a marker (file, row, code) the construct set is read off the source: the
statements and expressions that enclose the marked call (branches, loops,
handlers, ``with``, functions, methods, lambdas, comprehensions ...), what is on
the marked line (walrus, conditional expression, subscripts), and how the names
used there were bound in their scope (unpacking, augmented assignment,
parameters with defaults, closures, names imported from a project module ...).

It is a syntactic reading, so it over-approximates a little (a name bound by
unpacking somewhere in the function counts even if another binding reaches the
call); the matrix it gives says where fixtures are missing, not a proof.

``python tests/analyzer/fixture_coverage.py`` prints the matrix as markdown.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_support import Fixture, all_fixtures  # noqa: E402

CONSTRUCTS = (
    "assignment", "unpacking", "augmented assignment", "if/else join", "narrowing", "loop",
    "break/continue/return", "try/except/finally", "with", "comprehension", "lambda", "walrus",
    "conditional expression", "function call", "default argument", "closure", "method/instance",
    "dataclass/property", "container index", "container iteration", "module constant (import)", "recursion",
)

_NARROWING_CALLS = ("is_autodiff", "device", "backend")


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _mentions_narrowing(test: ast.expr) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in _NARROWING_CALLS for node in ast.walk(test))


def _scope_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    current = parents.get(node)
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        current = parents.get(current)
    return current  # type: ignore[return-value]


def _bindings(scope: ast.AST, name: str) -> list[tuple[str, ast.AST]]:
    """How ``name`` is bound in ``scope`` (not descending into nested functions)."""
    found: list[tuple[str, ast.AST]] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and sub.id == name:
                        found.append(("unpack" if isinstance(target, (ast.Tuple, ast.List)) else "assign", node))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            found.append(("augmented", node))
        elif isinstance(node, ast.NamedExpr) and node.target.id == name:
            found.append(("walrus", node))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and any(
                isinstance(sub, ast.Name) and sub.id == name for sub in ast.walk(node.target)):
            found.append(("iteration", node))
        elif isinstance(node, (ast.ImportFrom, ast.Import)) and any((a.asname or a.name) == name for a in node.names):
            found.append(("import", node))
        stack.extend(ast.iter_child_nodes(node))
    return found


def _params(function: ast.AST) -> dict[str, bool]:
    """Parameter name -> whether it has a default."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return {}
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    with_default = {a.arg for a in positional[len(positional) - len(args.defaults):]} if args.defaults else set()
    with_default |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    return {a.arg: a.arg in with_default for a in (*positional, *args.kwonlyargs)}


def _from_project(node: ast.AST, project_modules: set[str]) -> bool:
    """An import of a module of the fixture itself (not runtime_shim's or the standard library's names)."""
    return isinstance(node, ast.ImportFrom) and bool(node.level or (node.module or "").split(".")[0] in project_modules)


def constructs_at(tree: ast.Module, row: int, project_modules: set[str]) -> set[str]:
    parents = _parents(tree)
    found = {"assignment"}
    on_line = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == row and isinstance(n, ast.expr)]
    if not on_line:
        return found
    anchor = min(on_line, key=lambda n: n.col_offset)
    for node in on_line:
        if isinstance(node, ast.NamedExpr):
            found.add("walrus")
        elif isinstance(node, ast.IfExp):
            found.add("conditional expression")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add("container index")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            found.add("method/instance")
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            found.add("comprehension")
        elif isinstance(node, ast.Lambda):
            found.add("lambda")
    # enclosing statements and expressions
    current, child = parents.get(anchor), anchor
    function = None
    while current is not None:
        if isinstance(current, ast.If):
            found.add("if/else join")
            if _mentions_narrowing(current.test):
                found.add("narrowing")
        elif isinstance(current, ast.IfExp):
            found.add("conditional expression")
        elif isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
            found.add("loop")
            if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(current)):
                found.add("break/continue/return")
            if isinstance(current, (ast.For, ast.AsyncFor)):
                found.add("container iteration")
        elif isinstance(current, ast.ExceptHandler) or (
                isinstance(current, ast.Try) and any(child is n for n in current.finalbody)):
            # in a handler or a finally block (a try body alone is how fixtures keep running after a failure)
            found.add("try/except/finally")
        elif isinstance(current, (ast.With, ast.AsyncWith)):
            found.add("with")
        elif isinstance(current, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            found.add("comprehension")
        elif isinstance(current, ast.Lambda):
            found.add("lambda")
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = function or current
            found.add("function call")
            if isinstance(parents.get(current), ast.ClassDef):
                found.add("method/instance")
            if any(isinstance(d, ast.Name) and d.id in ("property", "dataclass") or
                   isinstance(d, ast.Attribute) and d.attr in ("setter", "getter") for d in current.decorator_list):
                found.add("dataclass/property")
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == current.name
                   for n in ast.walk(current)):
                found.add("recursion")
            if isinstance(parents.get(current), (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add("closure")
        elif isinstance(current, ast.ClassDef) and any("dataclass" in ast.unparse(d)
                                                       for d in current.decorator_list):
            found.add("dataclass/property")
        child, current = current, parents.get(current)
    del child
    # how the names on the marked line were bound
    scope = _scope_of(anchor, parents)
    params = _params(scope)
    names = {n.id for n in on_line if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for name in names:
        if name in params:
            found.add("function call")
            if params[name]:
                found.add("default argument")
        kinds = {kind for kind, _node in _bindings(scope, name)}
        found |= {{"unpack": "unpacking", "augmented": "augmented assignment", "walrus": "walrus",
                   "iteration": "container iteration"}[k] for k in kinds if k in ("unpack", "augmented", "walrus",
                                                                                   "iteration")}
        for kind, node in _bindings(scope, name):
            if kind == "assign" and isinstance(node, ast.Assign):
                value = node.value
                if isinstance(value, ast.IfExp):
                    found.add("conditional expression")
                elif isinstance(value, ast.Subscript):
                    found.add("container index")
                elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                        and value.value.id == "self":
                    found.add("method/instance")
        if isinstance(scope, ast.Module) is False and not kinds and name not in params:
            outer = _scope_of(scope, parents)
            if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) and _bindings(outer, name):
                found.add("closure")
            elif isinstance(outer, ast.Module) and any(
                    _from_project(n, project_modules) for k, n in _bindings(outer, name) if k == "import"):
                found.add("module constant (import)")
        if isinstance(scope, ast.Module):
            for kind, node in _bindings(scope, name):
                if kind == "import" and _from_project(node, project_modules):
                    found.add("module constant (import)")
    return found


def matrix(fixtures: list[Fixture] | None = None) -> dict[str, dict[str, list[str]]]:
    """code -> construct -> the fixtures (file:row) that exercise it."""
    table: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    fixtures = fixtures if fixtures is not None else all_fixtures()
    for fixture in fixtures:
        trees: dict[str, ast.Module] = {}
        project = {f.stem for f in fixture.files} | ({fixture.path.name} if fixture.path.is_dir() else set())
        # a finding reported at the call that passed its operands meets the constructs around the failing call too
        for file, row, code in sorted(fixture.errors | fixture.warnings | fixture.inner):
            if file not in trees:
                trees[file] = ast.parse(Path(file).read_text(encoding="utf-8"))
            for construct in constructs_at(trees[file], row, project):
                table[code][construct].append(f"{Path(file).name}:{row}")
    return table


def markdown(table: dict[str, dict[str, list[str]]]) -> str:
    codes = sorted(table)
    lines = ["| construct | " + " | ".join(codes) + " |", "|---|" + "---:|" * len(codes)]
    for construct in CONSTRUCTS:
        cells = [str(len(table[c].get(construct, ()))) or "0" for c in codes]
        lines.append(f"| {construct} | " + " | ".join("**0**" if c == "0" else c for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(matrix()))
