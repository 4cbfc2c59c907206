"""How much of a PyTorch library could a demand-driven analysis skip? Two measurements behind docs/performance.md.

1. ``--engine``: analyse a corpus with the engine (one component, in process) and count the calling
   contexts that recorded any site fact. A site fact needs a tensor or device whose state is known;
   in a library the sweep of uncalled functions sees unknown arguments and an unknown default
   device, so very few contexts ever record one.
2. Always: which functions hold a *device source* in their own text (a device string, ``.cpu()``,
   ``.cuda()``, ``torch.device``, ``device=<constant>``, numpy, ``from_numpy``/``.numpy()``: what
   gives a known state in a context with unknown inputs), and the closure a sound skip would need
   when computed over names (a function that reads an attribute or calls a name that a function of
   the set stores or defines joins the set). The gap between the two is why skipping by names does
   not work: the closure is most of the library.

Usage (the corpora are the speed bench's pinned wheels, downloaded on first use)::

    python bench/demand_estimate.py                       # name closure, all four corpora
    python bench/demand_estimate.py --engine --corpora timm
    python bench/demand_estimate.py --engine --full-sweep --corpora timm   # the same, every uncalled function swept
    python bench/demand_estimate.py --engine --directory fixtures/torch   # any directory
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from devicelint.torch_domain import DEVICE_TYPES  # noqa: E402  (the analyzer's list of device types)

from bench.analyzer_speed import CORPORA, DEFAULT_CACHE, fetch  # noqa: E402  (one list of corpora, one place)

SOURCE_ATTRIBUTES = {"cpu", "cuda", "numpy", "from_numpy", "set_default_device", "device"}
NUMPY_NAMES = {"np", "numpy"}


@dataclass
class Function:
    """A module-level function or a method, nested functions included in its body."""

    name: str
    lines: int
    source: bool = False
    loads: set[str] = field(default_factory=set)  # names and attribute names read or called
    stores: set[str] = field(default_factory=set)  # attribute names and ``global`` names assigned


def _is_device_string(value: object) -> bool:
    return isinstance(value, str) and value.split(":", 1)[0] in DEVICE_TYPES


def scan(node: ast.AST, fn: Function) -> None:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and _is_device_string(sub.value):
            fn.source = True
        elif isinstance(sub, ast.Attribute):
            if isinstance(sub.ctx, ast.Store):
                fn.stores.add(sub.attr)
            else:
                fn.loads.add(sub.attr)
                fn.source |= sub.attr in SOURCE_ATTRIBUTES
            fn.source |= isinstance(sub.value, ast.Name) and sub.value.id in NUMPY_NAMES
        elif isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Store):
            fn.loads.add(sub.id)
        elif isinstance(sub, ast.Global):
            fn.stores.update(sub.names)
        elif isinstance(sub, ast.keyword) and sub.arg == "device" and isinstance(sub.value, ast.Constant):
            fn.source = True


def functions_of(directory: Path) -> list[Function]:
    found: list[Function] = []

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = Function(stmt.name, (stmt.end_lineno or stmt.lineno) - stmt.lineno + 1)
                scan(stmt, fn)
                found.append(fn)
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body)
            else:
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, name, None) or [])
                for handler in getattr(stmt, "handlers", None) or []:
                    visit(handler.body)

    for path in sorted(directory.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        visit(tree.body)
    return found


def name_closure(functions: list[Function]) -> set[int]:
    """Indexes of the functions a skip by names would have to analyse."""
    chosen = {i for i, fn in enumerate(functions) if fn.source}
    while True:
        hot: set[str] = set()
        for i in chosen:
            hot.add(functions[i].name)
            hot |= functions[i].stores
        grown = {i for i, fn in enumerate(functions) if i not in chosen and not fn.loads.isdisjoint(hot)}
        if not grown:
            return chosen
        chosen |= grown


def engine_contexts(directory: Path, full_sweep: bool = False) -> tuple[int, int, int, float]:
    """(calling contexts, contexts with a site fact, statements executed, seconds) of one in-process analysis of
    ``directory``; ``full_sweep``: every uncalled function swept (the demand-driven sweep off). The statement
    count is the engine's work, independent of the machine's speed."""
    from devicelint import frontend
    from devicelint.engine.core import Engine
    from devicelint.facts import FactStore

    from runtime_shim.semantics import DEFAULT_PROFILE

    sys.setrecursionlimit(20000)
    sources = frontend.load(frontend.discover([str(directory)]))
    sources = [s for s in sources if frontend.parse(s) is None]
    facts = FactStore()
    statements = 0
    execute = Engine.exec_stmt

    def counted(self: Engine, *args: object, **kwargs: object) -> object:
        nonlocal statements
        statements += 1
        return execute(self, *args, **kwargs)

    Engine.exec_stmt = counted  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        engine = Engine(sources, facts, DEFAULT_PROFILE, None, project_modules=frozenset(s.module for s in sources))
        if full_sweep:
            engine.demand_sweep = False
        engine.run()
        seconds = time.perf_counter() - started
    finally:
        Engine.exec_stmt = execute  # type: ignore[method-assign]
    with_facts = {ctx for _site, ctx in facts.sites}
    return len(engine.contexts), len(with_facts), statements, seconds


def share(part: list[Function], functions: list[Function]) -> str:
    lines = sum(fn.lines for fn in functions) or 1
    return (f"{len(part):,} ({len(part) / max(len(functions), 1):.1%} of functions, "
            f"{sum(fn.lines for fn in part) / lines:.1%} of their lines)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated (default: all four)")
    parser.add_argument("--directory", action="append", default=None, metavar="DIR",
                        help="measure this directory instead of the corpora (repeatable)")
    parser.add_argument("--engine", action="store_true",
                        help="also analyse: calling contexts, those with facts, statements executed (slow)")
    parser.add_argument("--full-sweep", action="store_true",
                        help="with --engine: sweep every uncalled function (the demand-driven sweep off)")
    args = parser.parse_args()
    if args.directory:
        targets = [(Path(d).name, Path(d)) for d in args.directory]
    else:
        targets = [(name, fetch(name, CORPORA[name], DEFAULT_CACHE)) for name in args.corpora.split(",")]
    for name, directory in targets:
        if not directory.is_dir():
            print(f"{name}: {directory} is not a directory")
            continue
        functions = functions_of(directory)
        sources = [fn for fn in functions if fn.source]
        closure = [functions[i] for i in name_closure(functions)]
        print(f"{name}: {len(functions):,} functions; with a device source {share(sources, functions)}; "
              f"name closure {share(closure, functions)}")
        if args.engine:
            contexts, with_facts, statements, seconds = engine_contexts(directory, args.full_sweep)
            sweep = "full sweep" if args.full_sweep else "sweep on demand"
            print(f"{name}: engine ({sweep}) {seconds:.1f} s, {statements:,} statements executed, {contexts:,} "
                  f"calling contexts, {with_facts:,} with a site fact ({with_facts / max(contexts, 1):.2%})")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
