"""Progress bars around loops: ``for x, y in tqdm(loader)`` iterates the loader.

``tqdm(iterable)`` (``tqdm.tqdm``, ``tqdm.auto``, ``tqdm.notebook``, ``tqdm.rich`` ...) is a bar that yields the
elements of what it wraps, however the program holds it: iterated at once, kept in a name (``bar =
tqdm(loader)``; ``for batch in bar``), entered (``with tqdm(loader) as bar:``: ``tqdm.__enter__`` returns the bar)
or wrapped again (``enumerate(bar)``). ``trange(n)`` / ``tenumerate(seq)`` / ``tzip(a, b)`` are bars around
``range(n)`` / ``enumerate(seq)`` / ``zip(a, b)``, and ``rich.progress.track(seq)`` yields the elements of
``seq``. Without this a training loop written with a progress bar loses its batches (unknown), and the bugs
of the loop body go unseen. The bar's own methods (``set_postfix``, ``set_description``, ``update``, ``close``
...) return None and touch no tensor (what they are given was evaluated by the caller: ``loss.item()``); its
other attributes are unknown, and so is what a bar made without an iterable (``tqdm(total=n)``) yields.

The names are :class:`.library_refs.LibraryRef` values this model gives ``import tqdm`` / ``import rich``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..domain import NONE, TOP, Atom, BoundShim, BuiltinRef, V, Value
from ..engine.flow_state import Frame, State
from .base import UNHANDLED, LibraryModel, Unhandled
from .library_refs import LibraryRef, library_ref

ROOTS = frozenset({"tqdm", "rich"})
_TQDM_MODULES = ("tqdm", "tqdm.auto", "tqdm.autonotebook", "tqdm.notebook", "tqdm.std", "tqdm.rich", "tqdm.asyncio",
                 "tqdm.tk", "tqdm.gui")
#: bars that yield the elements of their first argument
BARS = frozenset(f"{m}.tqdm" for m in _TQDM_MODULES)
#: wrappers that yield the elements of their first argument
WRAPPERS = BARS | {"rich.progress.track"}
#: bars around a builtin: the builtin's elements
AROUND_BUILTINS = {**{f"{m}.trange": "range" for m in _TQDM_MODULES}, "tqdm.contrib.tenumerate": "enumerate",
                   "tqdm.contrib.tzip": "zip"}
#: the bar's methods that return None (``tqdm.write`` too: a class method)
_METHODS = frozenset({"set_postfix", "set_postfix_str", "set_description", "set_description_str", "update",
                      "close", "refresh", "reset", "clear", "display", "unpause", "write", "moveto"})


@dataclass(frozen=True, slots=True)
class ProgressBarAtom(Atom):
    """A ``tqdm`` bar: iterating it yields the elements of ``items`` (``TOP``: made without an iterable)."""

    items: Value


class ProgressBars(LibraryModel):
    """``tqdm`` bars and ``rich.progress.track``: the wrapped iterable's elements."""

    name = "progress-bars"

    def import_ref(self, path: str) -> Value | None:
        return library_ref(path, ROOTS)

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, LibraryRef) or (atom.path not in WRAPPERS and atom.path not in AROUND_BUILTINS):
            return UNHANDLED
        if star_unknown:
            return TOP
        from .signatures import argument  # (the table lists this module's names: imported here, not at the top)

        if atom.path == "rich.progress.track":
            return argument(atom.path, args, kwargs, "sequence", TOP)  # a generator of the sequence's elements
        builtin = AROUND_BUILTINS.get(atom.path)
        if builtin is not None:
            return V(ProgressBarAtom(self.call(V(BuiltinRef(builtin)), args, {}, node, st, fr)))
        # (a project iterable: its ``__iter__()``'s items, as a ``for`` over it would take them)
        items = argument(atom.path, args, kwargs, "iterable", TOP)
        return V(ProgressBarAtom(items if node is None else self.iterated(items, node, st, fr)))

    def element(self, atom: Atom, how: str) -> Value | None:
        return self.iter_element(atom.items) if isinstance(atom, ProgressBarAtom) and how == "iterate" else None

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if not isinstance(atom, ProgressBarAtom):
            return UNHANDLED
        return V(BoundShim(atom, attr)) if attr in _METHODS else None

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "ProgressBarAtom":
            return UNHANDLED
        return NONE if name in _METHODS else TOP

    def enter_with(self, value: Value, st: State) -> Any:
        # ``with tqdm(loader) as bar``: ``__enter__`` returns the bar itself
        return True if value.atoms and not value.top and value.only(ProgressBarAtom) else None
