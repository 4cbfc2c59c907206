"""The configuration file: ``[tool.devicelint]`` in the closest ``pyproject.toml`` (ruff's conventions).

Discovery: from the first path given (its directory when it is a file), then from
the working directory, the closest ``pyproject.toml`` *that has a
``[tool.devicelint]`` table* (one without is skipped, as ruff skips a
``pyproject.toml`` without ``[tool.ruff]``). ``--config PATH`` names the file
instead (read at ``[tool.devicelint]``; a file other than ``pyproject.toml``
without that table is read at its top level, like a ``ruff.toml``); ``--config "KEY = VALUE"`` overrides one key;
``--isolated`` reads no file. The project root is the file's directory (the
working directory when there is none): relative ``exclude``, ``per-file-ignores``
and ``cache-dir`` paths start there.

Unknown keys, values of the wrong type, globs that do not compile, values nested
too deeply for the TOML parser and a ``pyproject.toml`` that cannot be read are
errors that name the file, the key and the value (exit code 2).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .discovery import upwards
from .settings import (
    PerFileIgnore,
    RuleSelection,
    SettingsError,
    check_pattern,
    check_selector,
    check_target_device,
    parse_backends,
    parse_size,
)

PYPROJECT = "pyproject.toml"
TABLE = ("tool", "devicelint")


class ConfigError(Exception):
    """A configuration file that cannot be read, or a key or value it should not have (exit code 2)."""


def _string_list(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"`{key}` must be a list of strings, not {_describe(value)}")
    return tuple(value)


def _globs(key: str, value: Any) -> tuple[str, ...]:
    patterns = _string_list(key, value)
    for pattern in patterns:
        check_pattern(pattern, key)
    return patterns


def _selectors(key: str, value: Any) -> tuple[str, ...]:
    return tuple(check_selector(v) for v in _string_list(key, value))


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"`{key}` must be true or false, not {_describe(value)}")
    return value


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise SettingsError(f"`{key}` must be a string, not {_describe(value)}")
    return value


def _profile(key: str, value: Any) -> str:
    from runtime_shim.profiles import PROFILE_ALIASES, PROFILE_NAMES

    value = _string(key, value)
    value = PROFILE_ALIASES.get(value, value)
    if value not in PROFILE_NAMES:
        raise SettingsError(f"`{key}`: unknown profile {value!r}; known: {', '.join(PROFILE_NAMES)}")
    return value


def _backends(key: str, value: Any) -> frozenset[str]:
    return parse_backends(list(_string_list(key, value)))


def _target_device(key: str, value: Any) -> str:
    return check_target_device(_string(key, value), key)


def _per_file(key: str, value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise SettingsError(f"`{key}` must be a table of glob = [codes], not {_describe(value)}")
    for pattern in value:
        check_pattern(pattern, key)
    return {pattern: _selectors(f"{key}.{pattern}", codes) for pattern, codes in value.items()}


def _output_format(key: str, value: Any) -> str:
    from .output import FORMATS

    value = _string(key, value)
    if value not in FORMATS:
        raise SettingsError(f"`{key}`: unknown output format {value!r}; known: {', '.join(sorted(FORMATS))}")
    return value


_UNITS = {"": 1 << 20, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1000 ** 2, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30}


def memory_size(key: str, value: Any) -> int:
    """A size in bytes: an integer of MiB, or a string with a unit (``"512MiB"``, ``"2GiB"``, ``"1500MB"``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value << 20
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value) if isinstance(value, str) else None
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or float(match.group(1)) <= 0:
        raise SettingsError(f"`{key}` must be a size such as 512MiB or 2GiB (an integer: MiB), "
                            f"not {_describe(value)}")
    return int(float(match.group(1)) * unit)


def _confirm(key: str, value: Any) -> dict[str, Any]:
    """``[tool.devicelint.confirm]``: ``entries``, the programs ``confirm`` runs (shell words: the
    entry, then its arguments)."""
    if not isinstance(value, dict):
        raise SettingsError(f"`{key}` must be a table, not {_describe(value)}")
    unknown = sorted(set(value) - {"entries"})
    if unknown:
        raise SettingsError(f"unknown key `{unknown[0]}` in [tool.devicelint.confirm]; known keys: entries")
    entries = value.get("entries", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) and e.strip() for e in entries):
        raise SettingsError(f"`{key}.entries` must be a list of non-empty strings, not {_describe(entries)}")
    return {"entries": list(entries)}


KEYS: dict[str, Callable[[str, Any], Any]] = {
    "select": _selectors,
    "extend-select": _selectors,
    "ignore": _selectors,
    "per-file-ignores": _per_file,
    "extend-per-file-ignores": _per_file,
    "exclude": _globs,
    "extend-exclude": _globs,
    "respect-gitignore": _bool,
    "force-exclude": _bool,
    "profile": _profile,
    "backends": _backends,
    "target-device": _target_device,  # "cuda" / "cpu": where the code runs (one world); "auto": both
    "cache-dir": _string,
    # directories (globs) that each hold a project of their own, inside this configuration's project: a file
    # run analyses a file with the innermost one holding it (analyzer.projects)
    "roots": _globs,
    "max-file-size": parse_size,  # bytes, or "10MB"; larger files are skipped with a note (0: no limit)
    "max-worker-memory": memory_size,
    "output-format": _output_format,
    "confirm": _confirm,
    # autofixes (ruff's keys): `fix = true` applies safe fixes on every `check`, `unsafe-fixes = true`
    # unsafe ones too, `show-fixes = true` lists what was fixed; the flags win
    "fix": _bool,
    "unsafe-fixes": _bool,
    "show-fixes": _bool,
}


def _describe(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "a list",
             dict: "a table"}
    return f"{names.get(type(value), type(value).__name__)} ({value!r})" if not isinstance(value, dict) \
        else "a table"


@dataclass
class Config:
    """The validated keys of one configuration (file and ``--config KEY=VALUE`` overrides)."""

    path: str | None = None  # the file, or None
    root: str = field(default_factory=os.getcwd)  # the project root
    values: dict[str, Any] = field(default_factory=dict)  # key (with dashes) -> validated value

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def selection(self) -> RuleSelection | None:
        if not any(k in self.values for k in ("select", "extend-select", "ignore")):
            return None
        return RuleSelection(self.values.get("select"), self.values.get("extend-select", ()),
                             self.values.get("ignore", ()))

    def per_file_ignores(self) -> tuple[PerFileIgnore, ...]:
        table = {**self.values.get("per-file-ignores", {})}
        for pattern, codes in self.values.get("extend-per-file-ignores", {}).items():
            table[pattern] = (*table.get(pattern, ()), *codes)
        return tuple(PerFileIgnore(pattern, codes, self.root) for pattern, codes in table.items())

    def roots(self) -> tuple[str, ...]:
        """The ``roots`` key's directories, absolute (globs expanded against the project root)."""
        import glob

        found: list[str] = []
        for pattern in self.values.get("roots", ()):
            pattern = os.path.expanduser(pattern)
            full = pattern if os.path.isabs(pattern) else os.path.join(self.root, pattern)
            for match in sorted(glob.glob(full)) if any(c in full for c in "*?[") else [full]:
                path = os.path.normpath(os.path.abspath(match))
                if os.path.isdir(path) and path not in found:
                    found.append(path)
        return tuple(found)

    def cache_dir(self) -> str | None:
        value = self.values.get("cache-dir")
        if value is None:
            return None
        value = os.path.expanduser(value)
        return value if os.path.isabs(value) else os.path.join(self.root, value)


def validate(table: dict[str, Any], where: str) -> dict[str, Any]:
    """The keys of a ``[tool.devicelint]`` table, validated; ``where`` names the file in errors."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.devicelint] must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        check = KEYS.get(key)
        if check is None:
            hint = ""
            if key.replace("_", "-") in KEYS:
                hint = f" (did you mean `{key.replace('_', '-')}`?)"
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.devicelint]{hint}; "
                              f"known keys: {', '.join(sorted(KEYS))}")
        try:
            values[key] = check(key, value)
        except SettingsError as error:
            raise ConfigError(f"{where}: {error}") from None
    return values


def read_toml(path: str) -> dict[str, Any]:
    import tomllib  # here: an --isolated run reads no file and skips its import

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({error.reason})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: values nested too deeply") from None


def _table(document: dict[str, Any]) -> dict[str, Any] | None:
    tool = document.get(TABLE[0])
    if not isinstance(tool, dict) or TABLE[1] not in tool:
        return None
    return tool[TABLE[1]]


def load(path: str) -> Config:
    """An explicit configuration file (``--config PATH``)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: configuration file not found")
    document = read_toml(path)
    table = _table(document)
    if table is None:  # a pyproject.toml without the table: nothing; another file: its top level (ruff.toml-style)
        table = {} if os.path.basename(path) == PYPROJECT else document
    return Config(path, os.path.dirname(path), validate(table, path))


def find(start: str) -> str | None:
    """The closest ``pyproject.toml`` with a ``[tool.devicelint]`` table at or above ``start``."""
    for directory in upwards(start):
        candidate = os.path.join(directory, PYPROJECT)
        if os.path.isfile(candidate) and _mentions_us(candidate) and _table(read_toml(candidate)) is not None:
            return candidate
    return None


def _mentions_us(path: str) -> bool:
    """A cheap look before parsing: a file that never says "devicelint" has no table for us (and a
    broken pyproject.toml of another tool is not our error). One that cannot be read is an error: it
    may hold the configuration, and running without it would be silently wrong."""
    try:
        with open(path, "rb") as handle:
            return b"devicelint" in handle.read()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error.strerror or error}") from None


def discover(first_path: str | None) -> Config:
    """The configuration for a run over ``first_path`` (None: the working directory)."""
    starts = [first_path] if first_path else []
    starts.append(os.getcwd())
    for start in starts:
        found = find(start)
        if found is not None:
            document = read_toml(found)
            return Config(found, os.path.dirname(found), validate(_table(document) or {}, found))
    return Config(None, os.getcwd(), {})


def parse_override(text: str) -> dict[str, Any]:
    """``--config "KEY = VALUE"``: one key of ``[tool.devicelint]`` in TOML syntax."""
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {text!r}: neither a file nor a valid `KEY = VALUE` TOML override ({error})") \
            from None
    except RecursionError:
        raise ConfigError(f"--config {text[:60]!r}: values nested too deeply") from None
    return validate(document, f"--config {text!r}")
