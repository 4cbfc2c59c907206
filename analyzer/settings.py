"""Settings of one run: what the command line (and, later, the configuration file) decides.

Every setting has one field here; the CLI fills them from flags, and a
``[tool.devicelint]`` loader will fill the same fields (flags win).
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime_shim.semantics import DEFAULT_PROFILE, PROFILES

from .shim_api import BACKEND_NAMES


class SettingsError(ValueError):
    """A setting with a value that makes no sense (exit code 2)."""


@dataclass
class Settings:
    profile: str = DEFAULT_PROFILE
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    backends: frozenset[str] | None = None  # the target machine's backends (MV112); None: all of them
    respect_noqa: bool = True
    analyze_everything: bool = False  # skip the relevance check (robustness runs over arbitrary code)

    def validate(self) -> Settings:
        if self.profile not in PROFILES:
            raise SettingsError(f"unknown profile {self.profile!r}; known: {', '.join(PROFILES)}")
        if self.backends is not None:
            unknown = sorted(set(self.backends) - set(BACKEND_NAMES))
            if unknown:
                raise SettingsError(f"unknown backend(s) {', '.join(unknown)}; known: {', '.join(BACKEND_NAMES)}")
        return self

    def selects(self, code: str) -> bool:
        """ruff's prefix semantics: the longest matching prefix of select/ignore decides."""
        best_select = max((len(p) for p in self.select if _matches(p, code)), default=-1)
        best_ignore = max((len(p) for p in self.ignore if _matches(p, code)), default=-1)
        return best_select >= 0 and best_select > best_ignore


def _matches(prefix: str, code: str) -> bool:
    prefix = prefix.strip().upper()
    return prefix == "ALL" or code.upper().startswith(prefix)


def parse_codes(value: str) -> tuple[str, ...]:
    codes = tuple(part.strip().upper() for part in value.split(",") if part.strip())
    for code in codes:
        if code != "ALL" and not (code[:2] == "MV" and code[2:].isdigit() or code == "MV"):
            raise SettingsError(f"invalid rule selector {code!r} (expected a code or prefix like MV1, MV102, ALL)")
    return codes


def parse_backends(value: str) -> frozenset[str]:
    canonical = {name.lower(): name for name in BACKEND_NAMES}
    out = set()
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        name = canonical.get(part.lower())
        if name is None:
            raise SettingsError(f"unknown backend {part!r}; known: {', '.join(BACKEND_NAMES)}")
        out.add(name)
    return frozenset(out)
