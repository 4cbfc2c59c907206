"""The demand sweep's module scan against a walk of each whole function, and its time.

``analyzer.engine.demand.scan_functions`` walks only the expressions whose lines hold a word it looks
for; it must find exactly the device sources and the write nodes that ``ast.walk`` of each function
finds. This checks it on every function of a corpus and times the scan (best of ``--repeats``) against
the per-function walks it replaced.

Usage (the corpora are the speed bench's pinned wheels, downloaded on first use)::

    python bench/scan_check.py                            # all four corpora
    python bench/scan_check.py --directory analyzer       # any directory
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from devicelint.engine import demand  # noqa: E402

from bench.analyzer_speed import add_corpus_arguments, corpus_targets, python_files  # noqa: E402

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def parsed(directory: Path) -> list[tuple[Path, ast.Module, bytes]]:
    out = []
    for path in python_files(directory):
        data = path.read_bytes()
        try:
            out.append((path, ast.parse(data), data))
        except (SyntaxError, ValueError):
            continue  # what the analyzer reports as MV901
    return out


def compare(files: list[tuple[Path, ast.Module, bytes]]) -> tuple[int, int, list[str]]:
    """(functions, functions with a source, where the scan differs from a walk of the function)."""
    functions = sources = 0
    differences = []
    for path, tree, data in files:
        scans = demand.scan_functions(tree, data)
        for node in ast.walk(tree):
            if not isinstance(node, FUNCTIONS):
                continue
            functions += 1
            walked = list(ast.walk(node))
            exempt: set[int] = set()  # a ``__dict__`` only read, the ``.to`` of a cast
            for n in walked:
                demand._note_exempt(n, exempt)
            source = any(demand._is_source(n) and id(n) not in exempt for n in walked)
            sources += source
            writes = {id(n) for n in walked if demand._may_write(n) and id(n) not in exempt}
            scan = scans[id(node)]
            if scan.mentions != source or {id(n) for n in scan.writes} != writes:
                differences.append(f"{path}:{node.lineno}")
    return functions, sources, differences


def per_function_walks(files: list[tuple[Path, ast.Module, bytes]]) -> None:
    """What the scan replaced: a walk of each function up to its first source, and for one without (the sweep
    skips it) another walk for its writes."""
    for _path, tree, _data in files:
        for node in ast.walk(tree):
            if isinstance(node, FUNCTIONS) and not any(map(demand._is_source, ast.walk(node))):
                [n for n in ast.walk(node) if demand._may_write(n)]


def scan_all(files: list[tuple[Path, ast.Module, bytes]]) -> None:
    for _path, tree, data in files:
        demand.scan_functions(tree, data)


def best(repeats: int, work: Callable[[list], None], files: list) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work(files)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_corpus_arguments(parser, "check")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    targets = corpus_targets(args)
    print("| corpus | functions | with a source | differences | scan | a walk per function |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    failed = False
    for name, directory in targets:
        files = parsed(directory)
        functions, sources, differences = compare(files)
        scan = best(args.repeats, scan_all, files)
        walks = best(args.repeats, per_function_walks, files)
        print(f"| {name} | {functions:,} | {sources:,} | {len(differences)} | {scan * 1000:.0f} ms "
              f"| {walks * 1000:.0f} ms |")
        for where in differences[:10]:
            print(f"  differs: {where}", file=sys.stderr)
        failed |= bool(differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
