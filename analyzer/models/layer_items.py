"""Layers put into a library container after it was built: ``seq[-1] = nn.Linear(...)``, ``seq.append(...)``,
``seq.insert(0, ...)``, ``blocks.extend(...)``, ``seq.add_module("head", ...)``.

A new layer is built where its constructor puts it (the CPU), whatever device the container was moved to
before: the container then holds layers on two devices, and its forward fails in the new one. A container is
a :class:`~analyzer.torch_domain.TorchLayerAtom` whose ``children`` are its modules (a ``Sequential`` runs them
in order, a ``ModuleList`` is iterated); these functions give the container after the change, or None when
what it holds afterwards is not known (the caller makes it unknown)."""

from __future__ import annotations

from dataclasses import replace

from ..domain import Atom, Instance, Value
from ..torch_domain import MODULE_TYPE, TorchLayerAtom

#: What each container's methods that add modules are (``ModuleDict`` is not followed).
ADDING_METHODS: dict[str, frozenset[str]] = {
    "Sequential": frozenset({"append", "extend", "insert", "add_module"}),
    "ModuleList": frozenset({"append", "extend", "insert"}),
}


def is_module(atom: Atom) -> bool:
    """A library layer or an instance of a project ``nn.Module`` subclass."""
    return isinstance(atom, TorchLayerAtom) or (isinstance(atom, Instance) and atom.cls.has_library_base(MODULE_TYPE))


def one_module(value: Value) -> Atom | None:
    """The one module ``value`` holds; None for several possibilities or anything else."""
    if value.top or len(value.atoms) != 1:
        return None
    atom = next(iter(value.atoms))
    return atom if is_module(atom) else None


def with_children(container: TorchLayerAtom, children: tuple[Atom, ...]) -> TorchLayerAtom:
    """``container`` holding ``children``: its weights are on their one device (``None``: on several, in a
    project module, or not known)."""
    layers = [c for c in children if isinstance(c, TorchLayerAtom)]
    projects = len(layers) < len(children)
    devices = {c.dev for c in layers if c.weights}
    weights = bool(devices) or projects or any(c.dev is None for c in layers if c.weights)
    dev = next(iter(devices)) if len(devices) == 1 and not projects else None
    return replace(container, dev=dev, weights=weights, children=children)


def _index(key: Value, length: int, insert: bool = False) -> int | None:
    """The position a constant int key names (negative from the end, as Python's); None when not known."""
    keys = key.consts()
    if key.top or not keys or len(keys) != 1 or type(keys[0]) is not int:
        return None
    index: int = keys[0]
    if insert:  # ``insert`` clamps, as ``list.insert`` does
        return max(0, min(length, index + length if index < 0 else index))
    return index % length if -length <= index < length else None


def replaced_item(container: TorchLayerAtom, key: Value, new: Value) -> TorchLayerAtom | None:
    """``container[key] = new``: the module at that position replaced."""
    module = one_module(new)
    index = _index(key, len(container.children)) if container.name in ADDING_METHODS else None
    if module is None or index is None or not container.children:
        return None
    children = list(container.children)
    children[index] = module
    return with_children(container, tuple(children))


def added(container: TorchLayerAtom, method: str, args: list[Value], extended: Value | None) -> TorchLayerAtom | None:
    """``container.append(m)``, ``.insert(i, m)``, ``.extend(ms)`` (``extended``: what iterating ``ms`` gives,
    None when not known) or ``.add_module(name, m)``: the modules it holds afterwards. A ``ModuleList`` is a
    set of modules (a loop may append any number of them: each one once); a ``Sequential`` keeps the order."""
    if method not in ADDING_METHODS.get(container.name, ()):
        return None
    children = list(container.children)
    if method == "extend":
        if extended is None or extended.top or not extended.atoms or not all(is_module(a) for a in extended.atoms):
            return None
        if container.name == "Sequential" and len(extended.atoms) != 1:
            return None  # the order of several new layers is not kept
        new = sorted(extended.atoms - set(children), key=repr) if container.name == "ModuleList" \
            else list(extended.atoms)
        return with_children(container, (*children, *new))
    if method not in ("append", "insert", "add_module") or len(args) != (1 if method == "append" else 2):
        return None
    module = one_module(args[-1])
    if module is None:
        return None
    if method == "insert":
        index = _index(args[0], len(children), insert=True)
        if index is None:
            return None
        children.insert(index, module)
    else:
        children.append(module)
    return with_children(container, tuple(children))


def with_part(classifier: TorchLayerAtom, part: Value) -> Value | None:
    """A torchvision classifier with a layer of its own replaced or added (``model.features[0] = nn.Conv2d(1,
    ...)``, ``model.conv1 = ...``, ``model.add_module("extra", ...)``): it now holds that layer too, wherever the
    layer is. Where in the network it runs decides nothing a device check sees: a layer with weights on
    another device than the rest fails whatever input reaches it first. None when the layer is not known.

    The part is kept in a one-layer ``Sequential`` made where the layer was (:func:`is_part`), so that a new
    head (:func:`~.torchvision_model.with_head`) replaces the old head only."""
    if part.top or not part.atoms or not all(isinstance(a, TorchLayerAtom) for a in part.atoms):
        return None
    return Value(frozenset(replace(classifier, children=(*classifier.children, _wrapped(p)))
                           for p in part.atoms if isinstance(p, TorchLayerAtom)))


def _wrapped(layer: TorchLayerAtom) -> TorchLayerAtom:
    return TorchLayerAtom("Sequential", layer.dev, layer.weights, (layer,), layer.origin)


def is_part(atom: Atom) -> bool:
    """Is ``atom`` a classifier's replaced layer (not its head)? A head that is a ``Sequential`` was made
    elsewhere than its first layer."""
    return isinstance(atom, TorchLayerAtom) and atom.name == "Sequential" and len(atom.children) == 1 \
        and isinstance(atom.children[0], TorchLayerAtom) and atom.children[0].origin == atom.origin


def run_as(atom: Atom) -> Atom:
    """What a classifier runs for one of its children: a replaced layer itself (not its wrapper)."""
    return atom.children[0] if is_part(atom) and isinstance(atom, TorchLayerAtom) else atom
