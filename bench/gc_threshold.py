"""Cold checks under different garbage-collector thresholds, interleaved: wall time and peak memory.

``devicelint check`` sets the collector's thresholds for the analysis (``analyzer/cli.py``). This
runs a cold check of each corpus once per setting per round, each in a fresh interpreter on one core
(``taskset -c 0`` where available, so a corpus of several components does not spread over workers),
with the CLI's thresholds replaced by the setting, and prints the median time and the peak resident
memory of each.

Usage (the corpora are the speed bench's pinned wheels, downloaded on first use)::

    python bench/gc_threshold.py --corpora torchvision --settings 0 1000000,20,100 --runs 3  # 0: no collector
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from bench.analyzer_speed import CORPORA, DEFAULT_CACHE, fetch  # noqa: E402
from bench.tools import find_tool  # noqa: E402

CHILD = """
import gc, json, resource, sys, time
sys.path.insert(0, {root!r})
setting = tuple({setting!r})
set_threshold = gc.set_threshold
gc.set_threshold = lambda *args: set_threshold(*setting)  # the CLI's own call gets the setting
from devicelint import cli
started = time.perf_counter()
try:
    cli.main(["check", {directory!r}, "--isolated", "--no-cache", "--no-respect-gitignore", "--exit-zero", "-q"])
except SystemExit:
    pass
print(json.dumps({{"seconds": time.perf_counter() - started,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def run_once(directory: Path, setting: tuple[int, ...]) -> dict[str, float]:
    code = CHILD.format(root=str(ROOT), setting=list(setting), directory=str(directory))
    taskset = find_tool("taskset")
    pin = [taskset, "-c", "0"] if taskset else []
    done = subprocess.run([*pin, sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpora", default="torchvision,pytorch-lightning", help="comma-separated corpora")
    parser.add_argument("--settings", nargs="+", default=["0", "1000000,20,100"],
                        help="thresholds to compare, each gen0,gen1,gen2 (0: no automatic collection)")
    parser.add_argument("--runs", type=int, default=3, help="rounds (each runs every setting once)")
    args = parser.parse_args()
    settings = [tuple(int(n) for n in s.split(",")) for s in args.settings]
    print("| corpus | thresholds | median time | peak memory |")
    print("| --- | --- | ---: | ---: |")
    for name in args.corpora.split(","):
        directory = fetch(name, CORPORA[name], DEFAULT_CACHE)
        results: dict[tuple[int, ...], list[dict[str, float]]] = {s: [] for s in settings}
        for _ in range(args.runs):
            for setting in settings:
                results[setting].append(run_once(directory, setting))
        for setting, runs in results.items():
            seconds = statistics.median(r["seconds"] for r in runs)
            peak = max(r["peak_mb"] for r in runs)
            print(f"| {name} | {','.join(map(str, setting))} | {seconds:.2f} s | {peak:,.0f} MB |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
