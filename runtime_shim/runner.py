"""Run programs under runtime_shim recording and report how each one ended.

``python -m runtime_shim [--real] [--profile NAME] [--timeout S] [-v] PATHS...``

Each program (a ``.py`` file, or every ``.py`` file under a directory, sorted)
runs in its own subprocess with

* ``RUNTIME_SHIM_RECORD`` set to a fresh temporary file (the JSON-lines record
  of every checked call, see :mod:`runtime_shim.recorder`),
* ``RUNTIME_SHIM_VIRTUAL=1`` (``=0`` with ``--real``),
* ``RUNTIME_SHIM_PROFILE`` set to the chosen profile,

and a per-program timeout. The child code of :mod:`runtime_shim.launcher` runs the
program as ``__main__`` the way ``python PROGRAM`` would and writes how it ended
(completed, exited, or the exception that escaped) to a second temporary file; with
a launcher (``-j``), programs are forked from an interpreter that imported numpy
and torch once.

Per program the runner prints one line:

* ``PATH: ok``
* ``FILE:LINE:COL: MVxxx message`` for a dispatch failure: the call site of the
  failing call, from the record (``COL`` is 1-based, as in ruff and flake8;
  the record holds CPython's 0-based column); a multi-line Burn message is
  printed on one line with its whitespace runs collapsed,
* ``PATH: crashed: <the exception's last traceback line> (at FILE:LINE)``,
* ``PATH: timed out after S s``.

A program may declare the failure it is written to hit in a comment near its
top: ``# expect-failure: MV102 at line 23`` (``at line N`` is optional). The
runner then appends ``[as expected]`` or ``[UNEXPECTED: ...]``.

Exit status: 0 when every program succeeded (and declared no failure) or
failed exactly as it declared; 1 otherwise; 2 on usage errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from .launcher import Launcher, run_fresh
from .profiles import DEFAULT_PROFILE, PROFILE_ALIASES, PROFILE_NAMES

DEFAULT_TIMEOUT = 60.0
#: How many lines at the top of a program are searched for ``# expect-failure:``.
DECLARATION_LINES = 30

_DECLARATION_START = re.compile(r"^\s*#\s*expect-failure\s*:", re.IGNORECASE)
_DECLARATION = re.compile(r"^\s*#\s*expect-failure\s*:\s*(?P<code>MV\d{3})(?:\s+at\s+line\s+(?P<line>\d+))?\s*$")

class UsageError(Exception):
    """A bad command line: reported as one message, exit status 2."""


# --- declarations --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Expectation:
    """``# expect-failure: CODE at line N``: the failure a program is written to hit."""

    code: str
    line: int | None

    def __str__(self) -> str:
        return self.code if self.line is None else f"{self.code} at line {self.line}"


def read_expectation(path: Path) -> Expectation | str | None:
    """The program's declared failure, ``None``, or a text saying why the declaration is malformed."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [next(f, "") for _ in range(DECLARATION_LINES)]
    except OSError as error:
        return f"cannot read the program: {error.strerror or error}"
    for line in head:
        if _DECLARATION_START.match(line):
            match = _DECLARATION.match(line)
            if match is None:
                return f"malformed declaration {line.strip()!r} (want '# expect-failure: MV102 at line 23')"
            return Expectation(match["code"], int(match["line"]) if match["line"] else None)
    return None


# --- one program's outcome --------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    """How one program ended, and whether that is what it declared."""

    program: Path
    status: str  # "ok", "dispatch", "crashed", "timeout"
    expectation: Expectation | None = None
    declaration_error: str | None = None
    code: str | None = None
    message: str | None = None
    file: str | None = None
    line: int | None = None
    col: int | None = None  # 0-based, as recorded
    detail: str | None = None  # crash text
    profile: str | None = None
    mode: str | None = None
    handled_failures: int = 0
    records: list[dict] = dataclasses.field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    @property
    def matched(self) -> bool:
        """The program failed exactly as it declared."""
        exp = self.expectation
        if exp is None or self.status != "dispatch" or self.code != exp.code:
            return False
        if exp.line is None:
            return True
        return self.line == exp.line and self.file is not None and _same_file(self.file, self.program)

    @property
    def passed(self) -> bool:
        """Succeeded without declaring a failure, or failed exactly as declared."""
        if self.declaration_error is not None:
            return False
        if self.expectation is not None:
            return self.matched
        return self.status == "ok"


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def read_records(path: str) -> list[dict]:
    """The JSON lines of a record file (a torn last line, from a killed program, is skipped)."""
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                raw = raw.strip()
                if not raw:
                    continue
                try:
                    records.append(json.loads(raw))
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return records


def _is_failure(record: dict) -> bool:
    return isinstance(record.get("outcome"), dict)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def child_env(record_path: str, profile: str, real: bool) -> dict[str, str]:
    """What a program's environment sets: its record file, the device mode and the profile."""
    return {"RUNTIME_SHIM_RECORD": record_path, "RUNTIME_SHIM_VIRTUAL": "0" if real else "1",
            "RUNTIME_SHIM_PROFILE": profile}


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def run_program(program: Path, *, profile: str = DEFAULT_PROFILE, real: bool = False,
                timeout: float = DEFAULT_TIMEOUT, python: str | None = None,
                prelude: str = "", extra_env: Mapping[str, str] | None = None,
                launcher: Launcher | None = None) -> Outcome:
    """Run one program in a process of its own under recording and classify how it ended.

    ``prelude`` is Python run in the child before the program (an observer installing itself);
    ``extra_env`` is added to the child's environment; ``launcher`` forks the process from a preloaded
    interpreter (:mod:`runtime_shim.launcher`) instead of starting a fresh one.
    """
    expectation = read_expectation(program)
    outcome = Outcome(program, "ok")
    if isinstance(expectation, str):
        outcome.declaration_error = expectation
    else:
        outcome.expectation = expectation

    with tempfile.TemporaryDirectory(prefix="runtime_shim_run_") as tmp:
        record_path = os.path.join(tmp, "record.jsonl")
        result_path = os.path.join(tmp, "result.json")
        request = {"kind": "path", "target": str(program), "path0": os.path.dirname(os.path.abspath(program)),
                   "cwd": os.getcwd(), "env": {**child_env(record_path, profile, real), **(extra_env or {})},
                   "unset": [], "prelude": prelude, "result": result_path,
                   "stdout": os.path.join(tmp, "stdout"), "stderr": os.path.join(tmp, "stderr")}
        started = time.monotonic()
        if launcher is not None:
            status, timed_out = launcher.run(request, timeout)
        else:
            status, timed_out = run_fresh(request, timeout, python)
        outcome.seconds = time.monotonic() - started
        outcome.stdout, outcome.stderr = _read_text(request["stdout"]), _read_text(request["stderr"])
        outcome.records = read_records(record_path)
        try:
            with open(result_path, encoding="utf-8") as f:
                result = json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            result = None

    failures = [r for r in outcome.records if _is_failure(r)]
    if timed_out:
        outcome.status = "timeout"
        outcome.detail = f"timed out after {timeout:g} s"
    elif result is None:
        outcome.status = "crashed"
        how = f"killed by signal {-status}" if status is not None and status < 0 else f"exit status {status}"
        last = _last_line(outcome.stderr)
        outcome.detail = f"{how}{': ' + last if last else ''} (no result from the program)"
    elif result["status"] == "ok":
        outcome.status = "ok"
    elif result["status"] == "exit":
        outcome.status = "crashed"
        outcome.detail = f"exit status {result['code']}" + (f": {result['message']}" if result.get("message") else "")
    elif result.get("dispatch"):
        outcome.status = "dispatch"
        outcome.code, outcome.message = result["code"], result["message"]
        # The failing call: the last recorded failure with this code and message.
        record = next((r for r in reversed(failures)
                       if r["outcome"].get("code") == outcome.code and r["outcome"].get("message") == outcome.message),
                      None)
        if record is not None:
            outcome.file, outcome.line, outcome.col = record.get("file"), record.get("line"), record.get("col")
            outcome.profile, outcome.mode = record.get("profile"), record.get("mode")
            failures.remove(record)
        else:  # not recorded: fall back to where the traceback left the program
            outcome.file, outcome.line, outcome.col = result.get("file"), result.get("line"), result.get("col")
    else:
        outcome.status = "crashed"
        outcome.detail = result["last_line"]
        if result.get("file") and result.get("line"):
            outcome.file, outcome.line, outcome.col = result["file"], result["line"], result.get("col")
    outcome.handled_failures = len(failures)
    return outcome


# --- reporting -------------------------------------------------------------------------------

def display_path(path: str | os.PathLike) -> str:
    """``path`` relative to the working directory when it lies below it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def one_line(message: str) -> str:
    return " ".join(message.split())


def format_outcome(outcome: Outcome, profile: str, mode: str,
                   others: str = "other dispatch failure{s} caught by the program") -> str:
    program = display_path(outcome.program)
    if outcome.status == "ok":
        text = f"{program}: ok"
    elif outcome.status == "dispatch":
        where = display_path(outcome.file) if outcome.file else program
        if outcome.line is not None:
            where += f":{outcome.line}"
            if outcome.col is not None:
                where += f":{outcome.col + 1}"
        text = f"{where}: {outcome.code} {one_line(outcome.message or '')}"
        if outcome.file and not _same_file(outcome.file, outcome.program):
            text += f" (running {program})"
        # The record says what produced the failure; a program may have switched profile or mode itself.
        ran_under = []
        if outcome.profile and outcome.profile != profile:
            ran_under.append(f"profile: {outcome.profile}")
        if outcome.mode and outcome.mode != mode:
            ran_under.append(f"mode: {outcome.mode}")
        if ran_under:
            text += f" ({', '.join(ran_under)})"
    elif outcome.status == "crashed":
        text = f"{program}: crashed: {outcome.detail}"
        if outcome.file and outcome.line:
            text += f" (at {display_path(outcome.file)}:{outcome.line})"
    else:
        text = f"{program}: {outcome.detail}"
    if outcome.handled_failures and outcome.status in ("ok", "dispatch"):
        plural = "s" if outcome.handled_failures != 1 else ""
        text += f" ({outcome.handled_failures} {others.format(s=plural)})"

    if outcome.declaration_error is not None:
        text += f" [UNEXPECTED: {outcome.declaration_error}]"
    elif outcome.expectation is not None:
        if outcome.matched:
            text += " [as expected]"
        elif outcome.status == "ok":
            text += f" [UNEXPECTED: declared {outcome.expectation}, but the program completed]"
        elif outcome.status == "dispatch":
            got = f"{outcome.code} at line {outcome.line}" if outcome.line is not None else outcome.code
            text += f" [UNEXPECTED: declared {outcome.expectation}, got {got}]"
        else:
            text += f" [UNEXPECTED: declared {outcome.expectation}]"
    return text


def summary(outcomes: Sequence[Outcome]) -> str:
    def count(status: str) -> int:
        return sum(o.status == status for o in outcomes)

    matched = sum(o.matched for o in outcomes)
    unexpected = sum(not o.passed for o in outcomes)
    return (f"programs: {len(outcomes)}, ok: {count('ok')}, dispatch failures: {count('dispatch')}, "
            f"expected failures matched: {matched}, crashes: {count('crashed')}, timeouts: {count('timeout')}"
            f" -> {'all as expected' if unexpected == 0 else f'{unexpected} not as expected'}")


# --- command line ----------------------------------------------------------------------------

def collect_programs(paths: Sequence[str]) -> list[Path]:
    """The programs to run: files as given, directories expanded to their ``.py`` files, sorted."""
    programs: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.py")
                           if p.is_file() and not any(part.startswith(".") or part == "__pycache__"
                                                      for part in p.relative_to(path).parts))
            if not found:
                raise UsageError(f"no .py programs under directory {raw!r}")
            programs.extend(found)
        elif path.is_file():
            if path.suffix != ".py":
                raise UsageError(f"not a Python program (.py): {raw!r}")
            programs.append(path)
        elif path.exists():
            raise UsageError(f"not a file or directory: {raw!r}")
        else:
            raise UsageError(f"no such file or directory: {raw!r}")
    seen: set[Path] = set()
    unique = []
    for program in programs:
        key = program.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(program)
    return unique


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m runtime_shim",
        description="Run programs under runtime_shim recording; report ok, the failing dispatch call, "
                    "crashes and timeouts, and check '# expect-failure: CODE at line N' declarations.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a .py program, or a directory of them")
    parser.add_argument("--real", action="store_true",
                        help="use the machine's real devices (default: virtual devices, RUNTIME_SHIM_VIRTUAL=1)")
    parser.add_argument("--profile", default=None, metavar="NAME",
                        help=f"semantics profile: {', '.join(PROFILE_NAMES)} "
                             f"(default: $RUNTIME_SHIM_PROFILE, else {DEFAULT_PROFILE})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"seconds each program may run (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print each program's output")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 with a usage message on bad options
    profile = args.profile or os.environ.get("RUNTIME_SHIM_PROFILE") or DEFAULT_PROFILE
    profile = PROFILE_ALIASES.get(profile, profile)
    try:
        if profile not in PROFILE_NAMES:
            raise UsageError(f"unknown profile {profile!r}; known: {', '.join(PROFILE_NAMES)}")
        if not args.timeout > 0:
            raise UsageError(f"--timeout must be positive, got {args.timeout:g}")
        programs = collect_programs(args.paths)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2

    mode = "real" if args.real else "virtual"
    print(f"runtime_shim runner: mode: {mode}, profile: {profile}, timeout: {args.timeout:g} s, "
          f"{len(programs)} program{'s' if len(programs) != 1 else ''}", file=out, flush=True)
    outcomes = []
    try:
        for program in programs:
            outcome = run_program(program, profile=profile, real=args.real, timeout=args.timeout)
            outcomes.append(outcome)
            print(format_outcome(outcome, profile, mode), file=out, flush=True)
            if args.verbose:
                for stream in (outcome.stdout, outcome.stderr):
                    for line in stream.rstrip().splitlines():
                        print(f"    | {line}", file=out)
    except KeyboardInterrupt:
        print(f"interrupted after {len(outcomes)} of {len(programs)} programs", file=out, flush=True)
        print(summary(outcomes), file=out, flush=True)
        return 130
    print(summary(outcomes), file=out, flush=True)
    return 0 if all(o.passed for o in outcomes) else 1
