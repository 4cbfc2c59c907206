"""``copy.deepcopy`` of tensors, torch layers and containers of them: a copy is another module.

The EMA teacher or the frozen reference model of a training script is a deep copy of the model, made
before the model moves: ``teacher = copy.deepcopy(model)`` then ``model.cuda()`` leaves the teacher on
the CPU. A deep copy of a library layer is a layer with the same weights' device and a creation site of
its own (the copy's: an in-place move of the original does not reach it); a tensor's copy is a tensor on
the same device with the same autograd role, owned by no module. An instance of a project ``nn.Module``
subclass is copied as a new instance made at the copy, whose attributes are the copies of the original's
(its layers, parameters, buffers and sub-modules where they are now); instances of other project classes,
and anything else, are not followed (unknown).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..domain import TOP, Const, DictAtom, FuncRef, Instance, Origin, SeqAtom, V, Value, map_elements
from ..engine.flow_state import Frame, State
from ..engine.python_values import names_library_function
from ..torch_domain import MODULE_TYPE, TorchDeviceAtom, TorchLayerAtom, TorchTensorAtom
from .base import LibraryModel

#: how deep a copy follows project sub-modules (a module holding a module ...) before giving up
MAX_COPY_DEPTH = 8


class Copies(LibraryModel):
    """``copy.deepcopy``."""

    name = "copy"

    def call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                        star_unknown: bool, st: State, fr: Frame) -> Value | None:
        if func.top and not func.atoms and len(args) == 1 and not kwargs and names_library_function(
                node.func, "copy", "deepcopy", fr.module.source.tree):
            return self.deep_copy(args[0], node, fr)
        return None

    def deep_copy(self, value: Value, node: ast.AST, fr: Frame) -> Value:
        made: dict[Instance, Instance] = {}

        def instance(atom: Instance, depth: int) -> Value:
            if not atom.cls.has_library_base(MODULE_TYPE) or depth > MAX_COPY_DEPTH:
                return TOP
            copy = made.get(atom)
            if copy is None:  # (a module the original reaches twice is one module in the copy too)
                copy = made[atom] = Instance(atom.cls, fr.file, getattr(node, "lineno", 0),
                                             getattr(node, "col_offset", 0) + depth, fr.ctx.allocation or fr.ctx.id)
                self.instances.setdefault(atom.cls, set()).add(copy)
                for attr, held in self.heap_attributes(atom, _model_note):
                    copied = _copied(_rebound(held, atom, copy), origin, lambda a: instance(a, depth + 1), True)
                    self.store_attribute(V(copy), attr, copied, fr)
            return V(copy)

        origin = self.origin(node, fr, "deepcopy")
        return _copied(value, origin, lambda a: instance(a, 0))


def _model_note(attr: str) -> bool:
    """A note a model keeps on the object (``@moved_in_place`` ...): not an attribute the copy has."""
    return attr.startswith("@")


def _rebound(value: Value, old: Instance, new: Instance) -> Value:
    """``value`` with the methods bound to ``old`` bound to ``new`` (``self.post = self._mask`` in the copy)."""
    return Value(frozenset(FuncRef(a.fn, a.closure, a.defaults, a.kw_defaults, new)
                           if isinstance(a, FuncRef) and a.bound is old else a for a in value.atoms), value.top)


def _copied(value: Value, origin: Origin, instance: Callable[[Instance], Value] | None = None,
            owned: bool = False) -> Value:
    """The deep copy of ``value`` (``instance``: a project module's copy; ``owned``: a module's attribute,
    whose parameters stay its copy's)."""
    out = TOP if value.top else Value()
    for atom in value.atoms:
        if isinstance(atom, Instance) and instance is not None:
            out = out.join(instance(atom))
        elif isinstance(atom, FuncRef) and owned:
            out = out.join(V(atom))
        elif isinstance(atom, TorchLayerAtom):
            layer = _copied_layer(atom, origin)
            out = out.join(TOP if layer is None else V(layer))
        elif isinstance(atom, TorchTensorAtom):
            out = out.join(V(atom.with_(owned=atom.owned and owned, origin=origin)))
        elif isinstance(atom, (Const, TorchDeviceAtom)):
            out = out.join(V(atom))
        elif isinstance(atom, (SeqAtom, DictAtom)):
            out = out.join(V(map_elements(atom, lambda item: _copied(item, origin, instance))))
        else:
            out = out.join(TOP)
    return out


def _copied_layer(layer: TorchLayerAtom, origin: Origin) -> TorchLayerAtom | None:
    """The copy of a layer and of the layers it holds (None: it holds something else, a project module)."""
    children = []
    for child in layer.children:
        if not isinstance(child, TorchLayerAtom):
            return None
        copied = _copied_layer(child, origin)
        if copied is None:
            return None
        children.append(copied)
    return TorchLayerAtom(layer.name, layer.dev, layer.weights, tuple(children), origin, keys=layer.keys)
