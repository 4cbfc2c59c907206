"""The lines ``check`` prints about fixes, in ruff's words.

* after the findings: ``[*] 2 fixable with the `--fix` option (1 hidden fix can be enabled with
  the `--unsafe-fixes` option).`` or ``No fixes available (1 hidden fix can be enabled ...).``;
* ``--show-fixes``: ``Fixed 2 findings:`` then per file ``- path:`` and ``    1 × MV102 (name)``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable

from ..diagnostics import Diagnostic


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('x') else 's'}"


def fixable_hint(findings: list[Diagnostic], unsafe: bool) -> str:
    """The line about what ``--fix`` (and ``--unsafe-fixes``) would fix; "" when nothing would."""
    fixable = sum(1 for d in findings if d.fix is not None and d.fix.applies(unsafe))
    hidden = sum(1 for d in findings if d.fix is not None and not d.fix.applies(unsafe))
    hidden_text = (f"{_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option"
                   if hidden else "")
    if fixable:
        return f"[*] {fixable} fixable with the `--fix` option" + (f" ({hidden_text})." if hidden else ".") + "\n"
    if hidden:
        return f"No fixes available ({hidden_text}).\n"
    return ""


def fixed_listing(applied: list[Diagnostic], display: Callable[[str], str]) -> str:
    """``--show-fixes``: what was fixed, per file and code."""
    if not applied:
        return ""
    per_file: dict[str, Counter] = {}
    names: dict[str, str] = {}
    for d in applied:
        per_file.setdefault(d.file, Counter())[d.code] += 1
        names[d.code] = d.name
    lines = [f"Fixed {_plural(len(applied), 'finding')}:"]
    for path in sorted(per_file, key=os.path.normcase):
        lines.append(f"- {display(path)}:")
        for code, count in sorted(per_file[path].items()):
            lines.append(f"    {count} × {code} ({names[code]})")
    return "\n".join(lines) + "\n"


def fixed_count(applied: list[Diagnostic]) -> str:
    """``Fixed 2 findings.`` (``--fix-only``), ``No findings fixed.`` when nothing was."""
    return f"Fixed {_plural(len(applied), 'finding')}.\n" if applied else "No findings fixed.\n"


def would_fix(applied: list[Diagnostic]) -> str:
    """``--diff``: ``Would fix 2 findings.``"""
    return f"Would fix {_plural(len(applied), 'finding')}.\n" if applied else "No findings would be fixed.\n"
