"""Flow state: the variables at one program point, their join, the activation frame, and widening."""

from __future__ import annotations

import ast
from collections.abc import Container, Iterable

from runtime_shim.semantics import DEFAULT_PROFILE

from ..domain import BOTTOM, TOP, Const, ScopeId, Value
from ..facts import Context
from .limits import MAX_ATOMS, MAX_DEPTH
from .program import ClassInfo, FunctionInfo, ModuleInfo

Alias = tuple[str, tuple[tuple[str, str | int], ...]]
# ``row = grid[0]``: aliases["[]row"] = ("grid", (("item", 0),)), so that ``row[j] = v`` updates ``grid`` too (the
# prefix keeps these apart from the narrowing aliases, whose names are variables)
ELEMENT_ALIAS = "[]"


class State:
    """Variables (and ``name.attr`` overlays of instance attributes) on one program point."""

    __slots__ = ("vars", "dead", "aliases", "past_failure")

    def __init__(self, variables: dict[str, Value] | None = None, dead: bool = False,
                 aliases: dict[str, Alias] | None = None, past_failure: bool = False) -> None:
        self.vars: dict[str, Value] = variables if variables is not None else {}
        self.dead = dead
        # every path to here went on past a call that fails on every path (with the result it was meant to have):
        # what succeeds here succeeds only in that hypothetical, so it does not make a failure a warning
        self.past_failure = past_failure
        # ``b = t.device().backend``: b holds what that path gives (until b or t changes), so narrowing
        # b narrows t too; name -> (the narrowable key, the steps from it)
        self.aliases: dict[str, Alias] = aliases if aliases is not None else {}

    def copy(self) -> State:
        return State(dict(self.vars), self.dead, dict(self.aliases), self.past_failure)

    def same(self, other: State) -> bool:
        return self.dead == other.dead and self.vars == other.vars and self.aliases == other.aliases \
            and self.past_failure == other.past_failure

    def kill_aliases(self, name: str) -> None:
        """``name`` (a variable or a ``base.attr`` overlay) changes: aliases of it or through it end."""
        if not self.aliases:
            return
        prefix = name + "."
        element = ELEMENT_ALIAS + name
        for alias in [a for a, (key, _steps) in self.aliases.items()
                      if a in (name, element) or key == name or key.startswith(prefix)]:
            del self.aliases[alias]

    def drop_overlays(self, base: str | None = None, attrs: Container[str] | None = None) -> None:
        keys = [k for k in self.vars if "." in k]
        for key in keys:
            name, _, attr = key.partition(".")
            if base is not None and name != base:
                continue
            if attrs is not None and attr not in attrs:
                continue
            del self.vars[key]
        for alias, (key, _steps) in list(self.aliases.items()):
            if "." not in key:
                continue
            name, _, attr = key.partition(".")
            if (base is None or name == base) and (attrs is None or attr in attrs):
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
    out = dict(live[0].vars)
    if any(COMPLETED_SCOPES in s.vars for s in live) and not all(COMPLETED_SCOPES in s.vars for s in live):
        # a path that did not complete the scope: it may still be open here
        first = next(s.vars[COMPLETED_SCOPES] for s in live if COMPLETED_SCOPES in s.vars)
        out[COMPLETED_SCOPES] = first.join(Value(frozenset({NOT_COMPLETED})))
    for other in live[1:]:
        variables = other.vars
        if variables is live[0].vars:
            continue
        for key in [k for k in out if "." in k and k not in variables]:
            del out[key]  # an overlay on one path only: fall back to the heap
        for key, value in variables.items():
            known = out.get(key)
            if known is not None:
                if known is not value:  # (the same object on every path: most variables)
                    out[key] = known.join(value)
            elif "." not in key:
                out[key] = value
    aliases = {a: path for a, path in live[0].aliases.items()
               if all(other.aliases.get(a) == path for other in live[1:])}
    return State(out, aliases=aliases, past_failure=all(s.past_failure for s in live))



class Frame:
    """One activation: a module's top level, a class body, or a function in one context."""

    def __init__(self, module: ModuleInfo, ctx: Context, *, func: FunctionInfo | None = None,
                 closure: dict[str, Value] | None = None, scopes: frozenset[ScopeId] = frozenset(),
                 profile: str = DEFAULT_PROFILE, kind: str = "function", cls: ClassInfo | None = None) -> None:
        self.module = module
        self.ctx = ctx
        self.func = func
        self.closure = closure or {}
        self.scopes = scopes
        self.profile = profile
        self.kind = kind  # "module", "class", "function"
        self.cls = cls
        self.loops: list[tuple[list[State], list[State]]] = []
        self.collectors: list[list[State]] = []
        self.returns: Value = BOTTOM
        self.yields: Value = BOTTOM  # a generator: the join of the values it yields
        self.tagged = False  # a branch of this activation tagged something (:mod:`.relational`): statements split

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



def force_top(state: State, widened: set[str]) -> None:
    for name in widened:
        if name in state.vars:
            state.vars[name] = TOP



def widen_changed(old: State, new: State, widened: set[str]) -> None:
    for name, value in new.vars.items():
        if old.vars.get(name) != value:
            widened.add(name)
            new.vars[name] = TOP


def rebind_call_receiver(node: ast.AST, value: Value, st: State) -> None:
    """``name.method(...)`` made a new value of what ``name`` holds (an optimizer's state, a parser's options):
    the name now holds ``value`` (a receiver that is not a plain name of this frame is left as it is)."""
    receiver = getattr(getattr(node, "func", None), "value", None)
    if isinstance(receiver, ast.Name) and receiver.id in st.vars:
        st.vars[receiver.id] = value
        st.kill_aliases(receiver.id)
