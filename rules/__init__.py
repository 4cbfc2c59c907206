"""devicelint's rules: one module per rule (``mvNNN_<name>.py``), discovered automatically.

Adding a rule touches only its module (and its fixture): :func:`all_rules`
imports every ``mv*`` module of this package and collects the :class:`Rule`
subclasses defined there that have a ``code``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache

from .base import Rule

_RULE_MODULE = re.compile(r"mv\d{3}(_\w+)?")


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """One instance of every rule, sorted by code."""
    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if not _RULE_MODULE.fullmatch(info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj.__module__ == module.__name__ and obj.code:
                if obj.code in found:
                    raise RuntimeError(f"two rules claim {obj.code}: {found[obj.code]!r} and {obj!r}")
                found[obj.code] = obj()
    return tuple(found[code] for code in sorted(found))


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None


__all__ = ["Rule", "all_rules", "rule_by_code"]
