"""The observer's stand-in for ``matplotlib.pyplot`` (see :mod:`.stand_ins`): figures and axes whose plotting
methods read their data as matplotlib does, with ``numpy.asarray`` (``Line2D.recache``, ``AxesImage.set_data``,
``Axes.bar``'s ``np.broadcast_arrays``, ``hist``'s ``cbook._reshape_2D`` ...): a CUDA tensor or one that
requires grad fails there, as ``Tensor.__array__`` does. ``plt.plot(...)`` and the other pyplot functions are
``gca().plot(...)``. ``subplots(nrows, ncols, squeeze=True)`` gives one ``Axes`` or a numpy array of them,
squeezed as matplotlib squeezes it. Drawing, labels and saving do nothing here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: plotting methods: their positional data arguments (not format strings) and these keywords are converted
PLOTTING = ("plot", "scatter", "imshow", "hist", "hist2d", "bar", "barh", "fill_between", "fill_betweenx",
            "errorbar", "step", "semilogx", "semilogy", "loglog", "stem", "matshow", "contour", "contourf",
            "pcolormesh", "pcolor", "boxplot", "violinplot", "stackplot", "hexbin", "quiver", "stairs", "ecdf")
DATA_KEYWORDS = frozenset({"x", "y", "X", "Y", "Z", "c", "s", "height", "width", "y1", "y2", "xerr", "yerr",
                           "weights", "values", "edges"})
#: methods that draw or label only
QUIET = ("set_title", "set_xlabel", "set_ylabel", "set_xlim", "set_ylim", "set_xscale", "set_yscale", "legend",
         "grid", "axis", "set_xticks", "set_yticks", "set_xticklabels", "set_yticklabels", "text", "axhline",
         "axvline", "set_aspect", "cla", "clear", "annotate", "colorbar", "savefig", "suptitle", "tight_layout",
         "show", "close", "title", "xlabel", "ylabel", "xlim", "ylim", "xscale", "yscale", "xticks", "yticks",
         "pause", "draw", "clf", "ion", "ioff", "set_size_inches", "subplots_adjust")


def _read(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *(v for k, v in kwargs.items() if k in DATA_KEYWORDS)):
        if value is not None and not isinstance(value, str):
            np.asarray(value)


def _plotting(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> list[Any]:
        _read(args, kwargs)
        return []
    method.__name__ = name
    return method


def _quiet(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


class Axes:
    def twinx(self) -> Axes:
        return Axes()

    twiny = twinx


class Figure:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.axes: list[Axes] = []

    def add_subplot(self, *args: Any, **kwargs: Any) -> Axes:
        self.axes.append(Axes())
        return self.axes[-1]

    add_axes = add_subplot

    def gca(self) -> Axes:
        return self.axes[-1] if self.axes else self.add_subplot()

    def subplots(self, nrows: int = 1, ncols: int = 1, *, squeeze: bool = True, **kwargs: Any) -> Any:
        grid = np.empty((nrows, ncols), dtype=object)
        for i in range(nrows):
            for j in range(ncols):
                grid[i, j] = self.add_subplot()
        if not squeeze:
            return grid
        return grid[0, 0] if nrows == ncols == 1 else grid.ravel() if 1 in (nrows, ncols) else grid


for _name in PLOTTING:
    setattr(Axes, _name, _plotting(_name))
for _name in QUIET:
    setattr(Axes, _name, _quiet)
    setattr(Figure, _name, _quiet)

_current: list[Figure] = []


def figure(*args: Any, **kwargs: Any) -> Figure:
    _current.append(Figure())
    return _current[-1]


def gcf() -> Figure:
    return _current[-1] if _current else figure()


def gca() -> Axes:
    return gcf().gca()


def subplot(*args: Any, **kwargs: Any) -> Axes:
    return gcf().add_subplot(*args, **kwargs)


axes = subplot


def subplots(nrows: int = 1, ncols: int = 1, *, squeeze: bool = True, **kwargs: Any) -> tuple[Figure, Any]:
    fig = figure()
    return fig, fig.subplots(nrows, ncols, squeeze=squeeze)


def _pyplot(name: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        return getattr(gca(), name)(*args, **kwargs)
    function.__name__ = name
    return function


for _name in PLOTTING:
    globals()[_name] = _pyplot(_name)
for _name in QUIET:
    globals().setdefault(_name, lambda *args, **kwargs: None)
