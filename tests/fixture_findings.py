"""Every rule's findings on a folder of the repository (``fixtures``, ``fixtures/torch``, ``examples``), the
reference that several analyzer tests compare a variant of the analysis against (on demand sweeps, runs not
kept, expressions recorded): computed once per test session (tests/session_cache.py), not once per test file.
"""

from __future__ import annotations

from pathlib import Path

from session_cache import digest

REPO = Path(__file__).resolve().parents[1]


def all_rules_findings(folder: str) -> list[dict]:
    """``check([REPO / folder], Settings(jobs=1, select=("ALL",)))``, each diagnostic as ``to_json()`` gives it."""
    from devicelint.runner import check
    from devicelint.settings import Settings

    return [d.to_json() for d in check([str(REPO / folder)], Settings(jobs=1, select=("ALL",))).diagnostics]


def key(folder: str) -> str:
    """What the findings depend on: the folder's files, the analyzer and its rules (and the runtime's tables)."""
    import devicelint
    import devicelint.rules

    import runtime_shim

    packages = [Path(module.__file__).parent for module in (devicelint, devicelint.rules, runtime_shim)]
    # (not the interpreter's hash secret: the findings are the same whatever it is, docs/analyzer.md "Facts")
    return digest([REPO / folder, *packages], folder, "select=ALL", "jobs=1")
