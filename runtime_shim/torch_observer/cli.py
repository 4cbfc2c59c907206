"""``python -m runtime_shim.torch_observer [--real] [--timeout S] [-j N] [-v] PATHS...``

Each program runs in its own subprocess through runtime_shim.runner (same bootstrap, record file
and outcome lines), with the observer started ahead of it. One line per program, as the runner
prints: ``PATH: ok``, ``FILE:LINE:COL: MV2xx message`` for the failure that ended it, crashes and
timeouts; ``--all`` adds one indented line per failure the program survived (caught, or not raising:
MV205's read of ``.grad``, MV206).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO

from .. import runner
from ..launcher import PRELOAD as LAUNCHER_PRELOAD
from ..launcher import Launcher, preloaded
from .session import MODE_VARIABLE, PRELUDE
from .session import PRELOAD as OBSERVER_PRELOAD

OTHERS = "other failure{s} recorded: caught by the program or not raising"


def run_program(program: Path, *, real: bool = False, timeout: float = runner.DEFAULT_TIMEOUT,
                launcher: Launcher | None = None) -> runner.Outcome:
    """Run one program under the observer (``fake`` mode unless ``real``), forked from ``launcher`` if given."""
    return runner.run_program(program, real=real, timeout=timeout, prelude=PRELUDE,
                              extra_env={MODE_VARIABLE: "real" if real else "fake"}, launcher=launcher)


def run_programs(programs: Sequence[Path], *, real: bool = False, timeout: float = runner.DEFAULT_TIMEOUT,
                 jobs: int = 1) -> list[runner.Outcome]:
    """Run every program under the observer, ``jobs`` at a time. Several programs are forked from one
    interpreter that imported torch and what the observer imports (seconds each) once."""
    launch = preloaded((*LAUNCHER_PRELOAD, *OBSERVER_PRELOAD)) if len(programs) > 1 else contextlib.nullcontext()
    with launch as launcher, ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda p: run_program(p, real=real, timeout=timeout, launcher=launcher), programs))


def failure_lines(outcome: runner.Outcome) -> list[str]:
    """Every recorded failure, ``FILE:LINE:COL: CODE message``, in the order they happened."""
    lines = []
    for record in outcome.records:
        failure = record.get("outcome")
        if not isinstance(failure, dict):
            continue
        where = runner.display_path(record["file"]) if record.get("file") else runner.display_path(outcome.program)
        if record.get("line") is not None:
            where += f":{record['line']}" + (f":{record['col'] + 1}" if record.get("col") is not None else "")
        lines.append(f"{where}: {failure.get('code')} {runner.one_line(failure.get('message') or '')}")
    return lines


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m runtime_shim.torch_observer",
                                     description="Run PyTorch programs under the device-failure observer.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a .py program, or a directory of them")
    parser.add_argument("--real", action="store_true", help="the machine's real devices (default: fake CUDA)")
    parser.add_argument("--timeout", type=float, default=runner.DEFAULT_TIMEOUT, metavar="S")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="programs run at once")
    parser.add_argument("--all", action="store_true", help="also list every failure the program survived")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print each program's output")
    args = parser.parse_args(argv)
    try:
        if not args.timeout > 0 or args.jobs < 1:
            raise runner.UsageError("--timeout and --jobs must be positive")
        programs = runner.collect_programs(args.paths)
    except runner.UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2

    import torch  # after the usage checks: importing torch takes seconds

    from . import guard_ext

    if not args.real and guard_ext.needed():
        try:  # once here, so that a missing compiler is one error, not one crash per program
            guard_ext.build()
        except guard_ext.GuardUnavailable as error:
            print(f"{parser.prog}: error: {error}", file=sys.stderr)
            return 2
    mode, profile = ("real" if args.real else "fake"), f"torch-{torch.__version__}"
    print(f"torch observer: mode: {mode}, {profile}, timeout: {args.timeout:g} s, "
          f"{len(programs)} program{'s' if len(programs) != 1 else ''}", file=out, flush=True)
    outcomes = run_programs(programs, real=args.real, timeout=args.timeout, jobs=args.jobs)
    for outcome in outcomes:
        print(runner.format_outcome(outcome, profile, mode, others=OTHERS), file=out)
        if args.all:
            for line in failure_lines(outcome):
                print(f"    {line}", file=out)
        if args.verbose:
            for stream in (outcome.stdout, outcome.stderr):
                for line in stream.rstrip().splitlines():
                    print(f"    | {line}", file=out)
    print(runner.summary(outcomes), file=out, flush=True)
    return 0 if all(o.passed for o in outcomes) else 1
