"""What a cold run of one component cannot go below: parsing its files, in the one process that analyses it.

The engine analyses a *component* (files connected through imports, :mod:`analyzer.import_graph`) in one
process, on parsed trees in that process's memory. This bench measures, per corpus and in the same run:

* ruff's time on the same files (the speed goal's baseline, as ``bench/analyzer_speed.py`` runs it);
* ``ast.parse`` of every file in this process (the collector paused, as the analyzer pauses it);
* handing those trees to another process: ``pickle.dumps`` in the parent and ``pickle.loads`` in the
  receiver (a second core could only share the parse if this were much cheaper than parsing);
* the import graph: the largest component and how many of its files reach all of it through imports
  (a file whose imports reach the whole component cannot be analysed with less than all of it);
* optionally ``ast.parse`` under other interpreters (``--python``), in a subprocess each.

Usage::

    python bench/parse_floor.py --corpora transformers --python python3.12 python3.13
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import pickle
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from devicelint import frontend  # noqa: E402
from devicelint import import_graph as graph  # noqa: E402

from bench.analyzer_speed import (  # noqa: E402
    add_corpus_arguments,
    corpus_targets,
    python_files,
    ruff_binary,
    run_command,
)

# ``ast.parse`` of every file, best of two, in another interpreter (argv[1]: a file listing the paths)
_PARSE_SNIPPET = """
import ast, gc, sys, time, warnings
gc.disable(); warnings.simplefilter("ignore")
datas = [open(p, "rb").read() for p in open(sys.argv[1]).read().splitlines()]
best = float("inf")
for _ in range(2):
    start = time.perf_counter()
    for data in datas:
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass
    best = min(best, time.perf_counter() - start)
print(best)
"""


def _parse_all(datas: list[bytes]) -> tuple[float, list[ast.Module]]:
    trees = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in datas:
            try:
                trees.append(ast.parse(data))
            except (SyntaxError, ValueError):
                continue
    return time.perf_counter() - start, trees


def _timed(fn, items: list) -> tuple[float, list]:
    start = time.perf_counter()
    out = [fn(item) for item in items]
    return time.perf_counter() - start, out


def import_graph(directory: Path) -> dict[str, int]:
    """The largest component, and how many of its files reach every file of it through their imports."""
    sources = frontend.load(frontend.discover([str(directory)]))
    infos = [graph.file_info(s) for s in sources]
    keep = [i for i, info in enumerate(infos) if info.failure is None]
    sources, infos = [sources[i] for i in keep], [infos[i] for i in keep]
    project = frozenset(s.module for s in sources)
    largest = max(graph.components(sources, infos, project), key=len)
    edges = graph.edges(sources, infos, project)
    members = set(largest)
    whole = 0
    for start in largest:
        seen, pending = {start}, [start]
        while pending:
            for j in edges[pending.pop()]:
                if j not in seen:
                    seen.add(j)
                    pending.append(j)
        whole += members <= seen
    return {"files": len(sources), "largest_component": len(largest), "reaching_all_of_it": whole}


def measure(name: str, directory: Path, interpreters: list[str]) -> dict:
    files = python_files(directory)
    datas = [path.read_bytes() for path in files]
    out: dict = {"corpus": name, "files": len(files), "megabytes": round(sum(map(len, datas)) / 1e6, 1)}
    ruff = ruff_binary()
    if ruff is not None:
        command = [*ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", str(directory)]  # as analyzer_speed
        runs = [run_command(command, directory.parent, 600, False, None) for _ in range(3)]
        out["ruff_s"] = round(min(r.seconds for r in runs), 3)
    gc.disable()
    try:
        out["parse_s"] = round(min(_parse_all(datas)[0] for _ in range(2)), 3)
        _seconds, trees = _parse_all(datas)
        dumps_s, blobs = _timed(lambda tree: pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL), trees)
        del trees
        loads_s, _back = _timed(pickle.loads, blobs)
        out["pickle_dumps_s"], out["pickle_loads_s"] = round(dumps_s, 3), round(loads_s, 3)
        out["pickled_megabytes"] = round(sum(map(len, blobs)) / 1e6, 1)
        del blobs, _back
    finally:
        gc.enable()
    out.update(import_graph(directory))
    if interpreters:
        listing = Path(f"/tmp/parse_floor_{name}.txt")
        listing.write_text("\n".join(str(p) for p in files), encoding="utf-8")
        out["parse_by_interpreter"] = {}
        for python in interpreters:
            done = subprocess.run([python, "-c", _PARSE_SNIPPET, str(listing)], capture_output=True, text=True)
            version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                                     capture_output=True, text=True).stdout.strip()
            out["parse_by_interpreter"][version or python] = float(done.stdout) if done.returncode == 0 else None
    return out


def report(row: dict) -> str:
    lines = [f"{row['corpus']}: {row['files']} files, {row['megabytes']} MB"]
    ruff = row.get("ruff_s")
    parse = row["parse_s"]
    lines.append(f"  ast.parse {parse:.2f} s" + (f" = {parse / ruff:.1f}x ruff ({ruff:.3f} s); 10x ruff is "
                                                   f"{10 * ruff:.2f} s" if ruff else ""))
    lines.append(f"  handing the trees over: pickle.dumps {row['pickle_dumps_s']:.2f} s, pickle.loads "
                 f"{row['pickle_loads_s']:.2f} s ({row['pickle_loads_s'] / parse:.2f}x parsing), "
                 f"{row['pickled_megabytes']} MB")
    lines.append(f"  largest component {row['largest_component']} of {row['files']} files; "
                 f"{row['reaching_all_of_it']} of its files reach all of it through imports")
    for version, seconds in row.get("parse_by_interpreter", {}).items():
        lines.append(f"  ast.parse under Python {version}: " + (f"{seconds:.2f} s" if seconds else "failed"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_arguments(parser, "measure")
    parser.add_argument("--python", nargs="*", default=[], metavar="PYTHON",
                        help="other interpreters to time ast.parse under")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    rows = [measure(name, directory, args.python) for name, directory in corpus_targets(args)]
    for row in rows:
        print(report(row))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
