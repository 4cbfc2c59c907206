"""No dead definitions in the analysis: every function, class and constant at the top of a module in analyzer/
and rules/ is named somewhere else (the code, the benchmarks or the tests), as ``vulture`` would check.

Registered by their place, not their name: the rules' classes (``rules/mvNNN_*.py``, found by module), decorated
functions (the LSP's features), the engine's ``stmt_*``/``expr_*`` handlers and dunders."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names_used(paths: list[Path]) -> Counter[str]:
    """Every name read, every attribute, import, keyword, and every word of a string (``getattr`` dispatch),
    leaving out the strings of ``__all__`` (a name only listed there is not used)."""
    used: Counter[str] = Counter()
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        listed = {id(node) for statement in tree.body if isinstance(statement, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
                  for node in ast.walk(statement.value)}
        for node in ast.walk(tree):
            if id(node) in listed:
                continue
            if isinstance(node, ast.Name):
                used[node.id] += 1
            elif isinstance(node, ast.Attribute):
                used[node.attr] += 1
            elif isinstance(node, ast.alias):
                used[node.name.rpartition(".")[2]] += 1
            elif isinstance(node, ast.keyword) and node.arg:
                used[node.arg] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                used.update(_WORD.findall(node.value))
    return used


def _defined(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, int]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.decorator_list and not (path.parent.name == "rules" and path.name.startswith("mv")):
                out.append((node.name, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.extend((t.id, node.lineno) for t in targets if isinstance(t, ast.Name))
    return [(name, line) for name, line in out if not name.startswith("__")]


def test_every_top_level_definition_is_used() -> None:
    sources = sorted([*(REPO / "analyzer").rglob("*.py"), *(REPO / "rules").rglob("*.py")])
    users = [*sources, *(REPO / "runtime_shim").rglob("*.py"), *(REPO / "bench").rglob("*.py"),
             *(REPO / "tests").rglob("*.py")]
    used = _names_used([path for path in users if path != Path(__file__).resolve()])
    unused = [f"{path.relative_to(REPO)}:{line}: {name}" for path in sources for name, line in _defined(path)
              if not used[name]]
    assert unused == [], "\n".join(unused)
