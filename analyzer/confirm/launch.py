"""Run programs under runtime_shim recording, in parallel, each in its own process.

Each program gets ``RUNTIME_SHIM_RECORD`` (a fresh file), ``RUNTIME_SHIM_VIRTUAL``
and ``RUNTIME_SHIM_PROFILE``, a per-program timeout (its whole process group is
killed), and is classified by how it ended (:class:`Run`). Processes come from a
preloading launcher (:mod:`runtime_shim.launcher`) unless ``preload`` is off, in
which case each program starts a fresh interpreter (slower, nothing shared).

A PyTorch program (``program.runtime == "torch"``) runs the same way, with the torch
observer's prelude (``runtime_shim.torch_observer.session.PRELUDE``) ahead of it and
``RUNTIME_SHIM_TORCH=fake`` (virtual: fake CUDA) or ``=real``; the observer writes its
failures to the same record file, in the same format.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from runtime_shim.launcher import PRELOAD, Launcher, run_fresh
from runtime_shim.runner import Expectation, read_expectation, read_records
from runtime_shim.torch_observer import session as torch_session  # constants only: no torch import

from .programs import SHIM_RUNTIME, TORCH_RUNTIME, Program

#: Environment the torch observer reads as machine settings (kept for every program, not removed).
KEPT_VARIABLES = ("RUNTIME_SHIM_TORCH_CUDA_DEVICES", "RUNTIME_SHIM_TORCH_EXT_DIR")
MIN_PRELOAD_PROGRAMS = 8
#: The exception the observer's prelude raises when it cannot build its fake CUDA guard (by name: no torch import).
GUARD_UNAVAILABLE = "torch_observer.guard_ext.GuardUnavailable"
OUTPUT_TAIL = 4000  # characters of a program's stdout/stderr kept for the report
_GPU_MISSING = re.compile(r"cuda:(\d+) does not exist \(torch sees (\d+) CUDA device")
# What PyTorch raises for a CUDA device this machine (or this torch build) lacks
_TORCH_NO_CUDA = re.compile(
    r"Torch not compiled with CUDA enabled|Found no NVIDIA driver on your system|No CUDA GPUs are available"
    r"|invalid device ordinal|PyTorch is not linked with support for cuda devices"
    r"|Attempting to deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is False"
    r"|CUDA driver initialization failed"
    r"|Invalid device id")  # DataParallel's device_ids beyond the machine's GPUs


@dataclass
class Run:
    """How one program ended under the runtime."""

    program: Program
    mode: str  # "virtual" or "real": what it ran under
    profile: str
    status: str  # "ok", "expected" (failed as declared), "dispatch", "exit", "crashed", "timeout"
    detail: str = ""
    expectation: Expectation | None = None
    records: list[dict] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    fallback: str | None = None  # why a --real program ran with virtual devices
    setup_error: str | None = None  # the torch observer could not start (no C++ compiler for its guard)

    @property
    def problem(self) -> bool:
        """It did not run to its end (or ended in an undeclared dispatch failure)."""
        return self.status not in ("ok", "expected")


def child_env(record: str, profile: str, real: bool,
              runtime: str = SHIM_RUNTIME) -> tuple[dict[str, str], list[str]]:
    """What the program's environment sets and removes (for a PyTorch program, also the observer's mode)."""
    env = {"RUNTIME_SHIM_RECORD": record, "RUNTIME_SHIM_VIRTUAL": "0" if real else "1",
           "RUNTIME_SHIM_PROFILE": profile}
    if runtime == TORCH_RUNTIME:
        env[torch_session.MODE_VARIABLE] = "real" if real else "fake"
    unset = [k for k in os.environ if k.startswith("RUNTIME_SHIM_") and k not in env and k not in KEPT_VARIABLES]
    return env, unset


def _tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return ""
    return text[-OUTPUT_TAIL:]


def run_one(program: Program, *, profile: str, real: bool, timeout: float,
            launcher: Launcher | None, python: str | None = None) -> Run:
    """Run ``program`` once under recording and classify how it ended."""
    expectation = None
    entry = program.entry_file
    if entry is not None and os.path.isfile(entry):
        declared = read_expectation(Path(entry))
        expectation = declared if isinstance(declared, Expectation) else None
    with tempfile.TemporaryDirectory(prefix="devicelint_confirm_") as tmp:
        env, unset = child_env(os.path.join(tmp, "record.jsonl"), profile, real, program.runtime)
        result_path, stdout_path, stderr_path = (os.path.join(tmp, n) for n in ("result.json", "stdout", "stderr"))
        request: dict[str, object] = {
                   "kind": program.kind, "target": program.target, "path0": program.path0, "cwd": os.getcwd(),
                   "args": program.args, "paths": program.paths,
                   "env": env, "unset": unset, "result": result_path, "stdout": stdout_path, "stderr": stderr_path,
                   "prelude": torch_session.PRELUDE if program.runtime == TORCH_RUNTIME else ""}
        started = time.monotonic()
        if launcher is not None:
            status, timed_out = launcher.run(request, timeout)
        else:
            status, timed_out = run_fresh(request, timeout, python)
        run = Run(program, "real" if real else "virtual", profile, "ok", expectation=expectation,
                  seconds=time.monotonic() - started)
        run.records = read_records(env["RUNTIME_SHIM_RECORD"])
        run.stdout, run.stderr = _tail(stdout_path), _tail(stderr_path)
        try:
            with open(result_path, encoding="utf-8") as handle:
                result = json.load(handle)
        except (OSError, json.JSONDecodeError):
            result = None
    _classify(run, result, status, timed_out, timeout)
    if result is not None and str(result.get("type", "")).endswith(GUARD_UNAVAILABLE):
        run.setup_error = str(result.get("message"))
    return run


def _classify(run: Run, result: dict | None, status: int | None, timed_out: bool, timeout: float) -> None:
    if timed_out:
        run.status, run.detail = "timeout", f"timed out after {timeout:g} s"
    elif result is None:
        how = f"killed by signal {-status}" if status is not None and status < 0 else f"exit status {status}"
        last = next((line.strip() for line in reversed(run.stderr.splitlines()) if line.strip()), "")
        run.status, run.detail = "crashed", f"{how}{': ' + last if last else ''} (no result from the program)"
    elif result["status"] == "ok":
        run.status = "ok"
    elif result["status"] == "exit":
        run.status = "exit"
        run.detail = f"exit status {result['code']}" + (f": {result['message']}" if result.get("message") else "")
    elif result.get("dispatch"):
        file, line = result.get("file"), result.get("line")
        # the failing call is the last recorded failure with this code and message (the traceback's
        # innermost frame may lie in a library: the torch observer re-raises from inside torch's call)
        record = next((r for r in reversed(run.records) if isinstance(r.get("outcome"), dict)
                       and r["outcome"].get("code") == result.get("code")
                       and r["outcome"].get("message") == result.get("message") and r.get("file")), None)
        if record is not None:
            file, line = record["file"], record.get("line")
        exp = run.expectation
        if exp is not None and result.get("code") == exp.code and (exp.line is None or exp.line == line):
            run.status = "expected"
        else:
            run.status = "dispatch"
        where = f" (at {_short(file)}:{line})" if file else ""
        run.detail = f"uncaught {result.get('code')}: {' '.join(str(result.get('message')).split())}{where}"
    else:
        run.status = "crashed"
        where = f" (at {_short(result.get('file'))}:{result.get('line')})" if result.get("file") else ""
        run.detail = f"{result['last_line']}{where}"
    if run.expectation is not None and run.status == "ok":
        run.status, run.detail = "dispatch", f"declared {run.expectation}, but the program completed"


def _short(path: str | None) -> str:
    from .programs import display

    return display(path) if path else "?"


def missing_gpus(run: Run) -> str | None:
    """Why a real run needs more CUDA devices than this machine has (None: it does not)."""
    needed, seen = -1, None
    for record in run.records:
        outcome = record.get("outcome")
        if isinstance(outcome, dict) and outcome.get("code") == "MV112":
            match = _GPU_MISSING.search(outcome.get("message") or "")
            if match:
                needed, seen = max(needed, int(match.group(1))), int(match.group(2))
    if seen is None:
        return None
    return f"needs cuda:{needed}, this machine has {seen} CUDA device{'s' if seen != 1 else ''}"


def missing_cuda(run: Run) -> str | None:
    """Why a PyTorch program run on real devices stopped for want of a CUDA device (None: it did not).

    PyTorch raises (``Torch not compiled with CUDA enabled``, ``invalid device ordinal``, ...) where the
    program first asks for a device this machine lacks; the program did not run to its end."""
    if not run.problem or run.status == "timeout":
        return None
    last = next((line.strip() for line in reversed(run.stderr.splitlines()) if line.strip()), "")
    for text in (run.detail, last):
        match = _TORCH_NO_CUDA.search(text or "")
        if match:
            return f"needs CUDA, which this machine does not provide ({match.group(0)})"
    return None


def run_programs(programs: Sequence[Program], *, profile_of: Callable[[Program], str],
                 real_of: Callable[[Program], bool], timeout: float, jobs: int, preload: bool | None = None,
                 python: str | None = None) -> list[Run]:
    """Run every program (``jobs`` at a time); in real mode, one that needs CUDA devices this
    machine lacks is run again with virtual devices (a PyTorch program: fake CUDA), and says so.

    ``preload``: fork the programs from a launcher that has imported numpy and torch (and, with
    PyTorch programs, what the torch observer imports); ``None``: when there are at least
    :data:`MIN_PRELOAD_PROGRAMS`, or two PyTorch programs (for fewer, importing torch up front
    costs more than it saves: most Burn programs never import it)."""
    torch_programs = sum(p.runtime == TORCH_RUNTIME for p in programs)
    if preload is None:  # every PyTorch program imports torch (and the observer torch._dynamo): 2 share it
        preload = len(programs) >= MIN_PRELOAD_PROGRAMS or torch_programs >= 2
    use_launcher = preload and os.name == "posix" and hasattr(os, "fork")
    modules = tuple(dict.fromkeys(PRELOAD + (torch_session.PRELOAD if torch_programs else ())))
    launcher = Launcher(modules, python=python) if use_launcher and programs else None

    def one(program: Program) -> Run:
        profile, real = profile_of(program), real_of(program)
        run = run_one(program, profile=profile, real=real, timeout=timeout, launcher=launcher, python=python)
        if real:
            reason = missing_cuda(run) if program.runtime == TORCH_RUNTIME else missing_gpus(run)
            if reason is not None:
                run = run_one(program, profile=profile, real=False, timeout=timeout, launcher=launcher,
                              python=python)
                run.fallback = reason
        return run

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        return list(pool.map(one, programs))
    finally:
        if launcher is not None:  # first: on an interrupt this stops the running programs
            launcher.close()
        pool.shutdown(wait=True, cancel_futures=True)
