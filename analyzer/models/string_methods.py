"""Python ``str`` methods and ``%`` formatting on known strings: a device name rewritten before use keeps its
value.

``device = device.lower()`` in a helper whose default is ``"cuda"``, ``"cuda:{}".format(rank)``,
``"cuda:%d" % rank``, ``args.device.strip()``, ``device.split(":")[0]`` (the device type for
``torch.autocast``): the result is the string (or list of strings) Python would give, so a tensor moved there is
on the device the text names. Each possibility of the receiver is rewritten alone and keeps its undecided
choices (a ``--device`` option's ``"cuda"`` and ``"cpu"`` stay on their ways). A rewrite whose arguments are not
all known strings or ints gives an unknown value, as does any other method.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from typing import Any

from ..domain import TOP, Atom, BoundShim, Const, SeqAtom, V, Value, seq
from ..engine.flow_state import Frame, State
from .base import UNHANDLED, LibraryModel, Unhandled

#: methods that make a new string (or a list of strings) from the text and plain arguments; the view methods
#: an option test already sees through (:mod:`.option_tests`) are among them
_METHODS: dict[str, Callable[..., Any]] = {
    "lower": str.lower, "upper": str.upper, "casefold": str.casefold,
    "strip": str.strip, "lstrip": str.lstrip, "rstrip": str.rstrip,
    "replace": str.replace, "removeprefix": str.removeprefix, "removesuffix": str.removesuffix,
    "format": str.format, "split": str.split, "rsplit": str.rsplit,
}
#: the argument types a rewrite takes (a ``Const``'s type name)
_PLAIN = frozenset({"str", "int"})
#: the longest text a rewrite takes or makes (a format that would build a huge string is left unknown)
_MAX_TEXT = 256
#: a width or precision of four digits or more, or one taken from the arguments (``%*d``), in a template: the
#: text it would make is not built (``"{:>999999999}".format(1)`` would take a gigabyte)
_WIDE_SPEC = re.compile(r"(?:%|\{[^}]*:)[^a-zA-Z%{}]*(?:\d{4}|\*)")


class StringMethods(LibraryModel):
    """``text.lower()``, ``text.format(...)``, ``text.split(sep)``, ``text % args`` ... of known strings."""

    name = "str"

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, Const) and isinstance(atom.value, str) and attr in _METHODS:
            return V(BoundShim(atom, attr))
        return UNHANDLED

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "Const" or name not in _METHODS:
            return UNHANDLED
        plain_args = [_plain(a) for a in args]
        plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
        if any(a is None for a in plain_args) or any(v is None for v in plain_kwargs.values()):
            return TOP
        method = _METHODS[name]
        return _rewritten(receiver, lambda text: method(text, *plain_args, **plain_kwargs), name == "format")

    def binary(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
               compare: bool) -> Value | None:
        """``"cuda:%d" % rank``, ``"%s:%d" % (kind, rank)``: printf-style formatting of known strings."""
        if compare or not isinstance(op, ast.Mod) or left.top or not left.atoms \
                or not all(isinstance(a, Const) and isinstance(a.value, str) for a in left.atoms):
            return None
        operands = _format_operands(right)
        if operands is None:
            return TOP
        return _rewritten(left, lambda text: text % operands, True)


def _rewritten(receiver: Value, rewrite: Callable[[str], object], template: bool = False) -> Value:
    """Each known string of ``receiver`` rewritten, with its choices (unknown where one is not a known string, or
    where Python would raise). ``template``: the string is a format (its widths are bounded first)."""
    if receiver.top:
        return TOP
    out = Value()
    for atom in receiver.atoms:
        if not isinstance(atom, Const) or not isinstance(atom.value, str) or len(atom.value) > _MAX_TEXT \
                or (template and _WIDE_SPEC.search(atom.value)):
            return TOP
        try:
            result = rewrite(atom.value)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return TOP  # (what the program would raise: not followed)
        made = _value_of(result, atom)
        if made is None:
            return TOP
        out = out.join(made)
    return out


def _plain(value: Value) -> str | int | None:
    """The one known string or int ``value`` holds (None: unknown, several, or another kind)."""
    if value.top or len(value.atoms) != 1:
        return None
    (atom,) = value.atoms
    if isinstance(atom, Const) and atom.tname in _PLAIN and not atom.tags \
            and not (isinstance(atom.value, str) and len(atom.value) > _MAX_TEXT):
        return atom.value
    return None


def _format_operands(value: Value) -> tuple[str | int, ...] | None:
    """The right operand of ``%`` as a tuple of known strings or ints (None: unknown)."""
    one = _plain(value)
    if one is not None:
        return (one,)
    if value.top or len(value.atoms) != 1:
        return None
    (atom,) = value.atoms
    if isinstance(atom, SeqAtom) and atom.kind == "tuple" and atom.items is not None:
        items = [_plain(item) for item in atom.items]
        return tuple(i for i in items if i is not None) if all(i is not None for i in items) else None
    return None


def _value_of(result: object, receiver: Const) -> Value | None:
    """The rewrite's result as a value, with the receiver's choices (a list of strings: a list of them)."""
    if isinstance(result, str):
        return V(dataclasses.replace(receiver, value=result)) if len(result) <= _MAX_TEXT else None
    if isinstance(result, list) and result and all(isinstance(r, str) and len(r) <= _MAX_TEXT for r in result):
        return V(seq("list", (V(dataclasses.replace(receiver, value=r)) for r in result)))
    return None
