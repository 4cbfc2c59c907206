"""Peak resident set and wall time of cold devicelint runs of two checkouts, interleaved with ruff, per round.

    python measure.py --base BASE_LAYOUT --new NEW_LAYOUT --rounds 2 DIR...

Each layout is a checkout's packages as installed (bench/layout.py). Peak: wait4's ru_maxrss (the largest
process: devicelint analyses one component in one process). Prints one JSON object per run; the
trees run in turn, base first in odd rounds, new first in even ones."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RUFF = Path(sys.executable).parent / "ruff"


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=null, env=env)
        out = process.stdout.read()  # type: ignore[union-attr]
        _pid, _status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out.decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    for directory in args.dirs:
        for number in range(args.rounds):
            outputs = {}
            trees = [("base", args.base), ("new", args.new)]
            for label, layout in trees if number % 2 == 0 else trees[::-1]:  # (alternated: the load drifts)
                env = {**os.environ, "PYTHONPATH": layout}
                seconds, peak, out = timed([sys.executable, "-m", "devicelint", "check", directory, "--no-cache",
                                            "--exit-zero", "--output-format", "concise"], env)
                outputs[label] = out
                ruff, _peak, _out = timed([str(RUFF), "check", directory, "--no-cache", "--isolated",
                                           "--exit-zero", "-q"])
                print(json.dumps({"dir": directory, "round": number + 1, "tree": label,
                                  "devicelint_s": round(seconds, 2), "peak_rss_mb": round(peak),
                                  "ruff_s": round(ruff, 3),
                                  "ratio": round(seconds / ruff, 1)}), flush=True)
            print(json.dumps({"dir": directory, "round": number + 1,
                              "same_output": outputs["base"] == outputs["new"]}), flush=True)


if __name__ == "__main__":
    main()
