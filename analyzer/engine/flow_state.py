"""Flow state: the variables at one program point, their join, the activation frame, and widening."""

from __future__ import annotations

import ast
import enum
from collections.abc import Container, Iterable
from typing import Any, Literal, NamedTuple, TypeVar

from runtime_shim.semantics import DEFAULT_PROFILE

from ..domain import BOTTOM, TOP, Const, NumberAtom, ScopeId, SeqAtom, V, Value, merge_alike, seq_of
from ..facts import Context
from .limits import MAX_ATOMS, MAX_DEPTH
from .program import ClassInfo, FunctionInfo, ModuleInfo


class Overlay(NamedTuple):
    """``base.attr`` as this path last stored it (the heap holds the join over every path of every run); with
    ``attr`` made by :func:`item_overlay`, ``base[key]`` as a test on this path narrowed it."""

    base: str  # a variable
    attr: str


def item_overlay(base: str, key: int | str) -> Overlay:
    """The overlay of ``base[key]`` (no attribute name has brackets: never an attribute's)."""
    return Overlay(base, f"[{key!r}]")


def is_item_overlay(slot: object) -> bool:
    return isinstance(slot, Overlay) and slot.attr.startswith("[")


#: a place narrowing can refine: a variable (its name) or an overlay
Slot = str | Overlay
#: one step from a slot towards a value: ``("attr", name)``, ``("call", method)`` (no arguments), ``("item", key)``
Step = tuple[Literal["attr", "call", "item"], str | int | slice]
Steps = tuple[Step, ...]
#: ``b = t.device().backend``: (the slot, the steps from it)
Alias = tuple[Slot, Steps]
#: ``row = grid[0]``: (the container variable, (("item", 0),))
Element = tuple[str, Steps]

K = TypeVar("K")


class ModeKey(str):
    """A mode's name in :attr:`State.modes` with the value the mode has where nothing set it (a model's
    declaration: ``torch.set_default_device`` in one branch leaves the CPU in force on the other). A mode set
    on one path of a join is joined with that value; a mode without one is dropped there (back to a default
    the analysis does not represent)."""

    default: Value | None

    def __new__(cls, name: str, default: Value | None = None) -> ModeKey:
        key = super().__new__(cls, name)
        key.default = default
        return key


def mode_default(key: object) -> Value | None:
    return key.default if isinstance(key, ModeKey) else None


class State:
    """What one program point knows, one map per kind of key:

    - ``vars``: variables (local names; a module's or class body's are its namespace), and the capture
      scopes completed on the way here (``COMPLETED_SCOPES``, which a join keeps as "maybe" when some
      path lacks it);
    - ``overlays``: ``name.attr`` stores this path made (keyed by :class:`Overlay`);
    - ``modes``: library modes in force (``torch.no_grad()``), keyed by a name their model chose;
    - ``aliases``: ``b = t.device().backend``: b holds what that path gives (until b or t changes), so
      narrowing b narrows t too; name -> (the slot, the steps from it);
    - ``elements``: ``row = grid[0]``: row is that element, so ``row[j] = v`` updates ``grid`` too;
    - ``ways``: the ways of program-wide choices every path to here took (``if args.cpu: return ...`` leaves
      the rest of the function on ``--cpu``'s false way): what it returns is that way's.

    A variable on one path of a join keeps that path's value; an overlay on one path only is dropped (it
    falls back to the heap), a mode joins its default (:class:`ModeKey`) or is dropped where it has none."""

    __slots__ = ("vars", "overlays", "modes", "aliases", "elements", "dead", "past_failure", "ways")

    def __init__(self, variables: dict[str, Value] | None = None, dead: bool = False,
                 past_failure: bool = False) -> None:
        self.vars: dict[str, Value] = variables if variables is not None else {}
        self.overlays: dict[Overlay, Value] = {}
        self.modes: dict[str, Value] = {}
        self.aliases: dict[str, Alias] = {}
        self.elements: dict[str, Element] = {}
        self.dead = dead
        # every path to here went on past a call that fails on every path (with the result it was meant to have):
        # what succeeds here succeeds only in that hypothetical, so it does not make a failure a warning
        self.past_failure = past_failure
        self.ways: frozenset = frozenset()

    def copy(self) -> State:
        out = State.__new__(State)  # (the hottest allocation of the engine: no defaults to fill in)
        out.vars = self.vars.copy()
        out.overlays = self.overlays.copy() if self.overlays else {}
        out.modes = self.modes.copy() if self.modes else {}
        out.aliases = self.aliases.copy() if self.aliases else {}
        out.elements = self.elements.copy() if self.elements else {}
        out.dead = self.dead
        out.past_failure = self.past_failure
        out.ways = self.ways
        return out

    def same(self, other: State) -> bool:
        return self.dead == other.dead and self.vars == other.vars and self.overlays == other.overlays \
            and self.modes == other.modes and self.aliases == other.aliases and self.elements == other.elements \
            and self.past_failure == other.past_failure and self.ways == other.ways

    def value_maps(self) -> tuple[dict[Any, Value], dict[Any, Value], dict[Any, Value]]:
        """The maps holding values (variables, overlays, modes), for what treats every kind alike (tags)."""
        return self.vars, self.overlays, self.modes

    def take_values(self, other: State) -> None:
        """Hold ``other``'s values (and deadness); the aliases stay this state's."""
        self.vars, self.overlays, self.modes, self.dead = other.vars, other.overlays, other.modes, other.dead

    def get(self, slot: Slot) -> Value | None:
        return self.overlays.get(slot) if isinstance(slot, Overlay) else self.vars.get(slot)

    def set(self, slot: Slot, value: Value) -> None:
        if isinstance(slot, Overlay):
            self.overlays[slot] = value
        else:
            self.vars[slot] = value

    def kill_aliases(self, slot: Slot) -> None:
        """``slot`` (a variable or an overlay) changes: aliases of it or through it end."""
        if self.aliases:
            for alias in [a for a, (key, _steps) in self.aliases.items()
                          if a == slot or key == slot or (isinstance(key, Overlay) and key.base == slot)]:
                del self.aliases[alias]
        if self.elements:
            for alias in [a for a, (key, _steps) in self.elements.items() if a == slot or key == slot]:
                del self.elements[alias]

    def drop_items(self, base: str) -> None:
        """``base`` changed in place: what tests narrowed of its items no longer holds."""
        if self.overlays:
            for key in [k for k in self.overlays if k.base == base and is_item_overlay(k)]:
                del self.overlays[key]

    def drop_overlays(self, base: str | None = None, attrs: Container[str] | None = None) -> None:
        """Forget the overlays of ``base`` (None: of every variable) on ``attrs`` (None: every attribute), and
        the aliases of them."""
        def dropped(slot: Slot) -> bool:
            return isinstance(slot, Overlay) and (base is None or slot.base == base) \
                and (attrs is None or slot.attr in attrs)

        if self.overlays:
            for key in [k for k in self.overlays if dropped(k)]:
                del self.overlays[key]
        if self.aliases:
            for alias in [a for a, (slot, _steps) in self.aliases.items() if dropped(slot)]:
                del self.aliases[alias]


def dead() -> State:
    return State({}, True)


def stored(old: Value | None, value: Value, strong: bool = False) -> Value:
    """What a name holds after a store: ``value`` for a strong update (or a first binding), else the join
    with what it held (a weak update), widened when large."""
    return value if strong or old is None else widen_if_large(old.join(value))


#: The pseudo-variable that holds the capture scopes whose ``complete()`` ran on the path to here
#: (``Const(scope, COMPLETED_TNAME)`` atoms; with ``NOT_COMPLETED`` where some path did not run it).
#: No Python name contains ``%``, so it never meets a program variable.
COMPLETED_SCOPES = "%completed"
COMPLETED_TNAME = "capture-scope-completed"
NOT_COMPLETED = Const(None, "capture-scope-open")


def completed_scopes(st: State) -> tuple[frozenset[ScopeId], bool]:
    """The scopes completed on some path to ``st``, and whether that holds on every path."""
    value = st.vars.get(COMPLETED_SCOPES)
    if value is None:
        return frozenset(), True
    done = frozenset(a.value for a in value.atoms if isinstance(a, Const) and a.tname == COMPLETED_TNAME)
    return done, NOT_COMPLETED not in value.atoms


def join_states(states: Iterable[State]) -> State:
    live = [s for s in states if not s.dead]
    if not live:
        return dead()
    first = live[0]
    out = dict(first.vars)
    if any(COMPLETED_SCOPES in s.vars for s in live) and not all(COMPLETED_SCOPES in s.vars for s in live):
        # a path that did not complete the scope: it may still be open here
        done = next(s.vars[COMPLETED_SCOPES] for s in live if COMPLETED_SCOPES in s.vars)
        out[COMPLETED_SCOPES] = done.join(Value(frozenset({NOT_COMPLETED})))
    for other in live[1:]:
        variables = other.vars
        if variables is first.vars:
            continue
        for key, value in variables.items():
            known = out.get(key)
            if known is None:
                out[key] = value
            elif known is not value:  # (the same object on every path: most variables)
                known, value = merge_alike(known, value)  # (one object as two paths left it: one again)
                out[key] = known.join(value)
    state = State(out, past_failure=all(s.past_failure for s in live))
    ways = first.ways
    for other in live[1:]:
        if ways:
            ways = ways & other.ways
    state.ways = ways
    state.overlays = _join_common([s.overlays for s in live])  # (on one path only: back to the heap's)
    state.modes = _join_modes([s.modes for s in live])
    state.aliases = {a: path for a, path in first.aliases.items()
                     if all(other.aliases.get(a) == path for other in live[1:])}
    if first.elements:
        state.elements = {a: path for a, path in first.elements.items()
                          if all(other.elements.get(a) == path for other in live[1:])}
    return state


def exit_modes(st: State, restores: list[list[tuple[Any, Any]]]) -> dict[str, Value]:
    """The modes a path that leaves its function here leaves in force: ``st``'s, less what the ``with`` blocks it
    returns from restore on the way out (innermost first)."""
    if not any(restores):
        return st.modes
    out = State({})
    out.modes = dict(st.modes)
    for saved in reversed(restores):
        for model, what in reversed(saved):
            model.exit_with(what, out)
    return out.modes


def mode_effect(entry: dict[str, Value], exits: list[dict[str, Value]]) -> dict[str, Value | None]:
    """What a function's run changes in the modes its caller has in force after the call (a setting such as
    ``torch.set_default_device`` made in a helper): the modes on every way out joined, against those it
    started with (None: back to the library's default)."""
    if not exits:
        return {}
    joined = _join_modes(exits)
    return {key: joined.get(key) for key in entry.keys() | joined.keys() if joined.get(key) != entry.get(key)}


def _join_modes(maps: list[dict[str, Value]]) -> dict[str, Value]:
    """The modes in force after paths meet: a mode some path did not set is its default there."""
    return _join_common([with_mode_defaults(m, maps) for m in maps])


def with_mode_defaults(modes: dict[str, Value], maps: Iterable[dict[str, Value]]) -> dict[str, Value]:
    """``modes`` with the defaults of the modes some other map sets and it does not."""
    missing = {key: default for other in maps if other is not modes for key in other
               if key not in modes and (default := mode_default(key)) is not None}
    return {**modes, **missing} if missing else modes


def _join_common(maps: list[dict[K, Value]]) -> dict[K, Value]:
    """The keys every map has, their values joined."""
    out = dict(maps[0])
    for other in maps[1:]:
        if not out:
            break
        if other is maps[0]:
            continue
        for key in [k for k in out if k not in other]:
            del out[key]
        for key, value in other.items():
            known = out.get(key)
            if known is not None and known is not value:
                out[key] = known.join(value)
    return out


class FrameKind(enum.Enum):
    """What an activation runs."""

    MODULE = "module"
    CLASS = "class"  # a class body
    FUNCTION = "function"

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow


class Frame:
    """One activation: a module's top level, a class body, or a function in one context."""

    def __init__(self, module: ModuleInfo, ctx: Context, *, func: FunctionInfo | None = None,
                 closure: dict[str, Value] | None = None, scopes: frozenset[ScopeId] = frozenset(),
                 profile: str = DEFAULT_PROFILE, kind: FrameKind = FrameKind.FUNCTION,
                 cls: ClassInfo | None = None) -> None:
        self.module = module
        self.ctx = ctx
        self.func = func
        self.closure = closure or {}
        self.scopes = scopes
        self.profile = profile
        self.kind = kind
        self.cls = cls
        self.loops: list[tuple[list[State], list[State]]] = []
        self.collectors: list[list[State]] = []
        self.returns: Value = BOTTOM
        self.yields: Value = BOTTOM  # a generator: the join of the values it yields
        # a function's run: the library modes in force where it returns (each ``with`` still open undone)
        self.exit_modes: list[dict[str, Value]] | None = None
        self.mode_restores: list[list[tuple[Any, Any]]] = []  # the open ``with`` blocks' (model, saved)
        # a function's run: its parameters' overlays on each path it returns by (:mod:`.attr_flow`)
        self.exit_overlays: list[dict[Overlay, Value]] | None = None
        self.bound: dict[str, Value] = {}  # (what its parameters were bound to)
        self.tagged = False  # a branch of this activation tagged something (:mod:`.relational`): statements split
        self.split_ways: frozenset = frozenset()  # the ways the statement running now was split on, here

    @property
    def file(self) -> str:
        return self.module.file



def past_failure(intended: Value, st: State, catching: int) -> Value:
    """The value a call that fails on every path (already reported) leaves to the code after it.

    Inside a ``try`` body with handlers or a suppressing ``with`` (``catching``: how many are in progress, in this
    activation or a caller's), the program goes on in the handler: the path ends here (``BOTTOM``, the state
    dead). Elsewhere the failure would end the program, hiding every bug after it: the analysis goes on with
    ``intended``, the result the user meant the call to have, so those bugs are reported in the same run."""
    if catching:
        st.dead = True
        return BOTTOM
    st.past_failure = True
    return widen_if_large(intended)


def widen_if_large(value: Value) -> Value:
    """Widen a value that has grown too many possibilities, or nests too deeply."""
    if len(value.atoms) > MAX_ATOMS or value.depth > MAX_DEPTH:
        return TOP
    return value



#: what a loop widened, one map per map of :meth:`State.value_maps`: each key's bound from then on (unknown, or a
#: list of unknown length and items)
Widened = tuple[dict[Any, Value], dict[Any, Value], dict[Any, Value]]


def force_top(state: State, widened: Widened) -> None:
    """Hold each widened key at its bound (unknown where the value no longer fits the bound's shape)."""
    for values, bounds in zip(state.value_maps(), widened, strict=True):
        for name, bound in bounds.items():
            if name in values:
                fits = _sequence_kind(values[name]) == _sequence_kind(bound) is not None \
                    or _number_kind(values[name]) == _number_kind(bound) is not None
                values[name] = bound if fits else TOP


def widen_changed(old: State, new: State, widened: Widened) -> None:
    """Widen what still changes after the loop ran a few times: a list, tuple or set that stays one (``returns``
    grown by ``insert``/``append`` from numbers the loop computes) becomes one of unknown length and items, so what
    is made from it is still known (``torch.tensor(returns)``: a CPU tensor, not 0-dim); anything else, and a
    value that changes again once widened, becomes unknown."""
    for before, now, bounds in zip(old.value_maps(), new.value_maps(), widened, strict=True):
        for name, value in now.items():
            previous = before.get(name)
            if previous != value:
                kind = _sequence_kind(value)
                number = _number_kind(value)
                if kind is not None and name not in bounds and previous is not None \
                        and _sequence_kind(previous) == kind:
                    bound = Value(frozenset({seq_of(kind, TOP)}))
                elif number is not None and previous is not None and _number_kind(previous) == number:
                    bound = V(NumberAtom(number))  # a counter (``index += 1``): an int of unknown value
                else:
                    bound = TOP
                bounds[name] = bound
                now[name] = bound


def _number_kind(value: Value) -> str | None:
    """"int" or "float" when every possibility of ``value`` is a number of that type (not a bool), or None."""
    kinds = {atom.tname if isinstance(atom, NumberAtom) else type(atom.value).__name__
             if isinstance(atom, Const) and type(atom.value) in (int, float) else None for atom in value.atoms}
    return kinds.pop() if len(kinds) == 1 and not value.top and None not in kinds else None


def _sequence_kind(value: Value) -> str | None:
    """The kind of sequence every possibility of ``value`` is (``"list"``), or None."""
    kinds = {atom.kind if isinstance(atom, SeqAtom) else None for atom in value.atoms}
    return kinds.pop() if len(kinds) == 1 and not value.top else None


def rebind_call_receiver(node: ast.AST, value: Value, st: State) -> None:
    """``name.method(...)`` made a new value of what ``name`` holds (an optimizer's state, a parser's options):
    the name now holds ``value`` (a receiver that is not a plain name of this frame is left as it is)."""
    receiver = getattr(getattr(node, "func", None), "value", None)
    if isinstance(receiver, ast.Name) and receiver.id in st.vars:
        st.vars[receiver.id] = value
        st.kill_aliases(receiver.id)
