"""Front end: find files (:mod:`analyzer.discovery`), skip the irrelevant ones cheaply, decode (PEP 263) and parse.

A file is *relevant* when its bytes mention ``runtime_shim`` or the name of a
project module that is relevant itself (a fixpoint over the project): the
check is a substring search on the raw bytes, before any decoding or parsing.
Relevant files are decoded with the encoding ``tokenize.detect_encoding``
finds and parsed with CPython's ``ast``; a file that cannot be decoded or
parsed becomes a :class:`~analyzer.facts.FileFailure` (reported as MV901),
never an exception.
"""

from __future__ import annotations

import ast
import io
import os
import re
import stat
import tokenize
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import discovery
from .discovery import DEFAULT_EXCLUDE, DiscoveryOptions, PathError
from .failures import FileFailure
from .notebook import CellMap, NotebookError, is_notebook, to_program

__all__ = ["PathError", "SourceFile", "Skipped", "discover", "load", "module_name", "parse", "read_regular", "relevant"]

SHIM = b"runtime_shim"
TORCH = b"torch"
#: a script that uses transformers' models and tokenizers runs torch code without naming torch
TORCH_LIBRARIES = (TORCH, b"transformers")
SKIP_DIRS = frozenset(DEFAULT_EXCLUDE)  # the default excludes (see analyzer.discovery)


@dataclass
class SourceFile:
    """One file of the project; ``tree`` is set once it is parsed."""

    path: str  # as given / discovered (used in diagnostics)
    module: str  # dotted module name from the package structure
    is_package: bool  # an ``__init__.py``
    data: bytes
    # the decoded text as kept (see ``text``): None before decoding, or once forgotten (``forget_text``)
    decoded: str | None = field(default=None, repr=False)
    tree: ast.Module | None = None
    utf8: bool = False  # ``text`` is ``data`` decoded as UTF-8 without a BOM: ast's byte columns index ``data``
    # the decoded lines, split from ``text`` on first use (see ``lines``)
    split_lines: list[str] | None = field(default=None, repr=False)
    failure: FileFailure | None = None  # set when the file cannot even be read
    cells: CellMap | None = None  # a notebook: where each code cell is in ``data`` (its joined code cells)
    # the demand sweep's scan of it as plain data (analyzer.engine.scan_summary): from the cache, or built by a run
    scan: dict[str, Any] | None = None
    # what that scan found per function (position -> whether it mentions a device source, the nodes it may store
    # through), kept when the bodies are parsed lazily (analyzer.lazy_bodies): its functions are not walked again
    function_scans: dict[str, tuple[bool, list[Any]]] | None = field(default=None, repr=False)
    # the semantic digest (analyzer.incremental), taken before the bodies were made lazy
    semantic: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str | None:
        """The decoded text (None until the file is decoded). Decoded again from ``data`` on each read once
        forgotten (:meth:`forget_text`): a large library's texts, kept while the engine runs, would cost more
        than twice their bytes (a file with one emoji is four bytes a character)."""
        if self.decoded is None and self.utf8:
            return self.data.decode("utf-8")
        return self.decoded

    @text.setter
    def text(self, text: str | None) -> None:
        self.decoded = text

    @property
    def has_text(self) -> bool:
        """Whether the file is decoded (``text`` is not None)."""
        return self.decoded is not None or self.utf8

    def mentions(self, needle: str) -> bool:
        """Whether the decoded text holds ``needle``: searched in ``data`` for a UTF-8 file (the same answer,
        UTF-8 being self-synchronizing, without decoding a forgotten text)."""
        if self.utf8:
            return needle.encode("utf-8") in self.data
        return self.decoded is not None and needle in self.decoded

    def forget_text(self) -> None:
        """Stop keeping the decoded text where ``data`` gives it back (a UTF-8 file): read ``text`` seldom."""
        if self.utf8:
            self.decoded = None

    @property
    def lines(self) -> list[str]:
        """The decoded text's lines (empty until the file is decoded). Split on first use, not at parse time:
        most files of a large run get no diagnostic, and their lines would cost twice their bytes."""
        if self.split_lines is None:
            if self.text is None:
                return []
            self.split_lines = self.text.splitlines()
        return self.split_lines

    @lines.setter
    def lines(self, lines: list[str]) -> None:
        self.split_lines = lines

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        if self.is_package:
            return self.module
        return self.module.rpartition(".")[0]


def discover(paths: list[str], options: DiscoveryOptions | None = None) -> list[str]:
    """Python files under ``paths`` (files as given, directories recursively, without what the
    excludes and ``.gitignore`` leave out), unique, in a stable order: :func:`analyzer.discovery.discover`."""
    return discovery.discover(paths, options)


def module_name(path: str) -> tuple[str, bool]:
    """The dotted module name of ``path`` from its package structure (``__init__.py`` files above it)."""
    directory, filename = os.path.split(os.path.abspath(path))
    stem = filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = _package_parts(directory) + (() if is_package else (stem,))
    return ".".join(parts) or stem, is_package


@lru_cache(maxsize=4096)
def _package_parts(directory: str) -> tuple[str, ...]:
    """The package names from the outermost package down to ``directory`` (once per directory: a
    project's files share their directories)."""
    if not (os.path.isfile(os.path.join(directory, "__init__.py"))
            or os.path.isfile(os.path.join(directory, "__init__.pyi"))):
        return ()
    parent, package = os.path.split(directory)
    if not package:
        return ()
    return (*_package_parts(parent), package)


#: Files larger than this are skipped with a note (``max-file-size``): a generated or data file, never
#: hand-written code whose device moves matter, and reading it whole could exhaust memory.
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024


class Skipped(Exception):
    """A file left out of the analysis, with the reason (a note, not a finding)."""


def read_regular(path: str, max_size: int | None) -> bytes:
    """The bytes of a regular file of at most ``max_size`` bytes (None: no limit); :class:`Skipped` otherwise.

    Opened without blocking and checked on the open descriptor: a path that became a FIFO or a device
    after discovery cannot hang the run or fill the memory."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Skipped(discovery.NOT_REGULAR)
        if max_size is not None and info.st_size > max_size:
            raise Skipped(too_large(info.st_size, max_size))
        data = handle.read() if max_size is None else handle.read(max_size + 1)
    if max_size is not None and len(data) > max_size:  # it grew while being read
        raise Skipped(too_large(len(data), max_size))
    return data


def too_large(size: int, max_size: int) -> str:
    return f"{size} bytes, over `max-file-size` ({max_size} bytes): skipped"


def load(paths: list[str], stdin: tuple[str, bytes] | None = None, max_size: int | None = DEFAULT_MAX_FILE_SIZE,
         skipped: list[tuple[str, str]] | None = None) -> list[SourceFile]:
    """Read every file (bytes only); ``stdin`` is (filename, data) for ``check -``. Files that are not regular
    or are larger than ``max_size`` bytes (None: no limit) are left out, with (path, why) in ``skipped``."""
    _package_parts.cache_clear()  # per run: a long-lived process (the LSP server) sees new packages
    files = []
    for path in paths:
        try:
            data = read_regular(path, max_size)
        except Skipped as why:
            if skipped is not None:
                skipped.append((path, str(why)))
            continue
        except OSError as error:
            name, is_package = module_name(path)
            failure = FileFailure(path, 1, 0, f"cannot read file: {error.strerror or error}")
            files.append(SourceFile(path, name, is_package, b"", failure=failure))
            continue
        files.append(source_of(path, data))
    if stdin is not None:
        files.append(source_of(*stdin))
    return files


def source_of(path: str, data: bytes) -> SourceFile:
    """A file's source; a notebook's is its code cells joined (:mod:`analyzer.notebook`)."""
    name, is_package = module_name(path)
    if not is_notebook(path):
        return SourceFile(path, name, is_package, data)
    name += "-ipynb"  # no module can import a notebook: a name no import can spell (train.py keeps `train`)
    try:
        program, cells = to_program(data)
    except NotebookError as error:
        failure = FileFailure(path, 1, 0, f"cannot read notebook: {error}")
        return SourceFile(path, name, is_package, b"", failure=failure)
    return SourceFile(path, name, is_package, program, cells=cells)


_WORD = re.compile(rb"\w+")
# with the PyTorch rules, modules the analysed files name are analysed too, in projects up to this size (each
# remaining file's name is searched for in the analysed files' text; a larger library is nearly all torch anyway)
IMPORTED_CLOSURE_MAX_BYTES = 4_000_000


def relevant(files: list[SourceFile], torch: bool = False) -> list[SourceFile]:
    """Files that mention runtime_shim (or, with ``torch``, torch: the MV2xx rules' code), or (transitively)
    a project module that does."""
    markers = (SHIM, *TORCH_LIBRARIES) if torch else (SHIM,)
    chosen = [f for f in files if f.failure or any(m in f.data for m in markers)]
    picked_first = {id(f) for f in chosen}
    rest = [f for f in files if id(f) not in picked_first]
    names: set[bytes] = set()
    frontier = chosen
    words: dict[int, set[bytes]] = {}  # each remaining file's identifiers, found once (a module name is one)
    while frontier and rest:
        for f in frontier:
            names.update(part.encode() for part in f.module.split(".") if part and part != "__init__")
        for f in rest:
            if id(f) not in words:
                words[id(f)] = set(_WORD.findall(f.data))
        odd = [n for n in names if not n.isascii()]  # not one \w+ word of bytes: looked for as text
        frontier = [f for f in rest if not names.isdisjoint(words[id(f)]) or any(n in f.data for n in odd)]
        if frontier:
            picked = {id(f) for f in frontier}
            rest = [f for f in rest if id(f) not in picked]
            chosen.extend(frontier)
    if torch and rest and sum(len(f.data) for f in chosen) <= IMPORTED_CLOSURE_MAX_BYTES:
        chosen.extend(_imported_by(chosen, rest))
    order = {id(f): i for i, f in enumerate(files)}
    return sorted(chosen, key=lambda f: order[id(f)])


def _imported_by(chosen: list[SourceFile], rest: list[SourceFile]) -> list[SourceFile]:
    """The remaining files (transitively) named by the chosen ones: a helper that moves a model
    (``def place(model, device): model.to(device)``) or a configuration module that names the device
    (``device: str = "cuda"``) need not mention torch, and forgetting what they do is a false finding.
    A substring search per remaining file (there are few of them), not a scan of every word."""
    found: list[SourceFile] = []
    frontier = chosen
    while frontier and rest:
        hits = [f for f in rest if any(f.module.rpartition(".")[2].encode() in g.data for g in frontier)]
        picked = {id(f) for f in hits}
        rest = [f for f in rest if id(f) not in picked]
        found.extend(hits)
        frontier = hits
    return found


def parse(source: SourceFile) -> FileFailure | None:
    """Decode per PEP 263 and parse; the failure (MV901) instead of an exception. A file parsed already is
    left as it is (an editor parses a changed buffer once to find its imports, then analyses it)."""
    if source.failure is not None:
        return source.failure
    if source.tree is not None and source.has_text:
        return None
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(source.data).readline)
        text = source.data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        line = 1
        if isinstance(error, UnicodeDecodeError):
            line = source.data[: error.start].count(b"\n") + 1
        return FileFailure(source.path, line, 0, f"cannot decode file: {error}")
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are not our business
            tree = ast.parse(text, filename=source.path, type_comments=False)
    except SyntaxError as error:
        line = error.lineno or 1
        col = max((error.offset or 1) - 1, 0)
        return FileFailure(source.path, line, col, f"cannot parse file: {error.msg}")
    except (ValueError, MemoryError, RecursionError) as error:  # null bytes, absurd nesting
        return FileFailure(source.path, 1, 0, f"cannot parse file: {error}")
    source.text = text
    source.tree = tree
    source.utf8 = encoding == "utf-8"  # (``utf-8-sig`` when there is a BOM)
    source.split_lines = None  # (split again from the new text on first use)
    return None
