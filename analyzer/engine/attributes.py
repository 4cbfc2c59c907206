"""Attribute lookup on every kind of value: instances (heap, class, properties), classes, modules, devices."""

from __future__ import annotations

import ast

from runtime_shim.semantics import CheckpointingStrategy
from runtime_shim.texts import CaptureError

from ..choices import for_heap, has_tags, tagged
from ..domain import (
    BOTTOM,
    TOP,
    Atom,
    BoundShim,
    ClassRef,
    Const,
    DeviceAtom,
    DictAtom,
    FuncRef,
    GradsAtom,
    GraphAtom,
    Instance,
    ModuleRef,
    ScopeAtom,
    SeqAtom,
    ShimModule,
    ShimRef,
    TensorAtom,
    V,
    Value,
    const,
)
from ..imports import shim_public_names, shim_submodules
from ..models.base import UNHANDLED
from .flow_state import Frame, Overlay, State
from .mixin import EngineMixin
from .program import DICT_ITEMS, DICT_MUTATORS, DICT_READERS, FunctionKind, SuperRef

#: A tuple's own methods (every other attribute of a tuple is a named tuple's field).
TUPLE_METHODS = frozenset({"count", "index"})
#: the heap key ``(instance, SUPERSEDED + attr)`` holds what in-place changes of ``instance.attr`` replaced
SUPERSEDED = "@superseded:"


class Attributes(EngineMixin):
    """Attribute lookup on every kind of value."""

    def expr_Attribute(self, node: ast.Attribute, st: State, fr: Frame) -> Value:
        self.last_receiver = None
        if isinstance(node.value, ast.Name):
            overlay = st.overlays.get(Overlay(node.value.id, node.attr))
            if overlay is not None:
                return overlay
        obj = self.eval(node.value, st, fr)
        value = self.attribute(obj, node.attr, node, st, fr)
        # the ways of a choice each instance is on (``model.init_hidden(4)`` of a model moved by ``--cuda``): a call
        # of a method read here gives each instance's result on its ways (:meth:`Calls.expr_Call`)
        self.last_receiver = (node, obj.notes) if obj.notes else None
        if value.is_bottom and not obj.is_bottom:
            st.dead = True  # a property that raises on every path
        if not fr.tagged and value.atoms and has_tags(value):
            fr.tagged = True  # (``cfg.device`` holding a lasting choice's ways: the statements after it split)
        return value

    def attribute(self, obj: Value, attr: str, node: ast.expr | None, st: State, fr: Frame) -> Value:
        if node is not None:
            whole = self.model_value_attribute(obj, attr, node, st, fr)
            if whole is not None:
                return whole  # ``t.grad``: read once for all its tensors
        out = TOP if obj.top else BOTTOM
        for atom in obj.atoms:
            value = self.attribute_of(atom, attr, node, st, fr)
            out = out.join(TOP if value is None else value)
        return out

    def forget_dict_items(self, container: Value, fr: Frame) -> None:
        """An instance of a ``dict`` subclass changed what it maps in a way not followed: unknown from now."""
        for atom in container.atoms:
            if isinstance(atom, Instance) and atom.cls.dict_items_kept():
                self.heap_set((atom, DICT_ITEMS), TOP)  # (for every read: what was stored before may be gone)

    def attribute_of(self, atom: Atom, attr: str, node: ast.expr | None, st: State, fr: Frame) -> Value | None:
        """``atom.attr``; ``None`` when unknown."""
        if isinstance(atom, TensorAtom):
            if attr == "kind":
                return V(const(atom.kind))
            return V(BoundShim(atom, attr))
        if isinstance(atom, DeviceAtom):
            if attr in ("backend", "index", "is_capture"):
                return self._device_attr(atom, attr)
            return V(BoundShim(atom, attr))
        if isinstance(atom, ShimRef):
            if atom.name == "CheckpointingStrategy" and attr in CheckpointingStrategy.__members__:
                return V(const(CheckpointingStrategy[attr]))
            if atom.name == "CaptureError" and attr in CaptureError.__members__:
                return V(Const(CaptureError[attr], "CaptureError"))
            if atom.name in ("Device", "Tensor"):
                return V(BoundShim(atom, attr))
            return None
        if isinstance(atom, ShimModule):
            if attr in shim_public_names():
                return V(ShimRef(attr))
            sub = f"{atom.path}.{attr}"
            if sub in shim_submodules():
                return V(ShimModule(sub))
            return None
        if isinstance(atom, ModuleRef):
            return self.module_attr(atom, attr)
        if isinstance(atom, Instance):
            if attr == "__class__":
                return V(ClassRef(atom.cls))
            if attr in DICT_MUTATORS and atom.cls.lookup(attr) is None:
                self.forget_dict_items(V(atom), fr)  # ``enc.update(...)``: what it maps is no longer known
            elif attr in DICT_READERS and atom.cls.lookup(attr) is None and atom.cls.dict_items_kept():
                items = self.attribute(V(atom), DICT_ITEMS, None, st, fr)  # ``self.items()`` in its own ``to()``
                if items.atoms and not items.top and all(isinstance(a, DictAtom) for a in items.atoms):
                    return Value(frozenset(BoundShim(a, attr) for a in items.atoms))
            return self.havoc_attribute(atom.cls, attr, self._instance_attribute(atom, attr, node, st, fr))
        if isinstance(atom, SuperRef):
            found = self.class_lookup(atom.instance.cls, attr, atom.cls) if isinstance(atom.instance, Instance) \
                else None
            if found is None and isinstance(atom.instance, Instance):
                # ``super().to(*args)`` in an override: the library base's own method, on this instance
                inherited = self.model_instance_attribute(atom.instance, attr, node, st, fr)
                if inherited is not None:
                    return inherited
            if found is None:
                return None
            return self._bind_class_attr(found, atom.instance, node, st, fr)
        if isinstance(atom, ClassRef):
            found = self.class_lookup(atom.cls, attr)
            if found is None:
                inherited = self.model_class_attribute(atom.cls, attr)
                if inherited is not None:
                    return inherited  # ``MyFunction.apply``: the library base's classmethod
            if found is None:
                return None
            out = BOTTOM
            for item in found.atoms:
                if isinstance(item, FuncRef) and item.fn.kind is FunctionKind.CLASSMETHOD:
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, atom)))
                else:
                    out = out.join(V(item))
            return out.join(TOP) if found.top else out
        if isinstance(atom, DictAtom) and type(atom) is not DictAtom:
            # a library's mapping (a model's subclass: a tokenizer's encoding) answers its own attributes
            modelled = self.model_attribute(atom, attr, node, st, fr)
            if modelled is not UNHANDLED:
                return modelled
        if isinstance(atom, SeqAtom) and atom.kind == "tuple" and attr not in TUPLE_METHODS:
            # a library's named tuple (``torch.topk(t, k).indices``) answers its fields; a plain tuple has none
            modelled = self.model_attribute(atom, attr, node, st, fr)
            if modelled is not UNHANDLED:
                return modelled
        if isinstance(atom, (ScopeAtom, DictAtom, SeqAtom, GradsAtom, GraphAtom)):
            return V(BoundShim(atom, attr))
        modelled = self.model_attribute(atom, attr, node, st, fr)
        return None if modelled is UNHANDLED else modelled  # a library name or object (``torch.cuda``, ``t.device``)

    def supersede_attribute(self, owner: Value, attr: str, before: Value, after: Value, fr: Frame,
                            in_place: bool = True) -> None:
        """``owner.attr`` now holds ``after`` where it held ``before``: the object it held changed in place (a
        module's move, a container's item replaced, a dataset formatted), so every method reads the new one.
        Stored as any attribute (the heap only grows, which keeping runs across passes relies on), and what the
        change superseded is noted apart, so that reads leave it out (:meth:`superseded`). ``in_place``: ``before``
        is what the object was before an in-place change (on a path that took one way of a command-line option
        it stays on the other way); else a configuration's old and branch values (gone on every way)."""
        # changed on a path that took one way of a command-line option (``if not args.cpu: self.model.cuda()``):
        # the new value is that way's, the old one stays on the other way
        ways = self.path_ways
        if ways:
            after = tagged(after, ways)
        self.store_attribute(owner, attr, after, fr)
        kept = for_heap(after)  # (as the heap holds it: an activation's choices made lasting)
        gone = Value(frozenset(before.atoms - kept.atoms)) if not before.top else BOTTOM
        if not gone.atoms:
            return
        if ways and in_place:
            if len(ways) != 1:
                return  # (the other ways are not one tag: the old value stays on every way)
            ((choice, way),) = ways
            saved, self.program_ways = self.program_ways, frozenset()
            try:
                self.store_attribute(owner, attr, tagged(gone, frozenset({(choice, not way)})), fr)
            finally:
                self.program_ways = saved
        for atom in owner.atoms:
            if isinstance(atom, Instance):
                key = (atom, SUPERSEDED + attr)
                old = self.heap.get(key)
                if old is None:
                    self.changes.read_went_stale()  # reads of ``attr`` so far did not look for it: run the pass again
                self.heap_set(key, gone if old is None else old.join(gone))
                self.superseded_names.add(attr)

    def superseded(self, atom: Instance, attr: str, stored: Value) -> Value:
        """``stored`` without what an in-place change superseded (while something else remains)."""
        if attr not in self.superseded_names:
            return stored
        gone = self.heap_get((atom, SUPERSEDED + attr))
        if gone is None:
            return stored
        kept = stored.atoms - gone.atoms
        return Value(frozenset(kept), stored.top) if kept or stored.top else stored

    def _instance_attribute(self, atom: Instance, attr: str, node: ast.expr | None, st: State,
                            fr: Frame) -> Value | None:
        stored = self.heap_get((atom, attr))
        from_class = self.class_lookup(atom.cls, attr)
        if stored is not None:
            return self.model_stored_attribute(atom, attr, self.superseded(atom, attr, stored))
        if from_class is not None:
            return self._bind_class_attr(from_class, atom, node, st, fr)
        # from a library base (``nn.Module.training``); None: set somewhere the analysis does not see, or
        # inherited from an unknown base
        return self.model_instance_attribute(atom, attr, node, st, fr)

    def _bind_class_attr(self, found: Value, instance: Atom, node: ast.expr | None, st: State, fr: Frame) -> Value:
        out = TOP if found.top else BOTTOM
        for item in found.atoms:
            if isinstance(item, FuncRef) and item.bound is None:
                if item.fn.kind is FunctionKind.STATICMETHOD:
                    out = out.join(V(item))
                elif item.fn.kind is FunctionKind.CLASSMETHOD:
                    cls_atom = ClassRef(instance.cls) if isinstance(instance, Instance) else instance
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, cls_atom)))
                elif item.fn.kind is FunctionKind.PROPERTY:
                    getter = FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, instance)
                    out = out.join(self.call(V(getter), [], {}, node, st, fr))
                else:
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, instance)))
            else:
                out = out.join(V(item))
        return out

    @staticmethod
    def _device_attr(atom: DeviceAtom, attr: str) -> Value:
        if attr == "backend":
            return V(const(atom.dev.backend))
        if attr == "is_capture":
            return V(const(atom.dev.is_capture))
        return V(const(atom.dev.index)) if isinstance(atom.dev.index, int) else TOP
