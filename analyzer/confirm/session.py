"""One ``confirm`` session: find the programs, run them, analyse the same files, judge every site."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from runtime_shim.profiles import DEFAULT_PROFILE

from .. import frontend
from ..discovery import DiscoveryOptions, PathError, discover
from ..notebook import is_notebook
from ..settings import Settings
from . import DEFAULT_TIMEOUT
from .analysis import SettingsKey, analyze, machine_backends
from .launch import Run, run_programs
from .match import PROBLEMS, Site, compare
from .programs import (
    TORCH_RUNTIME,
    Program,
    ProgramError,
    apply_headers,
    display,
    entry_programs,
    find_programs,
    runtime_of,
)
from .sites import Lines, observe, predict


class ConfirmError(ValueError):
    """Bad input (a missing path, no programs, a bad header): one line, exit status 2."""


@dataclass
class Options:
    paths: list[str]
    entries: list[str] = field(default_factory=list)
    real: bool = False
    profile: str = DEFAULT_PROFILE
    timeout: float = DEFAULT_TIMEOUT
    jobs: int = 2
    preload: bool | None = None  # None: when there are enough programs (see launch.run_programs)
    discovery: DiscoveryOptions = field(default_factory=DiscoveryOptions)
    cache_dir: str | None = None
    analysis_jobs: int = 1


@dataclass
class Group:
    """Programs judged against one analysis (same profile and target backends)."""

    key: SettingsKey
    runs: list[Run] = field(default_factory=list)


@dataclass
class Result:
    options: Options
    runs: list[Run]
    groups: list[Group]
    sites: list[tuple[Group, Site]]
    files_analyzed: int = 0

    def count(self, kind: str) -> int:
        return sum(1 for _g, site in self.sites for v in site.verdicts if v.kind == kind)

    @property
    def executed(self) -> int:
        return sum(1 for _g, site in self.sites if site.executed)

    @property
    def failed_programs(self) -> list[Run]:
        return [run for run in self.runs if run.problem]

    @property
    def ok(self) -> bool:
        return not self.failed_programs and not any(self.count(kind) for kind in PROBLEMS)


def _real(path: str) -> str:
    return os.path.realpath(path)


def collect(options: Options) -> tuple[list[Program], list[str]]:
    """The programs to run and every discovered file (real paths)."""
    missing = [p for p in options.paths if not os.path.exists(p)]
    if missing:
        raise ConfirmError(f"{missing[0]}: No such file or directory")
    try:
        # notebooks are analysed by `check`, never run here
        files = [_real(f) for f in discover(options.paths, options.discovery) if not is_notebook(f)]
    except PathError as error:
        raise ConfirmError(f"{error}: No such file or directory") from None
    try:
        programs = entry_programs(options.entries, files) if options.entries else find_programs(options.paths, files)
        # each program runs under what its files use: runtime_shim, or PyTorch under the torch
        # observer; a program that uses neither has nothing to confirm and is not run
        sources = {_real(s.path): s for s in frontend.load(files)}
        data = {path: s.data for path, s in sources.items()}
        kept = []
        for program in programs:
            program.files = [_real(f) for f in program.files]
            runtime = runtime_of(program, data)
            if runtime is not None:
                program.runtime = runtime
                kept.append(program)
        programs = kept
        for path in sorted({f for p in programs for f in p.files}):
            failure = frontend.parse(sources[path]) if path in sources else None
            if failure is not None:  # a program that cannot even be parsed is bad input, not a finding
                raise ConfirmError(f"{display(failure.file)}:{failure.line}:{failure.col + 1}: {failure.message}")
        for program in programs:
            apply_headers(program)
    except ProgramError as error:
        raise ConfirmError(str(error)) from None
    if not programs:
        where = ", ".join(options.entries or options.paths)
        raise ConfirmError(f"no programs to run in {where} (a program is a .py file, a directory with "
                           "__main__.py, a package with main.py, or an --entry)")
    return programs, files


def confirm(options: Options) -> Result:
    programs, files = collect(options)

    def real_of(program: Program) -> bool:
        return (program.mode or ("real" if options.real else "virtual")) == "real"

    runs = run_programs(programs, profile_of=lambda p: p.profile or options.profile, real_of=real_of,
                        timeout=options.timeout, jobs=options.jobs, preload=options.preload)

    machine: list[frozenset[str]] = []

    def key_of(run: Run) -> SettingsKey:
        program = run.program
        if program.header_backends:
            return run.profile, program.backends
        if run.mode == "virtual" or program.runtime == TORCH_RUNTIME:
            # every backend exists; a PyTorch program uses no Burn backend (its analysis is MV2xx)
            return run.profile, None
        if not machine:
            machine.append(machine_backends())
        return run.profile, machine[0]

    by_key: dict[SettingsKey, Group] = {}
    for run in runs:
        key = key_of(run)
        by_key.setdefault(key, Group(key)).runs.append(run)
    owned = {f for p in programs for f in p.files}
    library = [f for f in files if f not in owned]

    base = Settings(discovery=options.discovery, cache_dir=options.cache_dir, jobs=options.analysis_jobs)
    lines = Lines()
    result = Result(options, runs, list(by_key.values()), [])
    for group in result.groups:
        own = sorted({f for run in group.runs for f in run.program.files})
        diagnostics, analysed = analyze(own + library, base, group.key)
        result.files_analyzed += analysed
        scope = set(own) | set(library)
        observed: dict[str, dict] = defaultdict(dict)
        for run in group.runs:
            observe(run.records, run.program.name, scope, lines, observed)
        predicted: dict[str, dict] = {}
        predict((d for d in diagnostics if _real(d.file) in scope), predicted)
        # library files' sites that no program of this group reached are judged once, by the first group
        judged = set(own) | (set(library) if group is result.groups[0] else set(observed))
        for site in compare(_only(observed, judged), _only(predicted, judged), judged, lines, group.key[0]):
            result.sites.append((group, site))
    return result


def _only(table: dict[str, dict], files: set[str]) -> dict[str, dict]:
    return {f: v for f, v in table.items() if f in files}


