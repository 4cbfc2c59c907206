"""The ``devicelint`` command line (ruff's conventions).

``devicelint check [PATHS | -]``, ``devicelint rules``, ``devicelint explain CODE``,
``devicelint --version``. Exit status: 0 clean, 1 findings, 2 usage, configuration
or internal error. ``main(argv)`` returns the status instead of exiting.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from rules import all_rules, rule_by_code
from runtime_shim.semantics import DEFAULT_PROFILE, PROFILES

from . import __version__
from .frontend import PathError
from .output import FORMATS
from .runner import InternalError, check
from .settings import Settings, SettingsError, parse_backends, parse_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="devicelint", description="Find device moves and operations that will fail, "
                     "before the code runs (Burn-style dispatch via runtime_shim).")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    check_cmd = commands.add_parser("check", help="analyse files or directories (default: .)")
    check_cmd.add_argument("paths", nargs="*", help="files or directories; '-' reads one file from stdin")
    check_cmd.add_argument("--output-format", choices=sorted(FORMATS), default="concise")
    check_cmd.add_argument("--select", default=None, help="comma-separated codes or prefixes (default: ALL)")
    check_cmd.add_argument("--ignore", default=None, help="comma-separated codes or prefixes to skip")
    check_cmd.add_argument("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                           help="Burn semantics to check against")
    check_cmd.add_argument("--backends", default=None,
                           help="backends the target machine has (for MV112), e.g. Cpu,Flex")
    check_cmd.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check_cmd.add_argument("--stdin-filename", default=None, help="the name of the file read from stdin")
    check_cmd.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")

    commands.add_parser("rules", help="list the rules")
    explain = commands.add_parser("explain", help="show a rule's documentation")
    explain.add_argument("code")
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


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except _UsageError as error:
        print(f"devicelint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    if args.version:
        print(f"devicelint {__version__}")
        return EXIT_CLEAN
    if args.command == "rules":
        return _rules()
    if args.command == "explain":
        return _explain(args.code)
    if args.command == "check":
        return _check(args)
    parser.print_help(sys.stderr)
    return EXIT_ERROR


def _rules() -> int:
    for rule in all_rules():
        print(f"{rule.code}  {rule.name:<30} {rule.summary()}")
    return EXIT_CLEAN


def _explain(code: str) -> int:
    rule = rule_by_code(code)
    if rule is None:
        print(f"devicelint: error: unknown rule code {code!r} (see `devicelint rules`)", file=sys.stderr)
        return EXIT_ERROR
    print(f"# {rule.code} ({rule.name})\n")
    print(rule.doc())
    return EXIT_CLEAN


def _check(args: argparse.Namespace) -> int:
    try:
        settings = Settings(profile=args.profile)
        if args.select is not None:
            settings.select = parse_codes(args.select)
        if args.ignore is not None:
            settings.ignore = parse_codes(args.ignore)
        if args.backends is not None:
            settings.backends = parse_backends(args.backends)
        settings.validate()
    except SettingsError as error:
        print(f"devicelint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    paths = list(args.paths) or ["."]
    stdin = None
    if "-" in paths:
        paths = [p for p in paths if p != "-"]
        name = args.stdin_filename or "<stdin>.py"
        stdin = (name, sys.stdin.buffer.read())
    elif args.stdin_filename:
        print("devicelint: error: --stdin-filename needs '-' among the paths", file=sys.stderr)
        return EXIT_ERROR
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        for path in missing:
            print(f"devicelint: error: {path}: No such file or directory", file=sys.stderr)
        return EXIT_ERROR
    try:
        report = check(paths, settings, stdin)
    except PathError as error:
        print(f"devicelint: error: {error}: No such file or directory", file=sys.stderr)
        return EXIT_ERROR
    except InternalError as error:
        print(f"devicelint: internal error: {error}", file=sys.stderr)
        return EXIT_ERROR
    text = FORMATS[args.output_format](report.diagnostics, report.sources)
    sys.stdout.write(text)
    findings = report.findings
    if not args.quiet and args.output_format != "json":
        if findings:
            errors = sum(1 for d in findings if d.severity.value == "error")
            print(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} "
                  f"({errors} error{'s' if errors != 1 else ''}, {len(findings) - errors} "
                  f"warning{'s' if len(findings) - errors != 1 else ''}).")
        else:
            print("All checks passed!")
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
