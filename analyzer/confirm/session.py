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
from .entries import entry_points, is_project, load_project, resolve, words
from .launch import Run, run_programs
from .match import PROBLEMS, Site, compare
from .programs import (
    TORCH_RUNTIME,
    Program,
    ProgramError,
    apply_headers,
    display,
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
    config_entries: list[str] = field(default_factory=list)  # [tool.devicelint.confirm] entries
    config_root: str | None = None  # the directory of the configuration that named them


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
    not_run: list[str] = field(default_factory=list)  # the project's entry points no entry named

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
    programs, files, _not_run = plan(options)
    return programs, files


def _entries(options: Options, files: list[str]) -> tuple[list[Program] | None, list[str]]:
    """The programs named as entries (None: none named, discover them) and, in a project, its entry
    points that are not run."""
    projects = [load_project(p) for p in options.paths if is_project(p)]
    # the configuration's project counts when it names entries (a fixture directory inside a repository does not)
    if options.config_entries and options.config_root is not None and is_project(options.config_root) and \
            all(p.root != os.path.abspath(options.config_root) for p in projects):
        projects.append(load_project(options.config_root))
    roots = [r for p in projects for r in p.import_roots]
    scripts = {k: v for p in reversed(projects) for k, v in p.scripts.items()}
    if options.entries:
        named = [(e, os.getcwd(), "--entry") for e in options.entries]
    else:
        named = [(e, options.config_root or os.getcwd(), "[tool.devicelint.confirm] entries:")
                 for e in options.config_entries]
    programs = [resolve(e, files, base, roots, scripts, label) for e, base, label in named]
    for program in programs:
        program.paths = list(roots)
    if not projects:
        return (programs or None), []
    points = [point for p in projects for point in entry_points(p, files)]
    found = [name for name, _targets in points]
    # what each program runs as: its entry's first word, its file or module, a script's module:function
    ran = {words(e)[0] for e, _base, _label in named} | {p.target for p in programs}
    ran |= {p.target.rpartition(".")[0] for p in programs if p.kind == "module" and p.target.endswith(".__main__")}
    not_run = [name for name, targets in points if not targets & ran]
    if not programs:
        listed = ", ".join(found) if found else "none found"
        raise ConfirmError(f"no entries to run in the project {display(projects[0].root)}: name them in "
                           f"[tool.devicelint.confirm] entries or with --entry (scripts have side effects, so "
                           f"none runs unnamed); entry points: {listed}")
    return programs, not_run


def plan(options: Options) -> tuple[list[Program], list[str], list[str]]:
    """The programs to run, every discovered file (real paths), and the entry points not run."""
    missing = [p for p in options.paths if not os.path.exists(p)]
    if missing:
        raise ConfirmError(f"{missing[0]}: No such file or directory")
    try:
        # notebooks are analysed by `check`, never run here
        files = [_real(f) for f in discover(options.paths, options.discovery) if not is_notebook(f)]
    except PathError as error:
        raise ConfirmError(f"{error}: No such file or directory") from None
    try:
        named, not_run = _entries(options, files)
        programs = _unique(named) if named is not None else find_programs(options.paths, files)
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
    return programs, files, not_run


def _unique(programs: list[Program]) -> list[Program]:
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out = []
    for program in programs:
        key = (program.kind, program.target, tuple(program.args))
        if key not in seen:
            seen.add(key)
            out.append(program)
    return out


def confirm(options: Options) -> Result:
    programs, files, not_run = plan(options)

    def real_of(program: Program) -> bool:
        return (program.mode or ("real" if options.real else "virtual")) == "real"

    runs = run_programs(programs, profile_of=lambda p: p.profile or options.profile, real_of=real_of,
                        timeout=options.timeout, jobs=options.jobs, preload=options.preload)
    setup = next((run.setup_error for run in runs if run.setup_error), None)
    if setup is not None:  # the same for every PyTorch program: one usage error, not a crash per program
        raise ConfirmError(f"cannot run PyTorch programs with fake CUDA: {setup}")

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
    result = Result(options, runs, list(by_key.values()), [], not_run=not_run)
    for group in result.groups:
        own = sorted({f for run in group.runs for f in run.program.files})
        diagnostics, analyzed = analyze(own + library, base, group.key)
        result.files_analyzed += analyzed
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


