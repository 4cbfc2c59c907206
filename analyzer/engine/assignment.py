"""Binding values to targets: names, unpacking, attributes (the heap), subscripts."""

from __future__ import annotations

import ast

from ..domain import BOTTOM, TOP, DictAtom, Instance, ModuleRef, SeqAtom, V, Value, seq, seq_of
from .flow_state import Frame, State, widen_if_large


class Assignment:
    """Binding values to targets."""

    def assign(self, target: ast.expr, value: Value, st: State, fr: Frame) -> None:
        if isinstance(target, ast.Name):
            st.vars[target.id] = widen_if_large(value)
            st.drop_overlays(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, st, fr)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, V(seq_of("list", self.iter_element(value))), st, fr)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, st, fr)
            self.store_attribute(obj, target.attr, value, fr)
            if isinstance(target.value, ast.Name):
                st.vars[f"{target.value.id}.{target.attr}"] = widen_if_large(value)
        elif isinstance(target, ast.Subscript):
            self._store_subscript(target, value, st, fr)

    def _unpack(self, targets: list[ast.expr], value: Value, st: State, fr: Frame) -> None:
        star = next((i for i, t in enumerate(targets) if isinstance(t, ast.Starred)), None)
        n = len(targets)
        parts: list[Value] = [BOTTOM] * n
        unknown = value.top
        for atom in value.atoms:
            if isinstance(atom, SeqAtom) and atom.items is not None and (
                    len(atom.items) == n or (star is not None and len(atom.items) >= n - 1)):
                items = list(atom.items)
                if star is not None:
                    head, tail = items[:star], items[len(items) - (n - star - 1):] if n - star - 1 else []
                    middle = items[star:len(items) - (n - star - 1)]
                    items = [*head, V(seq("list", middle)), *tail]
                for i, item in enumerate(items):
                    parts[i] = parts[i].join(item)
            elif isinstance(atom, SeqAtom):
                for i in range(n):
                    parts[i] = parts[i].join(V(seq_of("list", atom.elem)) if i == star else atom.elem)
            else:
                unknown = True
        for i, target in enumerate(targets):
            part = parts[i].join(TOP) if unknown or parts[i].is_bottom else parts[i]
            self.assign(target.value if isinstance(target, ast.Starred) else target, part, st, fr)

    def store_attribute(self, obj: Value, attr: str, value: Value, fr: Frame) -> None:
        """``obj.attr = value``: instances get a weak update of the heap; a project module's namespace is
        updated in place (strongly from a module's top level when the module is known, else weakly)."""
        strong = fr.kind == "module" and len(obj.atoms) == 1 and not obj.top
        for atom in obj.atoms:
            if isinstance(atom, Instance):
                key = (atom, attr)
                old = self.heap.get(key)
                self.heap[key] = widen_if_large(value if old is None else old.join(value))
            elif isinstance(atom, ModuleRef):
                namespace = self.load_module(self.find_module(atom.name, atom.root))
                if namespace is not None:
                    old = namespace.get(attr)
                    namespace[attr] = value if strong or old is None else widen_if_large(old.join(value))
                    self.module_stores += 1  # functions that read module globals see a new context

    def _store_subscript(self, target: ast.Subscript, value: Value, st: State, fr: Frame) -> None:
        container = self.eval(target.value, st, fr)
        key = self.eval(target.slice, st, fr)
        if not isinstance(target.value, ast.Name) or target.value.id not in st.vars:
            return
        keys = key.consts()
        updated = []
        for atom in container.atoms:
            if isinstance(atom, DictAtom) and keys and len(keys) == 1:
                items = [(k, v) for k, v in atom.items if not (k == keys[0] and type(k) is type(keys[0]))]
                updated.append(DictAtom((*items, (keys[0], value))))
            elif isinstance(atom, SeqAtom) and atom.kind == "list":
                updated.append(seq_of("list", atom.elem.join(value)))
            else:
                updated.append(atom)
        st.vars[target.value.id] = Value(frozenset(updated), container.top)
