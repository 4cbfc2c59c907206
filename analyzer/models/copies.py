"""``copy.deepcopy`` of tensors, torch layers and containers of them: a copy is another module.

The EMA teacher or the frozen reference model of a training script is a deep copy of the model, made
before the model moves: ``teacher = copy.deepcopy(model)`` then ``model.cuda()`` leaves the teacher on
the CPU. A deep copy of a library layer is a layer with the same weights' device and a creation site of
its own (the copy's: an in-place move of the original does not reach it); a tensor's copy is a tensor on
the same device with the same autograd role, owned by no module. Instances of project classes, and
anything else, are not followed (unknown), as before.
"""

from __future__ import annotations

import ast

from ..domain import TOP, Const, DictAtom, Origin, SeqAtom, V, Value, map_elements
from ..engine.flow_state import Frame, State
from ..engine.python_values import names_library_function
from ..torch_domain import TorchDeviceAtom, TorchLayerAtom, TorchTensorAtom
from .base import LibraryModel


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
        return _copied(value, self.origin(node, fr, "deepcopy"))


def _copied(value: Value, origin: Origin) -> Value:
    out = TOP if value.top else Value()
    for atom in value.atoms:
        if isinstance(atom, TorchLayerAtom):
            layer = _copied_layer(atom, origin)
            out = out.join(TOP if layer is None else V(layer))
        elif isinstance(atom, TorchTensorAtom):
            out = out.join(V(atom.with_(owned=False, origin=origin)))
        elif isinstance(atom, (Const, TorchDeviceAtom)):
            out = out.join(V(atom))
        elif isinstance(atom, (SeqAtom, DictAtom)):
            out = out.join(V(map_elements(atom, lambda item: _copied(item, origin))))
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
