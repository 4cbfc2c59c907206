"""What every rule shares: reading site facts and turning outcomes into diagnostics.

A rule reads :class:`~analyzer.facts.FactStore` and nothing else. For a
dispatch failure code the verdict at a site is:

* **error**: every possibility at the site, in every calling context that
  reaches it, fails with the rule's code (and nothing there is unknown);
* **warning**: some possibility fails with it (the message names the failing
  context or path);
* nothing: no possibility fails with it (unknown states never produce a finding).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Iterator, Mapping

from analyzer.diagnostics import Diagnostic, Fix, Related, Severity
from analyzer.facts import FactStore, Possibility, Site, SiteFact

MAX_RELATED = 8


class Rule:
    """A rule: ``code``, ``name``, documentation (the class docstring), ``check(facts, sources)`` and,
    for a rule with an autofix, ``fix(site, site_facts, source)``.

    ``sources`` maps each analysed file to its decoded text (without a BOM); a rule with a fix
    reads its call's spans there (:mod:`analyzer.fixes.spans`, imported only when a fix is built).
    """

    code: str = ""
    name: str = ""
    #: "warning" for a rule that never reports errors (SARIF's defaultConfiguration.level)
    default_level: str | None = None

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.doc().splitlines()[0] if cls.doc() else cls.name

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        """The fix for the finding at ``site`` (None: this rule, or this site, has none). Its doc's
        "## Fix safety" section says why the fix is safe or unsafe."""
        return None

    @classmethod
    def fixable(cls) -> bool:
        """Whether the rule has a fix (for some sites)."""
        return cls.fix is not Rule.fix

    def with_fix(self, diagnostic: Diagnostic, site: Site, site_facts: list[SiteFact],
                 sources: Mapping[str, str] | None) -> Diagnostic:
        """``diagnostic`` with the rule's fix attached, when the rule has one and the source is known."""
        if sources is not None and self.fixable():
            source = sources.get(site.file)
            if source is not None:
                diagnostic.fix = self.fix(site, site_facts, source)
        return diagnostic

    def diagnostic(self, site: Site, severity: Severity, message: str, related: Iterable[Related] = ()) -> Diagnostic:
        return Diagnostic(self.code, self.name, severity, message, site.file, site.line, site.col + 1,
                          site.end_line, site.end_col + 1, list(related)[:MAX_RELATED])


def related_for(failing: list[tuple[SiteFact, Possibility]]) -> list[Related]:
    """Where the failing states came from, and the call sites of the failing contexts."""
    out: list[Related] = []
    seen: set[tuple] = set()
    for fact, possibility in failing:
        for role, origin in possibility.origins():
            key = (origin.file, origin.line, origin.col, role)
            if key not in seen and origin.line:
                seen.add(key)
                out.append(Related(origin.file, origin.line, origin.col + 1, f"{role}: {origin.what}"))
        for link in fact.context.callers:
            key = (link.file, link.line, link.col, "call")
            if key not in seen and fact.context.function:
                seen.add(key)
                out.append(Related(link.file, link.line, link.col + 1, f"`{fact.context.function}` called here"))
    # Sets feed the loop above: sort, so the output (and which locations survive the cap) is stable.
    return sorted(out, key=lambda r: (r.file, r.row, r.column, r.message))


def _context_phrase(facts: list[SiteFact], hide: frozenset[tuple[str, str]] = frozenset()) -> str:
    phrases: list[str] = []
    for fact in facts:
        phrase = fact.context.describe(hide=hide)
        if phrase not in phrases:
            phrases.append(phrase)
    if len(phrases) > 2:
        return f"{phrases[0]}; {phrases[1]} (and {len(phrases) - 2} more)"
    return "; ".join(phrases)


class OutcomeRule(Rule):
    """A rule for one failure code of the semantics table (MV101 ... MV112)."""

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        codes = facts.codes_by_site()
        for site, site_facts in facts.by_site().items():
            if self.code not in codes[site]:
                continue  # no possibility fails with this rule's code here
            diagnostic = self.judge(site, site_facts)
            if diagnostic is not None:
                yield self.with_fix(diagnostic, site, site_facts, sources)

    def judge(self, site: Site, site_facts: list[SiteFact]) -> Diagnostic | None:
        failing = sorted(((f, p) for f in site_facts for p in f.possibilities if p.code == self.code),
                         key=lambda fp: (fp[0].context.id, fp[1].message, fp[1].describe_operands()))
        if not failing:
            return None
        everywhere = all(p.code == self.code for f in site_facts for p in f.possibilities) and not any(
            f.unknown or f.hypothetical_pass for f in site_facts)
        first = failing[0][1]
        text = f"{first.message.strip()} [{site.api}: {first.describe_operands()}]"
        if len(failing) > 1:
            others = len({(p.message, p.states()) for _f, p in failing}) - 1
            if others:
                text += f" (and {others} more failing combination{'s' if others > 1 else ''})"
        if everywhere:
            severity = Severity.ERROR
            function_contexts = [f for f in site_facts if f.context.function]
            if len(site_facts) > 1 and function_contexts:
                text += f"; fails in every context ({len(site_facts)})"
        else:
            severity = Severity.WARNING
            failing_facts = _unique_facts(f for f, _p in failing)
            passing_contexts = [f for f in site_facts if f not in failing_facts]
            partial = [f for f in failing_facts
                       if any(p.code != self.code for p in f.possibilities) or f.unknown or f.hypothetical_pass]
            # name the arguments that tell the failing contexts from the passing ones
            same_elsewhere = frozenset.intersection(*(frozenset(f.context.args) for f in passing_contexts)) \
                if passing_contexts else frozenset()
            where = _context_phrase(failing_facts, same_elsewhere)
            text += f"; fails on some paths {where}" if partial else f"; fails {where}"
            worlds = {f.context.world for f in passing_contexts}
            if passing_contexts and all(worlds):
                text += "; ok when " + " and when ".join(sorted(worlds))  # the other answer of a world split
            elif passing_contexts:
                count = len({f.context.id for f in passing_contexts})
                text += f"; ok in {count} other calling context{'s' if count > 1 else ''}"
        return self.diagnostic(site, severity, text, related_for(failing))


def _unique_facts(facts: Iterable[SiteFact]) -> list[SiteFact]:
    out: list[SiteFact] = []
    for fact in facts:
        if all(fact is not seen for seen in out):
            out.append(fact)
    return out


def fails_everywhere(site_facts: list[SiteFact], code: str) -> bool:
    """Every possibility at the site, in every context, fails with ``code`` (and nothing is unknown):
    a fix may then assume the failing states (in another context it could break a passing call)."""
    possibilities = [p for f in site_facts for p in f.possibilities]
    return bool(possibilities) and all(p.code == code for p in possibilities) and not any(
        f.unknown for f in site_facts)


def operand_atoms(site_facts: list[SiteFact], role: str) -> list:
    """The states of one operand (``"tensor"``, ``"device"``) over every possibility at the site."""
    return [atom for f in site_facts for p in f.possibilities for r, atom in p.operands if r == role]


def site_label(site: Site) -> str:
    return f"{os.path.basename(site.file)}:{site.line}"
