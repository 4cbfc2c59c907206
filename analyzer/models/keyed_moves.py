"""Moving a library's keyed container of tensors in place (a tokenizer's ``BatchEncoding``, a PyTorch Geometric
``Data`` graph): ``x.to(device)`` copies every field to the device and returns the container, which the name the
call was made on now holds."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from ..domain import TOP, Atom, V, Value, join_all
from ..engine.flow_state import Overlay, State
from ..torch_domain import TorchDev
from .torch_parallel import copied_to, unknown_tensors

Fields = tuple[tuple[Any, Value], ...]


def moved_fields(engine: Any, make: Callable[[Fields, Value | None], Atom], fields: Fields, rest: Value | None,
                 found: Iterable[tuple[TorchDev, object]] | None, origin: Any) -> Value:
    """The container ``make(fields, rest)`` builds, its tensors copied to each device ``found`` names (``None``:
    a device the analysis does not know, so the tensors' devices are unknown)."""
    if found is None:
        return V(make(tuple((key, unknown_tensors(value, 0)) for key, value in fields),
                      None if rest is None else TOP))
    return join_all([V(make(tuple((key, copied_to(engine, value, dev, origin, 0)) for key, value in fields),
                            None if rest is None else copied_to(engine, rest, dev, origin, 0)))
                     for dev, _source in found])


def hold_in_place(engine: Any, node: ast.AST, moved: Value, st: State, fr: Any) -> Value:
    """What ``holder.method(...)`` was called on holds ``moved``: the object changed in place (a container moved
    by ``to()``, a dataset formatted by ``set_format``). A name's old aliases and attribute overlays go; an
    instance's attribute (``self.ds``, ``trainer.batch``) holds the changed object for every method that reads
    it (what it held before is superseded)."""
    holder = getattr(getattr(node, "func", None), "value", None)
    if isinstance(holder, ast.Name) and holder.id in st.vars:
        st.vars[holder.id] = moved
        st.kill_aliases(holder.id)
        st.drop_overlays(holder.id)
    elif isinstance(holder, ast.Attribute) and _plain_path(holder.value):
        owner = engine.eval(holder.value, st.copy(), fr, quiet=True)
        before = engine.eval(holder, st.copy(), fr, quiet=True)
        engine.supersede_attribute(owner, holder.attr, before, moved, fr)
        if isinstance(holder.value, ast.Name) and not owner.is_bottom:
            overlay = Overlay(holder.value.id, holder.attr)
            st.overlays[overlay] = moved
            st.kill_aliases(overlay)
    return moved


def _plain_path(node: ast.expr) -> bool:
    """``self`` or ``self.data.train``: evaluating it again has no effect."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
