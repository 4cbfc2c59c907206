"""Facts: what the engine established at each call site, for the rules to read.

The engine records one :class:`SiteFact` per (call site of a runtime_shim API,
calling context): the operands' possibilities and, per combination, the outcome
looked up in the semantics table (:class:`Possibility`). Rules read facts and
nothing else; they never resolve names or infer states.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .failures import FileFailure

if TYPE_CHECKING:  # annotations only: reading facts (rules, a cached run) needs no abstract domain
    from .domain import Atom, Origin, Value


@dataclass(frozen=True, slots=True)
class Site:
    """A call expression: file and span as ast gives them (1-based lines, 0-based byte columns)."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    api: str  # e.g. "Tensor.to_device", "Tensor.add", "Device.autodiff", "reveal_device"

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"

    def made(self, origin: Origin) -> bool:
        """Whether ``origin`` is a value this site's own call returned (:attr:`Origin.result`), made by the same
        expression: its file and whole span (a chained call, ``x.add(y).add(z)``, starts where the call inside
        it does)."""
        return origin.result and (origin.file, origin.line, origin.col, origin.end_line, origin.end_col) \
            == (self.file, self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True, slots=True)
class Possibility:
    """One combination of operand states at a site and what the table says it does."""

    operands: tuple[tuple[str, Atom], ...]  # (role, state) e.g. ("tensor", TensorAtom), ("device", DeviceAtom)
    code: str | None  # the failure's rule code; None when the call succeeds
    message: str  # Burn's failure text, rendered as the runtime renders it ("" when ok)
    row: str  # id of the deciding row of the semantics table
    redirected_from: str | None = None  # a Redirect row that was followed (e.g. "move.3")
    #: the command-line option values its operands came from (their tags of choices that name values): the
    #: message names those a failure needs. Not part of what the site saw: one combination met with other
    #: values is recorded with none (:meth:`SiteFact.record`)
    options: frozenset = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        # which undecided choice an operand came from is not part of what the site saw
        if any(getattr(atom, "tags", None) for _role, atom in self.operands):
            from .choices import untagged  # the domain, imported where an analysis runs

            options = frozenset(tag for _role, atom in self.operands for tag in getattr(atom, "tags", ())
                                if tag[0].shown)
            object.__setattr__(self, "operands", tuple((role, untagged(atom)) for role, atom in self.operands))
            object.__setattr__(self, "options", self.options | options)

    @property
    def failed(self) -> bool:
        return self.code is not None

    def describe_operands(self) -> str:
        parts = []
        for role, atom in self.operands:
            text = atom.reveal() if hasattr(atom, "reveal") else repr(atom)
            origin = getattr(atom, "origin", None)
            parts.append(f"{role}: {text}" + (f" ({origin.brief()})" if origin is not None else ""))
        return "; ".join(parts)

    def states(self) -> tuple[str, ...]:
        """The operands' states without where they came from."""
        return tuple(atom.reveal() if hasattr(atom, "reveal") else repr(atom)
                     for _role, atom in self.operands)

    def origins(self) -> Iterator[tuple[str, Origin]]:
        for role, atom in self.operands:
            origin = getattr(atom, "origin", None)
            if origin is not None:
                yield role, origin


@dataclass(slots=True)
class CallerLink:
    """A call site that entered a context."""

    file: str
    line: int
    col: int
    caller: Context | None
    end_line: int = 0  # the call expression's end (0: not known)
    end_col: int = 0


@dataclass(slots=True)
class Context:
    """A calling context: a function analysed for one tuple of argument values (or a module's top level)."""

    id: int
    function: str | None  # qualified name; None for a module's top level
    file: str
    args: tuple[tuple[str, str], ...] = ()  # (parameter, short state text) for the description
    callers: list[CallerLink] = field(default_factory=list)
    uncalled: bool = False  # analysed with unknown arguments because nothing in the project calls it
    entry: str = ""  # the framework that calls it where nothing in the project does ("pytest")
    world: str = ""  # the assumptions this context was analysed under ("CUDA is available and ...")
    #: the command-line option values its caller's statement was split on (program-wide tags of choices that
    #: name values, :attr:`Possibility.options`): every fact of it has them
    options: frozenset = field(default=frozenset(), compare=False, repr=False)
    # the same, one per split (the innermost first): a message names the first, a note the others
    conditions: tuple[str, ...] = ()
    # the split (``WorldAxis.name``) each condition answers: two answers of one split exclude each other
    splits: tuple[str, ...] = ()
    # the function's first and last line (0, 0 for a module's top level): which failing operands it made itself
    span: tuple[int, int] = (0, 0)
    # where the states its arguments hold were made ((file, line, col) of their origins): what came in through them
    arg_origins: frozenset[tuple[str, int, int]] = frozenset()
    # what instances created here are told apart by (0: this id); contexts of one function that differ only in
    # how many module globals changed before the call share one, so that a function storing a new instance into
    # a global does not make every later context, and itself, new again
    allocation: int = 0
    # (file, line, col, caller id) of each caller link: a helper called from thousands of sites is checked in O(1)
    caller_keys: set[tuple[str, int, int, int | None]] = field(default_factory=set, repr=False, compare=False)

    def describe(self, depth: int = 0, hide: frozenset[tuple[str, str]] = frozenset(),
                 condition: str | None = None) -> str:
        """A phrase naming the path into this context, e.g. "when `export` is called from main.py:31 with
        t=Autodiff { ... } float tracked". Arguments in ``hide`` (the same in passing contexts) are left out;
        ``condition`` names the world instead of :attr:`condition`."""
        text = self._describe(depth, hide)
        condition = self.condition if condition is None else condition
        return f"{text} when {condition}" if condition else text

    @property
    def answers(self) -> tuple[tuple[str, str], ...]:
        """(split, condition) of each world split this context was analysed under."""
        return tuple(zip(self.splits, self.conditions, strict=True))

    @property
    def condition(self) -> str:
        """The world in a few words: its first assumption (the others go to a note, :func:`rules.base.related_for`)."""
        return self.conditions[0] if self.conditions else self.world

    def _describe(self, depth: int, hide: frozenset[tuple[str, str]]) -> str:
        if self.function is None:
            return f"at the top level of {os.path.basename(self.file)}"
        if self.entry and not self.callers:
            return f"in `{self.function}` (called by {self.entry})"
        if self.uncalled or not self.callers:
            return f"in `{self.function}` (not called in the analyzed code)"
        link = self.callers[0]
        text = f"when `{self.function}` is called from {os.path.basename(link.file)}:{link.line}"
        if len(self.callers) > 1:
            text += f" (and {len(self.callers) - 1} other call site{'s' if len(self.callers) > 2 else ''})"
        interesting = [f"{name}={state}" for name, state in self.args if state and (name, state) not in hide]
        if interesting:
            text += " with " + ", ".join(interesting)
        outer = link.caller
        if depth < 1 and outer is not None and outer.function is not None and outer.callers:
            outer_link = outer.callers[0]
            text += (f" (inside `{outer.function}` called from "
                     f"{os.path.basename(outer_link.file)}:{outer_link.line})")
        return text

    def add_caller(self, link: CallerLink) -> None:
        """Remember a call site into this context (once per site and calling context)."""
        key = (link.file, link.line, link.col, id(link.caller) if link.caller is not None else None)
        if key not in self.caller_keys:
            self.caller_keys.add(key)
            self.callers.append(link)

    def clear_callers(self) -> None:
        self.callers.clear()
        self.caller_keys.clear()


@dataclass(slots=True)
class SiteFact:
    """Everything known at one site in one context."""

    site: Site
    context: Context
    possibilities: set[Possibility] = field(default_factory=set)
    unknown: bool = False  # some operand state is unknown (no verdict for that part)
    operands: dict[str, Value] = field(default_factory=dict)  # each operand's abstract value, by role
    # reached on a path that has not passed a call failing on every path (see ``State.past_failure``)
    real: bool = False
    # some combination succeeded on a path past such a failure (kept out of ``possibilities``: a hypothetical
    # success does not turn a failure on every real path into a warning)
    passed_past_failure: bool = False
    # succeeding combinations with a result of this very call as an operand (an LSTM's state stored back into
    # ``self.hidden`` and passed to it again): that result exists only once the call has succeeded
    fed_back: set[Possibility] = field(default_factory=set)
    named_options: bool = False  # some possibility names option values (:attr:`Possibility.options`)

    def record(self, possibilities: Iterable[Possibility], past_failure: bool) -> None:
        """Add one visit's combinations; on a path past a failure, only the failing ones count."""
        if not past_failure:
            self.real = True
            for p in possibilities:
                self._add(p)
                if not p.failed and any(self.site.made(origin) for _role, origin in p.origins()):
                    self.fed_back.add(p)
            return
        for p in possibilities:
            if p.failed:
                self._add(p)
            else:
                self.passed_past_failure = True

    def _add(self, p: Possibility) -> None:
        if (not p.options and not self.named_options) or p not in self.possibilities:
            self.possibilities.add(p)
            self.named_options = self.named_options or bool(p.options)
            return
        known = next(q for q in self.possibilities if q == p)
        if known.options != p.options:  # met with other option values too: it names none
            self.possibilities.discard(known)
            self.possibilities.add(dataclasses.replace(p, options=frozenset()))

    @property
    def hypothetical_pass(self) -> bool:
        """Reached only past failures, where some combination succeeded: not a failure on every path."""
        return self.passed_past_failure and not self.real


@dataclass(slots=True)
class RevealFact:
    site: Site
    context: Context
    texts: set[str] = field(default_factory=set)


class FactStore:
    """All facts of one analysis run."""

    def __init__(self) -> None:
        self.sites: dict[tuple[Site, int], SiteFact] = {}
        self.reveals: dict[tuple[Site, int], RevealFact] = {}
        self.file_failures: list[FileFailure] = []
        self.profile: str = ""
        self.target: str = "auto"  # the ``target-device`` the facts were found for (``auto``: both worlds)
        # each file's function definitions, (first line, last line): what code a module's top level runs itself
        self.function_spans: dict[str, list[tuple[int, int]]] = {}
        # (file, line, col, end_line, end_col) -> reveal texts of the expression there (every context);
        # None unless asked for (editors' hover): recording costs a set insert per evaluated expression
        self.expressions: dict[tuple[str, int, int, int, int], set[str]] | None = None
        self._grouped: dict[Site, list[SiteFact]] | None = None
        self._grouped_size: tuple[int, int] = (-1, 0)
        self._codes: tuple[dict, dict[Site, frozenset[str]]] | None = None
        self._by_context: dict[int, list[tuple[dict, tuple[Site, int]]]] = {}  # see index_contexts

    def clear_flow_facts(self) -> None:
        """Forget what a previous engine pass recorded (file failures stay)."""
        self.sites.clear()
        self.reveals.clear()
        if self.expressions is not None:
            self.expressions.clear()
        self._grouped = None

    def index_contexts(self, kept: Iterable[int]) -> None:
        """Start a pass that may keep the facts of the contexts ``kept`` (the rest are forgotten now).

        Each kept context's facts stay until it runs again (:meth:`drop_context`) or the pass ends
        without keeping it (:meth:`drop_indexed`)."""
        kept = set(kept)
        self._by_context = {}
        for facts in (self.sites, self.reveals):
            for key in list(facts):
                if key[1] in kept:
                    self._by_context.setdefault(key[1], []).append((facts, key))
                else:
                    del facts[key]
        if self.expressions is not None:
            self.expressions.clear()
        self._grouped = None

    def keep_context(self, ctx_id: int) -> None:
        """The facts of ``ctx_id`` from the previous pass hold in this one."""
        self._by_context.pop(ctx_id, None)

    def drop_context(self, ctx_id: int) -> None:
        """``ctx_id`` runs again: its previous facts go."""
        for facts, key in self._by_context.pop(ctx_id, ()):
            facts.pop(key, None)
        self._grouped = None

    def drop_indexed(self) -> None:
        """The pass is over: facts of contexts it neither ran nor kept go."""
        for ctx_id in list(self._by_context):
            self.drop_context(ctx_id)

    def site(self, site: Site, context: Context) -> SiteFact:
        key = (site, context.id)
        fact = self.sites.get(key)
        if fact is None:
            fact = self.sites[key] = SiteFact(site, context)
        return fact

    def reveal(self, site: Site, context: Context) -> RevealFact:
        key = (site, context.id)
        fact = self.reveals.get(key)
        if fact is None:
            fact = self.reveals[key] = RevealFact(site, context)
        return fact

    def by_site(self) -> dict[Site, list[SiteFact]]:
        """Site facts grouped by site (all contexts of one site together), in source order.

        Computed once per set of facts (every rule asks for it)."""
        stamp = (len(self.sites), sum(map(id, self.sites.values())))
        if self._grouped is None or self._grouped_size != stamp:
            grouped: dict[Site, list[SiteFact]] = {}
            for (site, _ctx), fact in self.sites.items():
                grouped.setdefault(site, []).append(fact)
            self._grouped = dict(sorted(grouped.items(), key=lambda kv: (kv[0].file, kv[0].line, kv[0].col,
                                                                          kv[0].api)))
            self._grouped_size = stamp
        return self._grouped

    def codes_by_site(self) -> dict[Site, frozenset[str]]:
        """The failure codes some possibility at each site has (a rule skips the sites without its code).

        Computed once per set of facts, like :meth:`by_site`."""
        grouped = self.by_site()
        if self._codes is None or self._codes[0] is not grouped:
            codes = {site: frozenset(p.code for f in site_facts for p in f.possibilities if p.code is not None)
                     for site, site_facts in grouped.items()}
            self._codes = (grouped, codes)
        return self._codes[1]

    def reveals_by_site(self) -> dict[Site, list[RevealFact]]:
        grouped: dict[Site, list[RevealFact]] = {}
        for (site, _ctx), fact in self.reveals.items():
            grouped.setdefault(site, []).append(fact)
        return grouped
