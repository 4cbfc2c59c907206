"""Interleaved cold runs on one core: base (PYTHONPATH=/tmp/sps/basepkg), this branch, ruff; medians and ratios."""
import os, statistics, subprocess, sys, time, json
ROOT = "/work/wt/small-program-speed"
PY = f"{ROOT}/.venv/bin/python"
RUFF = f"{ROOT}/.venv/bin/ruff"
runs = int(sys.argv[1]); out = sys.argv[2]; targets = sys.argv[3:]
FLAGS = ["--exit-zero", "-q", "--output-format", "concise", "--isolated", "--no-respect-gitignore", "--no-cache"]
def timed(cmd, env):
    t = time.perf_counter()
    subprocess.run(["taskset", "-c", "1", *cmd], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/tmp")
    return time.perf_counter() - t
base_env = {**os.environ, "PYTHONPATH": os.environ.get("BASEPKG", "/tmp/sps/basepkg")}
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
results = {}
for target in targets:
    times = {"base": [], "branch": [], "ruff": []}
    for i in range(runs):
        times["ruff"].append(timed([RUFF, "check", "--no-cache", "--isolated", "--exit-zero", "-q", target], env))
        times["base"].append(timed([PY, "-m", "devicelint", "check", target, *FLAGS], base_env))
        times["branch"].append(timed([PY, "-m", "devicelint", "check", target, *FLAGS], env))
        print(target, i, {k: round(v[-1], 3) for k, v in times.items()}, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    results[target] = {"runs": times, "median": med, "ratio": {k: med[k] / med["ruff"] for k in ("base", "branch")}}
    print(target, " ".join(f"{k} {med[k]:.3f}s ({med[k]/med['ruff']:.1f}x) [{', '.join(f'{x:.2f}' for x in v)}]"
                           for k, v in times.items()), flush=True)
json.dump(results, open(out, "w"), indent=1)
