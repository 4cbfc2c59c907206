"""Lifting: evaluate runtime_shim.semantics cells over sets of abstract states.

Every function here takes abstract operand values, classifies each combination
of possibilities into a cell key exactly as ``runtime_shim`` classifies
concrete operands, looks the cell up with :func:`runtime_shim.semantics.cell`
(or :func:`~runtime_shim.semantics.move_path`), and returns

* the result value: the join of the result states of the combinations that
  succeed, built from the cell's ``Ok`` fields as the runtime builds them;
* one :class:`~analyzer.facts.Possibility` per combination (its outcome, and
  Burn's message rendered with the same values the runtime renders it with);
* whether some combination is unknown (an operand is ⊤, or a cell key depends
  on something the analysis does not know).

Nothing here decides by itself whether a call fails: that is always a cell.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from runtime_shim import semantics as S
from runtime_shim.semantics import (
    AF,
    CAPTURE_CLASSES,
    CC,
    CC_INT,
    CheckpointingStrategy,
    Fail,
    Place,
    Role,
    TensorClass,
)

from . import shim_api
from .choices import consistent
from .domain import (
    BOTTOM,
    NONE,
    TOP,
    Atom,
    Const,
    DeviceAtom,
    GradsAtom,
    Origin,
    PlainDev,
    ScopeId,
    TensorAtom,
    V,
    Value,
    const,
    same_device,
)
from .facts import Possibility
from .shim_api import BinarySpec, UnarySpec

#: Above this many combinations at one site, the site is left unknown.
MAX_COMBINATIONS = 512


@dataclass
class Lifted:
    """The outcome of one call over sets: results, per-combination outcomes, unknown parts."""

    results: Value = BOTTOM
    intended: Value = BOTTOM  # what the failing combinations would have given had they succeeded
    possibilities: list[Possibility] = field(default_factory=list)
    unknown: bool = False
    operands: dict[str, Value] = field(default_factory=dict)  # the operands' values, by role

    def given(self, **operands: Value) -> Lifted:
        for role, value in operands.items():
            self.operands[role] = self.operands[role].join(value) if role in self.operands else value
        return self

    def ok(self, result: Atom | Value, operands: tuple, row: str, redirected: str | None = None) -> None:
        self.possibilities.append(Possibility(operands, None, "", row, redirected))
        self.results = self.results.join(result if isinstance(result, Value) else V(result))

    def fail(self, outcome: Fail, operands: tuple, row: str, redirected: str | None = None,
             intended: Atom | Value = TOP, **values: object) -> None:
        """A failing combination; ``intended``: the state the user meant the call to give (the analysis goes on
        with it past a call that fails on every path; ``TOP`` where nothing is sensible)."""
        self.possibilities.append(Possibility(operands, outcome.code, outcome.render(**values), row, redirected))
        self.intended = self.intended.join(intended if isinstance(intended, Value) else V(intended))

    def finish(self) -> Lifted:
        if self.unknown:
            self.results = self.results.join(TOP)
        return self

    @property
    def continued(self) -> Value:
        """The result the analysis goes on with after a call that fails on every path: the intended state."""
        return self.intended if not self.intended.is_bottom else TOP

    @property
    def always_fails(self) -> bool:
        """Every combination fails and none is unknown: the call raises on every path."""
        return not self.unknown and bool(self.possibilities) and all(p.failed for p in self.possibilities)


def _unknown_if(lifted: Lifted, *values: Value) -> None:
    if any(v.top for v in values):
        lifted.unknown = True


def active_scope(scopes: frozenset[ScopeId], dev: PlainDev) -> ScopeId | None:
    """The open scope on a capture device (at most one: a second one is ``ALREADY_ACTIVE``)."""
    for scope in scopes:
        if scope.capture == dev.index:
            return scope
    return None


def _capture_use(profile: str, tensors: Iterable[TensorAtom], scopes: frozenset[ScopeId]) -> tuple[S.Row, Fail] | None:
    """The capture-use check the runtime runs before an op (first failing operand)."""
    for t in tensors:
        if t.cls in CAPTURE_CLASSES:
            row, outcome = S.decided_cell("capture_use", profile, scope=t.scope is not None and t.scope in scopes)
            if isinstance(outcome, Fail):
                return row, outcome
    return None


def _apply(operands: Sequence[TensorAtom], first: TensorAtom, route_ad: bool, strategy: CheckpointingStrategy | None,
           kind: str, backward: bool, origin: Origin, forced: TensorClass | None = None,
           role: Role | None = None) -> TensorAtom:
    """The result state of an executed op (``Tensor._apply`` / ``_capture_apply``)."""
    if any(t.cls in CAPTURE_CLASSES for t in operands):
        scope = first.scope if first.cls in CAPTURE_CLASSES else next(t.scope for t in operands if t.scope)
        cls = CC if kind == "float" else CC_INT
        return TensorAtom(kind, first.dev, cls, strategy, None, scope, _keep_origin(first, cls, origin))
    cls = forced or S.class_of(kind, route_ad and kind == "float", strategy is not None)
    if cls is not AF:
        return TensorAtom(kind, first.dev, cls, strategy, None, None, _keep_origin(first, cls, origin))
    tracked = any(t.cls is AF and t.role is not Role.UNTRACKED for t in operands)
    result_role = Role.NON_LEAF if tracked and backward else (role or Role.UNTRACKED)
    return TensorAtom(kind, first.dev, cls, strategy, result_role, None, _keep_origin(first, cls, origin))


def _keep_origin(source: TensorAtom, cls: TensorClass, origin: Origin) -> Origin | None:
    """An op result keeps its routing operand's origin while its class is unchanged."""
    return source.origin if cls is source.cls and source.origin is not None else origin


# --- to_device ----------------------------------------------------------------------------


def _place(t: TensorAtom, target: PlainDev) -> Place:
    """Where the target lies relative to the tensor (``Tensor.to_device``'s classification)."""
    if t.cls in CAPTURE_CLASSES:
        if target.is_capture:
            return Place.SAME_CAPTURE if target.index == t.dev.index else Place.OTHER_CAPTURE
        return Place.OTHER_BACKEND
    if target.is_capture:
        return Place.OTHER_CAPTURE
    return Place.SAME_BACKEND if target.backend == t.dev.backend else Place.OTHER_BACKEND


def move(profile: str, tensor: Value, device: Value, scopes: frozenset[ScopeId], origin: Origin) -> Lifted:
    out = Lifted().given(tensor=tensor, device=device)
    _unknown_if(out, tensor, device)
    for t in tensor.tensors():
        for d in device.devices():
            operands = (("tensor", t), ("device", d))
            place = _place(t, d.dev)
            scope = active_scope(scopes, d.dev) if d.dev.is_capture else None
            try:
                redirected, row_id, outcome = S.move_path(profile, t.cls, d.ad, place, scope is not None)
            except LookupError:
                out.unknown = True
                continue
            if isinstance(outcome, Fail):
                out.fail(outcome, operands, row_id, redirected, _intended_move(t, d, origin), id="?")
                continue
            out.ok(_moved(t, outcome, d, scope, origin, redirected), operands, row_id, redirected)
    return out.finish()


def _intended_move(t: TensorAtom, d: DeviceAtom, origin: Origin) -> TensorAtom:
    """A move that failed, as if it had succeeded: the tensor on the target, in the target's class."""
    if d.dev.is_capture:
        cls = CC if t.kind == "float" else CC_INT
        return TensorAtom(t.kind, d.dev, cls, d.strategy, None, None, origin)
    cls = S.class_of(t.kind, d.ad and t.kind == "float", d.strategy is not None)
    role = (t.role or Role.UNTRACKED) if cls is AF else None
    return TensorAtom(t.kind, d.dev, cls, d.strategy if cls is AF else None, role, None,
                      replace(origin, what=f"moved to {d.reveal()} (the move fails)"))


def _moved(t: TensorAtom, outcome: S.Ok, d: DeviceAtom, scope: ScopeId | None, origin: Origin,
           redirected: str | None) -> TensorAtom:
    """``Tensor._moved``: the moved tensor's state."""
    cls = outcome.result or t.cls
    strategy = d.strategy if outcome.strategy is S.StrategyFrom.TARGET else t.strategy
    if outcome.transfer is S.Transfer.NONE:
        return t
    what = f"moved to {d.reveal()}"
    if redirected is not None:
        what += f" (lands on {d.dev.text()}, not autodiff)"
    moved_origin = replace(origin, what=what)
    if outcome.transfer in (S.Transfer.CAPTURE_INIT, S.Transfer.CAPTURE_COPY):
        return TensorAtom(t.kind, d.dev, cls, strategy, None, scope, moved_origin)
    if outcome.transfer in (S.Transfer.AUTODIFF, S.Transfer.AUTODIFF_HOST) and t.role is not Role.UNTRACKED:
        return TensorAtom(t.kind, d.dev, cls, strategy, Role.NON_LEAF, None, moved_origin)
    return TensorAtom(t.kind, d.dev, cls, strategy, t.role if cls is AF else None, None, moved_origin)


# --- creation --------------------------------------------------------------------------------


def create(profile: str, kinds: Iterable[str], device: Value, scopes: frozenset[ScopeId], origin: Origin,
           closed: frozenset[ScopeId] = frozenset()) -> Lifted:
    """Creation on ``device``; ``closed``: scopes whose ``complete()`` already ran (a creation on their
    device fails as burn-capture's closed session does, before the creation cell is looked at)."""
    out = Lifted().given(device=device)
    _unknown_if(out, device)
    for kind in kinds:
        for d in device.devices():
            plain = d.dev
            kind_of_device = "capture" if plain.is_capture else "plain"
            where = {"capture": "autodiff-capture", "plain": "autodiff"}[kind_of_device] if d.ad else kind_of_device
            scope = active_scope(scopes, plain) if plain.is_capture else None
            row, outcome = S.decided_cell("create", profile, dtype="float" if kind == "float" else "int", device=where,
                                  scope=scope is not None)
            if scope is None and plain.is_capture and active_scope(closed, plain) is not None:
                row, outcome = S.decided_cell("capture_use", profile, scope=False)
            operands = (("device", d),)
            if isinstance(outcome, Fail):
                made = replace(origin, what=f"created on {d.reveal()} (the call fails)", created_on=d.reveal())
                if plain.is_capture:
                    meant = TensorAtom(kind, plain, CC if kind == "float" else CC_INT, None, None, None, made)
                else:
                    cls = S.class_of(kind, d.ad and kind == "float", d.strategy is not None)
                    meant = TensorAtom(kind, plain, cls, d.strategy if cls is AF else None,
                                       Role.UNTRACKED if cls is AF else None, None, made)
                out.fail(outcome, operands, row.id, intended=meant)
                continue
            strategy = d.strategy if outcome.strategy is S.StrategyFrom.TARGET else None
            made = replace(origin, what=f"created on {d.reveal()}", created_on=d.reveal())
            if scope is not None:
                atom = TensorAtom(kind, plain, _created_class(outcome), strategy, None, scope, made)
            else:
                atom = TensorAtom(kind, plain, _created_class(outcome), strategy, outcome.role, None, made)
            out.ok(atom, operands, row.id)
    return out.finish()


# --- operations ------------------------------------------------------------------------------


def binary(profile: str, spec: BinarySpec, lhs: Value, rhs: Value, scopes: frozenset[ScopeId],
           origin: Origin, fill_kinds: Sequence[str] | None = None) -> Lifted:
    """A two-input op between tensors: capture use, the device check, strategy, backend match.

    ``fill_kinds``: for ``mask_fill``, the kinds of the fill value (``None``: unknown, the lhs's kind).
    """
    out = Lifted().given(lhs=lhs, rhs=rhs)
    _unknown_if(out, lhs, rhs)
    burn_name = S.CHECKED_OPS.get(spec.name)
    # operands of one undecided choice's two ways never meet (:mod:`analyzer.choices`)
    together = [(left, right) for left in lhs.tensors() for right in rhs.tensors()]
    kept = {(left, right) for left, right in together if consistent(left.tags, right.tags)} or set(together)
    for left in lhs.tensors():
        for right in rhs.tensors():
            if (left, right) not in kept:
                continue
            if spec.operands == "same" and (left.kind == "float") != (right.kind == "float"):
                continue  # the runtime raises TypeError: not a dispatch failure
            if spec.operands == "mask":
                if right.kind != "bool":
                    continue
                found = {shim_api.scalar_op_kind(spec.name, left.kind, k) for k in fill_kinds or (left.kind,)}
            else:
                found = {shim_api.binary_kind(spec.name, left.kind, right.kind)}
            # None: the executor raises TypeError (arithmetic on bool) after the checks below
            kinds = {kind for kind in found if kind is not None}
            operands = (("lhs", left), ("rhs", right))
            # the result the op would have had: the first operand's device, class and strategy
            meant = V(*(_apply((left, right), left, left.cls is AF, left.strategy, kind, spec.backward,
                               _op_origin(origin, spec.name)) for kind in sorted(kinds))) if kinds else TOP
            failed = _capture_use(profile, (left, right), scopes)
            if failed is not None:
                out.fail(failed[1], operands, failed[0].id, intended=meant)
                continue
            if burn_name is not None:
                same = same_device(left.dev, right.dev)
                if same is None:
                    out.unknown = True
                    continue
                row, outcome = S.decided_cell("device_check", profile, same_device=same)
                if isinstance(outcome, Fail):
                    out.fail(outcome, operands, row.id, intended=meant, op=burn_name,
                             lhs=left.reported_device().reveal(),
                             rhs=right.reported_device().reveal())
                    continue
            row, outcome = S.decided_cell("strategy", profile, lhs=left.strategy, rhs=right.strategy)
            if isinstance(outcome, Fail):
                out.fail(outcome, operands, row.id, intended=meant, lhs=left.strategy, rhs=right.strategy)
                continue
            strategy = {S.StrategyFrom.CLEAR: None, S.StrategyFrom.LHS: left.strategy,
                        S.StrategyFrom.RHS: right.strategy}.get(
                outcome.strategy, S.strategy_result(left.strategy, right.strategy))
            row, outcome = S.decided_cell("backend", profile, lhs=S.route_of(left.cls), rhs=S.route_of(right.cls),
                                  same_backend=left.dev.backend == right.dev.backend)
            if isinstance(outcome, Fail):
                out.fail(outcome, operands, row.id, intended=meant, lhs=left.kind_debug(), rhs=right.kind_debug(),
                         name=S.input_name(spec.name))
                continue
            if not kinds:
                continue  # passes every dispatch check, then the executor raises TypeError
            route_ad = left.cls is AF or outcome.result is AF  # a backend cell may merge into autodiff
            results = V(*(_apply((left, right), left, route_ad, strategy, kind, spec.backward,
                                 _op_origin(origin, spec.name)) for kind in sorted(kinds)))
            out.ok(results, operands, row.id)
    return out.finish()


def _op_origin(origin: Origin, name: str) -> Origin:
    return replace(origin, what=f"result of {name}")


def unary(profile: str, spec: UnarySpec, value: Value, scopes: frozenset[ScopeId], origin: Origin) -> Lifted:
    """A one-tensor op or cast."""
    out = Lifted().given(tensor=value)
    _unknown_if(out, value)
    for t in value.tensors():
        if t.kind not in spec.kinds:
            continue  # TypeError in the runtime
        kind = t.kind if spec.result_kind == "same" else spec.result_kind
        _unary_one(out, profile, spec.cast, spec.name, t, kind, spec.backward, scopes, origin)
    return out.finish()


def scalar_op(profile: str, spec: BinarySpec, value: Value, scalar_kinds: Iterable[str],
              scopes: frozenset[ScopeId], origin: Origin) -> Lifted:
    """A binary op with a Python scalar (``t * 2.0``, ``2.0 - t``): the runtime runs it as a unary op."""
    out = Lifted().given(tensor=value)
    _unknown_if(out, value)
    for t in value.tensors():
        for kind in {shim_api.scalar_op_kind(spec.name, t.kind, k) for k in scalar_kinds}:
            _unary_one(out, profile, "unary", spec.name, t, kind, spec.backward, scopes, origin)
    return out.finish()


def _unary_one(out: Lifted, profile: str, cast: str, name: str, t: TensorAtom, kind: str | None, backward: bool,
               scopes: frozenset[ScopeId], origin: Origin) -> None:
    """One tensor through a unary op; ``kind`` ``None``: the executor raises TypeError after the checks."""
    operands = (("tensor", t),)
    meant = t if kind is None or kind == t.kind else t.replace(kind=kind, origin=_op_origin(origin, name))
    failed = _capture_use(profile, (t,), scopes)
    if failed is not None:
        out.fail(failed[1], operands, failed[0].id, intended=meant)
        return
    row, outcome = S.decided_cell("unary", profile, op=cast, cls=t.cls)
    if isinstance(outcome, Fail):
        out.fail(outcome, operands, row.id, intended=meant)
        return
    if cast == "to_float" and t.kind == "float":
        out.ok(t, operands, row.id)  # ``float()`` of a float is the tensor itself
        return
    if kind is None:
        return
    forced = None if t.cls in CAPTURE_CLASSES else outcome.result
    result = _apply((t,), t, t.cls is AF, t.strategy, kind, backward, _op_origin(origin, name), forced,
                    outcome.role)
    out.ok(result, operands, row.id)


def multi(profile: str, family: str, first: Value, others: Sequence[tuple[str, Value]],
          scopes: frozenset[ScopeId], origin: Origin, op: str) -> Lifted:
    """An op routed on its first input (``mask_where``: family "input"; ``Tensor.cat``: "cat")."""
    out = Lifted().given(**{"tensor" if family == "input" else "tensors[0]": first}, **dict(others))
    _unknown_if(out, first, *(v for _n, v in others))
    # the first input's states, then (name, state) of each other input's
    pools: list[list[Any]] = [first.tensors(), *([(name, t) for t in v.tensors()] for name, v in others)]
    count = 1
    for pool in pools:
        count *= len(pool)
    if count > MAX_COMBINATIONS:
        out.unknown = True
        return out.finish()
    combos = list(itertools.product(*pools))
    combos = [c for c in combos if consistent(c[0].tags, *(t.tags for _n, t in c[1:]))] or combos
    for combo in combos:
        head: TensorAtom = combo[0]
        rest: list[tuple[str, TensorAtom]] = list(combo[1:])
        if op == "mask_where":
            mask, value = rest[0][1], rest[1][1]
            if mask.kind != "bool" or (value.kind == "float") != (head.kind == "float"):
                continue  # TypeError before any dispatch check
        elif op == "cat" and any(t.kind != head.kind for _n, t in rest):
            continue  # Burn's cat takes tensors of one kind: TypeError before any dispatch check
        operands = (("tensor" if family == "input" else "tensors[0]", head), *rest)
        data = [head, *(t for n, t in rest if n != "mask")]
        meant = _apply((head, *(t for _n, t in rest)), head, head.cls is AF, head.strategy,
                       shim_api.promote(*(t.kind for t in data)), True, _op_origin(origin, op))
        failed = _capture_use(profile, (head, *(t for _n, t in rest)), scopes)
        if failed is not None:
            out.fail(failed[1], operands, failed[0].id, intended=meant)
            continue
        route = S.route_of(head.cls)
        verdict: tuple[S.Row, S.Outcome] | None = None
        strategy, route_ad = head.strategy, head.cls is AF
        for name, other in rest:
            row, outcome = S.decided_cell("multi", profile, family=family, first=route, other=S.route_of(other.cls),
                                  same_backend=head.dev.backend == other.dev.backend)
            if isinstance(outcome, Fail):
                out.fail(outcome, operands, row.id, intended=meant, name=name, backend=head.dev.backend)
                verdict = None
                break
            if outcome.strategy is S.StrategyFrom.VALIDATED:  # the inputs' strategies merge (a profile's cell)
                srow, merged = S.cell("strategy", profile, lhs=strategy, rhs=other.strategy)
                if isinstance(merged, Fail):
                    out.fail(merged, operands, srow.id, intended=meant, lhs=strategy, rhs=other.strategy)
                    verdict = None
                    break
                strategy = S.strategy_result(strategy, other.strategy)
            route_ad = route_ad or outcome.result is AF  # a plain float merged into autodiff
            verdict = (row, outcome)
        else:
            if route_ad != (head.cls is AF) or strategy != head.strategy:
                meant = _apply((head, *(t for _n, t in rest)), head, route_ad, strategy,
                               shim_api.promote(*(t.kind for t in data)), True, _op_origin(origin, op))
            out.ok(meant, operands, verdict[0].id if verdict else "multi.single")
    return out.finish()


# --- the autodiff API ---------------------------------------------------------------------------


def _created_class(outcome: S.Ok) -> S.TensorClass:
    """The class a ``create`` row gives the new tensor (every such row names one)."""
    if outcome.result is None:
        raise LookupError("a create row without a result class")
    return outcome.result


def _api_cell(profile: str, call: str, t: TensorAtom) -> tuple[S.Row, S.Ok | S.Fail]:
    return S.decided_cell("autodiff", profile, call=call, cls=t.cls, role=t.role if t.cls is AF else None)


def autodiff(profile: str, call: str, value: Value, origin: Origin,
             strategies: Value | None = None, method: str | None = None) -> Lifted:
    """``inner``, ``from_inner``, ``no_grad``, ``detach``, ``require_grad``, ``unrequire_grad``,
    ``with_strategy``, ``backward``, ``grad`` and ``grad_remove`` of every possibility; ``method``: the
    name the program called when it is not the call's own (``without_autodiff`` runs ``no_grad``)."""
    out = Lifted().given(tensor=value)
    _unknown_if(out, value)
    here = replace(origin, what=f"{method or call}()")
    for t in value.tensors():
        row, outcome = _api_cell(profile, call, t)
        operands = (("tensor", t),)
        if isinstance(outcome, Fail):
            out.fail(outcome, operands, row.id, intended=_api_intended(call, t, here))
            continue
        out.ok(_api_result(call, t, outcome, here, strategies, out), operands, row.id)
    return out.finish()


def enable_autodiff(profile: str, call: str, value: Value, origin: Origin, method: str) -> Lifted:
    """``t.autodiff()``: a tensor that reports autodiff as it is (no cell), any other through ``call``'s
    cells (``from_inner``)."""
    enabled = Value(frozenset(t for t in value.tensors() if S.reports_autodiff(t.cls)))
    others = Value(frozenset(t for t in value.tensors() if not S.reports_autodiff(t.cls)), value.top)
    out = autodiff(profile, call, others, origin, method=method) if others.atoms or others.top else Lifted()
    for t in enabled.atoms:
        out.ok(t, (("tensor", t),), "api.already-autodiff")
    return out.given(tensor=value).finish()


def _api_intended(call: str, t: TensorAtom, origin: Origin) -> Value:
    """An autodiff API call that failed, as if it had succeeded (unknown where the class is a guess)."""
    if call == "backward":
        return V(GradsAtom(origin))
    if call in ("detach", "require_grad", "unrequire_grad"):
        return V(t)
    return TOP


def _api_result(call: str, t: TensorAtom, outcome: S.Ok, origin: Origin, strategies: Value | None,
                out: Lifted) -> Value:
    """The result of an autodiff API call that succeeded (``Tensor.inner`` ... in the runtime)."""
    if call in ("inner", "no_grad"):
        if outcome.result is None:
            return V(t)
        return V(t.replace(cls=outcome.result, strategy=None, role=None, origin=origin))
    if call == "from_inner":
        if outcome.result is None:
            return V(t)
        return V(t.replace(cls=outcome.result, strategy=t.strategy or CheckpointingStrategy.DISABLED,
                           role=Role.UNTRACKED if outcome.result is AF else None, origin=origin))
    if call == "detach":
        return V(t.replace(role=outcome.role)) if t.cls is AF else V(t)
    if call == "require_grad":
        if t.cls is not AF or t.role is Role.TRACKED:
            return V(t)
        return V(t.replace(role=outcome.role))
    if call == "unrequire_grad":
        return V(t.replace(role=Role.UNTRACKED)) if t.cls is AF else V(t)
    if call == "with_strategy":
        if strategies is None:
            return TOP
        results = [t.replace(cls=outcome.result or t.cls, strategy=s.value)
                   for s in strategies.atoms if isinstance(s, Const) and isinstance(s.value, CheckpointingStrategy)]
        if strategies.top or len(results) != len(strategies.atoms):
            out.unknown = True
        return V(*results)
    if call == "backward":
        return V(GradsAtom(origin))
    if call in ("grad", "grad_remove"):
        if t.cls is not AF or t.role is Role.UNTRACKED:
            return NONE  # no tape node: never a gradient
        strategy = None if outcome.strategy is S.StrategyFrom.CLEAR else t.strategy
        cls = S.class_of("float", False, strategy is not None)
        grad_origin = replace(origin, what=f"gradient from {call}()")
        return V(TensorAtom("float", t.dev, cls, strategy, None, None, grad_origin), const(None))
    raise ValueError(f"unknown autodiff call {call!r}")


def grad_replace(profile: str, tensor: Value, gradient: Value, origin: Origin) -> Lifted:
    out = Lifted().given(tensor=tensor, gradient=gradient)
    _unknown_if(out, tensor, gradient)
    for t in tensor.tensors():
        row, outcome = _api_cell(profile, "grad_replace", t)
        if isinstance(outcome, Fail):
            out.fail(outcome, (("tensor", t),), row.id, intended=NONE)
            continue
        for g in gradient.tensors():
            operands = (("tensor", t), ("gradient", g))
            row, outcome = S.decided_cell("grad_replace", profile, route=S.route_of(g.cls),
                                  same_backend=g.dev.backend == t.dev.backend,
                                  arm=t.dev.backend not in S.GRAD_REPLACE_NO_ARM)
            if isinstance(outcome, Fail):
                out.fail(outcome, operands, row.id, intended=NONE, lhs=t.kind_debug(), rhs=g.kind_debug())
                continue
            out.ok(NONE, operands, row.id)
    return out.finish()


# --- devices ---------------------------------------------------------------------------------------


def device_call(profile: str, call: str, value: Value, origin: Origin) -> Lifted:
    """``d.autodiff()``, ``d.gradient_checkpointing()``, ``d.gradient_checkpointing_strategy()``."""
    out = Lifted().given(device=value)
    _unknown_if(out, value)
    for d in value.devices():
        row, outcome = S.decided_cell("device", profile, call=call, ad=d.ad)
        operands = (("device", d),)
        here = replace(origin, what=f"{d.reveal()}.{call}()")
        if isinstance(outcome, Fail):
            meant = {"autodiff": CheckpointingStrategy.DISABLED,
                     "gradient_checkpointing": CheckpointingStrategy.BALANCED}
            strategy = meant.get(call)
            out.fail(outcome, operands, row.id, intended=TOP if strategy is None else V(DeviceAtom(
                d.dev, True, d.strategy or strategy, here)))
            continue
        if call == "autodiff":  # an autodiff device is its own autodiff() where the profile allows it
            out.ok(d if d.ad else DeviceAtom(d.dev, True, CheckpointingStrategy.DISABLED, here), operands, row.id)
        elif call == "gradient_checkpointing":
            out.ok(DeviceAtom(d.dev, True, CheckpointingStrategy.BALANCED, here), operands, row.id)
        else:
            out.ok(V(const(d.strategy)), operands, row.id)
    return out.finish()


def device_create(dev: PlainDev, available: frozenset[str] | None, origin: Origin, name: str) -> Lifted:
    """A device constructor: MV112 when the target machine (the configured backends) lacks the backend."""
    out = Lifted()
    atom = DeviceAtom(dev, False, None, replace(origin, what=f"{name}()"))
    out.given(device=V(atom))
    operands = (("device", atom),)
    if available is not None and not dev.is_capture and dev.backend not in available:
        label = f"{dev.backend}({dev.sub})" if dev.sub else dev.backend
        reason = f": not among the target's backends ({', '.join(sorted(available)) or 'none'})"
        out.fail(Fail("MV112", S.MSG_BACKEND_UNAVAILABLE), operands, "backends", intended=atom, backend=label,
                 reason=reason)
        return out.finish()
    out.ok(atom, operands, "backends")
    return out.finish()
