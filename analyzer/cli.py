"""The ``devicelint`` command line (ruff's conventions).

``devicelint check [PATHS | -]``, ``devicelint rules``, ``devicelint explain CODE``,
``devicelint clean``, ``devicelint --version``. Exit status: 0 clean, 1 findings,
2 usage, configuration or internal error (one line on stderr, never a traceback).
``main(argv)`` returns the status instead of exiting.

Settings come from ``[tool.devicelint]`` (:mod:`analyzer.config`) and the flags, which win.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_ALIASES, PROFILE_NAMES

from . import __version__, config
from .diagnostics import printable
from .discovery import DiscoveryOptions, PathError, is_force_excluded
from .fixes.summary import fixable_hint, fixed_listing
from .output import FORMATS, MACHINE_FORMATS, display_path, render, statistics
from .projects import FileRun, Project, file_run, find_root, merge
from .runner import InternalError, Report, analyze_project, check
from .settings import (
    PerFileIgnore,
    Settings,
    SettingsError,
    parse_backends,
    parse_codes,
    parse_per_file_ignores,
    parse_size,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
BUG_REPORT = ("this is a bug in devicelint: please report it, with the command line and the file(s) that trigger "
              "it (DEVICELINT_TRACEBACK=1 shows where it happened)")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def _codes_flag(parser: argparse.ArgumentParser, name: str, text: str) -> None:
    parser.add_argument(name, action="append", default=None, metavar="CODES", help=text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="devicelint", description="Find the tensor device moves and operations that will fail, "
                     "before the code runs: PyTorch and NumPy (MV2xx), Burn's dispatch through runtime_shim (MV1xx).")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    check_cmd = commands.add_parser("check", help="analyze files or directories (default: .)")
    check_cmd.add_argument("paths", nargs="*", help="files or directories; '-' reads one file from stdin")
    check_cmd.add_argument("--output-format", choices=sorted(FORMATS), default=None,
                           help="how findings are printed (default: concise)")
    check_cmd.add_argument("-o", "--output-file", default=None, help="write the output to this file")
    _codes_flag(check_cmd, "--select", "comma-separated codes or prefixes to enable (replaces the configuration's)")
    _codes_flag(check_cmd, "--extend-select", "codes or prefixes to enable on top of the selection")
    _codes_flag(check_cmd, "--ignore", "codes or prefixes to disable")
    check_cmd.add_argument("--per-file-ignores", action="append", default=None, metavar="GLOB:CODES",
                           help="codes to ignore in the files a glob matches, e.g. 'tests/*:MV150' "
                                "(repeatable; replaces the configuration's)")
    check_cmd.add_argument("--extend-per-file-ignores", action="append", default=None, metavar="GLOB:CODES",
                           help="like --per-file-ignores, on top of the configuration's")
    check_cmd.add_argument("--exclude", action="append", default=None, metavar="PATTERNS",
                           help="comma-separated globs of files and directories to skip (replaces the defaults)")
    check_cmd.add_argument("--extend-exclude", action="append", default=None, metavar="PATTERNS",
                           help="globs to skip on top of the excludes")
    check_cmd.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                           help="skip what .gitignore, .ignore, .git/info/exclude ignore (default: on)")
    check_cmd.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                           help="apply the excludes to paths given explicitly too (for pre-commit)")
    check_cmd.add_argument("--profile", choices=sorted((*PROFILE_NAMES, *PROFILE_ALIASES)), default=None,
                           help=f"Burn semantics to check against (default: {DEFAULT_PROFILE})")
    check_cmd.add_argument("--backends", default=None,
                           help="backends the target machine has (for MV112), e.g. Cpu,Flex")
    check_cmd.add_argument("--target-device", default=None, metavar="{cuda,cpu,auto}",
                           help="where the PyTorch code runs: cuda or cpu analyzes that machine only and reports "
                                "its failures as errors; auto (the default) both answers of "
                                "torch.cuda.is_available()")
    check_cmd.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check_cmd.add_argument("--statistics", action="store_true", help="count the findings per rule")
    check_cmd.add_argument("--stdin-filename", default=None, help="the name of the file read from stdin")
    check_cmd.add_argument("--ignore-noqa", action="store_true", help="ignore `# noqa` comments")
    check_cmd.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check_cmd.add_argument("--cache-dir", default=None, help="the cache directory (default: .devicelint_cache "
                                                              "in the project root)")
    check_cmd.add_argument("--max-file-size", default=None, metavar="SIZE",
                           help="skip files larger than this, with a note (bytes, or e.g. 10MB; 0: no limit; "
                                "default: 10MiB)")
    check_cmd.add_argument("--config", action="append", default=None, metavar="PATH | KEY=VALUE",
                           help="a configuration file, or a `KEY = VALUE` override of [tool.devicelint]")
    check_cmd.add_argument("--isolated", action="store_true", help="read no configuration file")
    check_cmd.add_argument("--show-files", action="store_true", help="list the files that would be analyzed")
    check_cmd.add_argument("--analyze-all", action="store_true",
                           help="analyze every file, also those that mention neither torch nor runtime_shim nor a "
                                "project module that does (by default they are skipped unparsed: they hold no tensor)")
    check_cmd.add_argument("-v", "--verbose", action="store_true",
                           help="also print notes about the run: components whose analysis stopped at a work "
                                "budget (their findings unknown) and the tracebacks of MV903 findings")
    check_cmd.add_argument("--max-worker-memory", default=None, metavar="SIZE",
                           help="memory one component's analysis may grow a process by before its findings "
                                "become unknown (default 1GiB; e.g. 512MiB, 2GiB)")
    check_cmd.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check_cmd.add_argument("-s", "--silent", action="store_true", help="print nothing (the exit status tells)")
    check_cmd.add_argument("--fix", action=argparse.BooleanOptionalAction, default=None,
                           help="apply the safe fixes (and the unsafe ones with --unsafe-fixes), then report "
                                "what remains")
    check_cmd.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                           help="include the fixes that may change what the program computes")
    check_cmd.add_argument("--fix-only", action=argparse.BooleanOptionalAction, default=None,
                           help="apply fixes and report nothing that remains (exit 0 unless an error)")
    check_cmd.add_argument("--diff", action="store_true",
                           help="print the fixes as a unified diff and write nothing (exit 1 when there "
                                "would be changes)")
    check_cmd.add_argument("--show-fixes", action=argparse.BooleanOptionalAction, default=None,
                           help="list the fixes that were applied")
    check_cmd.add_argument("--add-noqa", action="store_true",
                           help="add a `# noqa: MVxxx` directive to each line with a finding (added to the line's "
                                "own `# noqa: CODES` when it has one) and report nothing")

    rules_cmd = commands.add_parser("rules", help="list the rules")
    rules_cmd.add_argument("--markdown", action="store_true",
                           help="print the rules reference page (docs/rules.md) instead")
    models_cmd = commands.add_parser("models", help="list the library APIs the analysis models, by model")
    models_cmd.add_argument("--signatures", action="store_true", help="print each API's declared parameters")
    explain = commands.add_parser("explain", help="show a rule's documentation")
    explain.add_argument("code")
    clean = commands.add_parser("clean", help="remove the cache directory")
    clean.add_argument("--cache-dir", default=None)
    from .confirm.command import add_parser as add_confirm_parser

    add_confirm_parser(commands)
    commands.add_parser("lsp", help="run the language server on stdin/stdout (needs the `lsp` extra)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `devicelint ... | head`: stop quietly
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes it at exit
        return EXIT_CLEAN
    except KeyboardInterrupt:
        return EXIT_ERROR
    except (ConfigError, SettingsError, PathError, _UsageError) as error:  # raised late (e.g. in a formatter)
        _error(str(error))
        return EXIT_ERROR
    except InternalError as error:
        if os.environ.get("DEVICELINT_TRACEBACK") and error.trace:
            print(error.trace, file=sys.stderr)
        _error(f"internal error: {error}\n{BUG_REPORT}", prefix=False)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - never a traceback; DEVICELINT_TRACEBACK=1 shows it
        if os.environ.get("DEVICELINT_TRACEBACK"):
            import traceback

            traceback.print_exc()
        _error(f"internal error: {type(error).__name__}: {error}\n{BUG_REPORT}", prefix=False)
        return EXIT_ERROR


ConfigError = config.ConfigError


def _error(message: str, prefix: bool = True) -> None:
    print(f"devicelint: {'error: ' if prefix else ''}{message}", file=sys.stderr)


#: Commands that leave no thread, child process or temporary file behind once ``main`` returns.
_QUICK_EXIT_COMMANDS = ("check", "rules", "explain")

#: Set by :func:`console` when the process ends as soon as the command returns: a check's report (the files'
#: syntax trees above all) is kept here, not freed object by object first (38 ms of a 0.75 s check of
#: torchvision, 104 ms of timm's). ``None``: ``main`` was called as a library function.
_RETAINED: list[object] | None = None


def console() -> None:
    """The ``devicelint`` script (and ``python -m devicelint``): :func:`main`, then the exit.

    After a command that leaves nothing running, the process ends without freeing its objects one by
    one (as mypy does): the interpreter's teardown of a finished check took about a fifth of a cached
    run, and freeing a cold check's syntax trees 5 % of the check (:data:`_RETAINED`). Output is flushed
    and exit handlers run first."""
    global _RETAINED
    argv = sys.argv[1:]
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command not in _QUICK_EXIT_COMMANDS:
        sys.exit(main(argv))
    _RETAINED = []
    gc.disable()  # what the check retains must not be walked by the collections its output would trigger
    status = main(argv)
    import atexit

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe (`devicelint check | head`) loses nothing more
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(status)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except _UsageError as error:
        _error(str(error))
        return EXIT_ERROR
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    if args.version:
        print(f"devicelint {__version__}")
        return EXIT_CLEAN
    if args.command == "rules":
        return _rules(markdown=args.markdown)
    if args.command == "models":
        return _models(signatures=args.signatures)
    if args.command == "explain":
        return _explain(args.code)
    if args.command == "clean":
        return _clean(args)
    if args.command == "check":
        return _check(args)
    if args.command == "confirm":
        from .confirm.command import run as run_confirm

        return run_confirm(args)
    if args.command == "lsp":
        from .lsp import main as lsp_main  # pygls is imported there, only for this command

        return lsp_main()
    parser.print_help(sys.stderr)
    return EXIT_ERROR


def _models(signatures: bool = False) -> int:
    """The modelled library callables (:mod:`analyzer.models.signatures`), grouped by the registered model
    that answers for them (``torch.nn.*``: every name under the prefix)."""
    from .models.registry import default_models
    from .models.signatures import SIGNATURES

    for model in default_models():
        names = SIGNATURES.get(model.name, {})
        print(f"{model.name} ({len(names)})")
        for name in sorted(names):
            print(f"  {name}({names[name]})" if signatures else f"  {name}")
    return EXIT_CLEAN


def _rules(markdown: bool = False) -> int:
    """One line per rule; ``[*]`` marks the rules with an autofix (``devicelint explain`` says how safe).
    With ``markdown``, the whole reference page."""
    from devicelint.rules import all_rules

    if markdown:
        from .rules_doc import render

        sys.stdout.write(render())
        return EXIT_CLEAN
    for rule in all_rules():
        print(f"{rule.code}  {rule.name:<30} {'[*]' if rule.fixable() else '   '} {rule.summary()}")
    return EXIT_CLEAN


def _explain(code: str) -> int:
    from devicelint.rules import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        _error(f"unknown rule code {code!r} (see `devicelint rules`)")
        return EXIT_ERROR
    from .rules_doc import profiles_section

    print(f"# {rule.code} ({rule.name})\n")
    print(rule.doc())
    section = profiles_section(rule.code)
    if section is not None:
        print("\n" + section.replace("### ", "## ", 1))
    return EXIT_CLEAN


def _clean(args: argparse.Namespace) -> int:
    from .cache import clean, default_dir

    found = config.discover(None)
    directory = args.cache_dir or found.cache_dir() or default_dir(found.root)
    try:
        removed = clean(directory)
    except OSError as error:
        _error(str(error))
        return EXIT_ERROR
    print(f"Removed {directory}" if removed else f"No cache at {directory}")
    return EXIT_CLEAN


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """Repeated comma-separated flag values, flattened (None when the flag was not given)."""
    if values is None:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _load_config(args: argparse.Namespace, first_path: str | None) -> config.Config:
    files = [c for c in args.config or () if os.path.isfile(c) or (c.endswith(".toml") and "=" not in c)]
    overrides = [c for c in args.config or () if c not in files]
    if len(files) > 1:
        raise config.ConfigError("--config: only one configuration file can be given")
    if files and args.isolated:
        raise config.ConfigError("--config PATH cannot be combined with --isolated")
    if args.isolated:
        found = config.Config(None, os.getcwd(), {})
    elif files:
        found = config.load(files[0])
    else:
        found = config.discover(first_path)
    for override in overrides:
        values = config.parse_override(override)
        for key, value in values.items():
            if key in ("per-file-ignores", "extend-per-file-ignores"):
                found.values[key] = {**found.values.get(key, {}), **value} if key.startswith("extend") else value
            else:
                found.values[key] = value
    return found


def _settings(args: argparse.Namespace, found: config.Config) -> Settings:
    cwd = os.getcwd()
    profile = args.profile or found.get("profile", DEFAULT_PROFILE)
    settings = Settings(profile=PROFILE_ALIASES.get(profile, profile))
    backends = parse_backends(args.backends) if args.backends is not None else found.get("backends")
    settings.backends = backends
    settings.target_device = args.target_device or found.get("target-device", "auto")
    layer = found.selection()
    settings.selections = (layer,) if layer is not None else ()
    select = _split(args.select)
    settings.select = parse_codes(",".join(select)) if select is not None else None
    settings.extend_select = parse_codes(",".join(_split(args.extend_select) or ()))
    settings.ignore = parse_codes(",".join(_split(args.ignore) or ()))
    per_file: tuple[PerFileIgnore, ...] = found.per_file_ignores()
    if args.per_file_ignores is not None:
        per_file = tuple(parse_per_file_ignores(v, cwd) for v in args.per_file_ignores)
    per_file += tuple(parse_per_file_ignores(v, cwd) for v in args.extend_per_file_ignores or ())
    settings.per_file_ignores = per_file
    settings.respect_noqa = not args.ignore_noqa
    settings.discovery = DiscoveryOptions(
        root=found.root,
        exclude=found.get("exclude"),
        extend_exclude=found.get("extend-exclude", ()),
        respect_gitignore=args.respect_gitignore if args.respect_gitignore is not None
        else found.get("respect-gitignore", True),
        force_exclude=args.force_exclude if args.force_exclude is not None else found.get("force-exclude", False),
        cli_exclude=_split(args.exclude),
        cli_extend_exclude=_split(args.extend_exclude) or (),
        roots=found.roots(),
    )
    if not args.no_cache:
        from .cache import default_dir, usable_dir

        environment = os.environ.get("DEVICELINT_CACHE_DIR")
        named = os.path.abspath(args.cache_dir) if args.cache_dir else found.cache_dir() or (
            os.path.abspath(environment) if environment else None)
        if named is not None:  # one the user named must work (the default one is skipped when it cannot)
            problem = usable_dir(named)
            if problem is not None:
                key = "--cache-dir" if args.cache_dir else f"{found.path or '--config'}: `cache-dir`" \
                    if found.cache_dir() else "DEVICELINT_CACHE_DIR"
                raise SettingsError(f"{key}: cannot use {named}: {problem}")
        settings.cache_dir = named or default_dir(found.root)
    settings.jobs = _cpus()
    if args.max_file_size is not None:
        settings.max_file_size = parse_size("--max-file-size", args.max_file_size)
    elif found.get("max-file-size") is not None:
        settings.max_file_size = found.get("max-file-size")
    settings.analyze_everything = args.analyze_all
    if args.max_worker_memory is not None:
        settings.max_worker_memory = config.memory_size("--max-worker-memory", args.max_worker_memory)
    elif found.get("max-worker-memory") is not None:
        settings.max_worker_memory = found.get("max-worker-memory")
    return settings.validate()


def _print_notes(report: Report) -> None:
    """``--verbose``: what stopped or failed, on stderr (the findings' output stays as it is)."""
    for note in report.notes:
        if note.name == "analysis-traceback":
            print(f"devicelint: traceback of MV903 at {display_path(note.file)}:{note.row}:\n{note.message}",
                  file=sys.stderr)
        else:
            print(f"devicelint: note: {display_path(note.file)}: {note.message}", file=sys.stderr)


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _check(args: argparse.Namespace) -> int:
    # The analysis allocates many long-lived objects (trees, abstract values): with the default
    # thresholds the collector walks them over and over (a third of the run on large projects). Its garbage
    # is acyclic (freed by reference counting; each engine breaks its model's cycles when done), so a check
    # runs without automatic collections: 7 and 14 % faster than a young collection every million allocations
    # on timm and transformers, at the same peak memory on every corpus (bench/gc_threshold.py).
    thresholds = gc.get_threshold()
    gc.set_threshold(0)
    try:
        return _check_paths(args)
    finally:
        gc.set_threshold(*thresholds)


def _check_paths(args: argparse.Namespace) -> int:
    paths = list(args.paths)
    stdin = None
    if "-" in paths or (args.stdin_filename and not paths):
        paths = [p for p in paths if p != "-"]
    elif args.stdin_filename:
        _error("--stdin-filename needs '-' among the paths")
        return EXIT_ERROR
    reads_stdin = "-" in args.paths or (args.stdin_filename is not None and not args.paths)
    if not paths and not reads_stdin:
        paths = ["."]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        for path in missing:
            _error(f"{display_path(path)}: No such file or directory")
        return EXIT_ERROR
    if args.add_noqa:
        conflict = next((flag for flag, given in _add_noqa_conflicts(args, reads_stdin) if given), None)
        if conflict is not None:
            _error(f"--add-noqa cannot be used with {conflict}")
            return EXIT_ERROR
    first = paths[0] if paths else args.stdin_filename
    try:
        found = _load_config(args, first)
        settings = _settings(args, found)
    except (config.ConfigError, SettingsError) as error:
        _error(str(error))
        return EXIT_ERROR
    output_format = args.output_format or found.get("output-format") or "concise"
    if args.show_files:
        from .discovery import discover

        for path in sorted(discover(paths, settings.discovery)):
            print(printable(os.path.abspath(path)))
        return EXIT_CLEAN
    if reads_stdin:
        data = _read_stdin()
        if data is None:
            _error("'-' reads the file from stdin, but stdin is closed")
            return EXIT_ERROR
        stdin = (args.stdin_filename or "<stdin>.py", data)
    try:
        runs = _runs(args, found, settings, paths, stdin)
    except PathError as error:
        _error(f"{error}: No such file or directory")
        return EXIT_ERROR
    except (config.ConfigError, SettingsError) as error:
        _error(str(error))
        return EXIT_ERROR
    report = merge([run.report for run in runs])
    if _RETAINED is not None:
        _RETAINED.append(report)
    quiet = args.quiet or args.silent
    if not quiet:
        for path, why in report.skipped:
            print(f"devicelint: warning: {display_path(path)}: {why}", file=sys.stderr)
    if report.files_seen == 0 and not quiet:
        print("devicelint: warning: No Python files found under the given path(s)", file=sys.stderr)
    if args.add_noqa:
        return _add_noqa(report, quiet)
    fixing = _FixOptions.of(args, found)
    applied: list = []
    if fixing.active:
        stdin_name = next((run.stdin_name for run in runs if run.stdin_name is not None), None)
        outcome = _apply_fixes(runs, fixing, stdin_name, args)
        if isinstance(outcome, int):
            return outcome
        report, applied = outcome
        if fixing.diff or fixing.only:
            return EXIT_FINDINGS if fixing.diff and applied else EXIT_CLEAN
    findings = report.findings
    if args.verbose and not args.silent:
        _print_notes(report)
    text = statistics(report.diagnostics, output_format, fixing.unsafe, report.notes) if args.statistics \
        else render(output_format, report.diagnostics, report.sources, fixing.unsafe)
    if not quiet and output_format not in MACHINE_FORMATS:
        text += _summary(findings, len(applied) if fixing.active else None)
        text += fixable_hint(findings, fixing.unsafe)
    if fixing.show and not quiet and output_format not in MACHINE_FORMATS:
        text += fixed_listing(applied, display_path)
    if not args.silent:
        try:
            _write(text, args.output_file, to_stderr=fixing.active and stdin is not None)
        except OSError as error:
            _error(f"cannot write {args.output_file}: {error.strerror or error}")
            return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _add_noqa_conflicts(args: argparse.Namespace, reads_stdin: bool) -> list[tuple[str, bool]]:
    """The flags ``--add-noqa`` refuses (as ruff's does): it writes files, so it neither fixes nor only looks."""
    return [("--fix", bool(args.fix)), ("--fix-only", bool(args.fix_only)), ("--diff", args.diff),
            ("--statistics", args.statistics), ("--ignore-noqa", args.ignore_noqa),
            ("--show-files", args.show_files), ("stdin ('-' or --stdin-filename)", reads_stdin)]


def _add_noqa(report: Report, quiet: bool) -> int:
    """Write the directives, say how many were added (on stderr, as ruff does); 0 unless a file could not be
    written (2)."""
    from .fixes import files as fix_files
    from .fixes.add_noqa import add_noqa

    by_file: dict[str, list] = {}
    # (and the failures each finding lists as failing "here too": silenced with it, they would be reported)
    todo = list(report.findings)
    while todo:
        finding = todo.pop()
        by_file.setdefault(finding.file, []).append(finding)
        todo.extend(finding.folded)
    added = 0
    status = EXIT_CLEAN
    for path, findings in sorted(by_file.items()):
        source = report.sources.get(path)
        edit = add_noqa(source, findings) if source is not None else None
        if edit is None:
            continue
        try:
            fix_files.write(edit.fix)
        except fix_files.NotWritten as why:
            _error(f"{display_path(path)}: no directives added: {why} (the file is unchanged)")
            status = EXIT_ERROR
        except OSError as error:
            _error(f"cannot write {display_path(path)}: {error.strerror or error} (the file is unchanged)")
            status = EXIT_ERROR
        else:
            added += edit.added
    if added and not quiet:
        print(f"Added {added} noqa directive{'' if added == 1 else 's'}.", file=sys.stderr)
    return status


@dataclass
class _PathRun:
    """A run over the directories named (each the whole of what is analyzed, as given), or over a buffer
    from stdin that names no file: what :class:`analyzer.projects.FileRun` is for named files."""

    report: Report
    settings: Settings
    stdin_name: str | None

    def analyze(self, sources: list) -> Report:
        return analyze_project(sources, self.settings, stdin_name=self.stdin_name)


_Run = _PathRun | FileRun


def _runs(args: argparse.Namespace, found: config.Config, settings: Settings, paths: list[str],
          stdin: tuple[str, bytes] | None) -> list[_Run]:
    """The runs that report on ``paths`` and ``stdin``: the named directories in one run; each named file
    (and the file ``--stdin-filename`` names) with its project as context, the files of one project and
    configuration in one run (analyzer.projects)."""
    directories = [p for p in paths if os.path.isdir(p)]
    inside = [os.path.abspath(d) for d in directories]
    files = [p for p in paths if not os.path.isdir(p)
             and not any(_under(os.path.abspath(p), d) for d in inside)]  # reported by their directory's run
    named_stdin = stdin if stdin is not None and args.stdin_filename is not None \
        and not any(_under(os.path.abspath(stdin[0]), d) for d in inside) else None
    runs: list[_Run] = []
    if directories or (stdin is not None and named_stdin is None):
        loose_stdin = stdin if named_stdin is None else None
        runs.append(_PathRun(check(directories, settings, loose_stdin), settings,
                             loose_stdin[0] if loose_stdin is not None else None))
    # each file with its own configuration (the closest, as for a run naming it alone), unless one is forced
    per_file = not args.isolated and not any(os.path.isfile(c) or c.endswith(".toml") for c in args.config or ())
    by_directory: dict[str, Settings] = {}
    by_config: dict[str | None, Settings] = {found.path: settings}
    groups: dict[tuple[str, int], tuple[Project, list[str]]] = {}
    stdin_key = None
    for path in [*files, *([named_stdin[0]] if named_stdin is not None else [])]:
        file_settings = settings
        if per_file:
            directory = os.path.dirname(os.path.abspath(path))
            if directory not in by_directory:
                file_found = _load_config(args, path)
                if file_found.path not in by_config:
                    by_config[file_found.path] = _settings(args, file_found)
                by_directory[directory] = by_config[file_found.path]
            file_settings = by_directory[directory]
        if file_settings.discovery.force_exclude and is_force_excluded(path, file_settings.discovery):
            continue  # --force-exclude applies to named files and --stdin-filename too
        root = find_root(path, file_settings.discovery.roots)
        key = (root.directory, id(file_settings))
        if key not in groups:
            groups[key] = (Project(root, file_settings, relative=True), [])
        if named_stdin is not None and path is named_stdin[0]:
            stdin_key = key
        else:
            groups[key][1].append(path)
    for key, (project, members) in groups.items():
        runs.append(file_run(project, members, named_stdin if key == stdin_key else None))
    if not runs:  # every named file was excluded
        runs.append(_PathRun(Report(), settings, None))
    return runs


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class _FixOptions:
    """``--fix``/``--fix-only``/``--diff``/``--unsafe-fixes``/``--show-fixes`` over the ``fix``,
    ``unsafe-fixes`` and ``show-fixes`` keys (the flags win)."""

    fix: bool
    only: bool
    diff: bool
    unsafe: bool
    show: bool

    @property
    def active(self) -> bool:
        return self.fix or self.only or self.diff

    @classmethod
    def of(cls, args: argparse.Namespace, found: config.Config) -> _FixOptions:
        def flag(value: bool | None, key: str) -> bool:
            return bool(found.get(key, False)) if value is None else value

        return cls(flag(args.fix, "fix"), bool(args.fix_only), args.diff, flag(args.unsafe_fixes, "unsafe-fixes"),
                   flag(args.show_fixes, "show-fixes"))


def _apply_fixes(runs: list[_Run], fixing: _FixOptions, stdin_name: str | None,
                 args: argparse.Namespace) -> tuple[Report, list] | int:
    """Fix in memory until stable (each run re-analysing its own files), then diff or write (files
    atomically; stdin's text to stdout).

    Returns the analysis of the fixed texts and the fixes applied, or an exit status when done."""
    from .fixes import FixError
    from .fixes import files as fix_files
    from .fixes.summary import fixed_count, would_fix

    outcomes = []
    try:
        for run in runs:
            outcomes.append(fix_files.fix_report(run.report, run.analyze, fixing.unsafe))
    except FixError as error:
        raise InternalError(f"a fix does not fit its file: {error}") from error
    report = merge([outcome.report for outcome in outcomes])
    changed = {path: fixed for outcome in outcomes for path, fixed in outcome.files.items()}
    applied = [fix for outcome in outcomes for fix in outcome.applied]
    for path in (path for outcome in outcomes for path in outcome.reverted):
        _error(f"fixes for {display_path(path)} made it unparsable and were left out\n{BUG_REPORT}", prefix=False)
    if fixing.diff:
        text = "".join(fix_files.unified_diff(f, display_path(path)) for path, f in sorted(changed.items()))
        if not args.silent:
            _write(text, args.output_file)
            if not args.quiet:
                print(would_fix(applied).rstrip("\n"), file=sys.stderr)
        return report, applied
    written: list[str] = []
    not_written: list[str] = []
    for path, fixed in sorted(changed.items()):
        if path == stdin_name:
            continue
        try:
            fix_files.write(fixed)
        except fix_files.NotWritten as why:
            _error(f"{display_path(path)}: not fixed: {why} (the file is unchanged)")
            not_written.append(path)
        except OSError as error:
            _error(f"cannot write {display_path(path)}: {error.strerror or error} (the file is unchanged)")
            not_written.append(path)
        else:
            written.append(path)
    if not_written:  # say exactly what happened to every file (each write is atomic, the run is not)
        _error(f"fixes written to {len(written)} file(s){': ' if written else ''}"
               f"{', '.join(display_path(p) for p in written)}; not written to {len(not_written)} file(s): "
               f"{', '.join(display_path(p) for p in not_written)}")
        return EXIT_ERROR
    if stdin_name is not None and stdin_name in report.sources:
        fix_files.print_text(changed.get(stdin_name), report.sources[stdin_name])
    if fixing.only and not args.silent:
        text = "" if args.quiet else fixed_count(applied)
        if fixing.show and not args.quiet:
            text += fixed_listing(applied, display_path)
        _write(text, args.output_file, to_stderr=stdin_name is not None)
    return report, applied


def _summary(findings: list, fixed: int | None = None) -> str:
    """``Found ...`` / ``All checks passed!``; with ``--fix`` (``fixed``: how many were fixed) ruff's
    ``Found 3 findings (2 fixed, 1 remaining).``"""
    if fixed:
        total = fixed + len(findings)
        return f"Found {total} finding{'s' if total != 1 else ''} ({fixed} fixed, {len(findings)} remaining).\n"
    if not findings:
        return "All checks passed!\n"
    errors = sum(1 for d in findings if d.severity.value == "error")
    warnings = len(findings) - errors
    return (f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} "
            f"({errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}).\n")


def _read_stdin() -> bytes | None:
    """The bytes of stdin, or None when there is no stdin to read (closed, or not readable)."""
    stream = sys.stdin
    if stream is None:  # the process started with descriptor 0 closed
        return None
    try:
        return stream.buffer.read()
    except (OSError, ValueError, AttributeError):  # a closed descriptor or stream
        return None


def _write(text: str, output_file: str | None, to_stderr: bool = False) -> None:
    """To ``output_file``, else stdout (stderr when stdout carries the fixed source of ``--fix -``).

    Text that cannot be encoded (a file name that is not UTF-8, in a message) is written escaped."""
    text = printable(text)
    if output_file is None:
        stream = sys.stderr if to_stderr else sys.stdout
        stream.write(text)
        stream.flush()
        return
    directory = os.path.dirname(os.path.abspath(output_file))
    os.makedirs(directory, exist_ok=True)
    handle: IO[str]
    with open(output_file, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
