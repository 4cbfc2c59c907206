"""Where a cold check spends the engine's time: exclusive time per analysed function and per module's top level.

One process (`--isolated --no-cache`, every component in this interpreter: no worker processes);
each run of a project function (a context) and each module load is timed, minus what it called. Absolute
times include the timers' own cost: compare runs of this script, not against the speed bench.

Usage::

    taskset -c 1 python bench/function_times.py bench/.cache/src/timm-1.0.31 --top 25
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: the analyzer without installing

from devicelint import cli  # noqa: E402
from devicelint.engine.calls import Calls  # noqa: E402
from devicelint.engine.modules import ModuleLoading  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("directory")
    parser.add_argument("--top", type=int, default=30, help="how many functions to list")
    args = parser.parse_args()
    exclusive: collections.Counter = collections.Counter()
    runs: collections.Counter = collections.Counter()
    stack: list[list] = []  # [name, time spent in what it called]

    def timed(name: str, run, *call_args, **call_kwargs):
        started = time.perf_counter()
        stack.append([name, 0.0])
        try:
            return run(*call_args, **call_kwargs)
        finally:
            spent = time.perf_counter() - started
            _name, inner = stack.pop()
            exclusive[name] += spent - inner
            runs[name] += 1
            if stack:
                stack[-1][1] += spent

    run_function = Calls._run_function
    load_module = ModuleLoading.load_module

    def _run_function(self, fn, *rest, **kw):
        return timed(f"{fn.module.name}:{fn.qualname}", run_function, self, fn, *rest, **kw)

    def _load_module(self, module):
        if module is None or module.state != "new":
            return load_module(self, module)
        return timed(f"<module {module.name}>", load_module, self, module)

    cli._cpus = lambda: 1  # in this process: the worker processes' timers would not come back
    Calls._run_function = _run_function  # type: ignore[method-assign]
    ModuleLoading.load_module = _load_module  # type: ignore[method-assign]
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(["check", args.directory, "--isolated", "--no-cache", "--no-respect-gitignore", "--exit-zero", "-q"])
    print(f"engine runs timed: {sum(exclusive.values()):.2f} s")
    for name, seconds in exclusive.most_common(args.top):
        print(f"{seconds * 1000:9.1f} ms {runs[name]:6d} runs  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
