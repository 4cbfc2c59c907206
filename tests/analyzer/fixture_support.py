"""Fixture programs: discovery, inline markers, and running them under runtime_shim.

A fixture is a program in ``fixtures/``: a single ``.py`` file, or a directory
with a ``__main__.py`` (a package when it also has ``__init__.py``). Markers sit
in comments on the lines they concern:

* ``# expect: MV102``: an error diagnostic (every path fails) starts on this line;
* ``# expect-warning: MV150``: a warning starts on this line;
* ``# inner: MV202``: a finding reported at a call further out (the call that passed the failing
  operands) fails on this line: its inner location;
* ``# reveal: Flex float``: ``reveal_device(...)`` on this line reveals exactly this
  (alternatives separated by `` | ``; ``?`` stands for a capture device's id).

Several codes: ``# expect: MV102, MV105``. Header lines ``# fixture: profile=burn-0.21``,
``# fixture: mode=real`` and ``# fixture: backends=Flex,NdArray`` set the profile (default: the
default profile), the runtime's mode (default virtual) and the target backends given to the
analyzer. A fixture whose outcome depends on the profile names its profile in the header; one
without a profile header analyses the same under every profile (``test_fixtures.py`` checks it).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from devicelint.confirm.reveal import reveal_matches  # the product's comparison (devicelint confirm's)

from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_ALIASES

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

_MARKER = re.compile(r"#\s*(expect-warning|expect|inner|reveal)\s*:\s*([^#]*)")
_HEADER = re.compile(r"#\s*fixture\s*:\s*(.*)")


@dataclass
class Fixture:
    name: str
    path: Path  # the file, or the directory
    files: list[Path]
    profile: str = DEFAULT_PROFILE
    mode: str = "virtual"
    backends: str | None = None
    errors: set[tuple[str, int, str]] = field(default_factory=set)  # (file, line, code)
    warnings: set[tuple[str, int, str]] = field(default_factory=set)
    inner: set[tuple[str, int, str]] = field(default_factory=set)  # where findings reported at a caller fail
    reveals: dict[tuple[str, int], str] = field(default_factory=dict)
    torch: bool = False  # a PyTorch program (fixtures/torch/): confirmed by the torch observer, not runtime_shim
    profile_pinned: bool = False  # its header names a profile: its outcome depends on the profile

    @property
    def is_package(self) -> bool:
        return self.path.is_dir() and (self.path / "__init__.py").exists()

    def __str__(self) -> str:
        return self.name


def _comments(text: str) -> list[tuple[int, str]]:
    return [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT]


def load_fixture(path: Path) -> Fixture:
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    fixture = Fixture(path.stem if path.is_file() else path.name, path, files)
    for file in files:
        text = file.read_text(encoding="utf-8")
        key = str(file.resolve())
        for row, comment in _comments(text):
            header = _HEADER.match(comment)
            if header:
                for setting in header.group(1).split():
                    name, _, value = setting.partition("=")
                    name, value = name.strip(), value.strip()
                    if name == "profile":
                        value, fixture.profile_pinned = PROFILE_ALIASES.get(value, value), True
                    setattr(fixture, name, value)
                continue
            for kind, body in _MARKER.findall(comment):
                body = body.strip()
                if kind == "reveal":
                    fixture.reveals[(key, row)] = body
                    continue
                markers = {"expect": fixture.errors, "expect-warning": fixture.warnings, "inner": fixture.inner}[kind]
                for code in (c.strip() for c in body.split(",") if c.strip()):
                    markers.add((key, row, code))
    return fixture


def all_fixtures() -> list[Fixture]:
    """Every fixture: runtime_shim programs in ``fixtures/``, PyTorch programs in ``fixtures/torch/``."""
    found = []
    for entry in sorted(FIXTURES.iterdir()):
        if entry.suffix == ".py" or (entry.is_dir() and (entry / "__main__.py").exists()):
            found.append(load_fixture(entry))
    for entry in sorted((FIXTURES / "torch").glob("*.py")):
        fixture = load_fixture(entry)
        fixture.name = f"torch/{fixture.name}"
        fixture.torch = True
        found.append(fixture)
    return found


# --- running under runtime_shim ---------------------------------------------------------------------

_DRIVER = r'''
import json, os, runpy, sys, traceback
results = {}
for name, path, kind in json.loads(sys.argv[1]):
    before = set(sys.modules)
    saved_path = list(sys.path)
    try:
        if kind == "package":
            sys.path.insert(0, os.path.dirname(path))
            runpy.run_module(os.path.basename(path), run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(path, run_name="__main__")
        results[name] = "ok"
    except BaseException as error:  # a fixture must run to its end
        results[name] = "".join(traceback.format_exception(error))[-3000:]
    finally:
        sys.path[:] = saved_path
        for module in set(sys.modules) - before:
            if not module.startswith(("runtime_shim", "numpy", "torch")):
                sys.modules.pop(module, None)
print("FIXTURE-RESULTS " + json.dumps(results))
'''


@dataclass
class RunResult:
    status: dict[str, str]
    records: list[dict]
    output: str


def run_group(fixtures: list[Fixture], profile: str, mode: str, record_path: Path) -> RunResult:
    """Run fixtures (same profile and mode) in one interpreter, recording every checked call."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_SHIM_")}
    env["RUNTIME_SHIM_RECORD"] = str(record_path)
    env["RUNTIME_SHIM_PROFILE"] = profile
    if mode == "virtual":
        env["RUNTIME_SHIM_VIRTUAL"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    spec = [(f.name, str(f.path.resolve()), "package" if f.is_package else "path") for f in fixtures]
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(spec)], env=env, capture_output=True,
                          text=True, timeout=600, cwd=str(FIXTURES))
    status: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("FIXTURE-RESULTS "):
            status = json.loads(line[len("FIXTURE-RESULTS "):])
    if not status:
        status = {f.name: f"driver failed (exit {proc.returncode}): {proc.stderr[-3000:]}" for f in fixtures}
    records = []
    if record_path.exists():
        records = [json.loads(line) for line in record_path.read_text().splitlines() if line.strip()]
    return RunResult(status, records, proc.stdout + proc.stderr)


__all__ = ["Fixture", "RunResult", "all_fixtures", "load_fixture", "reveal_matches", "run_group"]
