"""Loaded by the server under test through ``DEVICELINT_LSP_PRELOAD`` (never in use).

Makes rule MV102 raise when it sees a file named ``crash*.py``, to show that a
failure inside a rule is reported and the server keeps serving.
"""

from __future__ import annotations

import os

from devicelint.rules import rule_by_code

_rule = rule_by_code("MV102")
_original = type(_rule).check


def _check(self, facts, *args, **kwargs):
    if any(os.path.basename(site.file).startswith("crash") for site, _context in facts.sites):
        raise RuntimeError("injected failure in MV102")
    return _original(self, facts, *args, **kwargs)


type(_rule).check = _check
