"""Names of libraries the analysis does not read, as values: ``LibraryRef(path)``.

A model that knows some calls of such a library (``tqdm(loader)``, ``plt.plot(losses)``) answers ``import_ref``
for the library's modules with a reference to the path imported, and this model extends it by attribute
reads (``plt.plot`` -> ``matplotlib.pyplot.plot``). So every way a program names the function reaches the
same path: ``import matplotlib.pyplot as plt``, ``from tqdm.auto import tqdm as progress``, a name re-exported
by a project module, a reference kept in a variable or passed to a function. A call of a reference is
answered by the model that owns its path (``call_value``, asked before this one); any other call, and
anything else done with a reference, is unknown, as the name of an unread library always was.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..domain import TOP, Atom, V, Value
from ..engine.flow_state import Frame, State
from .base import UNHANDLED, LibraryModel, Unhandled


@dataclass(frozen=True, slots=True)
class LibraryRef(Atom):
    """A module of a library the analysis does not read, or a name inside it (``matplotlib.pyplot.plot``)."""

    path: str

    def truthy(self) -> bool | None:
        return True  # a module, a function or a class


def library_ref(path: str, roots: frozenset[str]) -> Value | None:
    """``import_ref``'s answer for a model that owns the libraries ``roots``: a reference, or None."""
    return V(LibraryRef(path)) if path.partition(".")[0] in roots else None


class LibraryReferences(LibraryModel):
    """Attribute reads of library references, and the calls no owning model answered (unknown)."""

    name = "library-refs"

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, LibraryRef):
            return V(LibraryRef(f"{atom.path}.{attr}"))
        return UNHANDLED

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        return TOP if isinstance(atom, LibraryRef) else UNHANDLED
