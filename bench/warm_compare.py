"""Cached (warm) or cold devicelint runs of two or more checkouts, interleaved, against ruff in the same session.

Small corpora are where a warm run is mostly start-up, and this machine's speed drifts by a third
from one minute to the next: timing one checkout after the other compares the drift. This runs
every checkout and ruff in turn, ``--runs`` rounds, and prints each median and its ratio to ruff's.
Each checkout gets its own cache, filled by one run first (``--cold``: none, every run is ``--no-cache``);
devicelint is compiled to bytecode first (as ``pip install`` does).

Usage (the corpora are the speed bench's pinned wheels, downloaded on first use)::

    git worktree add /tmp/before <commit>
    python bench/warm_compare.py /tmp/before . --corpora torchvision,pytorch-lightning
    python bench/warm_compare.py . --directory fixtures/torch --runs 3   # any directory
    python bench/warm_compare.py /tmp/before . --cold --runs 5          # cold runs (``--no-cache``)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from bench.analyzer_speed import CORPORA, DEFAULT_CACHE, fetch, ruff_binary  # noqa: E402  (one list of corpora, one place)
from bench.layout import installed_layout  # noqa: E402

FLAGS = ["--exit-zero", "-q", "--output-format", "json", "--isolated", "--no-respect-gitignore"]


def timed(command: list[str], cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("checkouts", nargs="+", help="devicelint checkouts (directories) to compare")
    parser.add_argument("--corpora", default="torchvision,pytorch-lightning", help="comma-separated corpora")
    parser.add_argument("--directory", action="append", default=None, metavar="DIR",
                        help="time this directory instead of the corpora (repeatable)")
    parser.add_argument("--runs", type=int, default=15, help="rounds (each runs every tool once)")
    parser.add_argument("--cold", action="store_true", help="time cold runs (--no-cache) instead of cached ones")
    args = parser.parse_args()
    names = args.corpora.split(",")
    targets = ([(Path(d).name, str(Path(d).resolve())) for d in args.directory] if args.directory
               else [(corpus, str(fetch(corpus, CORPORA[corpus], DEFAULT_CACHE))) for corpus in names])
    ruff = ruff_binary()
    if ruff is None:
        print("ruff is not installed", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    checkouts = [str(Path(c).resolve()) for c in args.checkouts]
    for checkout in checkouts:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "analyzer", "rules", "runtime_shim"],
                       cwd=checkout, env=env, check=True)
    with tempfile.TemporaryDirectory() as caches:
        # each checkout runs its own code: its packages on PYTHONPATH (``python -m devicelint`` would otherwise run
        # whichever checkout the environment installed, for every checkout)
        envs = {}
        for n, checkout in enumerate(checkouts):
            layout = installed_layout(Path(checkout), Path(caches) / f"layout-{n}")
            envs[checkout] = {**env, "PYTHONPATH": str(layout)}
            found = subprocess.run([sys.executable, "-c", "import devicelint; print(devicelint.__file__)"],
                                   env=envs[checkout], capture_output=True, text=True, check=True).stdout.strip()
            assert found.startswith(str(layout)), f"{checkout}: python imports devicelint from {found}"
        envs["ruff"] = env
        for corpus, directory in targets:
            tools: dict[str, tuple[list[str], str]] = {}
            for n, checkout in enumerate(checkouts):
                command = [sys.executable, "-m", "devicelint", "check", directory, *FLAGS,
                           *(["--no-cache"] if args.cold else ["--cache-dir", os.path.join(caches, f"{n}-{corpus}")])]
                if not args.cold:
                    timed(command, checkout, envs[checkout])  # fills the cache
                tools[checkout] = (command, checkout)
            tools["ruff"] = ([*ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", directory], caches)
            times: dict[str, list[float]] = {name: [] for name in tools}
            for _ in range(args.runs):
                for name, (command, cwd) in tools.items():
                    times[name].append(timed(command, cwd, envs[name]))
            baseline = statistics.median(times["ruff"])
            cells = [f"{name if name == 'ruff' else os.path.relpath(name)}: {statistics.median(t) * 1000:.0f} ms "
                     f"({statistics.median(t) / baseline:.2f}x ruff)" for name, t in times.items()]
            print(f"{corpus}: " + "; ".join(cells))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
