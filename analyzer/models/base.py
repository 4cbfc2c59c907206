"""The boundary between the engine and the library models.

The engine evaluates Python; what a library call, a library object's method or attribute, a ``with`` on a
library context manager or a library question in a condition means is a model's answer. The engine asks
every registered model (:mod:`.registry`) at each hook below, in registration order; the first answer
other than :data:`UNHANDLED` (or ``None`` where the hook says so) wins. A model answers only for the values
it made or the qualified names it declares (:mod:`.signatures`), so with no model loaded the engine still
analyses plain Python (library values are then unknown).

A model reaches the engine's services (``eval``, ``call``, ``heap_get``/``heap_set``, ``site``, ``origin``,
``facts`` ...) as attributes of its own: :meth:`LibraryModel.__getattr__` forwards what the model does not
define to the engine it serves.

A model whose library's questions split the analysis (``torch.cuda.is_available()``, a command line parsed
with no options or with some) declares a :class:`WorldAxis`: the engine runs once per world of each axis a
program asks (:mod:`..engine.worlds`), and the model reads its world's answers with
:meth:`LibraryModel.assumption` and its own :class:`Assumption` keys.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar, cast

from ..domain import Atom, Value

if TYPE_CHECKING:
    from ..engine.flow_state import Frame, State
    from ..engine.program import ClassInfo, FunctionInfo, ModuleInfo


class Unhandled:
    """The answer of a hook whose question is not about this model's values."""

    _instance: ClassVar[Unhandled | None] = None

    def __new__(cls) -> Unhandled:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNHANDLED"


UNHANDLED: Final = Unhandled()

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True, slots=True, eq=False)
class Assumption(Generic[T_co]):
    """A key of what a world assumes, of values ``T_co``: declared (once, a module constant: keys compare by
    identity) and read by the model that owns it."""

    name: str  # what it is, for a reader ("torch.cuda.is_available")


@dataclass(frozen=True, slots=True)
class World:
    """One answer of an axis: what it assumes, how diagnostics name it, the ``target-device`` it is."""

    label: str  # in a few words, completing "fails when ...": "CUDA is available"
    assumptions: Mapping[Assumption[Any], object]
    target: str = ""  # the ``target-device`` value that names this world ("": none does; ANY_TARGET: every one)


#: a world every named ``target-device`` keeps where its axis is asked (the command line as run with no options)
ANY_TARGET = "any machine"


@dataclass(frozen=True, slots=True)
class Refinement:
    """A further question that splits one world of an axis where a program asks it (``device_count()``
    inside the CUDA world), with what it fixes in the worlds it leaves (MPS is not available there)."""

    question: bytes  # source text that asks it, anywhere in the component
    splits: str  # the label of the world it replaces
    into: tuple[World, ...]
    elsewhere: Mapping[Assumption[Any], object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WorldAxis:
    """A question of a library whose answers split the analysis: a small program (``MAX_WORLD_FILES``,
    :mod:`..engine.worlds`) whose text asks it is analysed once per world and the facts are merged (a failure
    in some worlds is a warning naming the world). A named ``target-device`` keeps the worlds it names (in
    any program, asked or not; the first only in a large one); an axis with none of them ignores it."""

    name: str  # what other models' :class:`AxisQuestions` name it by
    questions: tuple[bytes, ...]  # source text that makes a program ask it
    worlds: tuple[World, ...]
    refinements: tuple[Refinement, ...] = ()
    # an outer split, run around the others: a fact of its first world that another world never saw (its
    # operands unknown there, or not reached) is partly unknown (the command line: options may change it)
    outer: bool = False


@dataclass(frozen=True, slots=True)
class AxisQuestions:
    """Source text of a model's library that asks another model's axis (a ``LightningModule`` picks its
    device by ``torch.cuda.is_available()``)."""

    axis: str
    questions: tuple[bytes, ...]


class LibraryModel:
    """What a library model may answer; every hook's default is "not mine"."""

    name: ClassVar[str] = ""  # the model's name (``devicelint models`` groups by it)
    world_axes: ClassVar[tuple[WorldAxis, ...]] = ()  # the questions of its library that split the analysis
    axis_questions: ClassVar[tuple[AxisQuestions, ...]] = ()  # its library's text that asks other models' axes

    def __init__(self, engine: Any) -> None:
        self.__dict__["engine"] = engine

    def __getattr__(self, name: str) -> Any:
        # the engine's services (and its state) for the model's code, which was written against the engine;
        # a method is kept (its next use is a plain lookup), state is read each time (``facts`` is swapped)
        engine = self.__dict__["engine"]
        found = getattr(engine, name)
        if getattr(found, "__self__", None) is engine and callable(found):
            self.__dict__[name] = found
        return found

    def assumption(self, key: Assumption[T]) -> T | None:
        """What the world analysed assumes for ``key`` (None: nothing, either answer)."""
        return cast("T | None", self.__dict__["engine"].assumptions.get(key))

    # -- names and calls -------------------------------------------------------------------------------
    def import_ref(self, path: str) -> Value | None:
        """The value of ``import path`` / ``from ... import`` of a module the project does not hold."""
        return None

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
             fr: Frame, star_unknown: bool) -> Value | Unhandled:
        """A call of ``atom`` (a qualified library name, a library object); arguments as the call passes them
        (the model binds them to the declared parameters: :func:`.signatures.bind`)."""
        return UNHANDLED

    def call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                        star_unknown: bool, st: State, fr: Frame) -> Value | None:
        """A call the model recognises by its syntax (``copy.deepcopy(x)`` through an unknown import,
        ``nn.Sequential(*layers)``) before the engine calls ``func``."""
        return None

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
               node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        """``receiver.name(...)`` on values of ``kind`` (:func:`..engine.dispatch_helpers.receiver_kind`)."""
        return UNHANDLED

    def builtin(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        """A builtin (``str``, ``vars``) called with the model's values."""
        return None

    # -- attributes ----------------------------------------------------------------------------------
    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                  fr: Frame) -> Value | None | Unhandled:
        """``atom.attr`` (None: unknown)."""
        return UNHANDLED

    def value_attribute(self, obj: Value, attr: str, node: ast.expr, st: State, fr: Frame) -> Value | None:
        """``obj.attr`` read as a whole (a read that checks every possibility together)."""
        return None

    def instance_attribute(self, instance: Atom, attr: str, node: ast.expr | None, st: State,
                           fr: Frame) -> Value | None:
        """An attribute a project instance inherits from a library base class."""
        return None

    def stored_attribute(self, instance: Atom, attr: str, stored: Value) -> Value:
        """What a heap read of ``instance.attr`` gives, given what was stored."""
        return stored

    def storing_attribute(self, instance: Atom, value: Value, old: Value | None) -> Value:
        """What ``instance.attr = value`` stores."""
        return value

    def attribute_stored(self, target: ast.Attribute, obj: Value, value: Value, st: State, fr: Frame) -> None:
        """After ``obj.attr = value``."""

    def attributes_read(self, value: Value, attributes: Iterable[str]) -> Value:
        """What a statement that reads ``attributes`` of ``value`` reads of it (a namespace: those options)."""
        return value

    def namespace_store(self, obj: Value, attr: str, value: Value) -> Value | None:
        """``name.attr = value`` on a value the model carries by value: its new value (None: not one)."""
        return None

    # -- operators -----------------------------------------------------------------------------------
    def binary(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
              compare: bool) -> Value | None:
        """``left op right`` (``compare``: a comparison)."""
        return None

    def unary(self, op: ast.unaryop, operand: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        return None

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        """``atom[key]``."""
        return None

    def store_item(self, container: Value, key: Value, value: Value, target: ast.Subscript, st: State,
                   fr: Frame) -> None:
        """``container[key] = value``."""

    def updated_item(self, atom: Atom, key: Value, value: Value) -> Value | None:
        """A library container ``atom`` after ``atom[key] = value`` (``nn.Sequential``: the layer at that position
        replaced), for the name or attribute that holds it; None: not this model's (the container is kept)."""
        return None

    def pure_attribute(self, atom: Atom, kind: str, name: str) -> Value | None:
        """``atom.name`` (``kind`` ``"attr"``) or ``atom.name()`` (``"call"``) as a branch test reads it, with
        nothing recorded (``x.is_cuda``, ``x.device.type``: what narrows ``x`` in each branch); None: not known."""
        return None

    def items(self, atom: Atom, st: State, fr: Frame) -> list[Value] | None:
        """The items of a library record in order (a ``typing.NamedTuple`` instance's fields), for unpacking it
        (``x, y = batch``) and collating it; None: not one."""
        return None

    def element(self, atom: Atom, how: str) -> Value | None:
        """An element of ``atom``: ``how`` is ``"iterate"`` (``for x in atom``), ``"unpack"`` (``x, y = atom``)
        or ``"slice"`` (``atom[a:b]``)."""
        return None

    # -- control flow ----------------------------------------------------------------------------------
    def enter_with(self, value: Value, st: State) -> Any:
        """``with value:`` entered: what :meth:`exit_with` restores (None: not a context of this model)."""
        return None

    def exit_with(self, saved: Any, st: State) -> None:
        pass

    def choose_branch(self, true: State, false: State) -> bool | None:
        """Of the two states after the branches of an ``if``, the one the model's world takes (None: both)."""
        return None

    def decides_values(self) -> bool:
        """Whether :meth:`choose_value` may answer in this analysis (a world is fixed)."""
        return False

    def choose_value(self, body: Value, orelse: Value) -> bool | None:
        """As :meth:`choose_branch` for the values of a conditional expression."""
        return None

    def assignment(self, node: ast.Assign, st: State, fr: Frame) -> Value | None:
        """Before ``target = value``: what the model needs after it (given to :meth:`assigned`)."""
        return None

    def assigned(self, target: ast.expr, before: Value, after: Value, st: State, fr: Frame) -> None:
        pass

    # -- calling contexts ------------------------------------------------------------------------------
    def context_key(self, st: State | None, uncalled: bool) -> Any:
        """The model's part of a calling context's key (its modes in force at the call)."""
        return None

    def enter_function(self, state: State, key: Any, fn: FunctionInfo) -> None:
        """A function's run starts under the modes :meth:`context_key` gave."""

    def enter_call(self, fn: FunctionInfo) -> None:
        """A project function starts to run (:meth:`exit_call` when it ends, however it ends)."""

    def exit_call(self, fn: FunctionInfo) -> None:
        pass

    # -- definitions and the frameworks that call the program -------------------------------------------
    def class_base(self, value: Value) -> tuple[str, ...]:
        """The library classes a class base derives from, in order (``torch.nn.Module``:
        :meth:`ClassInfo.has_library_base`)."""
        return ()

    def framework_class(self, cls: ClassInfo) -> tuple[str, ...]:
        """The library classes a class with a base the analysis does not know derives from all the same (a
        framework's: ``LightningModule`` is an ``nn.Module``)."""
        return ()

    def record_bases(self) -> frozenset[str]:
        """The library classes a class of records of data derives from (``typing.NamedTuple``): what an instance of
        one holds is what a call passing it hands over (:meth:`ClassInfo.holds_data`)."""
        return frozenset()

    def library_init(self, cls: ClassInfo, instance: Value, args: list[Value], kwargs: dict[str, Value],
                     st: State, fr: Frame) -> None:
        """A project class without ``__init__`` instantiated: its library base's constructor runs."""

    def class_attribute(self, cls: ClassInfo, attr: str) -> Value | None:
        """An attribute a project class inherits from a library base (``MyFunction.apply``)."""
        return None

    def wrapped(self, node: ast.FunctionDef | ast.AsyncFunctionDef, module: ModuleInfo) -> bool:
        """A decorated function a framework calls (not the decorator's result)."""
        return False

    def entry(self, fn: FunctionInfo) -> Any:
        """Something calls ``fn`` from outside the program (None: not the model's)."""
        return None

    def entry_calls(self, fn: FunctionInfo, receivers: list[list[Value]],
                    frame: Frame) -> list[tuple[list[Value], dict[str, Value]]] | None:
        """The calls the framework makes of ``fn`` (None: not the model's)."""
        return None

    def entry_caller(self, fn: FunctionInfo) -> str:
        return ""
