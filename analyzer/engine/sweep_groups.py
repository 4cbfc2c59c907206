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


def signature(instance: Instance, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> frozenset:
    """Where each attribute of ``instance`` is placed: the devices of what it holds, the objects it holds
    followed ``depth`` deep. Attributes on no device (constants, unknowns), origins and other detail are left
    out: instances alike in it may share a run."""
    inner = seen | {instance}
    out = set()
    for attr, value in attributes(instance):
        devices = _devices(value, attributes, depth, inner)
        if devices:
            out.add((attr, devices))
    return frozenset(out)


def _devices(value: Value, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> frozenset:
    found: set = set()
    for atom in value.atoms:
        found.update(_atom_devices(atom, attributes, depth, seen))
    return frozenset(found)


def _atom_devices(atom: Atom, attributes: Attributes, depth: int, seen: frozenset[Instance]) -> Iterable:
    if isinstance(atom, Instance):
        if depth <= 0 or atom in seen:
            return ()
        return (("in", held) for held in signature(atom, attributes, depth - 1, seen))
    if isinstance(atom, SeqAtom):
        return _devices(atom.elem, attributes, depth, seen)
    if isinstance(atom, DictAtom) and type(atom) is DictAtom:
        values = [value for _key, value in atom.items]
        if atom.rest is not None:
            values.append(atom.rest)
        return frozenset().union(*(_devices(v, attributes, depth, seen) for v in values))
    key = atom.device_key()
    own = () if key is None else (key,)
    parts = atom.parts()
    if not parts:
        return own
    return frozenset(own).union(*(_atom_devices(part, attributes, depth, seen) for part in parts))
