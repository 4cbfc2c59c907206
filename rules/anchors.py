"""Where a failure caused by an argument is reported: at the call that passed the operand, where the user fixes it.

A device mismatch inside a function is the caller's mistake when a failing operand came in through the function's
arguments (a batch fed to ``model(x)``, a tensor handed to a helper) and no failing operand was made inside the
function. The finding moves to the call that passed it, and further out while the operand came into the calling
function through its own arguments too: the outermost call in the project's code whose argument carries the
state. The failing call stays attached as the diagnostic's inner location. An operand derived from an argument by
ops that keep its device (``target == c``, ``y.float()``, ``x.view(b, -1)``, a layer's output) counts as that
argument: its provenance (``TorchTensorAtom.source``) names where the argument's tensor was made. So does a tensor
a container argument holds (``x, y = batch``, ``batch["labels"]``, ``batch.y`` of a record): a context's argument
origins include them (:func:`analyzer.engine.dispatch_helpers.argument_origins`).

Only where every step is known: an operand with no known origin, a failing operand made in the function itself,
or one that reached it otherwise (a global, a closure, an attribute) leaves the finding where it fails.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from devicelint.facts import CallerLink, Context, Possibility, SiteFact

#: How far out a finding may move (caller links followed from the failing function).
MAX_DEPTH = 8
#: How many distinct calls one failing context may move a finding to (a helper called from many places).
MAX_ANCHORS = 8

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Anchor:
    """The call a finding moves to."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int


def _owns(context: Context, file: str, line: int, spans: dict[str, list[Span]]) -> bool:
    """Whether ``file:line`` lies in the code ``context`` runs itself."""
    if file != context.file:
        return False
    if context.function is None:  # a module's top level: its lines outside every function
        return not any(first <= line <= last for first, last in spans.get(file, ()))
    first, last = context.span
    return first <= line <= last


def _carried(context: Context, possibilities: Iterable[Possibility],
             spans: dict[str, list[Span]]) -> frozenset[tuple[str, int, int]] | None:
    """Where the failing operands got their states, when every one came in through the context's arguments or
    is a parameter or buffer of a module on an accelerator (the module was moved; the input was not); None
    otherwise. A weight left on the CPU next to an input on a GPU may be the module's own mistake (a layer in a
    plain list, a buffer replaced by a host tensor) as much as the caller's (a model never moved): it stays."""
    carried: set[tuple[str, int, int]] = set()
    for possibility in possibilities:
        for _role, atom in possibility.operands:
            if getattr(atom, "owned", False):
                if getattr(getattr(atom, "dev", None), "type", "cpu") == "cpu":
                    return None
                continue
            # a tensor derived from another by ops that keep its device (``target == c``, ``y.float() * 0.9``)
            # came in where that one did
            origin = getattr(atom, "provenance", None) or getattr(atom, "origin", None)
            if origin is None or not origin.line:
                return None
            where = (origin.file, origin.line, origin.col)
            if where not in context.arg_origins or _owns(context, origin.file, origin.line, spans):
                return None
            carried.add(where)
    return frozenset(carried) or None


def _climb(link: CallerLink, carried: frozenset[tuple[str, int, int]], spans: dict[str, list[Span]],
           depth: int) -> list[Anchor] | None:
    """The calls, from ``link`` outwards, that pass the ``carried`` states; None where a path is not known."""
    if not link.end_line:
        return None
    here = [Anchor(link.file, link.line, link.col, link.end_line, link.end_col)]
    caller = link.caller
    if caller is None or caller.function is None or caller.uncalled or not caller.callers or depth >= MAX_DEPTH \
            or any(_owns(caller, file, line, spans) for file, line, _col in carried):
        return here
    further = carried & caller.arg_origins
    if not further:  # the caller got the state itself (a call it made, a global): its call passes it
        return here
    anchors: list[Anchor] = []
    for outer in caller.callers:
        found = _climb(outer, further, spans, depth + 1)
        if found is None:
            return None
        anchors.extend(a for a in found if a not in anchors)
    return anchors


def anchors_for(fact: SiteFact, code: str, spans: dict[str, list[Span]]) -> list[Anchor] | None:
    """The calls a failing fact moves to, or None when it stays at its own site."""
    context = fact.context
    if context.function is None or context.uncalled or not context.callers:
        return None
    carried = _carried(context, (p for p in fact.possibilities if p.code == code), spans)
    if carried is None:
        return None
    anchors: list[Anchor] = []
    for link in context.callers:
        found = _climb(link, carried, spans, 1)
        if found is None:
            return None
        anchors.extend(a for a in found if a not in anchors)
    return anchors if 0 < len(anchors) <= MAX_ANCHORS else None
