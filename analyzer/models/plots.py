"""matplotlib's figures and axes: the objects a plot is drawn on, whose plotting methods read tensors with
``numpy.asarray``.

``fig, ax = plt.subplots()`` gives a figure and one ``Axes``; ``plt.subplots(2, 2)`` an array of them
(squeezed as matplotlib squeezes it: one row or one column is 1-D, ``squeeze=False`` always 2-D), indexed
(``axes[0, 1]``, ``axes[1]`` a row), iterated, flattened (``axes.flat``, ``axes.flatten()``, ``axes.ravel()``);
``fig.add_subplot(...)``, ``fig.gca()``, ``fig.add_axes(...)``, ``plt.gca()``, ``plt.subplot(...)``,
``plt.axes()``, ``ax.twinx()`` give an ``Axes``, ``plt.figure()`` / ``plt.gcf()`` a figure. The pyplot
functions :mod:`.array_consumers` declares are these methods of the current axes (``pyplot.plot`` is
``gca().plot``): an ``Axes`` method of the same name converts the same arguments (``Line2D.recache``,
``AxesImage.set_data`` ... call ``np.asarray``). Other methods and attributes are unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..domain import TOP, Atom, BoundShim, V, Value, seq, seq_of
from ..engine.flow_state import Frame, State
from .array_consumers import CONSUMERS, converted
from .base import UNHANDLED, LibraryModel, Unhandled
from .library_refs import LibraryRef

_PYPLOT = "matplotlib.pyplot"
#: pyplot functions and ``Figure`` methods that give an ``Axes``
_AXES_MAKERS = frozenset({"gca", "subplot", "axes", "subplot2grid", "add_subplot", "add_axes", "twinx", "twiny",
                          "inset_axes"})
_FIGURE_MAKERS = frozenset({f"{_PYPLOT}.figure", f"{_PYPLOT}.gcf", "matplotlib.figure.Figure"})
_FLATTEN = frozenset({"flatten", "ravel"})


@dataclass(frozen=True, slots=True)
class FigureAtom(Atom):
    """A matplotlib ``Figure``."""


@dataclass(frozen=True, slots=True)
class AxesAtom(Atom):
    """A matplotlib ``Axes``."""


@dataclass(frozen=True, slots=True)
class AxesGridAtom(Atom):
    """A numpy array of ``Axes`` (``plt.subplots(2, 2)``) of ``dims`` dimensions (None: not known)."""

    dims: int | None


def _constant(value: Value | None, default: object) -> object:
    """An argument's constant (``default`` where it is not given, None where it is not known)."""
    if value is None:
        return default
    consts = value.consts() if not value.top else None
    return consts[0] if consts and len(consts) == 1 else None


def _grid(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """``subplots(nrows=1, ncols=1, *, ..., squeeze=True)``'s axes: one ``Axes`` for a 1x1 grid, a 1-D array
    for one row or column, else 2-D (``squeeze=False``: always 2-D)."""
    from .signatures import bind_call  # (the table lists this module's names: imported here, not at the top)

    bound = bind_call(f"{_PYPLOT}.subplots", args, kwargs)
    rows = _constant(bound.get("nrows"), 1)
    cols = _constant(bound.get("ncols"), 1)
    squeeze = _constant(bound.get("squeeze"), True)
    if squeeze is False:
        return V(AxesGridAtom(2))
    if squeeze is not True or type(rows) is not int or type(cols) is not int:
        return V(AxesAtom(), AxesGridAtom(None))
    if rows == cols == 1:
        return V(AxesAtom())
    return V(AxesGridAtom(1 if 1 in (rows, cols) else 2))


class Plots(LibraryModel):
    """matplotlib figures and axes (``import matplotlib``: :mod:`.array_consumers`' references)."""

    name = "plots"

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, LibraryRef):
            return UNHANDLED
        module, _dot, name = atom.path.rpartition(".")
        if atom.path in _FIGURE_MAKERS:
            return V(FigureAtom())
        if module != _PYPLOT:
            return UNHANDLED
        if name == "subplots":
            return TOP if star_unknown else V(seq("tuple", [V(FigureAtom()), _grid(args, kwargs)]))
        if name in _AXES_MAKERS:
            return V(AxesAtom())
        return UNHANDLED

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, (FigureAtom, AxesAtom)):
            return V(BoundShim(atom, attr))
        if isinstance(atom, AxesGridAtom):
            if attr == "flat":
                return V(seq_of("list", V(AxesAtom())))
            return V(BoundShim(atom, attr)) if attr in _FLATTEN else None
        return UNHANDLED

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind == "FigureAtom":
            if name == "subplots":
                return _grid(args, kwargs)
            return V(AxesAtom()) if name in _AXES_MAKERS else TOP
        if kind == "AxesGridAtom":
            return V(seq_of("list", V(AxesAtom()))) if name in _FLATTEN else TOP
        if kind != "AxesAtom":
            return UNHANDLED
        if name in _AXES_MAKERS:
            return V(AxesAtom())
        names, keywords = CONSUMERS[_PYPLOT]
        if name not in names:
            return TOP
        result = converted(self, f"matplotlib.axes.Axes.{name}",
                           [*args, *(v for key, v in kwargs.items() if key in keywords)], node, st, fr)
        return TOP if result is None else result

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if not isinstance(atom, AxesGridAtom):
            return None
        index = node.slice if isinstance(node, ast.Subscript) else None
        if isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and any(
                isinstance(e, ast.Slice) for e in index.elts)):
            return None  # a sub-array
        if atom.dims == 1 or (isinstance(index, ast.Tuple) and len(index.elts) == 2):
            return V(AxesAtom())
        return V(AxesGridAtom(1)) if atom.dims == 2 else None

    def element(self, atom: Atom, how: str) -> Value | None:
        if not isinstance(atom, AxesGridAtom) or how not in ("iterate", "unpack"):
            return None
        if atom.dims == 1:
            return V(AxesAtom())
        return V(AxesGridAtom(1)) if atom.dims == 2 else None

