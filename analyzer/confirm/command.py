"""``devicelint confirm [PATHS]``: the command line (see docs/confirm.md).

Exit status: 0 every site agrees (unconfirmed warnings allowed) and every program ran to
its end (or failed exactly as it declared with ``# expect-failure:``); 1 any miss, false
alarm, reveal mismatch, or a program that crashed, timed out, exited non-zero or stopped on
an undeclared dispatch failure; 2 bad input (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_ALIASES, PROFILE_NAMES

from .. import config
from ..discovery import DiscoveryOptions
from . import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from .session import Options

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json")


def _canonical(profile: str) -> str:
    """A profile's own name (``burn-2026-09`` is accepted for ``burn-d16f7ba``)."""
    return PROFILE_ALIASES.get(profile, profile)


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``confirm`` subcommand's arguments."""
    cmd = commands.add_parser("confirm", help="run programs under runtime_shim (PyTorch programs under its torch "
                                              "observer) and check the analysis against them")
    cmd.add_argument("paths", nargs="*", help="files or directories with programs (default: .)")
    cmd.add_argument("--entry", action="append", default=None, metavar="ENTRY",
                     help="run this program instead of discovering them: a [project.scripts] name, a file, a "
                          "directory with __main__.py, or a module run as python -m, then its arguments "
                          "(\"mypkg.train --epochs 1\"); repeatable; PATHS are then only analysed")
    cmd.add_argument("--real", action="store_true",
                     help="run on this machine's real devices (default: virtual devices; for PyTorch programs, "
                          "fake CUDA)")
    cmd.add_argument("--profile", choices=sorted((*PROFILE_NAMES, *PROFILE_ALIASES)), default=None,
                     help=f"semantics profile (default: [tool.devicelint] profile, else {DEFAULT_PROFILE}); "
                          "a program's '# fixture: profile=...' header wins")
    cmd.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                     help=f"seconds each program may run (default {DEFAULT_TIMEOUT:g})")
    cmd.add_argument("--jobs", type=int, default=None, metavar="N", help="programs run at once (default: cores)")
    cmd.add_argument("--preload", action=argparse.BooleanOptionalAction, default=None,
                     help="fork the programs from an interpreter that has imported numpy and torch, or start a "
                          "fresh interpreter per program (default: preload for 8 programs or more)")
    cmd.add_argument("--output-format", choices=FORMATS, default="text", help="text table (default) or JSON")
    cmd.add_argument("-o", "--output-file", default=None, help="write the output to this file")
    cmd.add_argument("--no-cache", action="store_true", help="neither read nor write the analysis cache")
    return cmd


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def options_from(args: argparse.Namespace) -> Options:
    from .session import ConfirmError, Options

    paths = list(args.paths) or ["."]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ConfirmError(f"{missing[0]}: No such file or directory")
    if not args.timeout > 0:
        raise ConfirmError(f"--timeout must be positive, not {args.timeout:g}")
    if args.jobs is not None and args.jobs < 1:
        raise ConfirmError(f"--jobs must be at least 1, not {args.jobs}")
    found = config.discover(paths[0])
    cpus = _cpus()
    cache_dir = None
    if not args.no_cache:
        from ..cache import default_dir

        cache_dir = found.cache_dir() or default_dir(found.root)
    discovery = DiscoveryOptions(root=found.root, exclude=found.get("exclude"),
                                 extend_exclude=found.get("extend-exclude", ()),
                                 respect_gitignore=found.get("respect-gitignore", True))
    return Options(paths=paths, entries=list(args.entry or ()), real=args.real,
                   profile=_canonical(args.profile or found.get("profile", DEFAULT_PROFILE)), timeout=args.timeout,
                   jobs=args.jobs or cpus, preload=args.preload, discovery=discovery, cache_dir=cache_dir,
                   analysis_jobs=cpus, config_entries=(found.get("confirm") or {}).get("entries", []),
                   config_root=found.root if found.path is not None else None)


def run(args: argparse.Namespace) -> int:
    """Run ``confirm`` for parsed arguments; the exit status."""
    from .report import text, to_json
    from .session import ConfirmError, confirm

    try:
        options = options_from(args)
        result = confirm(options)
    except (ConfirmError, config.ConfigError) as error:
        print(f"devicelint: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    output = to_json(result) if args.output_format == "json" else text(result)
    if args.output_file:
        try:
            directory = os.path.dirname(os.path.abspath(args.output_file))
            os.makedirs(directory, exist_ok=True)
            with open(args.output_file, "w", encoding="utf-8") as handle:
                handle.write(output)
        except OSError as error:
            print(f"devicelint: error: cannot write {args.output_file}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.write(output)
        sys.stdout.flush()
    return EXIT_OK if result.ok else EXIT_PROBLEMS
