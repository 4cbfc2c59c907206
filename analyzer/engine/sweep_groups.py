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
    placement = Placement(attributes)
    groups: dict[Hashable, list[Instance]] = {}
    for instance in found:
        groups.setdefault(placement.signature(instance, SIGNATURE_DEPTH), []).append(instance)
    if len(groups) > MAX_SWEPT_INSTANCES:
        return [Value(frozenset(found))]
    return [Value(frozenset(group)) for group in groups.values()]


def signature(instance: Instance, attributes: Attributes, depth: int = SIGNATURE_DEPTH) -> frozenset:
    """Where each attribute of ``instance`` is placed: the devices of what it holds, the objects it holds
    followed ``depth`` deep. Attributes on no device (constants, unknowns), origins and other detail are left
    out: instances alike in it may share a run."""
    return Placement(attributes).signature(instance, depth)


class Placement:
    """Signatures of instances over one state of the heap, each computed once: objects that hold each other
    (a tree whose nodes keep their parent and children) would otherwise be walked once per path to them."""

    def __init__(self, attributes: Attributes) -> None:
        self.attributes = attributes
        self.known: dict[tuple[Instance, int], frozenset] = {}

    def signature(self, instance: Instance, depth: int) -> frozenset:
        key = (instance, depth)
        found = self.known.get(key)
        if found is None:
            out = set()
            for attr, value in self.attributes(instance):
                devices = self._devices(value, depth)
                if devices:
                    out.add((attr, devices))
            found = self.known[key] = frozenset(out)
        return found

    def _devices(self, value: Value, depth: int) -> frozenset:
        found: set = set()
        for atom in value.atoms:
            found.update(self._atom_devices(atom, depth))
        return frozenset(found)

    def _atom_devices(self, atom: Atom, depth: int) -> Iterable:
        if isinstance(atom, Instance):
            # a held object by its own placement, one level less deep (a cycle ends there, as any path does)
            if depth <= 0:
                return ()
            return (("in", held) for held in self.signature(atom, depth - 1))
        if isinstance(atom, SeqAtom):
            return self._devices(atom.elem, depth)
        if isinstance(atom, DictAtom) and type(atom) is DictAtom:
            values = [value for _key, value in atom.items]
            if atom.rest is not None:
                values.append(atom.rest)
            return frozenset().union(*(self._devices(v, depth) for v in values))
        key = atom.device_key()
        own = () if key is None else (key,)
        parts = atom.parts()
        if not parts:
            return own
        return frozenset(own).union(*(self._atom_devices(part, depth) for part in parts))
