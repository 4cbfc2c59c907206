"""Abstract values: what the engine knows about every Python value of the analyzed program.

A :class:`Value` is a set of *atoms* (possibilities) plus a ``top`` flag meaning
"and possibly anything else" (unknown). ``TOP`` is the value that is nothing
but unknown; ``BOTTOM`` the value of an expression that never produces one
(the path raised). Values are immutable and hashable, so they can key the
interprocedural summaries.

The atoms that matter to the rules are :class:`DeviceAtom` (backend, index,
sub-device, autodiff?, strategy; a capture device's index is a
:class:`CaptureId`) and :class:`TensorAtom` (kind, plain device, the
:class:`~runtime_shim.semantics.TensorClass`, strategy, autodiff role, the
capture scope it was made in). Each carries an :class:`Origin`: where the
state came from, for the diagnostics' related locations. The other atoms model
enough of Python (constants, functions, classes, instances, sequences) to
follow tensors and devices through ordinary code.

Reveal text (:meth:`TensorAtom.reveal`, :meth:`DeviceAtom.reveal`) is built
with the runtime's own helpers, so it is identical to
``runtime_shim.reveal_device``'s.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from runtime_shim.semantics import (
    AF,
    CAPTURE_CLASSES,
    CC,
    CC_INT,
    CI,
    CI_INT,
    PF_STAR,
    CheckpointingStrategy,
    Role,
    TensorClass,
    reports_autodiff,
)
from runtime_shim.texts import device_text as runtime_device_text
from runtime_shim.texts import kind_debug_text, plain_device_text, tensor_reveal_text

#: the most possibilities a value holds (a join beyond it: :func:`bounded`); the engine's ``limits`` name it too
MAX_ATOMS = 64

# --- provenance -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a possibility came from: a source position and a short description."""

    file: str
    line: int
    col: int  # 0-based, as ast gives it
    what: str  # e.g. "created on Autodiff { device: Flex, checkpointing: Disabled }"
    #: where the expression that made it ends (0: not known): with the start, which call it is (chained calls,
    #: ``x.add(y).mul(z)``, start alike); not part of what it says
    end_line: int = field(default=0, compare=False)
    end_col: int = field(default=0, compare=False)
    #: the value that call returned (an op's result, a layer's output), not one it made to check itself (a
    #: creation's output, an optimizer's parameters): read back into the same call, it is the call's own result
    result: bool = field(default=False, compare=False)
    #: the device a creation put it on, as a tensor's device is shown (``cuda:0``; None: not a creation), for
    #: the diagnostics' wording (a failing call meant to give a tensor elsewhere)
    created_on: str | None = field(default=None, compare=False)
    #: a loaded file's possibility of being one tensor (``torch.load``): no string indexes it
    loaded: bool = field(default=False, compare=False)

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"

    def order_key(self) -> tuple:
        """Every field, the ones equality leaves out too: of two origins, the earlier one is kept (:func:`earlier`)."""
        return (self.file, self.line, self.col, self.what, self.end_line, self.end_col, self.result,
                self.created_on or "", self.loaded)

    def describe(self) -> str:
        return f"{self.what} at {self.where}"

    def brief(self) -> str:
        """Like :meth:`describe`, without repeating a state the message already shows."""
        what = "created" if self.created_on is not None else self.what
        return f"{what} at {self.where}"


def _order_key(part: object) -> tuple:
    """A part of a possibility that equality leaves out, comparable to another of its field (``()``: none)."""
    if part is None:
        return ()
    order_key = getattr(part, "order_key", None)
    if order_key is not None:
        return order_key()
    if isinstance(part, Atom):
        return part.provenance_key() if part.loose else ()
    return (str(part),)


#: atom class -> the fields :meth:`Atom.provenance_key` reads
_LOOSE_FIELDS: dict[type, tuple[str, ...]] = {}


# --- device identity ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaptureId:
    """One ``Device.capture()`` call site (in one calling context): a distinct capture device."""

    file: str
    line: int
    col: int
    ctx: int

    def __str__(self) -> str:  # the runtime's id is a counter the analyzer cannot know
        return "?"


@dataclass(frozen=True, slots=True)
class ScopeId:
    """One ``capture_scope`` activation on one capture device."""

    capture: CaptureId
    file: str
    line: int
    col: int
    ctx: int


@dataclass(frozen=True, slots=True)
class PlainDev:
    """A non-autodiff device: Burn's hardware identity (backend, LibTorch sub-device, index)."""

    backend: str
    sub: str | None = None
    index: int | CaptureId | None = 0  # None: an index the analysis does not know

    @property
    def is_capture(self) -> bool:
        return self.backend == "Capture"

    def text(self) -> str:
        """The runtime device's ``repr`` (Burn's Debug form; ``?`` for an index the analysis does not know)."""
        index = "?" if self.index is None or isinstance(self.index, CaptureId) else self.index
        return plain_device_text(self.backend, self.sub, index)


def same_device(a: PlainDev, b: PlainDev) -> bool | None:
    """Burn's device equality (hardware identity); ``None`` when an index is unknown."""
    if a.backend != b.backend or a.sub != b.sub:
        return False
    if a.index is None or b.index is None:
        return None
    return a.index == b.index


def device_text(dev: PlainDev, ad: bool, strategy: CheckpointingStrategy | None) -> str:
    """``repr`` of the runtime device (Burn's Debug form)."""
    return runtime_device_text(dev.text(), ad, strategy)


# --- atoms ---------------------------------------------------------------------------


class Atom:
    """One possibility of a value."""

    __slots__ = ()

    def truthy(self) -> bool | None:
        """Python truthiness, ``None`` when it depends on what the analysis does not know."""
        return True

    def library_type(self) -> str | None:
        """The library class this value is an instance of (``"torch.Tensor"``), for ``isinstance``."""
        return None

    def names_type(self) -> str | None:
        """The library class this value names (``torch.Tensor`` itself), as ``isinstance``'s second argument."""
        return None

    def type_predicate(self) -> str | None:
        """The library class a one-argument test function checks for (``torch.is_tensor``)."""
        return None

    def names_library_module(self) -> bool:
        """A module of a library a model knows by name (``torch.backends``): ``getattr(m, name, default)`` reads
        the name as the model has it (the default left out: the model's library has what programs probe for)."""
        return False

    def is_library_layer(self) -> bool:
        """A library model's callable object placed on a device (a layer)."""
        return False

    def revealable(self) -> bool:
        """A library value ``reveal_device`` describes (a model's tensor, device or module)."""
        return False

    def equals(self, other: Atom) -> bool | None:
        """``self == other`` for two library values of one class a model compares (None: it cannot tell;
        NotImplemented: not such a value)."""
        return NotImplemented

    mergeable = False  # (whether :meth:`merge_key` can be other than None: a quick test for every join)
    #: it has fields equality leaves out (an origin): of two equal possibilities a join keeps the one of the
    #: smaller :meth:`provenance_key`, whatever order the sets give them in (the output is the same on every run)
    loose = False
    #: fields equality compares that hold parts it leaves out (a device's ``index_name``), for :meth:`provenance_key`
    loose_within: tuple[str, ...] = ()

    def provenance_key(self) -> tuple:
        """The fields equality leaves out, comparable: the smallest is kept (see :attr:`loose`)."""
        cls = type(self)
        names = _LOOSE_FIELDS.get(cls)
        if names is None:
            names = _LOOSE_FIELDS[cls] = (*(f.name for f in getattr(cls, "__dataclass_fields__", {}).values()
                                            if not f.compare), *cls.loose_within)
        return tuple(_order_key(getattr(self, name)) for name in names)

    def merge_key(self) -> object | None:
        """Possibilities of one key (not None) are one object as two branches left it (a parsed namespace each
        branch of an ``if args.flag:`` restricted to its way of that flag): the branches' join holds them as
        one (:meth:`merged`), not as a possibility per branch."""
        return None

    def merged(self, other: Atom) -> Atom:
        """This possibility and ``other``, of the same :meth:`merge_key`, as one."""
        return self

    def device_key(self) -> Any:
        """Where this value lives (a tensor's, a layer's or a device's own device; None for what has no
        device), hashable: instances whose attributes are placed alike may be analysed together."""
        return getattr(self, "dev", None)

    def parts(self) -> tuple[Atom, ...]:
        """The objects this one holds and moves with it (a container's layers)."""
        return ()

    def held(self) -> tuple[Value, ...]:
        """The values a container of data holds (a batch's tensors in a tuple, a dict, a record): what a call
        passing it hands over, for reporting a failure inside at that call."""
        return ()


@dataclass(frozen=True, slots=True)
class DeviceAtom(Atom):
    dev: PlainDev
    ad: bool = False
    strategy: CheckpointingStrategy | None = None
    origin: Origin | None = None
    tags: frozenset = frozenset()  # the undecided choices it came from (:mod:`analyzer.choices`)

    def reveal(self) -> str:
        return device_text(self.dev, self.ad, self.strategy)

    def state(self) -> str:
        return self.reveal()

    def inner(self) -> DeviceAtom:
        return DeviceAtom(self.dev, False, None, self.origin)


@dataclass(frozen=True, slots=True)
class TensorAtom(Atom):
    kind: str  # "float", "int" or "bool"
    dev: PlainDev
    cls: TensorClass
    strategy: CheckpointingStrategy | None = None
    role: Role | None = None  # for Af: untracked / tracked / non-leaf
    scope: ScopeId | None = None  # for capture tensors: the scope that made them
    origin: Origin | None = None
    tags: frozenset = frozenset()  # the undecided choices it came from (:mod:`analyzer.choices`)

    def truthy(self) -> bool | None:
        return None  # __len__ is the first dimension

    def reported_device(self) -> DeviceAtom:
        """``t.device()``: autodiff for Af and for ints carrying a strategy (#5340)."""
        if reports_autodiff(self.cls):
            return DeviceAtom(self.dev, True, self.strategy, self.origin)
        return DeviceAtom(self.dev, False, None, self.origin)

    def kind_debug(self) -> str:
        """The dispatch kind's Debug form, as the backend-mismatch panic prints it."""
        return kind_debug_text(self.dev.text(), self.cls is AF)

    def reveal(self) -> str:
        detail = ""
        if self.cls is AF:
            detail = self.role.value if self.role is not None else ""
        elif self.cls is PF_STAR:
            detail = f"checkpointing: {self.strategy}"
        elif self.cls in (CI, CI_INT):
            detail = "initialized"
        elif self.cls in (CC, CC_INT):
            detail = "computed"
        return tensor_reveal_text(self.reported_device().reveal(), self.kind, detail)

    def state(self) -> str:
        return f"{self.reveal()} ({self.cls})"

    @property
    def is_capture(self) -> bool:
        return self.cls in CAPTURE_CLASSES

    def replace(self, **changes: Any) -> TensorAtom:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        fields.update(changes)
        return TensorAtom(**fields)


_CONST_TYPES = (bool, int, float, complex, str, bytes, type(None), CheckpointingStrategy)


@dataclass(frozen=True, slots=True)
class Const(Atom):
    """A Python constant. ``tname`` keeps ``1``, ``1.0`` and ``True`` apart."""

    value: Any
    tname: str
    tags: frozenset = frozenset()  # a device string's or a flag's undecided choices (:mod:`analyzer.choices`)

    def truthy(self) -> bool | None:
        return bool(self.value)


def const(value: Any) -> Const:
    return Const(value, type(value).__name__)


@dataclass(frozen=True, slots=True)
class NumberAtom(Atom):
    """A Python ``int`` or ``float`` whose value the analysis does not know (``int(t.item())``): enough to know
    that ``default_collate`` makes a CPU tensor of it and that a tensor made of it alone has no dimension."""

    tname: str  # "int" or "float"
    #: inclusive bounds that branch tests proved (``if n > 1:``), ``None``: unbounded on that side
    low: float | None = None
    high: float | None = None
    tags: frozenset = frozenset()  # the undecided choices its bounds came from (:mod:`analyzer.choices`)
    #: the name of the one value the whole run fixes that this number is (a command-line option: ``--gpus``):
    #: a test of it is one choice for the whole run, in every function
    run_constant: str | None = None

    def truthy(self) -> bool | None:
        if self.low is not None and self.low > 0 or self.high is not None and self.high < 0:
            return True
        return False if self.low == self.high == 0 else None

    def within(self, low: float | None, high: float | None, strict: bool = False) -> NumberAtom | None:
        """This number where it also lies within ``low``..``high`` (excluded when ``strict``; ``None``: it
        cannot). A float's strict bound is kept as an inclusive one (a superset)."""
        if self.tname == "int":
            if low is not None:
                low = float(math.floor(low) + 1 if strict else math.ceil(low))
            if high is not None:
                high = float(math.ceil(high) - 1 if strict else math.floor(high))
        low = low if self.low is None else self.low if low is None else max(low, self.low)
        high = high if self.high is None else self.high if high is None else min(high, self.high)
        if low is not None and high is not None and low > high:
            return None
        if (low, high) == (self.low, self.high):
            return self
        return NumberAtom(self.tname, low, high, self.tags, self.run_constant)


@dataclass(frozen=True, slots=True)
class ShimRef(Atom):
    """A public name of ``runtime_shim`` (``Device``, ``Tensor``, ``reveal_device`` ...)."""

    name: str


@dataclass(frozen=True, slots=True)
class ShimModule(Atom):
    """``runtime_shim`` or one of its submodules."""

    path: str


@dataclass(frozen=True, slots=True)
class BoundShim(Atom):
    """A runtime_shim method looked up on a receiver (``t.to_device``, ``Tensor.zeros``)."""

    receiver: Atom
    name: str


@dataclass(frozen=True, slots=True)
class PartialRef(Atom):
    """``functools.partial(func, *args, **kwargs)``: calling it calls ``func`` with these arguments first."""

    func: Value
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True, slots=True)
class ModuleRef(Atom):
    """A module of the analyzed project (``root``: the directory its top-level package is in)."""

    name: str
    root: str = ""


@dataclass(frozen=True, slots=True)
class BuiltinRef(Atom):
    name: str


@dataclass(frozen=True, slots=True)
class FuncRef(Atom):
    """A function of the analyzed code, with what it closed over and its evaluated defaults."""

    fn: Any  # engine.FunctionInfo (hashed by identity)
    closure: tuple[tuple[str, Value], ...] = ()
    defaults: tuple[Value, ...] = ()
    kw_defaults: tuple[tuple[str, Value], ...] = ()
    bound: Atom | None = None  # self (or the class, for a classmethod)


@dataclass(frozen=True, slots=True)
class ClassRef(Atom):
    cls: Any  # engine.ClassInfo (hashed by identity)


@dataclass(frozen=True, slots=True)
class Instance(Atom):
    """An instance of a class of the analyzed code, per allocation site and calling context."""

    cls: Any  # engine.ClassInfo
    file: str
    line: int
    col: int
    ctx: int

    def truthy(self) -> bool | None:
        return None if self.cls.defines_truth() else True


@dataclass(frozen=True, slots=True)
class SeqAtom(Atom):
    """A list or tuple: ``items`` element-wise when the length is known, else only ``elem``."""

    kind: str  # "list", "tuple", "set"
    items: tuple[Value, ...] | None
    elem: Value

    def truthy(self) -> bool | None:
        return bool(self.items) if self.items is not None else None

    def held(self) -> tuple[Value, ...]:
        # a tuple is a record, unpacked (``x, y = batch``); a list or a set is a collection (of batches, of a
        # model's weights), iterated: a loop over it that forgets to move the batches is the loop's own mistake
        return self.items if self.kind == "tuple" and self.items is not None else ()


def seq(kind: str, items: Iterable[Value]) -> SeqAtom:
    items = tuple(items)
    return SeqAtom(kind, items, join_all(items))


def seq_of(kind: str, elem: Value) -> SeqAtom:
    return SeqAtom(kind, None, elem)


@dataclass(frozen=True, slots=True)
class DictAtom(Atom):
    """A dict with constant keys; ``rest`` (when not ``None``): the values under keys not known statically
    (a dict comprehension over something of unknown length)."""

    items: tuple[tuple[Any, Value], ...]
    rest: Any = None  # Value | None

    def truthy(self) -> bool | None:
        return True if self.items else (None if self.rest is not None else False)

    def held(self) -> tuple[Value, ...]:
        return (*(v for _k, v in self.items), *((self.rest,) if self.rest is not None else ()))

    def unknown_keys(self) -> Value:
        """The values under the keys not listed (bottom when every key is known)."""
        return self.rest if self.rest is not None else Value()

    def keys(self) -> list[Value]:
        """Its known keys, in insertion order (what iterating it gives when ``rest`` is ``None``)."""
        return [Value((const(k),)) for k, _v in self.items]

    def get(self, key: Any) -> Value | None:
        for k, v in self.items:
            if k == key and type(k) is type(key):
                return v
        return None


def with_entry(atom: DictAtom, key: Any, value: Value) -> DictAtom:
    """``atom`` with ``key`` now holding ``value``: in its place when present (dicts keep insertion order)."""
    if atom.get(key) is None:
        return DictAtom((*atom.items, (key, value)), atom.rest)
    return DictAtom(tuple((k, value if k == key and type(k) is type(key) else v) for k, v in atom.items), atom.rest)


def without_entry(atom: DictAtom, key: Any) -> DictAtom:
    return DictAtom(tuple((k, v) for k, v in atom.items if not (k == key and type(k) is type(key))), atom.rest)


@dataclass(frozen=True, slots=True)
class GradsAtom(Atom):
    """``Gradients`` returned by ``backward()``."""

    origin: Origin | None = None


@dataclass(frozen=True, slots=True)
class ScopeAtom(Atom):
    """The ``scope`` argument passed to a ``capture_scope`` function."""

    scope: ScopeId


@dataclass(frozen=True, slots=True)
class GraphAtom(Atom):
    """A captured graph (what ``scope.complete`` and ``capture_scope`` return)."""

    scope: ScopeId | None = None


def broadcast_ndim(ranks: Iterable[int | None]) -> int | None:
    """The number of dimensions of an element-wise result (numpy's and torch's broadcasting): the largest of the
    operands' (a Python number has none), ``None`` where one is not known or there are none."""
    known = list(ranks)
    return None if not known or None in known else max(known)  # type: ignore[type-var]


#: ``numpy.ndarray``, as ``isinstance`` tests name it
NDARRAY = "numpy.ndarray"


@dataclass(frozen=True, slots=True)
class NumpyRef(Atom):
    """``numpy`` or a name inside it (``numpy.random``, ``numpy.float32``, ``numpy.zeros`` ...)."""

    path: str

    def names_type(self) -> str | None:
        return NDARRAY if self.path == NDARRAY else None


@dataclass(frozen=True, slots=True)
class ArrayAtom(Atom):
    """A numpy array (or numpy scalar) whose dtype has this tensor kind: ``"float"``, ``"int"`` or ``"bool"``.

    Only the kind is kept: it is all ``Tensor.from_data`` needs (every float dtype makes a float tensor); and
    the number of dimensions where the model knows it (a tensor made from a 0-d array is 0-dim: PyTorch's
    scalar exemption)."""

    kind: str
    ndim: int | None = None

    def truthy(self) -> bool | None:
        return None  # an array's truth depends on its values (and raises for more than one)

    def library_type(self) -> str | None:
        # (a numpy scalar, which the model also keeps here, is not an ``ndarray``: only an array of known rank)
        return NDARRAY if self.ndim else None


@dataclass(frozen=True, slots=True)
class RngAtom(Atom):
    """A ``numpy.random.Generator`` (``np.random.default_rng(...)``)."""


# --- values --------------------------------------------------------------------------


class Value:
    """A set of possibilities; ``top`` adds "and anything the analysis does not know"."""

    __slots__ = ("atoms", "top", "notes", "_hash", "_depth", "_reach", "_ways", "_mapped", "_alternatives", "_loose")

    def __init__(self, atoms: Iterable[Atom] = (), top: bool = False,
                 notes: dict[Atom, frozenset] | None = None) -> None:
        self.atoms: frozenset[Atom] = atoms if isinstance(atoms, frozenset) else frozenset(atoms)
        self.top = top
        # the choice tags of possibilities that cannot carry their own (instances: the heap knows them by
        # identity), atom -> the tag sets it came with (any one of them); not part of equality (:mod:`.choices`)
        self.notes = notes or None
        self._hash: int | None = None
        self._depth: int | None = None
        self._reach: tuple[frozenset, bool] | None = None  # (:func:`.choices.reach`)
        self._ways: frozenset | None = None  # (:func:`.choices.reached_ways`)
        # what a walk of :mod:`.choices` made of this value, by the walk (the same walk, the same result)
        self._mapped: dict | None = None
        self._alternatives: dict | None = None  # (:func:`.choices.alternatives`)
        self._loose: bool | None = None  # (:attr:`has_loose`)

    @property
    def has_loose(self) -> bool:
        """Some possibility has fields equality leaves out (:attr:`Atom.loose`): a join chooses between copies."""
        if self._loose is None:
            self._loose = any(a.loose for a in self.atoms)
        return self._loose

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Value) or self.top != other.top or hash(self) != hash(other):
            return False
        return self.atoms == other.atoms

    @property
    def depth(self) -> int:
        """How deeply values nest inside this one (sequences, dicts, closures, bound receivers)."""
        if self._depth is None:
            self._depth = 1 + max((_atom_depth(a) for a in self.atoms), default=0)
        return self._depth

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.atoms, self.top))
        return self._hash

    def __repr__(self) -> str:
        parts = sorted(repr(a) for a in self.atoms)
        if self.top:
            parts.append("TOP")
        return "Value{" + ", ".join(parts) + "}"

    def __iter__(self) -> Iterator[Atom]:
        return iter(self.atoms)

    @property
    def is_bottom(self) -> bool:
        return not self.atoms and not self.top

    @property
    def is_top(self) -> bool:
        return self.top and not self.atoms

    def join(self, other: Value) -> Value:
        if other is self or other.is_bottom:
            return self
        if self.is_bottom:
            return other
        atoms = self.atoms | other.atoms
        top = self.top or other.top
        earlier = _earlier_copies(self.atoms, other.atoms) if self.has_loose and other.has_loose else None
        if earlier is not None:
            atoms = (atoms - earlier) | earlier
        if self.notes is None and other.notes is None:
            if earlier is None and top == self.top and len(atoms) == len(self.atoms):
                return self
            if len(atoms) > MAX_ATOMS:
                return bounded(atoms, top)
            return Value(atoms, top)
        if len(atoms) > MAX_ATOMS:
            return bounded(atoms, top)  # (past-failure notes are dropped with the widened atoms)
        return Value(atoms, top, _joined_notes(self, other))

    def filter(self, keep: Any) -> Value:
        """The atoms for which ``keep(atom)`` holds; ``top`` is kept."""
        atoms = frozenset(a for a in self.atoms if keep(a))
        if len(atoms) == len(self.atoms):
            return self
        notes = {a: n for a, n in self.notes.items() if a in atoms} if self.notes else None
        return Value(atoms, self.top, notes)

    def of_type(self, *types: type) -> list:
        return [a for a in self.atoms if isinstance(a, types)]

    def only(self, *types: type) -> bool:
        """Every possibility is known and of one of ``types``."""
        return not self.top and bool(self.atoms) and all(isinstance(a, types) for a in self.atoms)

    def tensors(self) -> list[TensorAtom]:
        return [a for a in self.atoms if isinstance(a, TensorAtom)]

    def devices(self) -> list[DeviceAtom]:
        return [a for a in self.atoms if isinstance(a, DeviceAtom)]

    def consts(self) -> list[Any] | None:
        """The constant values, or ``None`` unless every possibility is a known constant."""
        if self.top or not self.atoms or not all(isinstance(a, Const) for a in self.atoms):
            return None
        return [a.value for a in self.atoms]  # type: ignore[attr-defined]

    def truthiness(self) -> set[bool | None]:
        out: set[bool | None] = {a.truthy() for a in self.atoms}
        if self.top:
            out.add(None)
        return out


def in_source_order(atoms: frozenset[Atom]) -> Iterable[Atom]:
    """The possibilities in an order hashing does not decide (a set's order changes from run to run): functions,
    classes and instances by where they are defined or made. Where one possibility's effects reach the next (the
    callees of one call, run one after the other on one state), the result is then the same on every run."""
    if len(atoms) < 2:
        return atoms
    return sorted(atoms, key=_source_position)


def _source_position(atom: Atom) -> tuple[str, int, int, int, str]:
    if isinstance(atom, Instance):
        return (atom.file, atom.line, atom.col, atom.ctx, "Instance")
    info = getattr(atom, "fn", None) or getattr(atom, "cls", None)
    node = getattr(info, "node", None)
    if node is not None:
        module = getattr(info, "module", None)
        return (getattr(module, "file", ""), node.lineno, node.col_offset, 0, type(atom).__name__)
    origin = getattr(atom, "origin", None)
    if isinstance(origin, Origin):
        return (origin.file, origin.line, origin.col, 0, type(atom).__name__)
    return ("", 0, 0, 0, type(atom).__name__ + ":" + str(getattr(atom, "name", getattr(atom, "path", ""))))


def _earlier_copies(first: frozenset[Atom], second: frozenset[Atom]) -> frozenset[Atom] | None:
    """The possibilities of ``second`` equal to one of ``first`` but of a smaller :meth:`Atom.provenance_key`
    (``first | second`` keeps ``first``'s copies); None when there are none."""
    mine = {a: a for a in first if a.loose}
    better = None
    for atom in second:
        if atom.loose:
            kept = mine.get(atom)
            if kept is not None and kept is not atom and atom.provenance_key() < kept.provenance_key():
                better = [atom] if better is None else [*better, atom]
    return None if better is None else frozenset(better)


def _joined_notes(first: Value, second: Value) -> dict[Atom, frozenset] | None:
    """The notes of a join: a possibility one side has without a note has none (it came from every way)."""
    out: dict[Atom, frozenset] = {}
    for atom, notes in (first.notes or {}).items():
        if atom not in second.atoms:
            out[atom] = notes
        elif second.notes and atom in second.notes:
            out[atom] = notes | second.notes[atom]
    for atom, notes in (second.notes or {}).items():
        if atom not in first.atoms:
            out[atom] = notes
    return out or None


_SHALLOW = (Const, DeviceAtom, TensorAtom, ShimRef, ShimModule, ModuleRef, BuiltinRef, ClassRef, Instance,
            GradsAtom, ScopeAtom, GraphAtom, NumpyRef, ArrayAtom, RngAtom)


def _atom_depth(atom: Atom) -> int:
    """The nesting depth of the values an atom holds (0 for atoms that hold none)."""
    cls = type(atom)
    fields = _DEPTH_FIELDS.get(cls)
    if fields is None:
        fields = _DEPTH_FIELDS[cls] = () if issubclass(cls, _SHALLOW) \
            else tuple(getattr(cls, "__dataclass_fields__", ()))
    depth = 0
    for name in fields:
        item = getattr(atom, name)
        kind = _ITEM_KINDS.get(type(item))
        if kind is None:
            kind = _item_kind(type(item))
        if kind:
            depth = max(depth, _field_depth(item))
    return depth


#: atom class -> the fields :func:`_atom_depth` looks into (none for the shallow ones): asked of every new value
_DEPTH_FIELDS: dict[type, tuple[str, ...]] = {}
#: a field's type -> whether its values may hold values (a value, an atom, a tuple); the rest are depth 0
_ITEM_KINDS: dict[type, bool] = {}


def _item_kind(cls: type) -> bool:
    kind = _ITEM_KINDS[cls] = issubclass(cls, (Value, Atom, tuple))
    return kind


def _field_depth(item: object) -> int:
    if isinstance(item, Value):
        return item.depth
    if isinstance(item, Atom):
        return 1 + _atom_depth(item)
    if isinstance(item, tuple):
        return max((_field_depth(x) for x in item), default=0)
    return 0


TOP = Value((), True)
BOTTOM = Value((), False)
NONE = Value((Const(None, "NoneType"),))
TRUE = Value((Const(True, "bool"),))
FALSE = Value((Const(False, "bool"),))
BOOL = Value((Const(True, "bool"), Const(False, "bool")))


def V(*atoms: Atom) -> Value:
    return Value(frozenset(atoms))


def const_value(value: Any) -> Value:
    if isinstance(value, _CONST_TYPES):
        return Value((const(value),))
    return TOP


def map_elements(atom: SeqAtom | DictAtom, fn: Callable[[Value], Value], kind: str | None = None) -> Atom:
    """The same sequence or dict with ``fn`` applied to each element value (``kind``: a sequence's new kind)."""
    if isinstance(atom, SeqAtom):
        kind = kind or atom.kind
        return seq(kind, map(fn, atom.items)) if atom.items is not None else seq_of(kind, fn(atom.elem))
    rest = None if atom.rest is None else fn(atom.rest)
    return DictAtom(tuple((key, fn(value)) for key, value in atom.items), rest)


def join_all(values: Iterable[Value]) -> Value:
    """The join of ``values``, in one union (joining them one by one copies a growing set per value)."""
    atoms: set[Atom] = set()
    top = False
    first: Value | None = None
    count = 0
    loose: dict[Atom, Atom] | None = None  # the loose possibilities kept so far (:attr:`Atom.loose`)
    replaced = False
    for v in values:
        if v.is_bottom:
            continue
        count += 1
        if first is None:
            first = v
        if v.has_loose:
            if loose is None:
                loose = {a: a for a in atoms if a.loose}
            for atom in v.atoms:
                if atom.loose:
                    kept = loose.get(atom)
                    if kept is None:
                        loose[atom] = atom
                    elif kept is not atom and atom.provenance_key() < kept.provenance_key():
                        loose[atom] = atom
                        atoms.discard(kept)  # (a set keeps the copy it has: replaced by the earlier one)
                        atoms.add(atom)
                        replaced = True
        atoms.update(v.atoms)
        top = top or v.top
    if first is None:
        return BOTTOM
    if count == 1 or (not replaced and top == first.top and len(atoms) == len(first.atoms)):
        return first
    return bounded(atoms, top) if len(atoms) > MAX_ATOMS else Value(frozenset(atoms), top)


def bounded(atoms: Iterable[Atom], top: bool) -> Value:
    """A value of more than :data:`MAX_ATOMS` possibilities, made small again: the lists (tuples, sets) of one
    kind become one list whose elements are any of theirs, the dicts one dict whose entries are any of theirs
    (both hold everything the parts held); if that is still too many, unknown. Every join goes through here,
    so no value grows past the limit (a list appended to on some paths of each of n iterations would otherwise
    be 2**n lists)."""
    kept: list[Atom] = []
    elems: dict[str, list[Value]] = {}
    dict_values: list[Value] = []
    for atom in atoms:
        if isinstance(atom, SeqAtom):
            elems.setdefault(atom.kind, []).append(atom.elem)
        elif isinstance(atom, DictAtom):
            dict_values.append(atom.unknown_keys())
            dict_values.extend(v for _k, v in atom.items)
        else:
            kept.append(atom)
    kept.extend(seq_of(kind, join_all(parts)) for kind, parts in elems.items())
    if dict_values:
        kept.append(DictAtom((), join_all(dict_values)))
    if len(kept) > MAX_ATOMS:
        return TOP
    return Value(frozenset(kept), top)


def merge_alike(first: Value, second: Value) -> tuple[Value, Value]:
    """``first`` and ``second`` (two paths' values of one name) with the possibilities of one
    :meth:`Atom.merge_key`, on either side, replaced on both by all of them merged (a merge is a join of their
    parts, so the result does not depend on the order the sets give them in)."""
    if not any(a.mergeable for a in first.atoms) or not any(a.mergeable for a in second.atoms):
        return first, second
    groups: dict[object, list[Atom]] = {}
    for atom in first.atoms | second.atoms:
        key = atom.merge_key() if atom.mergeable else None
        if key is not None:
            groups.setdefault(key, []).append(atom)
    replaced: dict[Atom, Atom] = {}
    for alike in groups.values():
        if len(alike) > 1:
            merged = alike[0]
            for atom in alike[1:]:
                merged = merged.merged(atom)
            replaced.update((atom, merged) for atom in alike)
    if not replaced:
        return first, second
    return _replaced(first, replaced), _replaced(second, replaced)


def _replaced(value: Value, replaced: dict[Atom, Atom]) -> Value:
    atoms = frozenset(replaced.get(a, a) for a in value.atoms)
    notes = {a: n for a, n in value.notes.items() if a not in replaced} if value.notes else None
    return Value(atoms, value.top, notes)


def reveal_text(value: Value) -> str:
    """The analyzer's ``reveal_device`` text: one state, or the alternatives joined by ``|``."""
    texts = sorted({a.reveal() for a in value.atoms if hasattr(a, "reveal")})
    if value.top or not texts:
        texts.append("Unknown")
    return " | ".join(texts)
