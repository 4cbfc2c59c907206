"""Records and replay buffers from the standard library: ``collections.namedtuple``, ``typing.NamedTuple``,
``collections.deque`` and ``random``'s sampling.

A reinforcement-learning loop keeps its transitions in a replay memory: ``Transition = namedtuple("Transition",
("state", "action", "next_state", "reward"))``, ``memory = deque([], maxlen=10000)``, ``memory.append(
Transition(state, action, next_state, reward))``, then ``batch = Transition(*zip(*random.sample(memory, 32)))``
and ``torch.cat(batch.reward)``. A reward built with ``torch.tensor([reward])`` and no device is the classic bug
there, and it is only seen if the tensors are followed through all of these:

* ``namedtuple(name, fields)`` (fields as a list, a tuple or a string of names; ``defaults=``) is a record class;
  calling it gives a tuple whose items have those names (:class:`RecordAtom`, a tuple to everything else), so
  ``batch.reward`` is the item, and indexing, unpacking and ``zip(*...)`` work as on any tuple.
* ``class Transition(NamedTuple):`` with annotated fields: calling it stores each field on the instance (the
  class body's value of a field is its default); a subclass's annotations are not fields. The instance is a
  tuple of those fields to what reads it by position (:meth:`Records.items`: ``x, y = batch``; ``batch[0]``),
  and a ``DataLoader`` collates it field by field into a record.
* ``record._replace(field=value)`` of either kind is a record of the same fields with those replaced.
* ``deque(iterable)`` is a list of the iterable's items (``deque()`` an empty one), appended to as a list is;
  ``maxlen`` only drops old items.
* ``random.sample(population, k)`` and ``random.choices(population, ...)`` give a list of the population's
  elements; ``random.choice(seq)`` one of them; ``random.shuffle(x)`` returns None (``x`` keeps its elements).
  A generator of its own (``rng = random.Random(seed)``, ``random.SystemRandom()``) samples as the module does
  (``rng.sample(memory, 32)``).

The names are :class:`.library_refs.LibraryRef` values this model gives ``import collections``, ``import random``
and ``from typing import NamedTuple``; the rest of those modules stays unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..domain import NONE, TOP, Atom, Instance, SeqAtom, V, Value, const, join_all, seq, seq_of
from ..engine.flow_state import Frame, State
from ..engine.python_values import annotated_fields, splice_items
from .base import UNHANDLED, LibraryModel, Unhandled
from .library_refs import LibraryRef

ROOTS = frozenset({"collections", "random"})
NAMED_TUPLE = "typing.NamedTuple"
REPLACE = "_replace"  # a record's copy with some fields replaced
#: The library classes a class of records of data derives from (:meth:`.program.ClassInfo.holds_data`).
RECORD_BASES = frozenset({NAMED_TUPLE})
_SAMPLES = frozenset({"random.sample", "random.choices"})
#: the library functions this model answers (their parameters: ``signatures.SIGNATURES["records"]``)
_CALLS = frozenset({"collections.namedtuple", "collections.deque", "random.choice", "random.shuffle"}) | _SAMPLES
#: ``random.Random(seed)``: an instance whose sampling methods are the module's functions
_GENERATORS = frozenset({"random.Random", "random.SystemRandom"})
_METHODS = frozenset(p.removeprefix("random.") for p in _CALLS if p.startswith("random."))


@dataclass(frozen=True, slots=True)
class RandomGenerator(Atom):
    """A ``random.Random`` instance (its state is not followed: its draws are unknown)."""

    def truthy(self) -> bool | None:
        return True


@dataclass(frozen=True, slots=True)
class RecordClass(Atom):
    """A class ``collections.namedtuple`` made: its field names, and the defaults of its last fields."""

    fields: tuple[str, ...]
    defaults: tuple[Value, ...] = ()

    def truthy(self) -> bool | None:
        return True


@dataclass(frozen=True, slots=True)
class ReplaceRef(Atom):
    """``record._replace``: the record's method, bound to it (a record of ``namedtuple`` or ``typing.NamedTuple``)."""

    record: Atom


@dataclass(frozen=True, slots=True)
class RecordAtom(SeqAtom):
    """An instance of a record class: a tuple whose items also have names."""

    names: tuple[str, ...] = ()


def _field_names(value: Value) -> tuple[str, ...] | None:
    """``namedtuple``'s ``field_names``: a list or tuple of names, or one string of names split on commas and
    spaces (None: not known)."""
    items = splice_items(value)
    texts = [v.consts() for v in items] if items is not None else [value.consts()]
    names: list[str] = []
    for consts in texts:
        if not consts or len(consts) != 1 or not isinstance(consts[0], str):
            return None
        names.extend(consts[0].replace(",", " ").split())
    return tuple(names) if names and all(n.isidentifier() for n in names) else None


def named_fields(atom: Atom) -> tuple[str, ...] | None:
    """The fields of an instance of a ``typing.NamedTuple`` class, in order (None: not one)."""
    if not isinstance(atom, Instance) or not atom.cls.has_library_base(NAMED_TUPLE):
        return None
    # (the class that derives ``NamedTuple`` declares them all: a subclass's annotations are not fields)
    declaring = next(c for c in atom.cls.mro() if NAMED_TUPLE in c.library_bases)
    return tuple(name for name, _default in annotated_fields(declaring.node.body))


def record(names: tuple[str, ...], items: list[Value]) -> RecordAtom:
    return RecordAtom("tuple", tuple(items), join_all(items), names)


class Records(LibraryModel):
    """``collections.namedtuple``/``deque``, ``typing.NamedTuple`` classes and ``random``'s sampling."""

    name = "records"

    def import_ref(self, path: str) -> Value | None:
        if path.partition(".")[0] in ROOTS or path == NAMED_TUPLE:
            return V(LibraryRef(path))
        return None

    def class_base(self, value: Value) -> tuple[str, ...]:
        return (NAMED_TUPLE,) if any(isinstance(a, LibraryRef) and a.path == NAMED_TUPLE for a in value.atoms) \
            else ()

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, RecordClass):
            return TOP if star_unknown else self._record(atom, args, kwargs)
        if isinstance(atom, ReplaceRef):
            return TOP if star_unknown or args else self._replaced(atom.record, kwargs, st, fr)
        if not isinstance(atom, LibraryRef):
            return UNHANDLED
        from .signatures import bind_call  # (the table lists this module's names: imported here, not at the top)

        path = atom.path
        if path in _GENERATORS:
            return V(RandomGenerator())
        if path not in _CALLS:
            return UNHANDLED
        if star_unknown:
            return TOP
        bound = bind_call(path, args, kwargs)
        if path == "collections.namedtuple":
            fields = _field_names(bound.get("field_names", TOP))
            given = bound.get("defaults")
            defaults = [] if given is None or given.consts() == [None] else splice_items(given)
            if fields is None or defaults is None or len(defaults) > len(fields):
                return TOP
            return V(RecordClass(fields, tuple(defaults)))
        if path == "collections.deque":
            iterable = bound.get("iterable")
            if iterable is None:
                return V(seq("list", ()))
            items = splice_items(iterable)
            return V(seq("list", items) if items is not None else seq_of("list", self.iter_element(iterable)))
        if path in _SAMPLES:
            return V(seq_of("list", self.iter_element(bound.get("population", TOP))))
        if path == "random.choice":
            return self.iter_element(bound.get("seq", TOP))
        return NONE  # ``random.shuffle``: in place

    @staticmethod
    def _record(cls: RecordClass, args: list[Value], kwargs: dict[str, Value]) -> Value:
        fields = cls.fields
        if len(args) > len(fields) or any(k not in fields for k in kwargs):
            return TOP  # (Python raises TypeError: no record is made)
        first_default = len(fields) - len(cls.defaults)
        items: list[Value] = []
        for i, name in enumerate(fields):
            if i < len(args):
                items.append(args[i])
            elif name in kwargs:
                items.append(kwargs[name])
            elif i >= first_default:
                items.append(cls.defaults[i - first_default])
            else:
                return TOP
        return V(record(fields, items))

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, RecordAtom) and attr in atom.names:
            index = atom.names.index(attr)
            return atom.items[index] if atom.items is not None and index < len(atom.items) else atom.elem
        if isinstance(atom, RecordAtom) and attr == REPLACE:
            return V(ReplaceRef(atom))
        if isinstance(atom, RandomGenerator):
            return V(LibraryRef(f"random.{attr}")) if attr in _METHODS else TOP
        if isinstance(atom, (RecordAtom, RecordClass)) and attr == "_fields":
            names = atom.names if isinstance(atom, RecordAtom) else atom.fields
            return V(seq("tuple", [V(const(n)) for n in names]))
        return UNHANDLED

    def instance_attribute(self, instance: Atom, attr: str, node: ast.expr | None, st: State,
                           fr: Frame) -> Value | None:
        return V(ReplaceRef(instance)) if attr == REPLACE and named_fields(instance) is not None else None

    def items(self, atom: Atom, st: State, fr: Frame) -> list[Value] | None:
        """A ``typing.NamedTuple`` instance's fields in order (a tuple to everything that reads it by position)."""
        fields = named_fields(atom)
        if fields is None:
            return None
        return [self.attribute(V(atom), name, None, st, fr) for name in fields]

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        """``batch[0]`` of a ``typing.NamedTuple`` instance: that field (any, for an index not known)."""
        fields = self.items(atom, st, fr)
        if fields is None:
            return None
        keys = key.consts()
        if not keys or key.top or not all(type(k) is int for k in keys):
            return join_all(fields).join(TOP) if keys is None or key.top else TOP
        return join_all(fields[k] if -len(fields) <= k < len(fields) else TOP for k in keys)

    def _replaced(self, receiver: Atom, kwargs: dict[str, Value], st: State, fr: Frame) -> Value:
        """``record._replace(field=value)``: a record of the same fields, those given replaced (a
        ``typing.NamedTuple``'s as a record with its field names: attributes, indexing and unpacking read it)."""
        names = receiver.names if isinstance(receiver, RecordAtom) else named_fields(receiver)
        items = list(receiver.items) if isinstance(receiver, RecordAtom) and receiver.items is not None \
            else self.items(receiver, st, fr)
        if names is None or items is None or len(items) != len(names) or any(k not in names for k in kwargs):
            return TOP
        return V(record(names, [kwargs.get(n, item) for n, item in zip(names, items, strict=True)]))

    def record_bases(self) -> frozenset[str]:
        return RECORD_BASES

    def library_init(self, cls: Any, instance: Value, args: list[Value], kwargs: dict[str, Value],
                     st: State, fr: Frame) -> None:
        """``Transition(state, action, ...)`` of a ``typing.NamedTuple`` class: each field stored on the instance
        (a field not given keeps the class body's default)."""
        if not cls.has_library_base(NAMED_TUPLE):
            return
        # (the class that derives ``NamedTuple`` declares them all: a subclass's annotations are not fields)
        declaring = next(c for c in cls.mro() if NAMED_TUPLE in c.library_bases)
        fields = [name for name, _default in annotated_fields(declaring.node.body)]
        if len(args) > len(fields):
            return
        for i, name in enumerate(fields):
            value = args[i] if i < len(args) else kwargs.get(name)
            if value is not None:
                self.store_attribute(instance, name, value, fr)
