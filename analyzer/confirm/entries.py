"""A project's entry points, and the entries ``confirm`` is told to run.

A *project* is a directory with ``pyproject.toml``, ``setup.py`` or ``setup.cfg`` given as a PATH (or a
configuration that names entries). Its entry points are found (``[project.scripts]``, packages with
``__main__.py``, files with ``if __name__ == "__main__":``) but only listed: scripts have side effects
(they train, write checkpoints, download), so confirm runs only the entries named in
``[tool.devicelint.confirm] entries`` or with ``--entry``. An entry is ``FIRST ARGS...`` (shell words):
FIRST is a ``[project.scripts]`` name, a file, a directory with ``__main__.py``, or a module run as
``python -m``; ARGS are the program's command-line arguments.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..frontend import module_name
from .programs import Program, ProgramError, _directory_program, display

PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_SCRIPT = re.compile(r"\s*([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_][\w.]*)\s*(\[.*\])?\s*")


@dataclass
class Project:
    root: str  # absolute
    scripts: dict[str, str] = field(default_factory=dict)  # [project.scripts]: name -> "module:function"

    @property
    def import_roots(self) -> list[str]:
        """Where its packages import from: the root, and ``src/`` in a src layout."""
        src = os.path.join(self.root, "src")
        return [self.root, *([src] if os.path.isdir(src) else [])]


def is_project(directory: str) -> bool:
    return os.path.isdir(directory) and any(os.path.isfile(os.path.join(directory, f)) for f in PROJECT_FILES)


def load_project(root: str) -> Project:
    """The project at ``root`` with its ``[project.scripts]`` (a bad pyproject.toml is a usage error)."""
    import tomllib

    root = os.path.abspath(root)
    project = Project(root)
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return project
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ProgramError(f"{display(path)}: cannot read it: {error}") from None
    scripts = document.get("project", {}).get("scripts", {}) if isinstance(document.get("project"), dict) else {}
    if isinstance(scripts, dict):
        project.scripts = {str(k): str(v) for k, v in scripts.items() if _SCRIPT.fullmatch(str(v))}
    return project


def _has_main_guard(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [node.test.left, *node.test.comparators]
            if any(isinstance(n, ast.Name) and n.id == "__name__" for n in names) and \
                    any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names):
                return True
    return False


def entry_points(project: Project, analyzed: Iterable[str]) -> list[tuple[str, frozenset[str]]]:
    """Each entry point of the project (scripts, then files in path order): how ``entries`` would name
    it, and every target that runs it (its name, its file or directory, its module)."""
    found: list[tuple[str, frozenset[str]]] = [(name, frozenset({name, target}))
                                               for name, target in sorted(project.scripts.items())]
    files = sorted(f for f in analyzed if f.startswith(project.root + os.sep))
    for path in files:
        directory, name = os.path.split(path)
        in_package = os.path.isfile(os.path.join(directory, "__init__.py"))
        if name == "__main__.py":
            if in_package:
                module = module_name(os.path.join(directory, "__init__.py"))[0]
                found.append((module, frozenset({module, directory})))
            else:
                found.append((_relative(directory, project), frozenset({directory})))
        elif _has_main_guard(path):
            if in_package:
                module = module_name(path)[0]
                found.append((module, frozenset({module, path})))
            else:
                found.append((_relative(path, project), frozenset({path})))
    return found


def _relative(path: str, project: Project) -> str:
    return os.path.relpath(path, project.root)


def words(entry: str, label: str = "entry") -> list[str]:
    try:
        split = shlex.split(entry)
    except ValueError as error:
        raise ProgramError(f"{label} {entry}: {error}") from None
    if not split:
        raise ProgramError(f"{label}: empty (want a script, file, directory or module, then its arguments)")
    return split


def _importable(name: str) -> bool:
    """An installed module of that top-level name exists (found, not imported: nothing runs)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def _module_files(name: str, roots: Sequence[str], analyzed: set[str]) -> list[str]:
    """The analysed files of module ``name``: its top package's files, or the module file."""
    parts = name.split(".")
    for root in roots:
        top = os.path.join(root, parts[0])
        if os.path.isdir(top):
            prefix = top + os.sep
            return sorted(f for f in analyzed if f.startswith(prefix))
        single = os.path.join(root, *parts) + ".py"
        if single in analyzed:
            return [single]
    return []


def resolve(entry: str, analyzed: Iterable[str], base: str, roots: Sequence[str],
            scripts: Mapping[str, str], label: str = "--entry") -> Program:
    """The program an entry names; ``base``: where relative paths start; ``roots``: where modules import
    from; ``label``: where the entry was given (for errors)."""
    analyzed_set = {os.path.abspath(f) for f in analyzed}
    first, *args = words(entry, label)
    path = os.path.abspath(os.path.join(base, first))
    if os.path.isfile(path):
        program = Program(display(path), "path", path, os.path.dirname(path), [path])
    elif os.path.isdir(path):
        found = _directory_program(path, analyzed_set)
        if found is None:
            raise ProgramError(f"{label} {entry}: a directory without __main__.py (or a package main.py)")
        program = found
    elif first in scripts:
        target = _SCRIPT.fullmatch(scripts[first])
        assert target is not None  # load_project kept only well-formed ones
        module = target.group(1)
        program = Program(first, "call", f"{module}:{target.group(2)}", os.getcwd(),
                          _module_files(module, roots, analyzed_set))
    elif _MODULE.fullmatch(first):
        files = _module_files(first, [*roots, os.getcwd()], analyzed_set)
        if not files and not _importable(first):
            raise ProgramError(f"{label} {entry}: no such script, file, directory or module ({first})")
        program = Program(first, "module", first, os.getcwd(), files)
    else:
        raise ProgramError(f"{label} {entry}: no such script, file or directory, and not a module name")
    program.args = args
    if args:
        program.name = " ".join([program.name, *(shlex.quote(a) for a in args)])
    return program
