"""Choice tags: which alternative of an undecided condition a possibility came from.

``if use_cuda: a = a.cuda()`` leaves ``a`` on the CPU *or* on the GPU; a second
``if use_cuda: b = b.cuda()`` does the same to ``b``. A non-relational join would
pair the CPU ``a`` with the CUDA ``b``, a combination no run can reach: one value
is on one device at a time. So the possibilities an undecided branch leaves
behind carry a *tag*, ``(choice, alternative)``: the condition (a :class:`Choice`)
and which way it went. Two possibilities whose tags name one choice with
different alternatives never meet in one operation (:func:`consistent`).

Tags are a refinement only: a possibility without a tag stands for every
alternative, so dropping a tag (over the cap, at a heap store, at a function's
return) gives back today's pairings, never a failure that was not there before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .domain import Atom, Const, DeviceAtom, DictAtom, Instance, SeqAtom, TensorAtom, Value, map_elements
from .torch_domain import TorchDeviceAtom, TorchLayerAtom, TorchTensorAtom

#: the most tags one possibility carries: one more is not added (the possibility stays less precise)
MAX_TAGS = 4
#: the most tag sets an instance's note holds (more: the note is dropped)
MAX_WAYS = 4
#: how deep into sequences and dicts tags are looked for
MAX_NESTING = 3


@dataclass(frozen=True, slots=True, order=True)
class Choice:
    """One undecided condition in one activation: the frame's context, the test's text and what it held."""

    ctx: int
    test: str  # the test's source, with the hash of its abstract value (a reassigned flag is another choice)

    def __str__(self) -> str:
        return self.test.split("#", 1)[0]


Tag = tuple[Choice, bool]
Tags = frozenset  # frozenset[Tag]
NO_TAGS: frozenset = frozenset()

#: the possibilities that carry tags: devices, tensors, library layers, device strings and flags (not instances
#: of the project's classes: the heap knows them by identity)
TAGGABLE = (TorchTensorAtom, TorchDeviceAtom, TorchLayerAtom, TensorAtom, DeviceAtom)


def taggable(atom: Atom) -> bool:
    return isinstance(atom, TAGGABLE) or (isinstance(atom, Const) and isinstance(atom.value, (str, bool)))


def tags_of(atom: object) -> frozenset:
    return getattr(atom, "tags", NO_TAGS) or NO_TAGS


def untagged(atom: Atom) -> Atom:
    """``atom`` without the undecided choices it came from."""
    if not tags_of(atom):
        return atom
    # the atoms that carry tags are dataclasses; their base, Atom, is not one
    return dataclasses.replace(atom, tags=NO_TAGS)  # type: ignore[type-var]


def consistent(*groups: frozenset) -> bool:
    """No choice is named with two alternatives across these tag sets."""
    seen: dict[Choice, bool] = {}
    for tags in groups:
        for choice, alternative in tags:
            if seen.setdefault(choice, alternative) != alternative:
                return False
    return True


def joined(groups: Iterable[frozenset]) -> frozenset:
    """The tags of a result made of possibilities with these tags (assumed consistent), within the cap."""
    out: frozenset = NO_TAGS
    for tags in groups:
        if tags:
            out = out | tags if out else tags
    return out if len(out) <= MAX_TAGS else NO_TAGS


def with_tags(atom: Atom, tags: frozenset) -> Atom:
    """``atom`` with ``tags`` added (unchanged when it takes none, or when they would pass the cap)."""
    if not tags or not taggable(atom):
        return atom
    own = tags_of(atom)
    merged = own | tags
    if merged == own or len(merged) > MAX_TAGS or not consistent(own, tags):
        return atom
    return dataclasses.replace(atom, tags=merged)  # type: ignore[type-var]


def tagged(value: Value, tags: frozenset) -> Value:
    """``value`` with ``tags`` added to every possibility (instances: in the value's notes)."""
    if not tags or not value.atoms:
        return value
    atoms = frozenset(with_tags(a, tags) for a in value.atoms)
    notes = dict(value.notes or {})
    for atom in atoms:
        if isinstance(atom, Instance):
            ways = frozenset(w | tags for w in notes.get(atom, (NO_TAGS,)) if consistent(w, tags))
            if ways and len(ways) <= MAX_WAYS and all(len(w) <= MAX_TAGS for w in ways):
                notes[atom] = ways
            else:
                notes.pop(atom, None)  # (over the cap: from every way)
    if atoms == value.atoms and notes == (value.notes or {}):
        return value
    return Value(atoms, value.top, notes)


def tag_except(value: Value, common: frozenset, tags: frozenset) -> Value:
    """``value`` with ``tags`` added to the possibilities not in ``common`` (those the other branch has too)."""
    if not value.atoms or value.atoms <= common:
        return value
    mine = tagged(Value(value.atoms - common, value.top, value.notes), tags)
    notes = {a: n for a, n in (value.notes or {}).items() if a in common}
    notes.update(mine.notes or {})
    return Value(mine.atoms | (value.atoms & common), value.top, notes)


def alternatives(values: Iterable[Value]) -> dict[Choice, set[bool]]:
    """The choices these values' possibilities name (top level and inside sequences and dicts), with the
    alternatives named."""
    out: dict[Choice, set[bool]] = {}
    for value in values:
        _collect(value, out, 0)
    return out


def _collect(value: Value, out: dict[Choice, set[bool]], depth: int) -> None:
    for atom in value.atoms:
        for choice, alternative in tags_of(atom):
            out.setdefault(choice, set()).add(alternative)
        if depth < MAX_NESTING and isinstance(atom, (SeqAtom, DictAtom)):
            for inner in _elements(atom):
                _collect(inner, out, depth + 1)
    for ways in (value.notes or {}).values():
        for way in ways:
            for choice, alternative in way:
                out.setdefault(choice, set()).add(alternative)


def _elements(atom: SeqAtom | DictAtom) -> list[Value]:
    if isinstance(atom, SeqAtom):
        return list(atom.items) if atom.items is not None else [atom.elem]
    return [v for _k, v in atom.items] + ([atom.rest] if atom.rest is not None else [])


def restricted(value: Value, choice: Choice, alternative: bool) -> Value:
    """``value`` where ``choice`` went ``alternative``: the possibilities of the other way left out (inside
    sequences and dicts too). A value left with none keeps them all (a tag the analysis got wrong must not
    empty a value)."""
    other = (choice, not alternative)
    return _mapped(value, lambda a: None if other in tags_of(a) else a,
                   lambda ways: frozenset(w for w in ways if other not in w), 0)


def stripped(value: Value) -> Value:
    """``value`` without tags (what crosses a call or goes into the heap)."""

    return _mapped(value, untagged, lambda _ways: None, 0)


def has_tags(value: Value, depth: int = 0) -> bool:
    if value.notes:
        return True
    for atom in value.atoms:
        if tags_of(atom):
            return True
        if depth < MAX_NESTING and isinstance(atom, (SeqAtom, DictAtom)) and any(
                has_tags(v, depth + 1) for v in _elements(atom)):
            return True
    return False


def _mapped(value: Value, fn: Callable[[Atom], Atom | None],
            on_notes: Callable[[frozenset], frozenset | None], depth: int) -> Value:
    """``fn`` over the possibilities (``None``: left out), ``on_notes`` over an instance's noted ways (``None``:
    no note; empty: left out), inside sequences and dicts too."""
    if not value.atoms or not has_tags(value, depth):
        return value
    atoms: set[Atom] = set()
    notes: dict[Atom, frozenset] = {}
    for atom in value.atoms:
        if depth < MAX_NESTING and isinstance(atom, (SeqAtom, DictAtom)):
            atom = map_elements(atom, lambda v: _mapped(v, fn, on_notes, depth + 1))
        ways = value.notes.get(atom) if value.notes else None
        if ways is not None:
            ways = on_notes(ways)
            if ways is not None and not ways:
                continue
            if ways is not None:
                notes[atom] = ways
        new = fn(atom)
        if new is not None:
            atoms.add(new)
    frozen = frozenset(atoms)
    if not frozen and not value.top:
        return value  # (a value the filter would empty keeps its possibilities)
    if frozen == value.atoms and notes == (value.notes or {}):
        return value
    return Value(frozen, value.top, notes)
