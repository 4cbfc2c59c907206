"""The receivers an uncalled method is swept with: its class's instances, kept apart where their states differ.

A method run on a join of instances reads one instance's attributes together with another's, and a store to
``self.x`` writes what it read from all of them into each (``self.running_mean = f(self.running_mean)`` on a
model's CPU copy and its moved copy leaves a CPU buffer on the moved one). Up to ``MAX_SWEPT_INSTANCES``
instances each get a run of their own; beyond that, instances whose attributes are placed alike (each attribute
on the same devices, held sub-objects placed alike in turn) share one run: joined, they pair no devices that
one of them alone would not."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from ..domain import Atom, DictAtom, Instance, SeqAtom, Value
from .limits import MAX_SWEPT_INSTANCES

#: how deep a signature follows held objects (a model's sub-modules' sub-modules); deeper ones count as alike
SIGNATURE_DEPTH = 4

Attributes = Callable[[Instance], Iterable[tuple[str, Value]]]


def sweep_receivers(instances: Iterable[Instance], attributes: Attributes,
                    order: Callable[[Instance], tuple]) -> list[Value]:
    """The receivers to sweep a method of these instances' class with: one per instance while they are few,
    else one per group of instances placed alike (the join of all only when the groups are too many)."""
    found = sorted(instances, key=order)
    if len(found) <= 1:
        return [Value(frozenset(found), top=not found)]
    if len(found) <= MAX_SWEPT_INSTANCES:
        return [Value(frozenset((instance,))) for instance in found]
    groups: dict[Hashable, list[Instance]] = {}
    for instance in found:
        groups.setdefault(signature(instance, attributes, SIGNATURE_DEPTH, frozenset()), []).append(instance)
    if len(groups) > MAX_SWEPT_INSTANCES:
        return [Value(frozenset(found))]
    return [Value(frozenset(group)) for group in groups.values()]


def signature(instance: Instance, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> Hashable:
    """Where each attribute of ``instance`` is placed, as a hashable summary (origins, constants and other
    detail left out: instances alike in it may share a run)."""
    inner = seen | {instance}
    return frozenset((attr, _value_places(value, attributes, depth, inner))
                     for attr, value in attributes(instance))


def _value_places(value: Value, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> Hashable:
    return frozenset(_atom_place(atom, attributes, depth, seen) for atom in value.atoms), value.top


def _atom_place(atom: Atom, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> Hashable:
    if isinstance(atom, Instance):
        if depth <= 0 or atom in seen:
            return "instance", atom.cls
        return "instance", signature(atom, attributes, depth - 1, seen)
    if isinstance(atom, SeqAtom):
        return "seq", _value_places(atom.elem, attributes, depth, seen)
    if isinstance(atom, DictAtom) and type(atom) is DictAtom:
        values = [value for _key, value in atom.items]
        if atom.rest is not None:
            values.append(atom.rest)
        return "dict", frozenset(_value_places(v, attributes, depth, seen) for v in values)
    parts = atom.parts()
    if parts:
        return atom.device_key(), tuple(_atom_place(part, attributes, depth, seen) for part in parts)
    return atom.device_key()
