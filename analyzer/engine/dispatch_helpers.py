"""Helpers shared by the runtime_shim call evaluation: merging lifted outcomes, creation kinds, receivers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import lift
from ..domain import (
    TOP,
    Atom,
    Const,
    DeviceAtom,
    DictAtom,
    Instance,
    ScopeAtom,
    ShimRef,
    TensorAtom,
    Value,
)
from ..facts import FactStore
from ..models.numpy_model import array_kinds
from ..shim_api import scalar_kind
from .program import FunctionInfo


class NullFacts(FactStore):
    """Facts of a quiet evaluation (narrowing operands): discarded."""



def merge_lifted(into: lift.Lifted, part: lift.Lifted) -> None:
    into.given(**part.operands)
    into.possibilities.extend(part.possibilities)
    into.results = into.results.join(part.results)
    into.intended = into.intended.join(part.intended)
    into.unknown = into.unknown or part.unknown



def receiver_kind(atom: Atom) -> str:
    if isinstance(atom, TensorAtom):
        return "tensor"
    if isinstance(atom, DeviceAtom):
        return "device"
    if isinstance(atom, ShimRef):
        return atom.name
    if isinstance(atom, ScopeAtom):
        return "scope"
    if isinstance(atom, DictAtom):
        return "dict"
    return type(atom).__name__  # a library model's object: the model's ``method_call`` knows it by its class



def scalar_kinds_of(value: Value) -> list[str]:
    """The kinds of the Python number possibilities of a value."""
    return sorted({scalar_kind(a.value) for a in value.atoms
                   if isinstance(a, Const) and isinstance(a.value, (int, float, bool))})



def created_kinds(creator: Any, args: list[Value], kwargs: dict[str, Value]) -> list[str] | None:
    """The kinds a creation call makes (``None``: they depend on data the analysis does not know)."""
    if creator.kind in ("float", "int", "bool"):
        return [creator.kind]
    if creator.kind == "value":
        value = args[creator.data_pos] if len(args) > creator.data_pos else kwargs.get("value", TOP)
        consts = value.consts()
        if consts is None or not all(isinstance(c, (bool, int, float)) for c in consts):
            return None
        return sorted({scalar_kind(c) for c in consts})
    data = args[creator.data_pos] if len(args) > creator.data_pos else kwargs.get("data", TOP)
    return data_kinds(data)



def data_kinds(data: Value) -> list[str] | None:
    """The kinds ``Tensor.from_data`` makes of its data: those of the numpy array it becomes."""
    return array_kinds(data)


#: How deep into containers a call's arguments are followed for where their tensors were made (a dict of
#: tuples of tensors is two levels).
ORIGIN_DEPTH = 4


def argument_origins(bound: dict[str, Value], attributes: Callable[[Instance], Iterable[Value]] | None = None
                     ) -> frozenset[tuple[str, int, int]]:
    """Where the states the arguments hold were made (each atom's origin, and for a tensor derived from another
    by ops that keep its device, that tensor's: its ``source``), for reporting at the caller. A container passed
    (a tuple, a dict batch, an encoding, a record instance whose fields ``attributes`` gives) hands over what it
    holds: ``x, y = batch`` and ``batch["labels"]`` inside are the caller's tensors."""
    found: set[tuple[str, int, int]] = set()
    seen: set[int] = set()
    todo = [(value, 0) for value in bound.values()]
    while todo:
        value, depth = todo.pop()
        for atom in value.atoms:
            for origin in (getattr(atom, "origin", None), getattr(atom, "source", None)):
                if origin is not None and getattr(origin, "line", None):
                    found.add((origin.file, origin.line, origin.col))
            if depth >= ORIGIN_DEPTH or id(atom) in seen:
                continue
            seen.add(id(atom))
            held = atom.held()
            if not held and attributes is not None and isinstance(atom, Instance):
                held = tuple(attributes(atom))
            todo.extend((item, depth + 1) for item in held)
    return frozenset(found)


def describe_args(fn: FunctionInfo, bound: dict[str, Value]) -> tuple[tuple[str, str], ...]:
    """Short states of the tensor and device arguments, for context descriptions."""
    out = []
    for name in fn.param_names:
        value = bound.get(name)
        if value is None or value.top or not value.atoms:
            continue
        if all(isinstance(a, (TensorAtom, DeviceAtom)) for a in value.atoms):
            texts = sorted({a.reveal() for a in value.atoms})  # type: ignore[attr-defined]
            if len(texts) <= 2:
                out.append((name, " | ".join(texts)))
    return tuple(out[:3])



