"""Wall time of a cold check with one worker and with two (a large component's worlds in separate workers,
docs/analyzer.md "Worlds"), against ruff on the same tree, interleaved round by round.

    python bench/world_pool.py --repeats 3 --json OUT.json DIR...

Each round runs, per directory: ruff, ``devicelint check DIR --no-cache --isolated`` pinned to one core
(``taskset -c 0``: one worker) and pinned to two (``taskset -c 0,1``: two workers), in that order. The report
gives each median, the ratios, the load average before each round, and whether the two checks printed the same
bytes (they must).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tools import git_revision, tool  # noqa: E402

CHECK = ["-m", "devicelint", "check", "--no-cache", "--isolated", "--exit-zero", "--output-format", "full"]


def timed(command: list[str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the raw times here")
    args = parser.parse_args()
    taskset, ruff = tool("taskset"), tool("ruff")
    runs: dict[str, dict[str, list[float]]] = {d: {"ruff": [], "1 worker": [], "2 workers": []} for d in args.dirs}
    loads: list[tuple[float, float, float]] = []
    same: dict[str, bool] = {d: True for d in args.dirs}
    for _round in range(args.repeats):
        loads.append(os.getloadavg())
        for directory in args.dirs:
            runs[directory]["ruff"].append(timed([ruff, "check", directory, "--no-cache", "--isolated",
                                                  "--exit-zero", "-q"])[0])
            one, one_out = timed([taskset, "-c", "0", sys.executable, *CHECK, directory])
            two, two_out = timed([taskset, "-c", "0,1", sys.executable, *CHECK, directory])
            runs[directory]["1 worker"].append(one)
            runs[directory]["2 workers"].append(two)
            same[directory] = same[directory] and one_out == two_out
    print(f"commit {git_revision()}, load average before each round (1, 5, 15 min): "
          + "; ".join(", ".join(f"{x:.2f}" for x in load) for load in loads))
    print("| dir | ruff | 1 worker | 2 workers | 1 worker / ruff | 2 workers / ruff | 2 / 1 workers | same output |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    summary = {}
    for directory, times in runs.items():
        median = {name: statistics.median(values) for name, values in times.items()}
        summary[directory] = median
        print(f"| {directory} | {median['ruff']:.3f} s | {median['1 worker']:.2f} s | {median['2 workers']:.2f} s | "
              f"{median['1 worker'] / median['ruff']:.0f} | {median['2 workers'] / median['ruff']:.0f} | "
              f"{median['2 workers'] / median['1 worker']:.2f} | {'yes' if same[directory] else 'NO'} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"commit": git_revision(), "loads": loads, "runs": runs,
                                               "medians": summary, "same_output": same}, indent=1))
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
