"""Interleaved cold runs on one core: ruff, the base (its layout on PYTHONPATH), this branch (its layout);
wall time and the child's CPU time (user + system, from ``wait4``: less moved by other processes' load).
With ``LIFTED=1`` devicelint runs through ``lifted.py`` (the component's wall-time and memory budgets lifted:
on a loaded machine the 120 s budget otherwise ends open_clip_torch's analysis part way).

Usage: python timing.py RUNS OUT.json BASE_LAYOUT BRANCH_LAYOUT DIR...   (layouts: ``bench/layout.py``)
"""
import json
import os
import statistics
import subprocess
import sys
import time

PY = sys.executable
RUFF = os.path.join(os.path.dirname(PY), "ruff")
LAUNCH = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "lifted.py")] if os.environ.get("LIFTED") == "1" \
    else ["-m", "devicelint"]
FLAGS = ["--exit-zero", "-q", "--output-format", "concise", "--isolated", "--no-respect-gitignore", "--no-cache"]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(["taskset", "-c", "1", *cmd], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd="/tmp")
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    runs, out, base, branch, *targets = sys.argv[1:]
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    envs = {"ruff": plain, "base": {**plain, "PYTHONPATH": base}, "branch": {**plain, "PYTHONPATH": branch}}
    results = {}
    for target in targets:
        wall: dict[str, list[float]] = {k: [] for k in envs}
        cpu: dict[str, list[float]] = {k: [] for k in envs}
        for i in range(int(runs)):
            for name, env in envs.items():
                cmd = [RUFF, "check", "--no-cache", "--isolated", "--exit-zero", "-q", target] if name == "ruff" \
                    else [PY, *LAUNCH, "check", target, *FLAGS]
                w, c = timed(cmd, env)
                wall[name].append(w)
                cpu[name].append(c)
            print(target, i, {k: (round(wall[k][-1], 3), round(cpu[k][-1], 3)) for k in envs},
                  os.getloadavg(), flush=True)
        med = {k: statistics.median(v) for k, v in wall.items()}
        cmed = {k: statistics.median(v) for k, v in cpu.items()}
        # per round, branch / base (both runs of one round saw about the same load)
        rounds = [b / a for a, b in zip(wall["base"], wall["branch"])]
        crounds = [b / a for a, b in zip(cpu["base"], cpu["branch"])]
        results[target] = {"wall": wall, "cpu": cpu, "median_wall": med, "median_cpu": cmed,
                           "branch_over_base_wall": statistics.median(rounds),
                           "branch_over_base_cpu": statistics.median(crounds)}
        print(target, "wall", " ".join(f"{k} {med[k]:.3f}s ({med[k] / med['ruff']:.1f}x)" for k in envs),
              f"branch/base {statistics.median(rounds):.3f}", flush=True)
        print(target, "cpu ", " ".join(f"{k} {cmed[k]:.3f}s ({cmed[k] / cmed['ruff']:.1f}x)" for k in envs),
              f"branch/base {statistics.median(crounds):.3f}", flush=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
