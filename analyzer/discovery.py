"""Finding the files to analyse: excludes (ruff's glob semantics), ``.gitignore`` and ``--force-exclude``.

* **exclude / extend-exclude** follow ruff: a pattern is a glob (globset syntax,
  where ``*`` also crosses ``/``); a pattern without ``/`` matches a file or
  directory name at any depth; every pattern, made absolute against the project
  root (taken literally), also matches the absolute path. ``**`` as a whole
  component matches zero or more directories; a pattern that does not compile
  (``[z-a]``, an unclosed ``[`` or ``{``) is a :class:`GlobError` (a
  configuration error, exit 2). The default list is ruff's, plus
  ``__pycache__`` and ``.devicelint_cache``. Excluded directories are not entered.
* **respect-gitignore** (default on): ``.gitignore`` files from the repository's
  root down to each directory, ``.git/info/exclude`` and the global excludes
  file (``core.excludesFile``, or ``$XDG_CONFIG_HOME/git/ignore``) apply inside a
  git work tree; ``.ignore`` files apply everywhere (as in ruff, which reads both).
  The matcher is native (no ``git`` process): it handles negation, directory-only
  patterns, anchoring, ``*``, ``?``, ``[...]`` and ``**`` as git does, and the
  tests compare it with ``git check-ignore`` on a set of patterns.
* Only regular files are returned (a symbolic link only when it leads to one):
  FIFOs, devices, sockets and broken links named ``*.py`` are reported as skipped.
  Python files are ``.py``, ``.pyi`` and notebooks (``.ipynb``, read cell by cell).
* Paths given explicitly are always analysed, unless **force-exclude** is on:
  then the exclude patterns apply to them and to their directories under the
  project root too (what pre-commit needs, since it passes files one by one).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks are analysed cell by cell (analyzer.notebook)

# ruff's default `exclude`, plus what only devicelint creates or never wants
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    "__pycache__", ".devicelint_cache",
)


class PathError(Exception):
    """A path given on the command line that does not exist."""


# --------------------------------------------------------------------------- globs (globset semantics)


class GlobError(ValueError):
    """A glob that cannot be compiled (an inverted range like ``[z-a]``): a configuration error."""


def check_glob(pattern: str) -> str:
    """``pattern`` when it compiles, else :class:`GlobError` naming it and why."""
    glob_regex(pattern)
    return pattern


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a globset pattern (``literal_separator`` off: ``*`` matches ``/`` too).

    ``**`` as a whole path component matches zero or more directories (``**/a.py`` matches
    ``a.py``, ``x/**/a.py`` matches ``x/a.py``, ``x/**`` everything under ``x``), as in globset."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            start = i
            while i + 1 < n and pattern[i + 1] == "*":
                i += 1
            whole = i > start and (start == 0 or pattern[start - 1] == "/")
            if whole and i + 1 < n and pattern[i + 1] == "/":
                out.append("(?:.*/)?")  # "**/": zero or more directories
                i += 2
                continue
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            end, cls = _char_class(pattern, i, slash=True)
            if end < 0:
                raise GlobError(f"invalid glob {pattern!r}: unclosed character class `[`")
            out.append(cls)
            i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0 or "{" in pattern[i + 1:end]:
                raise GlobError(f"invalid glob {pattern!r}: unclosed or nested alternation `{{`")
            else:
                alternatives = pattern[i + 1:end].split(",")
                out.append("(?:" + "|".join(_glob_body(a) for a in alternatives) + ")")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile(_wrap("".join(out)))
    except re.error as error:
        raise GlobError(f"invalid glob {pattern!r}: {error.msg}") from None


_GLOB_SYNTAX = frozenset("*?[{\\")  # characters that make a pattern more than a literal name


def _wrap(body: str) -> str:
    return "(?s:" + body + r")\Z"


def _glob_body(pattern: str) -> str:
    return glob_regex(pattern).pattern[len("(?s:"):-len(r")\Z")]


def _char_class(pattern: str, start: int, slash: bool) -> tuple[int, str]:
    """``[...]`` starting at ``start``: (index of its ``]``, regex class), or (-1, "") when unterminated."""
    i = start + 1
    negate = False
    if i < len(pattern) and pattern[i] in "!^":
        negate = True
        i += 1
    body: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            cls = "".join(body)
            if not slash:  # gitignore: a class never matches '/'
                cls += "/" if negate else ""
            return i, f"[{'^' if negate else ''}{cls}]"
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            body.append(re.escape(pattern[i]))
        elif c == "-" and body and i + 1 < len(pattern) and pattern[i + 1] != "]":
            body.append("-")
        else:
            body.append(re.escape(c) if c != "-" else r"\-")
        first = False
        i += 1
    return -1, ""


def normalize_to(pattern: str, root: str) -> str:
    """``pattern`` made absolute against ``root`` and normalised lexically (ruff's ``normalize_path_to``)."""
    path = os.path.expanduser(pattern)
    if not os.path.isabs(path):  # the root is a literal path: its "[" or "*" are no glob syntax
        path = os.path.join(escape_glob(root), path)
    normalized = os.path.normpath(path)
    if pattern.endswith(("/", os.sep)) and not normalized.endswith(os.sep):
        normalized += os.sep  # keep a trailing separator: "build/" only matches what is under build
    return normalized


def escape_glob(path: str) -> str:
    """``path`` with its glob syntax escaped (matched literally)."""
    return re.sub(r"([*?\[\]{}\\])", r"\\\1", path)


@dataclass(frozen=True)
class FilePattern:
    """One exclude pattern: matched against a name (when it has no ``/``) and against the absolute path."""

    pattern: str
    absolute: str
    basename_only: bool = False  # the built-in defaults match names only

    @classmethod
    def user(cls, pattern: str, root: str) -> FilePattern:
        return cls(pattern, normalize_to(pattern, root))

    @classmethod
    def builtin(cls, pattern: str) -> FilePattern:
        return cls(pattern, "", basename_only=True)

    @property
    def matches_names(self) -> bool:
        return "/" not in self.pattern and os.sep not in self.pattern

    def matches(self, path: str, name: str) -> bool:
        return PatternSet((self,)).matches(path, name)


class PatternSet:
    """Exclude patterns compiled into two regexes: one for names, one for absolute paths."""

    def __init__(self, patterns: tuple[FilePattern, ...]) -> None:
        self.patterns = patterns
        names = [p.pattern for p in patterns if p.matches_names]
        # a name without glob syntax (every default: ".git", "build", ...) is a set lookup, not a regex to build
        self._literal_names = frozenset(n for n in names if not _GLOB_SYNTAX.intersection(n))
        globs = [_glob_body(n) for n in names if n not in self._literal_names]
        paths = [_glob_body(p.absolute.rstrip(os.sep) if len(p.absolute) > 1 else p.absolute)
                 for p in patterns if not p.basename_only]
        self._names = re.compile(_wrap("|".join(f"(?:{b})" for b in globs))) if globs else None
        self._paths = re.compile(_wrap("|".join(f"(?:{b})" for b in paths))) if paths else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, path: str, name: str) -> bool:
        return bool(name in self._literal_names or (self._names is not None and self._names.match(name))
                    or (self._paths is not None and self._paths.match(path)))


# --------------------------------------------------------------------------- gitignore


@dataclass(frozen=True)
class IgnoreRule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the path relative to the file's directory; else against the name


@functools.lru_cache(maxsize=65536)
def gitignore_rule(line: str) -> IgnoreRule | None:
    """One line of a gitignore file, or ``None`` for blanks and comments."""
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    # trailing spaces are dropped unless escaped
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line:
        return None
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):  # "\!" and "\#" start with a literal "!" or "#"
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
    return IgnoreRule(re.compile(_gitignore_regex(line) + r"\Z", re.S), negated, dir_only, anchored)


def _gitignore_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before = i == 0 or pattern[i - 1] == "/"
                after_index = i + 2
                after = after_index == n or pattern[after_index] == "/"
                if before and after:
                    if after_index == n:  # trailing "/**" (or the whole pattern "**"): everything inside
                        out.append(".*")
                        i = after_index
                        continue
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    i = after_index + 1
                    continue
                out.append("[^/]*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end, cls = _char_class(pattern, i, slash=False)
            if end < 0:
                out.append(re.escape(c))
            else:
                out.append(f"(?!/){cls}")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class IgnoreFile:
    base: str  # the directory the patterns are relative to
    rules: tuple[IgnoreRule, ...]

    def decide(self, path: str, name: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included (``!``), None: no rule matches. The last matching rule wins."""
        relative: str | None = None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.anchored:
                if relative is None:
                    prefix = self.base.rstrip(os.sep) + os.sep
                    if not path.startswith(prefix):
                        return None
                    relative = path[len(prefix):].replace(os.sep, "/")
                subject = relative
            else:
                subject = name
            if rule.regex.match(subject):
                return not rule.negated
        return None


@functools.lru_cache(maxsize=4096)
def _read_ignore_file(path: str, base: str) -> IgnoreFile | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    rules = tuple(r for r in (gitignore_rule(line) for line in lines) if r is not None)
    return IgnoreFile(base, rules) if rules else None


def clear_caches() -> None:
    """Forget ignore files read so far (long-lived processes, tests)."""
    _read_ignore_file.cache_clear()
    git_root.cache_clear()
    _global_excludes_file.cache_clear()


@functools.lru_cache(maxsize=1024)
def git_root(directory: str) -> str | None:
    """The work tree root above ``directory`` (a ``.git`` directory or file), or None."""
    current = directory
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@functools.lru_cache(maxsize=1)
def _global_excludes_file() -> str | None:
    """``core.excludesFile`` from the user's git configuration, else git's default location."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for config in (os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")):
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
            elif section == "core" and "=" in line:
                key, _, value = line.partition("=")
                if key.strip().lower() == "excludesfile":
                    value = value.strip().strip('"')
                    return os.path.expanduser(value) if value else None
    return os.path.join(xdg, "git", "ignore")


def _git_dir(root: str) -> str | None:
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:  # a worktree or submodule: "gitdir: <path>"
        with open(dot_git, encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    if text.startswith("gitdir:"):
        path = text[len("gitdir:"):].strip()
        return path if os.path.isabs(path) else os.path.normpath(os.path.join(root, path))
    return None


class IgnoreStack:
    """The ignore files that apply inside one directory, lowest precedence first."""

    def __init__(self, files: tuple[IgnoreFile, ...] = ()) -> None:
        self.files = files

    @classmethod
    def for_directory(cls, directory: str) -> IgnoreStack:
        """Everything that applies to ``directory``'s entries: global, info/exclude, then each level's files."""
        directory = os.path.abspath(directory)
        root = git_root(directory)
        files: list[IgnoreFile] = []
        if root is not None:
            global_file = _global_excludes_file()
            if global_file:
                loaded = _read_ignore_file(global_file, root)
                if loaded:
                    files.append(loaded)
            git_dir = _git_dir(root)
            if git_dir:
                loaded = _read_ignore_file(os.path.join(git_dir, "info", "exclude"), root)
                if loaded:
                    files.append(loaded)
        # .gitignore from the work tree's root down (outside a work tree: none); .ignore from the top down
        levels: list[str] = []
        current = directory
        while True:
            levels.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for level in reversed(levels):
            files.extend(cls._level_files(level, inside_git=root is not None and _is_under(level, root)))
        return cls(tuple(files))

    @staticmethod
    def _level_files(directory: str, inside_git: bool) -> list[IgnoreFile]:
        found = []
        names = (".gitignore", ".ignore") if inside_git else (".ignore",)
        for name in names:  # .ignore after .gitignore: it takes precedence (ripgrep's and ruff's order)
            loaded = _read_ignore_file(os.path.join(directory, name), directory)
            if loaded:
                found.append(loaded)
        return found

    def child(self, directory: str, names: Iterable[str]) -> IgnoreStack:
        """The stack for a subdirectory (its own ignore files on top), given the names it contains."""
        names = set(names)
        if ".gitignore" not in names and ".ignore" not in names:
            return self
        inside_git = git_root(directory) is not None
        extra = self._level_files(directory, inside_git)
        return IgnoreStack(self.files + tuple(extra)) if extra else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        name = os.path.basename(path)
        for ignore_file in reversed(self.files):
            decision = ignore_file.decide(path, name, is_dir)
            if decision is not None:
                return decision
        return False


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True)
class DiscoveryOptions:
    """What decides which files are analysed (``exclude`` None: the defaults)."""

    root: str | None = None  # the project root: relative patterns start there (None: the working directory)
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    # patterns given on the command line are relative to the working directory, not to the project root
    cli_exclude: tuple[str, ...] | None = None
    cli_extend_exclude: tuple[str, ...] = ()
    # the configuration's `roots` (absolute directories): each a project of its own (analyzer.projects)
    roots: tuple[str, ...] = ()

    def validate(self) -> None:
        """Every pattern compiles (:class:`GlobError` naming its key and the pattern otherwise)."""
        for key, patterns in (("exclude", self.exclude), ("extend-exclude", self.extend_exclude),
                              ("--exclude", self.cli_exclude), ("--extend-exclude", self.cli_extend_exclude)):
            for pattern in patterns or ():
                try:
                    check_glob(pattern)
                except GlobError as error:
                    raise GlobError(f"`{key}`: {error}") from None
        self.patterns()  # the combined regexes (and the patterns made absolute) compile too

    def patterns(self) -> PatternSet:
        root = os.path.abspath(self.root or os.getcwd())
        cwd = os.getcwd()
        if self.cli_exclude is not None:
            base = tuple(FilePattern.user(p, cwd) for p in self.cli_exclude)
        elif self.exclude is not None:
            base = tuple(FilePattern.user(p, root) for p in self.exclude)
        else:
            base = tuple(FilePattern.builtin(p) for p in DEFAULT_EXCLUDE)
        return PatternSet(base + tuple(FilePattern.user(p, root) for p in self.extend_exclude)
                          + tuple(FilePattern.user(p, cwd) for p in self.cli_extend_exclude))


def is_force_excluded(path: str, options: DiscoveryOptions, patterns: PatternSet | None = None) -> bool:
    """``--force-exclude`` for a path given explicitly: the path or one of its directories (under the
    project root, or all of them when the path is outside it) matches an exclude pattern."""
    patterns = options.patterns() if patterns is None else patterns
    absolute = os.path.abspath(path)
    root = os.path.abspath(options.root or os.getcwd())
    if absolute == root:
        return False
    current = absolute
    while True:
        if patterns.matches(current, os.path.basename(current)):
            return True
        parent = os.path.dirname(current)
        if parent in (current, root) or (_is_under(absolute, root) and not _is_under(parent, root)):
            return False
        current = parent


NOT_REGULAR = "not a regular file (a FIFO, device, socket, or a link to one): skipped"


def discover(paths: list[str], options: DiscoveryOptions | None = None,
             skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Python files under ``paths`` (files as given, directories recursively), unique, in a stable order.

    Only regular files (symbolic links followed to regular files only): a FIFO would block the run, a
    device never end. Those are left out, with (path, why) appended to ``skipped``."""
    options = options or DiscoveryOptions()
    patterns = options.patterns()
    notes: list[tuple[str, str]] = [] if skipped is None else skipped
    found: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isfile(path):
            if options.force_exclude and is_force_excluded(path, options, patterns):
                continue
            candidates: Iterable[str] = [path]
        elif os.path.isdir(path):
            if options.force_exclude and is_force_excluded(path, options, patterns):
                continue
            candidates = _walk(path, patterns, options.respect_gitignore, notes)
        elif os.path.exists(path):
            notes.append((path, NOT_REGULAR))
            continue
        else:
            raise PathError(path)
        for candidate in candidates:
            key = os.path.abspath(candidate)
            if key not in seen:
                seen.add(key)
                found.append(os.path.normpath(candidate))
    return found


def _walk(top: str, patterns: PatternSet, gitignore: bool, notes: list[tuple[str, str]]) -> Iterator[str]:
    stack0 = IgnoreStack.for_directory(top) if gitignore else IgnoreStack()
    pending: list[tuple[str, IgnoreStack]] = [(top, stack0)]
    while pending:
        directory, ignores = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        absolute_directory = os.path.abspath(directory)
        if gitignore and directory != top:
            ignores = ignores.child(absolute_directory, (e.name for e in entries))
        subdirs: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows symlinks, like ruff's walker for explicit roots
                if is_dir and entry.is_symlink():
                    continue  # never follow directory links (cycles)
            except OSError:
                continue
            absolute = os.path.join(absolute_directory, entry.name)
            if patterns.matches(absolute, entry.name):
                continue
            if is_dir:
                if gitignore and ignores.files and ignores.ignored(absolute, True):
                    continue
                subdirs.append(entry.path)
            elif entry.name.endswith(PYTHON_SUFFIXES):
                if gitignore and ignores.files and ignores.ignored(absolute, False):
                    continue
                try:
                    regular = entry.is_file()  # follows a link; the type from the directory entry otherwise
                except OSError:
                    regular = False
                if not regular:
                    broken = entry.is_symlink() and not os.path.exists(entry.path)
                    notes.append((entry.path, "a broken symbolic link: skipped" if broken else NOT_REGULAR))
                    continue
                yield entry.path
        # depth-first, in name order: files of a directory before those of its subdirectories
        pending.extend((d, ignores) for d in reversed(subdirs))


def upwards(start: str) -> Iterator[str]:
    """``start`` (a directory, or a file's directory) and each directory above it, up to the root."""
    current = os.path.abspath(start)
    if not os.path.isdir(current):
        current = os.path.dirname(current)
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent
