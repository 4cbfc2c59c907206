"""The analysis reaches the runtime through its pure modules only: the semantics tables and the texts both sides
print (runtime_shim.texts). Running a program is ``devicelint confirm``'s job (analyzer/confirm), and
``from devicelint import reveal_device`` hands out the runtime's function when a program asks for it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# pure Python, no runtime state: what the analyzer may import from runtime_shim
PURE = {"runtime_shim", "runtime_shim.semantics", "runtime_shim.torch_semantics", "runtime_shim.profiles",
        "runtime_shim.texts"}
# the code that runs programs under the runtime, not the analysis
RUNS_PROGRAMS = ("analyzer/confirm/",)
LAZY_REEXPORT = ("analyzer/__init__.py", "runtime_shim.reveal")  # ``from devicelint import reveal_device``


def runtime_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every runtime_shim module ``path`` imports (``from runtime_shim import x``: x counts
    as the submodule ``runtime_shim.x``, whether x is one or a lazily exported name)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "runtime_shim"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None \
                and node.module.split(".")[0] == "runtime_shim":
            if node.module == "runtime_shim":
                out += [(node.lineno, f"runtime_shim.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
    return out


def test_the_analysis_imports_only_the_pure_runtime_modules() -> None:
    offending = []
    for package in ("analyzer", "rules"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(RUNS_PROGRAMS):
                continue
            for line, module in runtime_imports(path):
                if module not in PURE and (relative, module) != LAZY_REEXPORT:
                    offending.append(f"{relative}:{line}: {module}")
    assert offending == []


def test_the_pure_modules_import_nothing_but_each_other_and_the_standard_library() -> None:
    for module in sorted(PURE - {"runtime_shim"}):
        path = ROOT / (module.replace(".", "/") + ".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                assert f"runtime_shim.{node.module}" in PURE, f"{module} imports .{node.module}"
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                for name in names:
                    assert name is not None and name.split(".")[0] in sys.stdlib_module_names, \
                        f"{module} imports {name}"


def test_analyzing_a_burn_program_loads_no_runtime_module() -> None:
    """What an analysis loads, measured: the example programs use every part of the runtime's API."""
    script = (
        "import sys\n"
        "from devicelint.cli import main\n"
        "main(['check', '--no-cache', '--exit-zero', '-q', 'examples/'])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('runtime_shim', 'numpy', 'torch'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.strip().splitlines()[-1].split())
    assert loaded and loaded <= PURE, loaded - PURE
