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
from collections.abc import Iterable, Iterator, Mapping
from weakref import WeakKeyDictionary

from devicelint.choices import option_phrase
from devicelint.diagnostics import FAILS_HERE_TOO, Diagnostic, Fix, Related, Severity
from devicelint.facts import Context, FactStore, Possibility, Site, SiteFact

from .anchors import MAX_DEPTH, Anchor, anchors_for
from .cascades import Cascades, Never, cascades, hypothetical

MAX_RELATED = 8


class Rule:
    """A rule: ``code``, ``name``, documentation (the class docstring), ``check(facts, sources)`` and,
    for a rule with an autofix, ``fix(site, site_facts, source)``.

    ``sources`` maps each analysed file to its decoded text (without a BOM); a rule with a fix
    reads its call's spans there (:mod:`analyzer.fixes.spans`, imported only when a fix is built).
    """

    code: str = ""
    name: str = ""
    #: the finding is at a call that sets up a failure raised later, where its result is used (a ``DataLoader``'s
    #: settings fail when it is iterated): the runtime names this call among the failure's callers, and
    #: ``devicelint confirm`` judges the finding on the failures that came through it
    reported_at_setup: bool = False
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

    def advisory(self, site: Site, hits: Iterable[tuple[SiteFact, Possibility]], everywhere: bool,
                 text: str) -> Diagnostic | None:
        """The warning of an advisory rule at ``site`` (None: no ``hits``, the possibilities it is about):
        ``text`` and the first hit's operands, then, unless it holds ``everywhere`` (every possibility of
        every calling context), the first hit's context."""
        ordered = sorted(hits, key=lambda fp: (fp[0].context.id, fp[1].describe_operands(), fp[1].order_key()))
        if not ordered:
            return None
        fact, first = ordered[0]
        message = f"{text} [{site.api}: {first.describe_operands()}]"
        if not everywhere:
            message += f"; on some paths: {fact.context.describe()}"
        return self.diagnostic(site, Severity.WARNING, message, related_for(ordered))


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
        for role, atom in possibility.operands:  # a value derived from another tensor: where that one was made
            source = getattr(atom, "source", None)
            if source is None or not source.line:
                continue
            derived = (source.file, source.line, source.col, role)
            if derived not in seen:
                seen.add(derived)
                # (what a failing call was meant to give comes from the operand it left behind, on another device)
                device = getattr(atom, "dev", None)  # (as origins name it: a GPU of unknown index ``cuda:<rank>``)
                dev = getattr(device, "shown", None) or getattr(device, "text", None)
                meant = source.created_on is not None and dev is not None and source.created_on != dev
                how = "is what a failing call was meant to give, over" if meant else "is derived from"
                out.append(Related(source.file, source.line, source.col + 1, f"{role} {how}: {source.what}"))
        for link in fact.context.callers:
            key = (link.file, link.line, link.col, "call")
            if key not in seen and fact.context.function:
                seen.add(key)
                out.append(Related(link.file, link.line, link.col + 1, f"`{fact.context.function}` called here"))
    # Sets feed the loop above: sort, so the output (and which locations survive the cap) is stable.
    return sorted(out, key=lambda r: (r.file, r.row, r.column, r.message))


def world_notes(site: Site, failing: Iterable[SiteFact]) -> list[Related]:
    """A note naming every assumption of the failing worlds where the message names only the first of one. A
    world whose assumptions include all of another failing world's says nothing more (it fails "when CUDA is
    available" with or without options: no note that it fails with options)."""
    facts = list(failing)
    named = {frozenset(f.context.conditions) for f in facts}
    worlds = sorted({f.context.world for f in facts if len(f.context.conditions) > 1
                     and not any(other < frozenset(f.context.conditions) for other in named)})
    return [Related(site.file, site.line, site.col + 1, f"fails when {world}") for world in worlds]


def distinguishing(answers: tuple[tuple[str, str], ...], others: Iterable[tuple[tuple[str, str], ...]]) -> str:
    """A world in a few words (``answers``: its (split, condition) pairs, :attr:`Context.answers`): the fewest of
    its conditions that no world of ``others`` has all of (with CUDA available both with and without options, a
    failure only with options is "when the command line gives options"); its first condition where it has one
    only."""
    kept = list(answers)
    rest = [tuple(o) for o in others]
    for answer in answers:
        trial = [a for a in kept if a != answer]
        if trial and not any(_compatible(trial, other) for other in rest):
            kept = trial
    return " and ".join(condition for _split, condition in kept)


def _compatible(answers: Iterable[tuple[str, str]], other: tuple[tuple[str, str], ...]) -> bool:
    """Whether some run meets both: no split answered one way in ``answers`` and another in ``other`` (a
    world naming fewer conditions holds for every answer of the others)."""
    chosen = dict(answers)
    return all(chosen.get(split, condition) == condition for split, condition in other)


def _context_phrase(facts: list[SiteFact], hide: frozenset[tuple[str, str]] = frozenset(),
                    others: Iterable[SiteFact] = (), partial: Iterable[SiteFact] = ()) -> str:
    """Where the site fails: each failing context (and world) in a few words. ``partial``: the contexts where it
    fails on some paths only, said of each of them ("on some paths when ...") or, if all are, once up front."""
    described: dict[str, bool] = {}  # each phrase, and whether it fails on some paths only (any of its contexts)
    other_worlds = [f.context.answers for f in others if f.context.conditions]
    some = {id(f) for f in partial}
    for fact in facts:
        conditions = fact.context.conditions
        world = distinguishing(fact.context.answers, other_worlds) if len(conditions) > 1 else None
        phrase = fact.context.describe(hide=hide, condition=world)
        described[phrase] = described.get(phrase, False) or id(fact) in some
    every_partial = all(described.values())
    phrases = [phrase if every_partial or not on_some else f"on some paths {phrase}"
               for phrase, on_some in described.items()]
    text = f"{phrases[0]}; {phrases[1]} (and {len(phrases) - 2} more)" if len(phrases) > 2 else "; ".join(phrases)
    return f"on some paths {text}" if every_partial and described else text


class OutcomeRule(Rule):
    """A rule for one failure code of the semantics table (MV101 ... MV112, MV2xx)."""

    #: A failure of this rule whose operands all came through arguments is reported at the call that passed
    #: them (:mod:`rules.anchors`): the operands' devices disagree, and the caller chose them.
    reported_at_caller: bool = False
    short: bool = False  # the run names its target device: mismatch messages in a short sentence
    #: how to fix it, in a few words, appended to the message ("" for none)
    hint: str = ""
    #: another fix for the failures of one row of the table (a possibility's ``row``: ``"torch.DataParallel"``)
    row_hints: Mapping[str, str] = {}

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        self.short = getattr(facts, "target", "auto") != "auto"
        codes = facts.codes_by_site()
        spans = facts.function_spans
        found = cascades(facts)
        moved: dict[Anchor, list[tuple[Site, SiteFact]]] = {}
        alone = folded_alone(facts, found)
        for site, all_facts in facts.by_site().items():
            if self.code not in codes[site]:
                continue  # no possibility fails with this rule's code here
            # a failure that only follows from an earlier one over the same tensor is that one's finding
            site_facts = [f for f in all_facts if id(f) not in found.roots]
            if not site_facts:
                continue
            staying = site_facts
            if self.reported_at_caller:
                staying = []
                for fact in site_facts:
                    anchors = anchors_for(fact, self.code, spans) \
                        if any(p.code == self.code for p in fact.possibilities) else None
                    if anchors is None:
                        staying.append(fact)
                    for anchor in anchors or ():
                        moved.setdefault(anchor, []).append((site, fact))
            diagnostic = self.judge(site, staying, found.never)
            if diagnostic is not None:
                yield self.with_fix(_with_followers(diagnostic, staying, found, alone), site, staying, sources)
        for anchor, entries in sorted(moved.items(), key=lambda item: (item[0].file, item[0].line, item[0].col)):
            yield _with_followers(self.judge_at_caller(anchor, entries, facts, found.never),
                                  [f for _s, f in entries], found, alone)

    def judge_at_caller(self, anchor: Anchor, entries: list[tuple[Site, SiteFact]], facts: FactStore,
                        never: Never | None = None) -> Diagnostic:
        """One finding at the call that passed the failing operands, for every failing call it leads to."""
        # (one position may be several sites: a call whose callee is one of two models; the API breaks the tie)
        sites = sorted({site for site, _fact in entries}, key=lambda s: (s.file, s.line, s.col, s.api))
        inner_site = sites[0]
        failing = sorted(((f, p) for _s, f in entries for p in f.possibilities if p.code == self.code),
                         key=lambda fp: (fp[0].context.id, fp[1].message, fp[1].describe_operands(),
                                         fp[1].order_key()))
        # the message names the first failing call inside and its own operands
        first_fact, first = next((f, p) for f, p in failing if f.site == inner_site)
        # an error only if every run of the function entered through this call fails: a run that does not reach
        # the failing calls (another branch) shows in the function's other facts. A run that succeeds only with
        # what a call that never succeeds returns (a loop's next iteration over the failing call's meant result)
        # is not one.
        never = never or {}
        failed = {f.context.id for _s, f in entries
                  if all(p.code == self.code or hypothetical(p, never) for p in f.possibilities) and not f.unknown}
        inner_function = (first_fact.context.file, first_fact.context.function)
        entered = {f.context.id for f in facts.sites.values()
                   if (f.context.file, f.context.function) == inner_function and _passes_through(f.context, anchor)
                   and f.real}
        everywhere = entered <= failed
        function = first_fact.context.function
        failure = self.what_fails(inner_site.api, first, anchor.file, f" in `{function}` at {inner_site.where}")
        text = (f"{failure}; this call passes the failing operand"
                f"{'s' if len(first.operands) > 1 else ''}")
        if len(sites) > 1:
            text += f" (and fails at {len(sites) - 1} more call{'s' if len(sites) > 2 else ''} inside)"
        worlds = sorted({f.context.condition for f, _p in failing if f.context.condition})
        if not everywhere and worlds:
            text += " when " + " and when ".join(worlds)
        elif not everywhere:
            text += " on some paths"
        if not everywhere:
            # (the runs of the function that pass: its contexts entered through this call with other values)
            text += _options_named(failing, ((f, p) for f in facts.sites.values() if f.site in sites
                                             for p in f.possibilities if not p.failed))
        site = Site(anchor.file, anchor.line, anchor.col, anchor.end_line, anchor.end_col, inner_site.api)
        inner = Related(inner_site.file, inner_site.line, inner_site.col + 1,
                        f"the call that fails, inside `{function}`")
        related = [inner, *world_notes(site, (f for f, _p in failing)),
                   *(Related(s.file, s.line, s.col + 1, FAILS_HERE_TOO) for s in sites[1:]),
                   *(r for r in related_for(failing) if (r.file, r.row) != (anchor.file, anchor.line))]
        diagnostic = self.diagnostic(site, Severity.ERROR if everywhere else Severity.WARNING,
                                     self.hinted(text, first.row), related)
        diagnostic.inner = inner
        return diagnostic

    def hinted(self, text: str, row: str = "") -> str:
        hint = self.row_hints.get(row, self.hint)
        return f"{text}; {hint}" if hint else text

    def what_fails(self, api: str, failing: Possibility, file: str, where: str = "") -> str:
        """The failure and its operands. With a named target device, a device mismatch (a rule with a hint) is one
        short sentence naming each operand's device and where it came from; otherwise PyTorch's own words."""
        if self.short and self.hint:
            return f"`{api}`{where} mixes devices: {short_operands(failing, file)}"
        return f"{failing.message.strip()} [{api}{where}: {failing.describe_operands()}]"

    def judge(self, site: Site, site_facts: list[SiteFact], never: Never | None = None) -> Diagnostic | None:
        failing = sorted(((f, p) for f in site_facts for p in f.possibilities if p.code == self.code),
                         key=lambda fp: (fp[0].context.id, fp[1].message, fp[1].describe_operands(),
                                         fp[1].order_key()))
        if not failing:
            return None  # (every failing context was reported at the call that passed its operands)
        fed_back = fed_back_passes(site_facts)
        never = never or {}
        everywhere = all(p.code == self.code or hypothetical(p, never) for f in site_facts for p in f.possibilities
                         if p not in fed_back) \
            and not any(f.unknown or f.hypothetical_pass for f in site_facts)
        first = failing[0][1]
        text = self.what_fails(site.api, first, site.file)
        if len(failing) > 1:
            others = len({(p.message, p.states()) for _f, p in failing}) - 1
            if others:
                text += f" (and {others} more failing combination{'s' if others > 1 else ''})"
        notes: list[Related] = []
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
            text += f"; fails {_context_phrase(failing_facts, same_elsewhere, passing_contexts, partial)}"
            options = _options_named(failing, ((f, p) for f in site_facts for p in f.possibilities if not p.failed))
            failing_worlds = [f.context.answers for f in failing_facts if f.context.conditions]
            worlds = {distinguishing(f.context.answers, failing_worlds) if len(f.context.conditions) > 1
                      else f.context.condition for f in passing_contexts}
            # a passing context in a world that also fails (another calling context): "ok when" would name it
            overlap = any(_compatible(f.context.answers, p.context.answers)
                          for f in failing_facts for p in passing_contexts)
            if passing_contexts and all(worlds) and len(worlds) <= 2 and not overlap:
                text += "; ok when " + " and when ".join(sorted(worlds))  # the other answer of a world split
            elif passing_contexts and all(worlds) and not overlap:  # (more: notes name them)
                text += f"; ok in {len(worlds)} other cases"
                notes = [Related(site.file, site.line, site.col + 1, f"ok when {w}") for w in sorted(worlds)]
            elif passing_contexts:
                count = len({f.context.id for f in passing_contexts})
                text += f"; ok in {count} other calling context{'s' if count > 1 else ''}"
            text += options
        return self.diagnostic(site, severity, self.hinted(text, first.row),
                               [*world_notes(site, (f for f, _p in failing)), *notes, *related_for(failing)])


def _options_named(failing: Iterable[tuple[SiteFact, Possibility]],
                   passing: Iterable[tuple[SiteFact, Possibility]]) -> str:
    """``; fails only where `--device` is 'mps'``: the command-line option values the failing combinations need, where
    combinations with others pass (:func:`devicelint.choices.option_phrase`); "" where none tells them apart."""
    phrase = option_phrase([p.options | f.context.options for f, p in failing],
                           [p.options | f.context.options for f, p in passing])
    return f"; fails only where {phrase}" if phrase else ""


_ALONE: WeakKeyDictionary[FactStore, tuple[Cascades, dict[Site, list[Diagnostic]]]] = WeakKeyDictionary()


def folded_alone(facts: FactStore, found: Cascades) -> dict[Site, list[Diagnostic]]:
    """The findings each site failing only past an earlier failure would give on its own, by the rules of its
    failures' codes (``Diagnostic.folded``; computed once per set of facts: every rule asks)."""
    cached = _ALONE.get(facts)
    if cached is not None and cached[0] is found:
        return cached[1]
    from . import rule_by_code

    alone: dict[Site, list[Diagnostic]] = {}
    for site, all_facts in facts.by_site().items():
        folded = [f for f in all_facts if id(f) in found.roots]
        for code in sorted({p.code for f in folded for p in f.possibilities if p.code}):
            rule = rule_by_code(code)
            diagnostic = rule.judge(site, folded, found.never) if isinstance(rule, OutcomeRule) else None
            if diagnostic is not None:
                alone.setdefault(site, []).append(diagnostic)
    _ALONE[facts] = (found, alone)
    return alone


def _with_followers(diagnostic: Diagnostic, facts: Iterable[SiteFact], found: Cascades,
                    alone: Mapping[Site, list[Diagnostic]]) -> Diagnostic:
    """``diagnostic`` with the calls that fail again past it over the same tensor (:mod:`rules.cascades`), and
    the findings they would be on their own (reported where a ``# noqa`` silences this one)."""
    shown = {(r.file, r.row, r.column) for r in diagnostic.related}
    notes = []
    for fact in facts:
        for site in found.followers.get(id(fact), ()):
            diagnostic.folded.extend(own for own in alone.get(site, ())
                                     if all(own is not seen for seen in diagnostic.folded))
            if (site.file, site.line, site.col + 1) not in shown and (site.file, site.line) != (diagnostic.file,
                                                                                                diagnostic.row):
                shown.add((site.file, site.line, site.col + 1))
                notes.append(Related(site.file, site.line, site.col + 1, f"{FAILS_HERE_TOO}, over the same tensor"))
    if notes:
        diagnostic.related = [*diagnostic.related,
                              *sorted(notes, key=lambda r: (r.file, r.row, r.column))[:MAX_RELATED]]
    return diagnostic


def fed_back_passes(site_facts: list[SiteFact]) -> frozenset[Possibility]:
    """The combinations that succeed at a site only with a result of the site itself as an operand
    (``SiteFact.fed_back``), when no other combination succeeds: such a result exists only once the call has
    succeeded, which it never does, so those successes are hypothetical, as on a path past a failure. The heap
    joins every store, so a pass after the failing one reads the result the analysis went on with
    (docs/analyzer.md, "Going on past a failure")."""
    passes = {p for f in site_facts for p in f.possibilities if not p.failed}
    if not passes or not any(p.failed for f in site_facts for p in f.possibilities):
        return frozenset()
    own = frozenset(p for f in site_facts for p in f.fed_back)
    return own if own == passes else frozenset()


def short_operands(failing: Possibility, file: str) -> str:
    """Each operand as its device and origin: "arg0 cuda:0 tensor (nn.Linear output, line 25), arg1 ..."; an
    origin in another file than ``file`` (where the finding is) names it."""
    parts = []
    for role, atom in failing.operands:
        text = atom.reveal() if hasattr(atom, "reveal") else repr(atom)
        origin = getattr(atom, "origin", None)
        if origin is not None:
            brief = origin.brief()
            if origin.file == file:
                brief = brief.removesuffix(f" at {origin.where}") + f", line {origin.line}"
            text = f"{text.split(',')[0]} ({brief})"
        parts.append(f"{role} {text.split(',')[0] if origin is None else text}")
    return ", ".join(parts)


def _passes_through(context: Context, anchor: Anchor, depth: int = 0) -> bool:
    """Whether a caller path into ``context`` goes through the call at ``anchor``."""
    for link in context.callers:
        if (link.file, link.line, link.col) == (anchor.file, anchor.line, anchor.col):
            return True
        if link.caller is not None and depth < MAX_DEPTH and _passes_through(link.caller, anchor, depth + 1):
            return True
    return False


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
