"""Interleaved A/B of the body-edit run: base (main's code) vs new (this branch), same machine, same moments."""
import os, shutil, subprocess, sys, tempfile, time, statistics
from pathlib import Path
sys.path.insert(0, "/work/wt/summaries")
from bench.incremental_speed import _body_edit
PY = "/work/wt/summaries/.venv/bin/python"
SRC = Path("/tmp/fp/cache/src/transformers-5.25.0/transformers")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3
scratch = Path(tempfile.mkdtemp(prefix="summ-ab-"))
shutil.copytree(SRC, scratch / "transformers")
edited = scratch / "transformers/models/bert/modeling_bert.py"
original = edited.read_bytes()
envs = {"base": dict(os.environ, PYTHONPATH="/tmp/summ/basepath"), "new": {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}}
flags = ["--exit-zero", "-q", "--output-format", "json", "--isolated", "--no-respect-gitignore"]
def run(code, timed=True):
    cmd = [PY, "-m", "devicelint", "check", *flags, "transformers", "--cache-dir", str(scratch / f"cache-{code}")]
    t = time.perf_counter(); done = subprocess.run(cmd, cwd=scratch, env=envs[code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return time.perf_counter() - t, done.stdout
out = {}
for code in envs:
    run(code)
times = {c: [] for c in envs}
for k in range(N):
    order = list(envs) if k % 2 == 0 else list(envs)[::-1]
    for code in order:
        edited.write_text(_body_edit(original.decode(), "forward", 100 + k), encoding="utf-8")
        s, stdout = run(code)
        out.setdefault(code, []).append(stdout)
        times[code].append(s)
        edited.write_bytes(original)
        run(code)
    print(k, {c: round(v[-1], 2) for c, v in times.items()}, flush=True)
print("medians", {c: round(statistics.median(v), 2) for c, v in times.items()})
print("same findings", all(a == b for a, b in zip(out["base"], out["new"])))
shutil.rmtree(scratch, ignore_errors=True)
