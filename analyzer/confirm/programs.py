"""Which programs ``devicelint confirm`` runs, and the per-program settings their headers give.

A *program* is what ``python`` would run:

* a ``.py`` file given on the command line or found in a plain directory: ``python FILE``;
* a directory with a ``__main__.py``: ``python -m PKG`` when it is a package (it has an
  ``__init__.py``; ``PKG`` is its dotted name), else ``python DIR``;
* a package without ``__main__.py`` that has a ``main.py``: ``python -m PKG.main``;
* an entry (``--entry``, or ``entries`` in ``[tool.devicelint.confirm]``): see :mod:`.entries`, which
  also decides when a PATH is a project (whose scripts are listed, never run unnamed).

Directories are searched recursively; the modules of a package without an entry point are
library code (analysed, run only through the programs that import them). Each program is
run under the runtime its files use (:func:`runtime_of`): ``runtime_shim`` when one of them
mentions ``runtime_shim``; else the PyTorch observer (``runtime_shim.torch_observer``) when one
of them imports ``torch``; else it is not run (:func:`analyzer.confirm.session.collect`):
confirming a script that touches neither proves nothing.

Headers (``# fixture: profile=burn-0.21 mode=real backends=Flex,NdArray``, in a comment of
any of the program's files) override the run's profile, mode and target backends.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shlex
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runtime_shim.profiles import PROFILE_ALIASES, PROFILE_NAMES

from ..frontend import SHIM, module_name
from ..settings import SettingsError, parse_backends

_HEADER = re.compile(r"#\s*fixture\s*:\s*(.*)")
HEADER_KEYS = ("profile", "mode", "backends")
MODES = ("virtual", "real")
#: What a program runs under: the Burn runtime (``runtime_shim``), or PyTorch under the torch observer.
SHIM_RUNTIME, TORCH_RUNTIME = "runtime_shim", "torch"


class ProgramError(ValueError):
    """A program that cannot be set up (bad header, missing entry): a usage error."""


@dataclass
class Program:
    """One program to run: ``kind`` is ``"path"`` (a file or a directory) or ``"module"`` (``-m``)."""

    name: str  # how reports name it (a path relative to the working directory, or the module)
    kind: str
    target: str  # absolute path, or dotted module name
    path0: str  # sys.path[0], as python sets it for this kind of run
    files: list[str] = field(default_factory=list)  # absolute paths of the program's own files
    profile: str | None = None  # header overrides (None: the run's setting)
    mode: str | None = None
    backends: frozenset[str] | None = None
    header_backends: bool = False  # the header set backends (possibly to None: never)
    runtime: str = SHIM_RUNTIME  # SHIM_RUNTIME or TORCH_RUNTIME (see runtime_of)
    args: list[str] = field(default_factory=list)  # its command-line arguments (an entry's words after the first)
    paths: list[str] = field(default_factory=list)  # put on sys.path after path0: the project root

    @property
    def entry_file(self) -> str | None:
        """The file that declarations (``# expect-failure:``) are read from."""
        if self.kind == "path":
            return os.path.join(self.target, "__main__.py") if os.path.isdir(self.target) else self.target
        if self.kind == "call":  # the console script's module
            tail = os.sep + os.path.join(*self.target.partition(":")[0].split("."))
            return next((f for f in self.files if f.endswith((tail + ".py", tail + os.sep + "__init__.py"))), None)
        return next((f for f in self.files if f.endswith(("__main__.py", "main.py"))), None)

    def command(self) -> str:
        """The equivalent command line (for reports)."""
        if self.kind == "call":  # the script's name (``name`` also shows the arguments)
            base = self.name.split(" ", 1)[0]
        else:
            base = f"python -m {self.target}" if self.kind == "module" else f"python {display(self.target)}"
        return " ".join([base, *(shlex.quote(a) for a in self.args)])


def imports_torch(data: bytes) -> bool:
    """The source imports ``torch`` (``import torch``, ``import torch.nn as nn``, ``from torch import
    nn``, anywhere in the file). Read from the syntax tree: a comment or string naming torch is not an
    import. An unparsable file imports nothing (it is reported as bad input anyway)."""
    if b"torch" not in data:
        return False
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "torch":
            return True
    return False


def runtime_of(program: Program, sources: Mapping[str, bytes]) -> str | None:
    """What ``program`` runs under: :data:`SHIM_RUNTIME` when one of its files mentions
    ``runtime_shim`` (a Burn program; it may import torch too), else :data:`TORCH_RUNTIME` when one
    of them imports ``torch`` (a PyTorch program, for the torch observer), else ``None`` (nothing to
    confirm: not run). ``sources``: file (as in ``program.files``) -> its bytes. A ``-m`` entry
    whose files were not found runs under runtime_shim (its module decides what it records)."""
    if program.kind == "module" and not program.files:
        return SHIM_RUNTIME
    data = [sources[f] for f in program.files if f in sources]
    if any(SHIM in d for d in data):
        return SHIM_RUNTIME
    if any(imports_torch(d) for d in data):
        return TORCH_RUNTIME
    return None


def display(path: str) -> str:
    """``path`` relative to the working directory when below it."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute == cwd or absolute.startswith(cwd + os.sep):
        return os.path.relpath(absolute, cwd)
    return absolute


def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def _module_of_package(directory: str) -> tuple[str, str]:
    """(dotted name, sys.path root) of the package ``directory``."""
    name, _ = module_name(os.path.join(directory, "__init__.py"))
    root = os.path.abspath(directory)
    for _ in name.split("."):
        root = os.path.dirname(root)
    return name, root


def _files_under(directory: str, analyzed: set[str]) -> list[str]:
    prefix = os.path.abspath(directory) + os.sep
    return sorted(f for f in analyzed if f.startswith(prefix))


def _directory_program(directory: str, analyzed: set[str]) -> Program | None:
    directory = os.path.abspath(directory)
    files = _files_under(directory, analyzed)
    if os.path.isfile(os.path.join(directory, "__main__.py")):
        if _is_package(directory):
            name, root = _module_of_package(directory)
            return Program(display(directory), "module", name, root, files)
        return Program(display(directory), "path", directory, directory, files)
    if _is_package(directory) and os.path.isfile(os.path.join(directory, "main.py")):
        name, root = _module_of_package(directory)
        return Program(display(directory), "module", name + ".main", root, files)
    return None


def _search(directory: str, analyzed: set[str], out: list[Program]) -> None:
    """Programs under a directory that is not itself a program."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = os.path.abspath(entry.path)
        if entry.is_dir() and not entry.name.startswith(".") and entry.name != "__pycache__":
            program = _directory_program(path, analyzed)
            if program is not None:
                out.append(program)
            elif not _is_package(path):  # a package without an entry point is library code
                _search(path, analyzed, out)
        elif entry.is_file() and entry.name.endswith(".py") and path in analyzed and not _is_package(directory):
            out.append(Program(display(path), "path", path, os.path.dirname(path), [path]))


def find_programs(paths: Sequence[str], analyzed: Iterable[str]) -> list[Program]:
    """The programs among ``paths``; ``analysed``: the files the analysis discovered (absolute)."""
    analyzed_set = {os.path.abspath(f) for f in analyzed}
    found: list[Program] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            if path in analyzed_set:
                found.append(Program(display(path), "path", path, os.path.dirname(path), [path]))
        elif os.path.isdir(path):
            program = _directory_program(path, analyzed_set)
            if program is not None:
                found.append(program)
            else:
                _search(path, analyzed_set, found)
    return _unique(found)


def _unique(programs: list[Program]) -> list[Program]:
    seen: set[tuple[str, str]] = set()
    out = []
    for program in programs:
        key = (program.kind, program.target)
        if key not in seen:
            seen.add(key)
            out.append(program)
    return out


# --- headers -----------------------------------------------------------------------------------


def _comments(text: str) -> list[str]:
    try:
        return [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):  # unparsable: the analyzer reports it (MV901)
        return []


def read_header(path: str) -> dict[str, str]:
    """The ``# fixture: key=value ...`` settings of one file (later lines win)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (OSError, SyntaxError, LookupError, UnicodeDecodeError):
        return {}
    settings: dict[str, str] = {}
    for comment in _comments(text):
        match = _HEADER.match(comment)
        if match is None:
            continue
        for item in match.group(1).split():
            key, sep, value = item.partition("=")
            if not sep or key.strip() not in HEADER_KEYS:
                raise ProgramError(f"{display(path)}: bad header setting {item!r} "
                                   f"(want {', '.join(k + '=...' for k in HEADER_KEYS)})")
            settings[key.strip()] = value.strip()
    return settings


def apply_headers(program: Program) -> None:
    """Set the program's overrides from the headers of its files (validated)."""
    for path in program.files:
        header = read_header(path)
        where = display(path)
        if "profile" in header:
            header["profile"] = PROFILE_ALIASES.get(header["profile"], header["profile"])
            if header["profile"] not in PROFILE_NAMES:
                raise ProgramError(f"{where}: unknown profile {header['profile']!r}; known: {', '.join(PROFILE_NAMES)}")
            program.profile = header["profile"]
        if "mode" in header:
            if header["mode"] not in MODES:
                raise ProgramError(f"{where}: unknown mode {header['mode']!r}; known: {', '.join(MODES)}")
            program.mode = header["mode"]
        if "backends" in header:
            try:
                program.backends = parse_backends(header["backends"])
            except SettingsError as error:
                raise ProgramError(f"{where}: {error}") from None
            program.header_backends = True
