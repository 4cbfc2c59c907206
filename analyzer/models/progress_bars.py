"""Progress bars around loops: ``for x, y in tqdm(loader)`` iterates the loader.

``tqdm(iterable)`` (``tqdm.tqdm``, ``tqdm.auto``, ``tqdm.notebook``, ``tqdm.rich``), ``rich.progress.track(seq)``
yield the elements of what they wrap, and ``trange(n)`` / ``tenumerate(seq)`` are ``range(n)`` /
``enumerate(seq)`` with a bar. Without this a training loop written with a progress bar loses its batches
(unknown), and the bugs of the loop body go unseen. A bar's own methods (``set_description``, ``update``) are
not followed; a bar made without an iterable (``tqdm(total=n)``) is unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..domain import BuiltinRef, V, Value
from .base import LibraryModel
from .library_names import library_call_name, unknown_library_name

if TYPE_CHECKING:
    from ..engine.flow_state import Frame, State

_TQDM_MODULES = ("tqdm", "tqdm.auto", "tqdm.autonotebook", "tqdm.notebook", "tqdm.std", "tqdm.rich", "tqdm.asyncio")
#: wrappers that yield the elements of their first argument
WRAPPERS = frozenset({*(f"{m}.tqdm" for m in _TQDM_MODULES), "rich.progress.track"})
#: bars around a builtin: the builtin's elements
AROUND_BUILTINS = {**{f"{m}.trange": "range" for m in _TQDM_MODULES}, "tqdm.contrib.tenumerate": "enumerate",
                   "tqdm.contrib.tzip": "zip"}


class ProgressBars(LibraryModel):
    """``tqdm`` and ``rich.progress.track``: the wrapped iterable's elements."""

    name = "progress-bars"

    def call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                        star_unknown: bool, st: State, fr: Frame) -> Value | None:
        if not unknown_library_name(func) or star_unknown:
            return None  # a value the analysis knows is not one of these
        from .signatures import argument  # (the table lists this module's names: imported here, not at the top)

        path = library_call_name(node.func, fr)
        if path in WRAPPERS:
            return argument(path, args, kwargs, "iterable" if path != "rich.progress.track" else "sequence", None)
        builtin = AROUND_BUILTINS.get(path or "")
        if builtin is not None:
            return self.call(V(BuiltinRef(builtin)), args, {}, node, st, fr)
        return None
