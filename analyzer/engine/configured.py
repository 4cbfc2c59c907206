"""An object configured on one way of a choice: ``if args.cpu: config.device = "cpu"``.

The store happens on one branch only, so the other branch reads what the attribute held before (``"cuda"``
from ``__init__``). Without help, the join keeps both devices untagged, and the heap keeps the old value beside
the new one: every later read of ``config.device`` (here, or in ``train(config)``) could be either, and two
reads would be paired across them, a combination no run reaches. So, for an undecided ``if``:

* on entry, the attributes its branches store on a local instance are read (:func:`configured_before`);
* before the join, a branch that did not store one holds that entry value, restricted to its way
  (:func:`fill_one_sided`), so the branches differ in it and the join tags each value with its way;
* after the join, the attribute's joined value *supersedes* the same values held untagged in the heap
  (:func:`supersede_configured`): methods and callees read the value of each way, never the one from before
  the configuration paired with the new one.

Only outside loops (a loop may store again), from outside the object's class or in one of its own methods
(``if use_gpu: self.alpha = ...`` in ``__init__``). The joined value replaces only the same values the heap held
untagged (the entry value, the branches' own stores): what other code stored stays, as the analysis does not
order methods. An assignment straight in the body of the activation that built the object, outside its class,
replaces all of it (:func:`supersede_top_level`).
"""

from __future__ import annotations

import ast
from typing import Any

from ..choices import Choice, for_heap, restricted, untagged
from ..domain import Instance, Value
from .flow_state import Frame, FrameKind, Overlay, State


def _stored_attributes(node: ast.If) -> tuple[tuple[str, str], ...]:
    """``name.attr`` targets assigned in the branches of ``node`` (not in nested functions or classes)."""
    known = getattr(node, "_devicelint_configured", None)
    if known is not None:
        return known
    found: dict[tuple[str, str], None] = {}
    pending: list[ast.AST] = [*node.body, *node.orelse]
    while pending:
        current = pending.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        targets: list[ast.expr] = []
        if isinstance(current, ast.Assign):
            targets = current.targets
        elif isinstance(current, (ast.AnnAssign, ast.AugAssign)):
            targets = [current.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                found[(target.value.id, target.attr)] = None
        pending.extend(ast.iter_child_nodes(current))
    result = tuple(found)
    node._devicelint_configured = result  # type: ignore[attr-defined]
    return result


def _instance(value: Value | None) -> Instance | None:
    if value is None or value.top or len(value.atoms) != 1:
        return None
    atom = next(iter(value.atoms))
    return atom if isinstance(atom, Instance) else None


def _configurable(overlay: Overlay, st: State, fr: Frame, *, own: bool = False) -> Instance | None:
    """The instance ``overlay`` is an attribute of, when it is configured from outside its class (``own``: or
    from one of its methods)."""
    if fr.loops:
        return None
    atom = _instance(st.vars.get(overlay.base))
    if atom is None or (not own and fr.func is not None and fr.func.cls is atom.cls):
        return None
    return atom


def configured_before(engine: Any, node: ast.If, st: State, fr: Frame) -> dict[Overlay, Value]:
    """On entry to ``node``: what each attribute its branches store on a local instance holds."""
    out: dict[Overlay, Value] = {}
    for base, attr in _stored_attributes(node):
        overlay = Overlay(base, attr)
        atom = _configurable(overlay, st, fr, own=True)
        if atom is None:
            continue
        held = st.overlays.get(overlay)
        if held is None:
            stored = engine.heap_get((atom, attr))
            held = None if stored is None else engine.superseded(atom, attr, stored)
        if held is not None and not held.top:
            out[overlay] = held
    return out


def fill_one_sided(entry: dict[Overlay, Value], true: State, false: State, fr: Frame) -> list[Overlay]:
    """The attributes of ``entry`` the branches stored (on the same instance): a branch that did not store one
    holds its entry value. Returns them all (stored on one branch or on both)."""
    configured: list[Overlay] = []
    if true.dead or false.dead:
        return configured
    for overlay, held in entry.items():
        stored_true, stored_false = overlay in true.overlays, overlay in false.overlays
        if not (stored_true or stored_false):
            continue
        atom = _configurable(overlay, true, fr, own=True)
        if atom is None or _instance(false.vars.get(overlay.base)) != atom:
            continue
        if not stored_true:
            true.overlays[overlay] = held
        elif not stored_false:
            false.overlays[overlay] = held
        configured.append(overlay)
    return configured


def restrict_filled(filled: list[Overlay], choice: Choice, way: bool, true: State, false: State,
                    entry: dict[Overlay, Value]) -> None:
    """A filled entry value on the branch of ``way``'s opposite keeps only what that way allows."""
    for overlay in filled:
        for branch, branch_way in ((true, way), (false, not way)):
            if branch.overlays.get(overlay) is entry[overlay]:
                branch.overlays[overlay] = restricted(entry[overlay], choice, branch_way)


def supersede_configured(engine: Any, filled: list[Overlay], joined: State, fr: Frame) -> None:
    """After the join: each attribute's joined value, each way tagged, supersedes the same values the heap held
    untagged (the branches' own stores, and the entry value a branch kept); what other code stored stays."""
    for overlay in filled:
        after = joined.overlays.get(overlay)
        atom = _configurable(overlay, joined, fr, own=True)
        if after is None or atom is None or after.top:
            continue
        stored = engine.heap_get((atom, overlay.attr))
        if stored is None:
            continue
        held = engine.superseded(atom, overlay.attr, stored)
        plain = {untagged(a) for a in for_heap(after).atoms}
        before = Value(frozenset(a for a in held.atoms if a in plain and a not in after.atoms))
        engine.supersede_attribute(Value(frozenset({atom})), overlay.attr, before, after, fr, in_place=False)


def _top_level_ids(fr: Frame) -> frozenset[int]:
    """The statements directly in the activation's body (run once each, in order, when the body runs)."""
    owner: Any = fr.func.node if fr.func is not None else fr.module.source.tree
    known = getattr(owner, "_devicelint_top_level", None)
    if known is None:
        known = frozenset(id(s) for s in getattr(owner, "body", ()))
        owner._devicelint_top_level = known
    return known


def supersede_top_level(engine: Any, node: ast.Assign | ast.AnnAssign, st: State, fr: Frame) -> None:
    """``config.device = "cpu" if args.cpu else config.device`` straight in the body of the activation that
    built ``config``: after it, the attribute holds the statement's value (each way tagged by the statement's
    runs), superseding what the heap held (``__init__``'s value)."""
    if st.dead or fr.loops or fr.kind is FrameKind.CLASS or id(node) not in _top_level_ids(fr):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            continue
        overlay = Overlay(target.value.id, target.attr)
        atom = _configurable(overlay, st, fr)
        after = st.overlays.get(overlay)
        if atom is None or after is None or after.top or atom.ctx != (fr.ctx.allocation or fr.ctx.id):
            continue
        stored = engine.heap_get((atom, target.attr))
        if stored is not None:
            engine.supersede_attribute(Value(frozenset({atom})), target.attr,
                                       engine.superseded(atom, target.attr, stored), after, fr)
