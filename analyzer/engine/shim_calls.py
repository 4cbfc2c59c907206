"""runtime_shim calls: every device and tensor API call evaluated by the semantics table and recorded as a fact."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from runtime_shim import semantics as S
from runtime_shim.texts import CaptureError

from .. import lift
from ..domain import (
    BOTTOM,
    TOP,
    ArrayAtom,
    CaptureId,
    Const,
    DeviceAtom,
    FuncRef,
    GraphAtom,
    Origin,
    PlainDev,
    ScopeAtom,
    ScopeId,
    SeqAtom,
    V,
    Value,
    const,
    reveal_text,
)
from ..facts import Site
from ..models.base import UNHANDLED
from ..shim_api import (
    AUTODIFF_METHODS,
    BINARY,
    CREATORS,
    DEFAULT_DEVICE_CTOR,
    DEVICE_CHECKED,
    DEVICE_CTORS,
    MASK_FILL,
    UNARY,
    BinarySpec,
)
from .dispatch_helpers import created_kinds, merge_lifted, scalar_kinds_of
from .flow_state import (
    COMPLETED_SCOPES,
    COMPLETED_TNAME,
    Frame,
    State,
    completed_scopes,
    past_failure,
    widen_if_large,
)
from .mixin import EngineMixin


class ShimCalls(EngineMixin):
    """runtime_shim calls."""

    def site(self, node: ast.AST, api: str, fr: Frame) -> Site:
        return Site(fr.file, node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                    node.end_col_offset or 0, api)  # type: ignore[attr-defined]

    def origin(self, node: ast.AST, fr: Frame, what: str = "", result: bool = False,
               created_on: str | None = None) -> Origin:
        """Where ``node`` makes a value (``result``: the value it returns, :attr:`Origin.result`; ``created_on``:
        the device a creation puts it on, :attr:`Origin.created_on`)."""
        return Origin(fr.file, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), what,
                      getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0, result,
                      created_on)

    def record(self, site: Site, lifted: lift.Lifted, st: State, fr: Frame) -> Value:
        """Store the facts of one call and return its result. A call that raises on every path is reported and
        the path goes on with the result the user meant it to have (``Lifted.continued``), so the bugs after it
        are found in the same run."""
        fact = self.facts.site(site, fr.ctx)
        fact.record(lifted.possibilities, st.past_failure)
        fact.unknown = fact.unknown or lifted.unknown
        for role, value in lifted.operands.items():
            fact.operands[role] = fact.operands[role].join(value) if role in fact.operands else value
        if not lifted.possibilities and not lifted.unknown:
            return TOP  # no tensor or device reached the call (None, a str ...): not a dispatch question
        if lifted.always_fails:
            return past_failure(lifted.continued, st, self.catching)
        return widen_if_large(lifted.results)

    def call_shim_function(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                           st: State, fr: Frame) -> Value:
        if name == "reveal_device":
            value = args[0] if args else kwargs.get("x", TOP)
            if node is not None:
                fact = self.facts.reveal(self.site(node, "reveal_device", fr), fr.ctx)
                fact.texts.add(reveal_text(value))
            return TOP
        if name in ("Device", "Tensor"):
            return TOP
        return TOP

    def call_method(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST | None, st: State, fr: Frame) -> Value:
        if node is None:
            return TOP
        if kind == "tensor":
            return self.tensor_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "device":
            return self.device_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "Device":
            return self.device_class_method(name, args, kwargs, node, st, fr)
        if kind == "Tensor":
            return self.tensor_class_method(name, args, kwargs, node, st, fr)
        if kind == "scope" and name == "complete":
            scopes = [a.scope for a in receiver.atoms if isinstance(a, ScopeAtom)]
            if scopes and not receiver.top and not st.dead:
                # burn-capture's `complete` closes the session at once: what follows on this path runs
                # after it (one scope known: it is closed; several possible: each may be)
                done = Value(frozenset(Const(s, COMPLETED_TNAME) for s in scopes))
                known = st.vars.get(COMPLETED_SCOPES)
                st.vars[COMPLETED_SCOPES] = done if known is None or len(scopes) == 1 else known.join(done)
            return Value(frozenset(GraphAtom(s) for s in scopes))
        if kind == "dict":
            return self._dict_method(name, receiver, args)
        if kind == "SeqAtom" and name == "copy" and not args:
            return receiver  # ``xs.copy()``: the same elements
        modelled = self.model_method(kind, name, receiver, args, kwargs, node, st, fr)
        return TOP if modelled is UNHANDLED else modelled

    def scoped(self, st: State, fr: Frame, lifting: Callable[[frozenset[ScopeId]], lift.Lifted]) -> lift.Lifted:
        """``lifting`` under the capture scopes open on this path: those of the frame less the ones whose
        ``complete()`` ran before (on some paths only: both ways, so a failure there is a warning)."""
        done, certain = completed_scopes(st)
        done &= fr.scopes
        if not done:
            return lifting(fr.scopes)
        closed = lifting(fr.scopes - done)
        if certain:
            return closed
        out = lifting(fr.scopes)
        merge_lifted(out, closed)
        return out

    def device_class_method(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value:
        spec = DEVICE_CTORS.get(DEFAULT_DEVICE_CTOR if name == "default" else name)
        if spec is not None:
            index: int | None = 0
            if spec.indexed:
                arg = args[0] if args else kwargs.get("index", V(const(0)))
                values = arg.consts()
                index = values[0] if values and len(values) == 1 and isinstance(values[0], int) else None
            dev = PlainDev(spec.backend, spec.sub, index)
            site = self.site(node, f"Device.{spec.backend.lower()}", fr)
            lifted = lift.device_create(dev, self.backends, self.origin(node, fr), f"Device.{name}")
            return self.record(site, lifted, st, fr)
        if name == "capture":
            capture = CaptureId(fr.file, node.lineno, node.col_offset, fr.ctx.id)  # type: ignore[attr-defined]
            return V(DeviceAtom(PlainDev("Capture", None, capture), False, None,
                                self.origin(node, fr, "Device.capture()")))
        return TOP

    def tensor_class_method(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value:
        creator = CREATORS.get(name)
        if creator is not None:
            device = args[creator.device_pos] if len(args) > creator.device_pos else kwargs.get("device")
            if device is None:  # Device.default(): Burn's default device, no call site of its own
                spec = DEVICE_CTORS[DEFAULT_DEVICE_CTOR]
                device = V(DeviceAtom(PlainDev(spec.backend, spec.sub, 0), False, None,
                                      self.origin(node, fr, "Device.default()")))
            kinds = created_kinds(creator, args, kwargs)
            site = self.site(node, f"Tensor.{name}", fr)
            if kinds is None:
                self.facts.site(site, fr.ctx).unknown = True
                return TOP
            closed = completed_scopes(st)[0] & fr.scopes
            lifted = self.scoped(st, fr, lambda scopes: lift.create(fr.profile, kinds, device, scopes,
                                                                    self.origin(node, fr), closed - scopes))
            return self.record(site, lifted, st, fr)
        if name == "from_inner":
            value = args[0] if args else kwargs.get("tensor", TOP)
            lifted = lift.autodiff(fr.profile, "from_inner", value, self.origin(node, fr))
            return self.record(self.site(node, "Tensor.from_inner", fr), lifted, st, fr)
        if name == "cat":
            tensors = args[0] if args else kwargs.get("tensors", TOP)
            return self._cat(tensors, node, st, fr)
        return TOP

    def _cat(self, tensors: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        site = self.site(node, "Tensor.cat", fr)
        lifted = lift.Lifted()
        lifted.unknown = tensors.top
        for atom in tensors.atoms:
            if isinstance(atom, SeqAtom) and atom.items:
                others = [(f"tensors[{i}]", item) for i, item in enumerate(atom.items[1:], 1)]
                head = atom.items[0]
                part = self.scoped(st, fr, functools.partial(lift.multi, fr.profile, "cat", head, others,
                                                             origin=self.origin(node, fr), op="cat"))
                merge_lifted(lifted, part)
            elif isinstance(atom, SeqAtom) and atom.items is None and not atom.elem.is_bottom:
                # a list of unknown length: the first tensor and any other one are each one of the elements
                elem = atom.elem
                rest = [("tensors[1]", elem)]
                part = self.scoped(st, fr, functools.partial(lift.multi, fr.profile, "cat", elem, rest,
                                                             origin=self.origin(node, fr), op="cat"))
                merge_lifted(lifted, part)
            else:
                lifted.unknown = True
        return self.record(site, lifted.finish(), st, fr)

    def tensor_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                      st: State, fr: Frame) -> Value:
        origin = self.origin(node, fr)
        profile = fr.profile
        if name == "to_device":
            device = args[0] if args else kwargs.get("device", TOP)
            return self.record(self.site(node, "Tensor.to_device", fr),
                               self.scoped(st, fr, lambda scopes: lift.move(profile, receiver, device, scopes,
                                                                            origin)), st, fr)
        if name in BINARY or name == "mask_fill":
            spec = BINARY.get(name, MASK_FILL)
            other = args[0] if args else kwargs.get("other", kwargs.get("mask", TOP))
            fill_kinds = None
            if name == "mask_fill":
                fill = args[1] if len(args) > 1 else kwargs.get("value", TOP)
                fill_kinds = scalar_kinds_of(fill) if fill.only(Const) else None
            return self.tensor_binary(spec, receiver, other, node, st, fr, reflected=False, fill_kinds=fill_kinds)
        if name in UNARY:
            lifted = self.scoped(st, fr, lambda scopes: lift.unary(profile, UNARY[name], receiver, scopes, origin))
            return self.record(self.site(node, f"Tensor.{name}", fr), lifted, st, fr)
        if name == "mask_where":
            mask = args[0] if args else kwargs.get("mask", TOP)
            value = args[1] if len(args) > 1 else kwargs.get("value", TOP)
            lifted = self.scoped(st, fr, lambda scopes: lift.multi(profile, "input", receiver,
                                                                   [("mask", mask), ("value", value)], scopes, origin,
                                                                   "mask_where"))
            return self.record(self.site(node, "Tensor.mask_where", fr), lifted, st, fr)
        if name == "grad_replace":
            gradient = args[1] if len(args) > 1 else kwargs.get("gradient", TOP)
            lifted = lift.grad_replace(profile, receiver, gradient, origin)
            return self.record(self.site(node, "Tensor.grad_replace", fr), lifted, st, fr)
        if name in AUTODIFF_METHODS:
            call = AUTODIFF_METHODS[name]
            strategies = None
            if call == "with_strategy":
                strategies = args[0] if args else kwargs.get("strategy", TOP)
            lifted = lift.autodiff(profile, call, receiver, origin, strategies)
            return self.record(self.site(node, f"Tensor.{call}", fr), lifted, st, fr)
        if name == "set_require_grad":
            flag = args[0] if args else kwargs.get("flag", TOP)
            lifted = lift.Lifted()
            truth = flag.truthiness()
            if True in truth or None in truth:
                merge_lifted(lifted, lift.autodiff(profile, "require_grad", receiver, origin))
            if False in truth or None in truth:
                merge_lifted(lifted, lift.autodiff(profile, "unrequire_grad", receiver, origin))
            return self.record(self.site(node, "Tensor.require_grad", fr), lifted.finish(), st, fr)
        if name in S.RENAMED_TENSOR_METHODS:
            if not S.has_tensor_method(profile, name):  # no such method in this profile's Burn
                return TOP
            lifted = lift.autodiff(profile, S.RENAMED_TENSOR_METHODS[name], receiver, origin, method=name)
            return self.record(self.site(node, f"Tensor.{name}", fr), lifted, st, fr)
        if name in S.ENABLING_TENSOR_METHODS:
            if not S.has_tensor_method(profile, name):
                return TOP
            lifted = lift.enable_autodiff(profile, S.ENABLING_TENSOR_METHODS[name], receiver, origin, name)
            return self.record(self.site(node, f"Tensor.{name}", fr), lifted, st, fr)
        if name in S.TENSOR_QUERIES:
            if not S.has_tensor_method(profile, name):
                return TOP
            return Value(frozenset(const(S.query_result(name, t.cls, t.role)) for t in receiver.tensors()),
                         receiver.top)
        if name == "is_require_grad":
            return Value(frozenset(const(S.is_require_grad(t.cls, t.role)) for t in receiver.tensors()),
                         receiver.top)
        if name == S.TENSOR_STRATEGY_QUERY and S.has_tensor_method(profile, name):
            return Value(frozenset(const(t.strategy if S.reports_autodiff(t.cls) else None)
                                   for t in receiver.tensors()), receiver.top)
        if name == "device":
            return Value(frozenset(t.reported_device() for t in receiver.tensors()), receiver.top)
        if name == "to_numpy":  # a host copy: a numpy array of the tensor's kind
            return Value(frozenset(ArrayAtom(t.kind) for t in receiver.tensors()), receiver.top)
        return TOP

    def tensor_binary(self, spec: BinarySpec, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
                      reflected: bool, fill_kinds: list[str] | None = None) -> Value:
        """A two-input op where either side may be a tensor or a Python scalar."""
        origin = self.origin(node, fr)
        lifted = lift.Lifted()
        lifted.unknown = left.top or right.top
        left_tensors = Value(frozenset(left.tensors()))
        right_tensors = Value(frozenset(right.tensors()))
        if left_tensors.atoms and right_tensors.atoms:
            merge_lifted(lifted, self.scoped(st, fr, lambda scopes: lift.binary(
                fr.profile, spec, left_tensors, right_tensors, scopes, origin, fill_kinds=fill_kinds)))
        if spec.scalar and left_tensors.atoms and scalar_kinds_of(right):
            merge_lifted(lifted, self.scoped(st, fr, lambda scopes: lift.scalar_op(
                fr.profile, spec, left_tensors, scalar_kinds_of(right), scopes, origin)))
        if reflected and spec.scalar and right_tensors.atoms and scalar_kinds_of(left) and spec.name in (
                "add", "sub", "mul", "div"):
            merge_lifted(lifted, self.scoped(st, fr, lambda scopes: lift.scalar_op(
                fr.profile, spec, right_tensors, scalar_kinds_of(left), scopes, origin)))
        return self.record(self.site(node, f"Tensor.{spec.name}", fr), lifted.finish(), st, fr)

    def device_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                      st: State, fr: Frame) -> Value:
        if name in DEVICE_CHECKED:
            lifted = lift.device_call(fr.profile, name, receiver, self.origin(node, fr))
            return self.record(self.site(node, f"Device.{name}", fr), lifted, st, fr)
        if name == "inner" or (name == "without_autodiff" and S.has_tensor_method(fr.profile, name)):
            return Value(frozenset(d.inner() for d in receiver.devices()), receiver.top)
        if name == "is_autodiff":
            return Value(frozenset(const(d.ad) for d in receiver.devices()), receiver.top)
        if name == "capture_scope":
            fn = args[0] if args else kwargs.get("fn", TOP)
            return self._capture_scope(receiver, fn, node, st, fr)
        return TOP

    def _capture_scope(self, receiver: Value, fn: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        out = TOP if receiver.top else BOTTOM
        for d in receiver.devices():
            if not d.dev.is_capture or d.ad:
                out = out.join(V(Const(CaptureError.INVALID_DEVICE, "CaptureError")))
                continue
            if lift.active_scope(fr.scopes, d.dev) is not None:
                out = out.join(V(Const(CaptureError.ALREADY_ACTIVE, "CaptureError")))
                continue
            assert isinstance(d.dev.index, CaptureId)
            scope = ScopeId(d.dev.index, fr.file, node.lineno, node.col_offset, fr.ctx.id)  # type: ignore
            result = TOP if fn.top else BOTTOM
            for atom in fn.atoms:
                if isinstance(atom, FuncRef):
                    result = result.join(self.call_function(atom, [V(ScopeAtom(scope))], {}, node, fr, st=st,
                                                            scopes=fr.scopes | {scope}))
                else:
                    result = result.join(TOP)
            none = Const(None, "NoneType")
            if none in result.atoms:
                result = Value(result.atoms - {none}, result.top).join(V(GraphAtom(scope)))
            out = out.join(result)
        return out
