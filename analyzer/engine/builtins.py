"""The Python builtins and container methods the analysis models (range, enumerate, zip, len, dict methods ...)."""

from __future__ import annotations

import ast

from ..domain import BOOL, BOTTOM, NONE, TOP, Const, DictAtom, SeqAtom, V, Value, const, join_all, seq, seq_of
from .flow_state import Frame, State
from .python_values import splice_items


class Builtins:
    """The Python builtins and container methods the analysis models (range, enumerate, zip, len, dict methods ...)."""

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                     st: State, fr: Frame) -> Value:
        if name == "range":
            return V(seq_of("list", TOP))
        if name == "enumerate" and args:
            items = splice_items(args[0])
            if items is not None and not kwargs and len(args) == 1:
                return V(seq("list", [V(seq("tuple", (V(const(i)), item))) for i, item in enumerate(items)]))
            return V(seq_of("list", V(seq("tuple", (TOP, self.iter_element(args[0]))))))
        if name == "zip" and args:
            columns = [splice_items(a) for a in args]
            if all(c is not None for c in columns):
                rows = zip(*columns, strict=False)  # zip's own semantics: the shortest wins
                return V(seq("list", [V(seq("tuple", row)) for row in rows]))
            return V(seq_of("list", V(seq("tuple", [self.iter_element(a) for a in args]))))
        if name in ("list", "tuple", "sorted", "reversed", "set") and args:
            kind = "tuple" if name == "tuple" else "set" if name == "set" else "list"
            if name in ("list", "tuple") and args[0].only(SeqAtom):
                return Value(frozenset(SeqAtom(kind, a.items, a.elem) for a in args[0].atoms))  # type: ignore
            return V(seq_of(kind, self.iter_element(args[0])))
        if name in ("list", "tuple"):
            return V(seq(name, ()))
        if name == "print":
            return NONE
        if name == "len" and args:
            return self._length(args[0])
        if name == "isinstance":
            return BOOL
        if name == "super":
            return self._super(st, fr)
        if name == "getattr" and len(args) >= 2:
            attrs = args[1].consts()
            if attrs and len(attrs) == 1 and isinstance(attrs[0], str):
                found = self.attribute(args[0], attrs[0], node if isinstance(node, ast.expr) else None, st, fr)
                return found.join(args[2]) if len(args) > 2 else found
            return TOP
        if name in ("staticmethod", "classmethod", "property") and args:
            return args[0]
        if name == "next" and args:
            return self.iter_element(args[0]).join(args[1]) if len(args) > 1 else self.iter_element(args[0])
        if name == "iter" and args:
            return V(seq_of("list", self.iter_element(args[0])))
        return TOP

    @staticmethod
    def _length(value: Value) -> Value:
        lengths = set()
        for atom in value.atoms:
            if isinstance(atom, SeqAtom) and atom.items is not None or isinstance(atom, DictAtom):
                lengths.add(len(atom.items))
            elif isinstance(atom, Const) and isinstance(atom.value, (str, bytes)):
                lengths.add(len(atom.value))
            else:
                return TOP
        if value.top or not lengths:
            return TOP
        return Value(frozenset(const(n) for n in lengths))

    @staticmethod
    def _dict_method(name: str, receiver: Value, args: list[Value]) -> Value:
        out = BOTTOM
        for atom in receiver.atoms:
            assert isinstance(atom, DictAtom)
            values = join_all(v for _k, v in atom.items)
            keys = Value(frozenset(const(k) for k, _v in atom.items))
            if name == "items":
                pairs = join_all(V(seq("tuple", (V(const(k)), v))) for k, v in atom.items)
                out = out.join(V(seq_of("list", pairs)))
            elif name == "values":
                out = out.join(V(seq_of("list", values)))
            elif name == "keys":
                out = out.join(V(seq_of("list", keys)))
            elif name == "get":
                wanted = args[0].consts() if args else None
                found = atom.get(wanted[0]) if wanted and len(wanted) == 1 else None
                default = args[1] if len(args) > 1 else NONE
                out = out.join(found if found is not None else values.join(default))
            else:
                out = out.join(TOP)
        return out
