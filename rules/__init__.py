"""devicelint's rules: one module per rule (``mvNNN_<name>.py``), discovered automatically.

Adding a rule touches only its module (and its fixture): :func:`all_rules`
imports every ``mv*`` module of this package and collects the :class:`Rule`
subclasses defined there that have a ``code``. A module's name starts with its
rule's code, so :func:`rule_codes` (what checking a selection needs) imports
none of them, nor the engine's facts.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Rule

_RULE_MODULE = re.compile(r"mv\d{3}(_\w+)?")


def _rule_modules() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(__path__) if _RULE_MODULE.fullmatch(info.name)]


def rule_codes() -> tuple[str, ...]:
    """Every rule's code, sorted, from the modules' names (nothing is imported; a directory listing)."""
    return tuple(sorted(name[:5].upper() for name in _rule_modules()))


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """One instance of every rule, sorted by code."""
    from .base import Rule

    found: dict[str, Rule] = {}
    for name in _rule_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj.__module__ == module.__name__ and obj.code:
                if obj.code in found:
                    raise RuntimeError(f"two rules claim {obj.code}: {found[obj.code]!r} and {obj!r}")
                if obj.code != name[:5].upper():
                    raise RuntimeError(f"rule {obj.code} lives in {name}.py: its module's name must start with "
                                       f"{obj.code.lower()}")
                found[obj.code] = obj()
    if tuple(sorted(found)) != rule_codes():
        raise RuntimeError(f"rule modules without a rule: {sorted(set(rule_codes()) - set(found))}")
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None


def __getattr__(name: str) -> Any:  # PEP 562: ``rules.Rule`` without importing the facts up front
    if name == "Rule":
        from .base import Rule

        return Rule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Rule", "all_rules", "rule_by_code", "rule_codes"]
