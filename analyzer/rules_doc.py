"""The rules reference page (docs/rules.md), generated from the rules' docstrings.

``devicelint rules --markdown`` prints it; ``python -m devicelint.rules_doc`` rewrites the file and
``--check`` fails when it is out of date. Each rule gets one heading, ``## MV102 (autodiff-mismatch-move)``,
whose GitHub anchor (``#mv102-autodiff-mismatch-move``) is what :func:`analyzer.diagnostics.rule_url` gives.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .diagnostics import RULES_PAGE as PAGE
from .diagnostics import rule_anchor

_HEADER = """\
# Rules

<!-- Generated from the rules' docstrings by `python -m devicelint.rules_doc`; do not edit by hand. -->

Every rule devicelint reports, by code. `devicelint rules` lists them on one line each and
`devicelint explain CODE` prints one rule's section. MV1xx rules check programs written against
`runtime_shim` (Burn-style dispatch), MV2xx rules check PyTorch programs, MV9xx rules report on the
analysis itself. `[*]` marks a rule with an automatic fix (its "Fix safety" section says whether
`--fix` applies it or it needs `--unsafe-fixes`).
"""


def _demote(doc: str) -> str:
    """A rule's own sections (``## What it does``) become subsections of its heading."""
    lines, fenced = [], False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        lines.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(lines)


def profiles_section(code: str) -> str | None:
    """Which semantics profiles a runtime_shim rule fires in (from the tables every profile reads);
    ``None`` for a rule that profiles do not concern (PyTorch rules, the analysis's own findings)."""
    if not code.startswith("MV1"):
        return None
    from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_NAMES
    from runtime_shim.semantics import firing_profiles, profile_dependent_rows

    def label(name: str) -> str:
        return f"`{name}`" + (" (default)" if name == DEFAULT_PROFILE else "")

    profiles = firing_profiles(code)
    if profiles is None:  # decided outside the tables (the target's backends): every profile alike
        profiles = PROFILE_NAMES
    silent = [name for name in PROFILE_NAMES if name not in profiles]
    text = "Fires under the profiles " + ", ".join(label(p) for p in profiles) + "."
    if silent:
        text += " Never under " + ", ".join(label(p) for p in silent) + "."
    rows = profile_dependent_rows(code)
    if rows:
        text += " Cases that only some profiles report:\n"
        text += "\n".join(f"- {row.doc or row.id} (`{row.id}`): only under {', '.join(label(p) for p in firing)}"
                          for row, firing in rows)
    return "### Profiles\n\n" + text


def render() -> str:
    """The whole page."""
    from devicelint.rules import all_rules

    rules = all_rules()
    index = [f"| [{r.code}](#{rule_anchor(r.code, r.name)}) | `{r.name}` | {'[*]' if r.fixable() else ''} "
             f"| {r.summary()} |" for r in rules]
    parts = [_HEADER, "| Code | Name | Fix | Summary |", "|---|---|---|---|", *index, ""]
    for rule in rules:
        parts += [f"## {rule.code} ({rule.name})", "", _demote(rule.doc()), ""]
        section = profiles_section(rule.code)
        if section is not None:
            parts += [section, ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([], ["--check"]):
        print("usage: python -m devicelint.rules_doc [--check]", file=sys.stderr)
        return 2
    text = render()
    current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else None
    if args == ["--check"]:
        if current != text:
            print(f"{PAGE} is out of date: run `python -m devicelint.rules_doc`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
