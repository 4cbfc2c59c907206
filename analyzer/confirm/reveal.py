"""Comparing a revealed state at run time with what the analyzer revealed at the same call.

The analyzer's ``reveal_device`` note lists the states it inferred, joined with `` | ``;
a capture device's id, unknown statically, prints as ``?`` (``Capture(?)``). The
runtime prints one concrete state (``Capture(3)``).
"""

from __future__ import annotations

import re

ALTERNATIVES = " | "
REVEAL_PREFIX = "reveal_device: "


def alternatives(revealed: str) -> list[str]:
    """The states of one analyzer reveal text (``A | B``)."""
    return [part.strip() for part in revealed.removeprefix(REVEAL_PREFIX).split(ALTERNATIVES) if part.strip()]


def reveal_matches(expected: str, actual: str) -> bool:
    """The runtime's reveal text is one of ``expected``'s alternatives (``?``: any capture id)."""
    for alternative in alternatives(expected):
        pattern = re.escape(alternative).replace(r"\?", r"\d+")
        if re.fullmatch(pattern, actual):
            return True
    return False
