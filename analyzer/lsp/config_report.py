"""Errors in a project's configuration file, as the editor shows them: a diagnostic on the file itself.

The server checks what ``devicelint check`` would trip over later (every glob of
``exclude``, ``extend-exclude`` and the per-file ignores compiles), so a bad value is
reported when the project is set up, and the project's files are analysed with the
default settings meanwhile instead of failing one by one.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types

from .. import config, discovery
from ..settings import SettingsError
from .convert import SOURCE
from .positions import split_lines, to_units

_TOML_POSITION = re.compile(r"\bline (\d+), column (\d+)")
_QUOTED = re.compile(r"'([^'\n]+)'|`([^`\n]+)`")


def check_globs(found: config.Config) -> None:
    """SettingsError naming the key and the glob when one of the file's globs does not compile."""
    root = found.root
    for key in ("exclude", "extend-exclude"):
        for pattern in found.get(key) or ():
            _compile(key, pattern, lambda p=pattern: discovery.PatternSet((discovery.FilePattern.user(p, root),)))
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        for pattern in found.values.get(key, {}):
            bare = pattern[1:] if pattern.startswith("!") else pattern
            _compile(key, pattern, lambda p=bare: (discovery.glob_regex(p),
                                                   discovery.glob_regex(discovery.normalize_to(p, root))))


def _compile(key: str, pattern: str, build: object) -> None:
    try:
        build()  # type: ignore[operator]
    except Exception as error:  # noqa: BLE001 - whatever the glob compiler raises, the glob is the problem
        reason = getattr(error, "msg", None) or str(error)
        raise SettingsError(f"`{key}`: invalid glob '{pattern}': {reason}") from None


def file_of(error: Exception) -> str | None:
    """The configuration file a ConfigError is about (its message starts with the file's path)."""
    head = str(error).split(": ", 1)[0]
    return head if os.path.isabs(head) and os.path.isfile(head) else None


def _locate(text: str, message: str) -> tuple[int, int, int]:
    """0-based (line, start, end) characters of what ``message`` is about in ``text``; the first line if unknown."""
    lines = split_lines(text)
    found = _TOML_POSITION.search(message)
    if found is not None:
        line = min(max(int(found.group(1)) - 1, 0), max(len(lines) - 1, 0))
        column = max(int(found.group(2)) - 1, 0)
        return line, column, column + 1
    said = message.split(": ", 1)[-1]  # past the path
    for needle in [m.group(1) for m in _QUOTED.finditer(said) if m.group(1)] + \
            [m.group(2) for m in _QUOTED.finditer(said) if m.group(2)]:  # a quoted value before a key's name
        for number, line_text in enumerate(lines):
            column = line_text.find(needle)
            if column >= 0 and not line_text.lstrip().startswith("#"):
                return number, column, column + len(needle)
    return 0, 0, len(lines[0]) if lines else 0


def diagnostic(path: str, message: str, encoding: str) -> types.Diagnostic:
    """The error as a diagnostic on the configuration file (on the value it names, when it can be found)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        text = ""
    line, start, end = _locate(text, message)
    row = split_lines(text)[line] if text else ""
    return types.Diagnostic(
        range=types.Range(types.Position(line, to_units(row, start, encoding)),
                          types.Position(line, to_units(row, end, encoding))),
        message=message.removeprefix(f"{path}: "), severity=types.DiagnosticSeverity.Error, source=SOURCE)
