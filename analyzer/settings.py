"""Settings of one run: what the command line and the ``[tool.devicelint]`` table decide.

Every setting has one field here; :mod:`analyzer.config` fills them from the
configuration file, then the CLI from its flags (flags win).

Rule selection follows ruff: the configuration file and the command line are
*layers* applied in order on top of the default (``ALL``). In each layer, the
most specific matching selector decides (``ALL`` < ``MV`` < ``MV1`` < ``MV10`` <
``MV102``), ``ignore`` winning a tie; a layer with ``select`` starts again from
nothing, a layer with only ``extend-select``/``ignore`` edits the one below. So
``--select MV102`` on the command line re-enables a code the file ignores, and
``--ignore`` adds to the file's ignores.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_ALIASES, PROFILE_NAMES

from .budget import Limits
from .discovery import DiscoveryOptions, GlobError, check_glob, glob_regex, normalize_to

_SELECTOR = re.compile(r"ALL|MV\d{0,3}")

#: Reported whatever the selection, per-file ignores or ``noqa`` say: a file that cannot be parsed is a file
#: nothing was checked in (ruff reports syntax errors the same way).
ALWAYS_REPORTED = frozenset({"MV901"})


class SettingsError(ValueError):
    """A setting with a value that makes no sense (exit code 2)."""


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selection (the configuration file's, or the command line's)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


DEFAULT_SELECTION = RuleSelection(select=("ALL",))


@dataclass(frozen=True)
class PerFileIgnore:
    """``"glob" = ["MV1", ...]``: codes (or prefixes) ignored in the files the glob matches.

    As in ruff, the glob matches the file's name, or (made absolute against ``root``,
    the configuration file's directory) its absolute path; ``*`` crosses ``/``; a
    leading ``!`` applies the codes to the files that do *not* match."""

    pattern: str
    codes: tuple[str, ...]
    root: str

    @property
    def negated(self) -> bool:
        return self.pattern.startswith("!")

    def applies_to(self, path: str) -> bool:
        pattern = self.pattern[1:] if self.negated else self.pattern
        absolute = os.path.abspath(path)
        hit = bool(glob_regex(pattern).match(os.path.basename(absolute))
                   or glob_regex(normalize_to(pattern, self.root)).match(absolute))
        return hit != self.negated

    def ignores(self, code: str) -> bool:
        return any(_matches(selector, code) for selector in self.codes)


@dataclass
class Settings:
    profile: str = DEFAULT_PROFILE
    # the command line's selection layer (on top of `selections`)
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    selections: tuple[RuleSelection, ...] = ()  # the layers below the flags (the configuration file)
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    backends: frozenset[str] | None = None  # the target machine's backends (MV112); None: all of them
    # where the PyTorch code runs: "cuda" or "cpu" analyses that world only; "auto" both answers of is_available()
    target_device: str = "auto"
    respect_noqa: bool = True
    analyze_everything: bool = False  # skip the relevance check (robustness runs over arbitrary code)
    record_expressions: bool = False  # keep each expression's inferred state (editors' hover); no cache
    discovery: DiscoveryOptions = field(default_factory=DiscoveryOptions)
    cache_dir: str | None = None  # None: no cache (the library's default; the CLI turns it on)
    jobs: int = 1  # worker processes (1: in this process)
    max_file_size: int = 10 * 1024 * 1024  # bytes; larger files are skipped with a note (0: no limit)
    # what one component's analysis may take before its findings become unknown (a note says so):
    # memory the process grows by (``max-worker-memory``), wall time, statements analysed; None: no limit
    max_worker_memory: int | None = 1 << 30
    max_component_seconds: float | None = 120.0
    max_component_steps: int | None = 3_000_000
    max_function_steps: int | None = 400_000  # one function's run in one context (what it calls included)

    def limits(self) -> Limits:
        return Limits(self.max_component_steps, self.max_component_seconds, self.max_worker_memory,
                      self.max_function_steps)

    def validate(self) -> Settings:
        self.profile = PROFILE_ALIASES.get(self.profile, self.profile)
        if self.profile not in PROFILE_NAMES:
            raise SettingsError(f"unknown profile {self.profile!r}; known: {', '.join(PROFILE_NAMES)}")
        if self.backends is not None:
            from .shim_api import BACKEND_NAMES  # here: most runs name no backends

            unknown = sorted(set(self.backends) - set(BACKEND_NAMES))
            if unknown:
                raise SettingsError(f"unknown backend(s) {', '.join(unknown)}; known: {', '.join(BACKEND_NAMES)}")
        check_target_device(self.target_device)
        for layer in (*self.selections, self.cli_selection()):
            for selector in (*(layer.select or ()), *layer.extend_select, *layer.ignore):
                check_selector(selector)
        for entry in self.per_file_ignores:
            check_pattern(entry.pattern, "per-file-ignores")
            for selector in entry.codes:
                check_selector(selector)
        try:
            self.discovery.validate()
        except GlobError as error:
            raise SettingsError(str(error)) from None
        if isinstance(self.max_file_size, bool) or not isinstance(self.max_file_size, int) \
                or self.max_file_size < 0:
            raise SettingsError(f"`max-file-size` must be a number of bytes (0: no limit), not {self.max_file_size!r}")
        if self.jobs < 1:
            raise SettingsError(f"jobs must be at least 1, not {self.jobs}")
        for name in ("max_worker_memory", "max_component_seconds", "max_component_steps", "max_function_steps"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise SettingsError(f"{name.replace('_', '-')} must be positive, not {value!r}")
        return self

    def cli_selection(self) -> RuleSelection:
        return RuleSelection(self.select, tuple(self.extend_select), tuple(self.ignore))

    def layers(self) -> tuple[RuleSelection, ...]:
        return (DEFAULT_SELECTION, *self.selections, self.cli_selection())

    def selects(self, code: str) -> bool:
        """Whether rule ``code`` is enabled (ruff's layered resolution, see the module docstring)."""
        enabled = False
        carried: tuple[str, ...] = ()
        for layer in self.layers():
            ignores = (*layer.ignore, *carried)
            carried = ()
            best_select = max((_specificity(p) for p in (*(layer.select or ()), *layer.extend_select)
                               if _matches(p, code)), default=-1)
            best_ignore = max((_specificity(p) for p in ignores if _matches(p, code)), default=-1)
            update = None if best_select < 0 and best_ignore < 0 else best_select > best_ignore
            if layer.select is not None:
                enabled = bool(update)
                if not layer.select and not layer.extend_select and layer.ignore:
                    carried = tuple(layer.ignore)  # `select = []` with ignores: they carry over (ruff)
            elif update is not None:
                enabled = update
        return enabled

    def torch_rules(self) -> bool:
        """Whether some PyTorch rule (MV2xx) is enabled: files that mention torch are then analysed too."""
        from devicelint.rules import rule_codes

        return any(code.startswith("MV2") and self.selects(code) for code in rule_codes())

    def ignored_in(self, path: str, code: str) -> bool:
        """Whether a per-file ignore removes ``code`` from ``path``."""
        return any(entry.ignores(code) and entry.applies_to(path) for entry in self.per_file_ignores)

    def engine_key(self) -> tuple:
        """What the analysis itself depends on (the cache's key; selection is applied afterwards)."""
        return (self.profile, tuple(sorted(self.backends)) if self.backends is not None else None,
                self.analyze_everything, self.target_device)


def _specificity(selector: str) -> int:
    selector = selector.strip().upper()
    return 0 if selector == "ALL" else len(selector)


def _matches(prefix: str, code: str) -> bool:
    prefix = prefix.strip().upper()
    return prefix == "ALL" or code.upper().startswith(prefix)


def check_selector(selector: str) -> str:
    """A rule selector (ALL, MV, MV1, MV10, MV102) that names at least one rule, upper-cased."""
    from devicelint.rules import rule_codes  # rules import analyzer modules: import them late

    code = selector.strip().upper()
    if not _SELECTOR.fullmatch(code):
        raise SettingsError(f"invalid rule selector {selector!r} (expected a code or prefix like MV1, MV102, ALL)")
    if code != "ALL" and not any(known.startswith(code) for known in rule_codes()):
        raise SettingsError(f"rule selector {selector!r} matches no rule (see `devicelint rules`)")
    return code


#: ``target-device``: where the analysed PyTorch code runs ("auto": wherever ``torch.cuda.is_available()`` says)
TARGET_DEVICES = ("auto", "cuda", "cpu")


def check_target_device(value: object, key: str = "target-device") -> str:
    """A ``target-device`` value (``auto``, ``cuda`` or ``cpu``), else :class:`SettingsError` naming ``key``."""
    if not isinstance(value, str) or value not in TARGET_DEVICES:
        raise SettingsError(f"`{key}` must be one of {', '.join(TARGET_DEVICES)}, not {value!r}")
    return value


def check_pattern(pattern: str, key: str) -> str:
    """A glob of ``key`` (a leading ``!`` negates it) that compiles, else :class:`SettingsError` naming the key."""
    try:
        check_glob(pattern.removeprefix("!"))
    except GlobError as error:
        raise SettingsError(f"`{key}`: {error}") from None
    return pattern


def parse_codes(value: str) -> tuple[str, ...]:
    return tuple(check_selector(part) for part in value.split(",") if part.strip())


def parse_backends(value: str | list[str]) -> frozenset[str]:
    from .shim_api import BACKEND_NAMES

    canonical = {name.lower(): name for name in BACKEND_NAMES}
    parts = value.split(",") if isinstance(value, str) else value
    out = set()
    for part in parts:
        part = part.strip()
        if not part:
            continue
        name = canonical.get(part.lower())
        if name is None:
            raise SettingsError(f"unknown backend {part!r}; known: {', '.join(BACKEND_NAMES)}")
        out.add(name)
    return frozenset(out)


_SIZE = re.compile(r"(\d+)\s*(b|kb|kib|mb|mib|gb|gib)?", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kb": 1000, "kib": 1024, "mb": 1000 ** 2, "mib": 1024 ** 2, "gb": 1000 ** 3,
          "gib": 1024 ** 3}


def parse_size(key: str, value: object) -> int:
    """A size in bytes: an integer, or a string like ``"10MB"``, ``"512 KiB"`` (0: no limit)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = _SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise SettingsError(f"`{key}` must be a size in bytes like 10000000 or \"10MB\" (0: no limit), "
                            f"not {value!r}")
    return int(match.group(1)) * _UNITS[(match.group(2) or "").lower()]


def parse_per_file_ignores(value: str, root: str) -> PerFileIgnore:
    """The command line's ``"GLOB:CODE,CODE"`` (ruff's spelling)."""
    pattern, sep, codes = value.rpartition(":")
    if not sep or not pattern.strip():
        raise SettingsError(f"invalid per-file ignore {value!r} (expected PATTERN:CODE[,CODE...])")
    return PerFileIgnore(check_pattern(pattern.strip(), "--per-file-ignores"), parse_codes(codes), root)
