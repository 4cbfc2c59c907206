"""Choice tags: which alternative of an undecided condition a possibility came from.

``if use_cuda: a = a.cuda()`` leaves ``a`` on the CPU *or* on the GPU; a second
``if use_cuda: b = b.cuda()`` does the same to ``b``. A non-relational join would
pair the CPU ``a`` with the CUDA ``b``, a combination no run can reach: one value
is on one device at a time. So the possibilities an undecided branch leaves
behind carry a *tag*, ``(choice, alternative)``: the condition (a :class:`Choice`)
and which way it went. Two possibilities whose tags name one choice with
different alternatives never meet in one operation (:func:`consistent`).

Tags are a refinement only: a possibility without a tag stands for every
alternative, so dropping a tag (over the cap, at a function's return) gives back
today's pairings, never a failure that was not there before. The heap keeps an
activation's tags as *lasting* choices (:func:`for_heap`): an attribute holds one
value at a time, in every method that reads it.

A *program-wide* choice (context :data:`PROGRAM`) is one the whole run makes once: a
command-line option's value (``--device`` with ``choices=["cpu", "cuda"]``, a
``store_true`` flag). Its tags are kept where a frame's are dropped (into callees,
out of them, into the heap), so ``model.to(args.device)`` in ``main`` and
``batch.to(args.device)`` in ``train(args, ...)`` are never paired across values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from .domain import (
    Atom,
    Const,
    DeviceAtom,
    DictAtom,
    Instance,
    SeqAtom,
    TensorAtom,
    Value,
    join_all,
    map_elements,
)
from .torch_domain import TorchDeviceAtom, TorchGeneratorAtom, TorchLayerAtom, TorchRef, TorchTensorAtom

#: the most tags one possibility carries: one more is not added (the possibility stays less precise)
MAX_TAGS = 4
#: the most tag sets an instance's note holds (more: the note is dropped)
MAX_WAYS = 4
#: the most values a program-wide choice is told apart between (each but the last takes a tag)
MAX_ALTERNATIVES = 3
#: how deep into sequences and dicts tags are looked for
MAX_NESTING = 3


@dataclass(frozen=True, slots=True, order=True)
class ValueTest:
    """What a program-wide choice that tests one value (a command-line option's) tests: the group of tests of
    that value, the values that tell them apart, and whether this test holds on each."""

    group: str
    holds: tuple[bool, ...]  # by the group's values, in one order

    def __reduce__(self) -> tuple[object, tuple[str, tuple[bool, ...]]]:
        # :data:`NO_TEST` is told by identity: unpickled (a world's facts from a worker process), it is it again
        return _value_test, (self.group, self.holds)


def _value_test(group: str, holds: tuple[bool, ...]) -> ValueTest:
    return NO_TEST if not group and not holds else ValueTest(group, holds)


#: a choice that tests no value
NO_TEST = ValueTest("", ())


@dataclass(frozen=True, slots=True, order=True)
class Choice:
    """One undecided condition in one activation: the frame's context, the test's text and what it held.

    A choice that tests one value carries that test (``value``): every tag names it, so whether a set of ways
    can hold together is read off the tags themselves, with no registry beside the analysis."""

    ctx: int
    test: str  # the test's source, with the hash of its abstract value (a reassigned flag is another choice)
    value: ValueTest = NO_TEST
    #: a command-line option's values as a message names them, in the order ``value.holds`` reads them (of a
    #: two-valued one with no test: its true way's value, then its false way's); () where none is named
    shown: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    def __hash__(self) -> int:  # (the test's text tells choices apart: hashing ``value`` too costs every lookup)
        return hash((self.ctx, self.test))

    def __str__(self) -> str:
        return self.test.split("#", 1)[0]


#: the context of a program-wide choice (one answer for the whole run: a command-line option)
PROGRAM = -1


def program_choice(name: str, test: ValueTest = NO_TEST, shown: tuple[str, ...] = ()) -> Choice:
    return Choice(PROGRAM, name, test, shown)


def one_of(name: str, values: tuple[Atom, ...], group: str | None = None) -> Value | None:
    """The value of a program-wide choice between ``values`` named ``name``: each possibility tagged so that no
    two meet in one operation (``None``: more alternatives than the tags can tell apart). With ``group``, each
    choice among three or more values is also a test of the value (:class:`ValueTest`, true on its one value)."""
    if len(values) == 1:
        return Value(values)
    if not 1 < len(values) <= MAX_ALTERNATIVES:
        return None
    # one choice per value but the last (true for that value): two values differ in at least one of them
    shown = tuple(repr(a.value) for a in values if isinstance(a, Const))
    shown = shown if len(shown) == len(values) and name.startswith("--") else ()
    choices = [program_choice(f"{name}={i}", NO_TEST if group is None else
                              ValueTest(group, tuple(j == i for j in range(len(values)))), shown)
               for i in range(len(values) - 1)] if len(values) > 2 else [program_choice(name, shown=shown)]
    atoms = []
    for i, atom in enumerate(values):
        atoms.append(with_tags(atom, frozenset((c, i == j) for j, c in enumerate(choices))))
    return Value(frozenset(atoms))


Tag = tuple[Choice, bool]
Tags = frozenset  # frozenset[Tag]
NO_TAGS: frozenset = frozenset()

#: the possibilities that carry tags: devices, tensors, library layers, device strings and flags (not instances
#: of the project's classes: the heap knows them by identity)
TAGGABLE = (TorchTensorAtom, TorchDeviceAtom, TorchLayerAtom, TorchGeneratorAtom, TensorAtom, DeviceAtom)


def taggable(atom: Atom) -> bool:
    return isinstance(atom, TAGGABLE) or (isinstance(atom, Const) and isinstance(atom.value, (str, bool)))


#: the possibilities whose tags a value's notes keep: instances of the project's classes, and the library's
#: names (``torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor``: a tensor type chosen by a test)
NOTED = (Instance, TorchRef)


def noted(atom: Atom) -> bool:
    return isinstance(atom, NOTED)


def tracked(atom: Atom) -> bool:
    """A possibility whose way an undecided test can record (its own tags, or its value's notes)."""
    return taggable(atom) or noted(atom)


def tags_of(atom: object) -> frozenset:
    tags = getattr(atom, "tags", NO_TAGS)
    return tags if tags and isinstance(tags, frozenset) else NO_TAGS  # (another atom's ``tags`` field: none)


def untagged(atom: Atom) -> Atom:
    """``atom`` without the undecided choices it came from."""
    if not tags_of(atom):
        return atom
    # the atoms that carry tags are dataclasses; their base, Atom, is not one
    return dataclasses.replace(atom, tags=NO_TAGS)  # type: ignore[type-var]


def consistent(*groups: frozenset) -> bool:
    """No choice is named with two alternatives across these tag sets (a choice and its lasting form are one:
    a value stored in the heap and read back in the activation that chose it), and the tests of one value
    among them (a choice's :class:`ValueTest`) hold together on some value."""
    seen: dict[Choice, bool] = {}
    tests = False
    for tags in groups:
        for choice, alternative in tags:
            if seen.setdefault(_key(choice), alternative) != alternative:
                return False
            tests = tests or choice.value is not NO_TEST
    return not tests or _satisfiable(seen)


def combined_test(value: Value, text: str) -> Choice | None:
    """A flag made of tests of one value (``args.device == "cuda" or args.device == "gpu"``, whose possibilities
    each carry one test's way): a test of that value of its own, named ``text``, true on the values that pass
    every test of some true possibility (None: not such a flag)."""
    if value.top or not value.atoms:
        return None
    group: str | None = None
    trues: list[list[tuple[ValueTest, bool]]] = []
    for atom in value.atoms:
        if not isinstance(atom, Const) or not isinstance(atom.value, bool):
            return None
        tests = [(choice.value, way) for choice, way in tags_of(atom)]
        if not tests or any(test is NO_TEST for test, _way in tests) or any(
                test.group != (group := group or test.group) for test, _way in tests):
            return None
        if atom.value:
            trues.append(tests)
    if group is None or not trues:
        return None
    size = len(trues[0][0][0].holds)
    holds = tuple(any(all(test.holds[i] == way for test, way in tests) for tests in trues) for i in range(size))
    return program_choice(f"{text}#{group}", ValueTest(group, holds))


def _satisfiable(ways: dict[Choice, bool]) -> bool:
    by_group: dict[str, list[tuple[ValueTest, bool]]] = {}
    for choice, way in ways.items():
        test = choice.value
        if test is not NO_TEST:
            by_group.setdefault(test.group, []).append((test, way))
    for tests in by_group.values():
        if len(tests) > 1 and not any(all(t.holds[i] == way for t, way in tests)
                                      for i in range(len(tests[0][0].holds))):
            return False
    return True


_KEYS: dict[Choice, Choice] = {}


def _key(choice: Choice) -> Choice:
    """The choice as the heap keeps it (:func:`lasting`), remembered: asked for every tag compared."""
    key = _KEYS.get(choice)
    if key is None:
        if len(_KEYS) > 100_000:
            _KEYS.clear()
        key = _KEYS[choice] = lasting(choice)
    return key


def joined(groups: Iterable[frozenset]) -> frozenset:
    """The tags of a result made of possibilities with these tags (assumed consistent), within the cap."""
    out: frozenset = NO_TAGS
    for tags in groups:
        if tags:
            out = out | tags if out else tags
    return out if len(out) <= MAX_TAGS else NO_TAGS


AtomT = TypeVar("AtomT", bound=Atom)


def with_tags(atom: AtomT, tags: frozenset) -> AtomT:
    """``atom`` with ``tags`` added (unchanged when it takes none, or when they would pass the cap; an atom
    holding values, such as an argparse namespace: its values)."""
    if tags and hasattr(atom, "map_inner"):
        return atom.map_inner(lambda v: tagged(v, tags))
    if tags and isinstance(atom, SeqAtom):
        # a list filled on one way of a choice (``outs.append(helper(x))`` in a run split on it): its elements
        # are that way's, so a loop's later appends on the other way are never paired with them
        items = None if atom.items is None else tuple(tagged(v, tags) for v in atom.items)
        elem = tagged(atom.elem, tags)
        if elem is atom.elem and items == atom.items:
            return atom
        return dataclasses.replace(atom, items=items, elem=elem)
    if not tags or not taggable(atom):
        return atom
    own = tags_of(atom)
    merged = own | tags
    if merged == own or len(merged) > MAX_TAGS or not consistent(own, tags):
        return atom
    return dataclasses.replace(atom, tags=merged)  # type: ignore[type-var]


def tagged(value: Value, tags: frozenset) -> Value:
    """``value`` with ``tags`` added to every possibility (instances and library names: in the value's
    notes)."""
    if not tags or not value.atoms:
        return value
    atoms = frozenset(with_tags(a, tags) for a in value.atoms)
    notes = dict(value.notes or {})
    impossible = set()
    for atom in atoms:
        if noted(atom):
            ways = frozenset(w | tags for w in notes.get(atom, (NO_TAGS,)) if consistent(w, tags))
            if not ways:
                impossible.add(atom)  # (noted on other ways only: not a possibility on this one)
            elif len(ways) <= MAX_WAYS and all(len(w) <= MAX_TAGS for w in ways):
                notes[atom] = ways
            else:
                notes.pop(atom, None)  # (over the cap: from every way)
    if impossible and len(impossible) < len(atoms):
        atoms = atoms - impossible
        notes = {a: n for a, n in notes.items() if a not in impossible}
    if atoms == value.atoms and notes == (value.notes or {}):
        return value
    return Value(atoms, value.top, notes)


def each_way(value: Value, result: Callable[[Atom], Atom | None]) -> Value | None:
    """``result`` of each possibility of ``value``, with that possibility's tags (``not flag``, ``device ==
    "cuda"`` of a tagged flag or device string); ``None`` where none carries a tag or a result is unknown."""
    if value.top or not value.atoms or not any(tags_of(a) for a in value.atoms):
        return None
    out: set[Atom] = set()
    for atom in value.atoms:
        made = result(atom)
        if made is None:
            return None
        out.add(with_tags(made, tags_of(atom)))
    return Value(frozenset(out))


def common_tags(value: Value) -> frozenset:
    """The tags every possibility of ``value`` carries (what a test that let it through has decided)."""
    if value.top or not value.atoms:
        return NO_TAGS
    common: frozenset | None = None
    for atom in value.atoms:
        common = tags_of(atom) if common is None else common & tags_of(atom)
    return common or NO_TAGS


def tag_except(value: Value, common: frozenset, tags: frozenset) -> Value:
    """``value`` with ``tags`` added to the possibilities not in ``common`` (those the other branch has too)."""
    if not value.atoms or value.atoms <= common:
        return value
    mine = tagged(Value(value.atoms - common, value.top, value.notes), tags)
    notes = {a: n for a, n in (value.notes or {}).items() if a in common}
    notes.update(mine.notes or {})
    return Value(mine.atoms | (value.atoms & common), value.top, notes)


def alternatives(values: Iterable[Value]) -> dict[Choice, set[bool]]:
    """The choices these values' possibilities name (top level and inside sequences and dicts; a choice and
    its lasting form as one, the first seen), with the alternatives named."""
    out: dict[Choice, set[bool]] = {}
    names: dict[Choice, Choice] = {}
    for value in values:
        for key, (choice, ways) in _alternatives_in(value).items():
            out.setdefault(names.setdefault(key, choice), set()).update(ways)
    return out


def _alternatives_in(value: Value) -> dict[Choice, tuple[Choice, frozenset[bool]]]:
    """:func:`alternatives` of one value, by choice as the heap keeps it: the first of its forms seen, and the
    alternatives named (in the order first seen). Kept on the value: a split statement asks it of every value
    it reads, and most are the same values as at the statement before."""
    found = value._alternatives
    if found is None:
        out: dict[Choice, set[bool]] = {}
        _collect(value, out, {}, 0)
        found = value._alternatives = {_key(choice): (choice, frozenset(ways)) for choice, ways in out.items()}
    return found


def _collect(value: Value, out: dict[Choice, set[bool]], names: dict[Choice, Choice], depth: int) -> None:
    for atom in value.atoms:
        for choice, alternative in tags_of(atom):
            out.setdefault(names.setdefault(_key(choice), choice), set()).add(alternative)
        if depth < MAX_NESTING and _holds_values(atom):
            for inner in _elements(atom):
                _collect(inner, out, names, depth + 1)
    for ways in (value.notes or {}).values():
        for way in ways:
            for choice, alternative in way:
                out.setdefault(names.setdefault(_key(choice), choice), set()).add(alternative)


def _holds_values(atom: Atom) -> bool:
    """A sequence, a dict, or another atom holding values (an argparse namespace: ``inner_values``)."""
    return isinstance(atom, (SeqAtom, DictAtom)) or hasattr(atom, "inner_values")


def _elements(atom: Atom) -> list[Value]:
    if not isinstance(atom, (SeqAtom, DictAtom)):
        return atom.inner_values()  # type: ignore[attr-defined]
    if isinstance(atom, SeqAtom):
        return list(atom.items) if atom.items is not None else [atom.elem]
    return [v for _k, v in atom.items] + ([atom.rest] if atom.rest is not None else [])


def restricted(value: Value, choice: Choice, alternative: bool) -> Value:
    """``value`` where ``choice`` went ``alternative``: the possibilities of the other way left out (inside
    sequences and dicts too). A value left with none keeps them all (a tag the analysis got wrong must not
    empty a value)."""
    return restriction(choice, alternative)(value)


def restriction(choice: Choice, alternative: bool) -> Callable[[Value], Value]:
    """:func:`restricted` to ``choice``'s ``alternative``, as a function of the value (a state's every value is
    restricted to the same way)."""
    wanted = _key(choice)
    other_way = (wanted, not alternative)

    way = frozenset({(wanted, alternative)})
    tests_value = wanted.value is not NO_TEST

    def other(tags: frozenset) -> bool:  # (the choice, or its lasting form, named the other way)
        if tests_value:  # (or a test of the same value that no value passes together with this way)
            return bool(tags) and not consistent(tags, way)
        return any(w != alternative and _key(c) == wanted for c, w in tags)

    def other_only(value: Value) -> bool:
        return bool(value.atoms) and not value.top and all(other(tags_of(a)) for a in value.atoms)

    def keep(atom: Atom) -> Atom | None:
        if other(tags_of(atom)):
            return None
        if hasattr(atom, "inner_values") and any(  # a namespace one of whose values is of the other way only
                other_only(v) for v in atom.inner_values()):
            return None
        # a list, tuple or dict one of whose items is of the other way only (``[x.to(device) for ...]`` made on
        # that way): the container itself is of that way (its items keep what they hold: a value never empties)
        if isinstance(atom, SeqAtom) and atom.items is not None and any(other_only(v) for v in atom.items):
            return None
        if isinstance(atom, DictAtom) and any(other_only(v) for _key, v in atom.items):
            return None
        return atom

    def on_notes(ways: frozenset) -> frozenset:
        return frozenset(w for w in ways if not other(w))

    group = wanted.value.group if tests_value else None

    def needs(value: Value) -> bool:
        if group is not None:
            return any(c.value.group == group for c, _w in reached_ways(value))
        return other_way in reached_ways(value)

    def restrict(value: Value) -> Value:
        if not value.atoms or (reach(value)[1] and not needs(value)):
            return value  # (what :func:`_mapped` would give back unwalked, without keeping it)
        return _mapped(value, keep, on_notes, 0, needs, other_way)

    return restrict


def reach(value: Value) -> tuple[frozenset, bool]:
    """Every tag inside ``value`` (at any depth, the notes' too), and whether :func:`_mapped` with functions
    that change nothing gives it back (each sequence's element value is the join of its items, as a rebuilt
    one's is). Kept on the value (values are not changed once made): a namespace of many options is restricted
    once per way of every statement that reads it."""
    found = value._reach
    if found is None:
        tags: set = set()
        equal = True
        for atom in value.atoms:
            tags.update(tags_of(atom))
            if not _holds_values(atom):
                continue
            if isinstance(atom, SeqAtom) and atom.items is not None and atom.elem != join_all(atom.items):
                equal = False
            for inner in _elements(atom):
                inner_tags, inner_equal = reach(inner)
                tags.update(inner_tags)
                equal = equal and inner_equal
        for ways in (value.notes or {}).values():
            for way in ways:
                tags.update(way)
        found = value._reach = (frozenset(tags) if tags else NO_TAGS, equal)
    return found


def reached_ways(value: Value) -> frozenset:
    """The tags inside ``value`` (:func:`reach`) with each choice as the heap keeps it (:func:`lasting`): a
    restriction asks whether one is there, for every value of a state, per way of each statement that splits."""
    found = value._ways
    if found is None:
        found = value._ways = frozenset((_key(c), w) for c, w in reach(value)[0])
    return found


def stripped(value: Value) -> Value:
    """``value`` without the tags of one activation's choices (what crosses a call or goes into the heap): the
    tags of program-wide choices stay."""

    def strip(atom: Atom) -> Atom:
        tags = tags_of(atom)
        if not tags:
            return atom
        kept = frozenset(t for t in tags if t[0].ctx == PROGRAM)
        return atom if kept == tags else dataclasses.replace(atom, tags=kept)  # type: ignore[type-var]

    def strip_ways(ways: frozenset) -> frozenset | None:
        kept = frozenset(frozenset(t for t in w if t[0].ctx == PROGRAM) for w in ways)
        return None if not kept or NO_TAGS in kept else kept  # (a way left with no tag: every way)

    return _mapped(value, strip, strip_ways, 0, memo="stripped")


def lasting(choice: Choice) -> Choice:
    """``choice`` as one that outlives its activation: the choice of the value an attribute holds (context
    :data:`PROGRAM`, the activation's context kept in its name, so two contexts' choices stay apart)."""
    return choice if choice.ctx == PROGRAM else Choice(PROGRAM, f"{choice.test}@{choice.ctx}", choice.value)


def lasting_tags(tags: frozenset) -> frozenset:
    return frozenset((lasting(c), w) for c, w in tags)


def for_heap(value: Value) -> Value:
    """``value`` as the heap keeps it: the tags of one activation's choices made lasting. An attribute holds one
    value at a time, so the model moved to ``self.device`` and a batch moved there later are on the same one of
    its devices, in every method that reads it."""

    def keep(atom: Atom) -> Atom:
        tags = tags_of(atom)
        if not tags or all(c.ctx == PROGRAM for c, _w in tags):
            return atom
        return dataclasses.replace(atom, tags=lasting_tags(tags))  # type: ignore[type-var]

    return _mapped(value, keep, lambda ways: frozenset(lasting_tags(w) for w in ways), 0, memo="for_heap")


def has_tags(value: Value, depth: int = 0) -> bool:
    if value.notes:
        return True
    for atom in value.atoms:
        if tags_of(atom):
            return True
        if depth < MAX_NESTING and _holds_values(atom) and any(has_tags(v, depth + 1) for v in _elements(atom)):
            return True
    return False


def _mapped(value: Value, fn: Callable[[Atom], Atom | None],
            on_notes: Callable[[frozenset], frozenset | None], depth: int,
            needs: Callable[[Value], bool] | None = None, memo: object = None) -> Value:
    """``fn`` over the possibilities (``None``: left out), ``on_notes`` over an instance's noted ways (``None``:
    no note; empty: left out), inside sequences and dicts too. ``needs``: true of a value holding a tag (at any
    depth: :func:`reach`) without which ``fn`` and ``on_notes`` change nothing (a value that holds none is given
    back as it is, unwalked). ``memo``: a key that names ``fn``, ``on_notes`` and ``needs`` (they give the same
    results for the same key): the result is kept on the value (values are not changed once made), as the walk
    of a namespace of many options per way of every statement that reads it would be repeated."""
    if not value.atoms:
        return value
    if memo is not None:
        kept = value._mapped
        if kept is None:
            kept = value._mapped = {}
        key = (memo, depth)
        found = kept.get(key)
        if found is None:
            found = _walked(value, fn, on_notes, depth, needs, memo)
            # (the value itself is kept as a mark: a value referring to itself would be a cycle, and the check
            # runs without the cyclic collector)
            kept[key] = _SAME if found is value else found
            return found
        return value if found is _SAME else _fresh(found)
    return _walked(value, fn, on_notes, depth, needs, memo)


_SAME = Value(())  # a walk's result kept on a value: the value itself


def _fresh(value: Value) -> Value:
    """A new value equal to ``value`` (notes too), with what it has computed: a walk gives back a new value
    each time it changes one, and a statement run per way tells what it assigned by identity."""
    out = Value(value.atoms, value.top, value.notes)
    out._hash, out._depth, out._reach, out._ways, out._mapped, out._alternatives = \
        value._hash, value._depth, value._reach, value._ways, value._mapped, value._alternatives
    return out


def _walked(value: Value, fn: Callable[[Atom], Atom | None], on_notes: Callable[[frozenset], frozenset | None],
            depth: int, needs: Callable[[Value], bool] | None, memo: object) -> Value:
    if needs is not None and reach(value)[1] and not needs(value):
        return value
    if not has_tags(value, depth):
        return value
    atoms: set[Atom] = set()
    notes: dict[Atom, frozenset] = {}
    for atom in value.atoms:
        if depth < MAX_NESTING and _holds_values(atom):
            inner = lambda v: _mapped(v, fn, on_notes, depth + 1, needs, memo)  # noqa: E731
            atom = map_elements(atom, inner) if isinstance(atom, (SeqAtom, DictAtom)) \
                else atom.map_inner(inner)  # type: ignore[attr-defined]
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


def option_ways(tags: Iterable[Tag], whole: bool = False) -> dict[str, frozenset[str]]:
    """The values of each command-line option a combination's tags leave possible, by option (``--device``), as
    :attr:`Choice.shown` names them (only the options its tags constrain; ``whole``: every value of those)."""
    out: dict[str, frozenset[str]] = {}
    for choice, way in tags:
        if not choice.shown:
            continue
        if whole:
            option = str(choice) if choice.value is NO_TEST else choice.value.group.split("#", 1)[0]
            out[option] = out.get(option, frozenset()) | frozenset(choice.shown)
            continue
        if choice.value is NO_TEST:
            if len(choice.shown) != 2:
                continue
            option, left = str(choice), frozenset({choice.shown[0] if way else choice.shown[1]})
        elif len(choice.value.holds) == len(choice.shown):
            option = choice.value.group.split("#", 1)[0]
            left = frozenset(v for v, holds in zip(choice.shown, choice.value.holds, strict=True) if holds == way)
        else:
            continue
        out[option] = out[option] & left if option in out else left
    return out


def option_phrase(failing: Iterable[frozenset], passing: Iterable[frozenset]) -> str:
    """The option values the failing combinations (their tags) need, where the passing ones have others
    (```--device` is 'mps'``), in a few words; "" where no option tells them apart. A failing combination that
    names no value of an option (a run with no options given: each is its default) stands for the values no
    passing combination has, where every passing one names its value."""
    failing, passing = list(failing), list(passing)
    failing_ways = [option_ways(tags) for tags in failing]
    passes = [option_ways(tags) for tags in passing]
    domains: dict[str, set[str]] = {}
    for tags in (*failing, *passing):
        for option, values in option_ways(tags, whole=True).items():
            domains.setdefault(option, set()).update(values)
    phrases = []
    for option in sorted({o for ways in (*failing_ways, *passes) for o in ways}):
        if not passes:
            break
        # (a passing combination with no value of it named passes with any)
        passing_values = set().union(*(ways.get(option, domains[option]) for ways in passes))
        unnamed = any(option not in ways for ways in failing_ways)
        if unnamed and any(option not in ways for ways in passes):
            continue  # runs with any value of it fail and pass: it does not decide
        needed: set[str] = set().union(*(ways[option] for ways in failing_ways if option in ways))
        if unnamed:
            needed |= domains[option] - passing_values
        if needed and passing_values - needed:
            shown = sorted(v.replace(OTHER_SHOWN, "another value") for v in needed)
            phrases.append(f"`{option}` is {' or '.join(shown)}")
    return " and ".join(phrases)


#: how :attr:`Choice.shown` names a value that is none of the program's constants
OTHER_SHOWN = "\x00"
