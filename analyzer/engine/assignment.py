"""Binding values to targets: names, unpacking, attributes (the heap), subscripts."""

from __future__ import annotations

import ast

from ..domain import (
    BOTTOM,
    TOP,
    Atom,
    ClassRef,
    DictAtom,
    FuncRef,
    Instance,
    ModuleRef,
    SeqAtom,
    V,
    Value,
    const,
    join_all,
    seq,
    seq_of,
    with_entry,
)
from .flow_state import Frame, FrameKind, Overlay, Slot, State, stored, widen_if_large
from .limits import MAX_DICT_KEYS
from .mixin import EngineMixin
from .program import ModuleInfo
from .relational import one_value


class Assignment(EngineMixin):
    """Binding values to targets."""

    def assign(self, target: ast.expr, value: Value, st: State, fr: Frame) -> None:
        if isinstance(target, ast.Name):
            if self.facts.expressions is not None:
                self._record_expression(target, value, fr)  # hover on the name being bound
            st.vars[target.id] = widen_if_large(value)
            st.drop_overlays(target.id)
            st.kill_aliases(target.id)
            if fr.func is not None and fr.kind is FrameKind.FUNCTION and target.id in fr.func.globals:
                # ``global DEVICE; DEVICE = ...``: a weak update of the module's namespace (as for
                # containers filled from functions); this function reads on what it stored
                self.store_global(fr.module, target.id, widen_if_large(value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, st, fr)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, V(seq_of("list", self.iter_element(value))), st, fr)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, st, fr)
            if not fr.loops:  # ``self.device = get_device()``: one value (a loop around it: a new one each time)
                value = one_value(value, f"{fr.module.file}:{target.lineno}:{target.col_offset}@{fr.ctx.id}")
            obj = self._call_setters(obj, target, value, st, fr)
            self.store_attribute(obj, target.attr, value, fr)
            self.model_attribute_stored(target, obj, value, st, fr)
            if isinstance(target.value, ast.Name) and target.value.id in st.vars:
                namespace = self.model_namespace_store(obj, target.attr, widen_if_large(value))
                if namespace is not None:  # ``args.cuda = ...``: the namespace carries it into calls
                    st.vars[target.value.id] = namespace
            if isinstance(target.value, ast.Name):
                st.drop_items(target.value.id)  # ``slot.parts = ...``: what ``slot[0]`` reads may change
            if isinstance(target.value, ast.Name) and not obj.is_bottom:
                overlay = Overlay(target.value.id, target.attr)
                st.overlays[overlay] = widen_if_large(value)
                st.kill_aliases(overlay)
        elif isinstance(target, ast.Subscript):
            self._store_subscript(target, value, st, fr)

    def _call_setters(self, obj: Value, target: ast.Attribute, value: Value, st: State, fr: Frame) -> Value:
        """``obj.x = v`` where ``x`` is a property with a setter: the setter runs (for those instances);
        returns the rest of ``obj``, which gets a plain attribute store."""
        rest = set(obj.atoms)
        for atom in obj.atoms:
            setter = atom.cls.setter(target.attr) if isinstance(atom, Instance) else None
            if setter is None:
                continue
            rest.discard(atom)
            for item in setter.atoms:
                if isinstance(item, FuncRef):
                    bound = FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, atom)
                    self.call(V(bound), [value], {}, target, st, fr)
            if isinstance(target.value, ast.Name):
                st.drop_overlays(target.value.id)  # the setter may have changed any attribute
        return obj if len(rest) == len(obj.atoms) else Value(frozenset(rest), obj.top)

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
            elif star is None and (fields := self.model_items(atom, st, fr)) is not None and len(fields) == n:
                parts = [part.join(field) for part, field in zip(parts, fields, strict=True)]  # a record's fields
            elif star is None and (row := self.model_element(atom, "unpack")) is not None:
                parts = [part.join(row) for part in parts]  # ``x, y = batch``: a library object's items
            else:
                unknown = True
        for i, target in enumerate(targets):
            part = parts[i].join(TOP) if unknown or parts[i].is_bottom else parts[i]
            self.assign(target.value if isinstance(target, ast.Starred) else target, part, st, fr)

    def store_global(self, module: ModuleInfo, name: str, value: Value, strong: bool = False) -> None:
        """Bind ``name`` in a project module's namespace: weakly (joined with what it held), except from that
        module's own top level. Functions that read module globals then see a new context."""
        self.note_store(module, name, value, strong)
        self.apply_store(module, name, value, strong)

    def apply_store(self, module: ModuleInfo, name: str, value: Value, strong: bool = False) -> None:
        old = module.namespace.get(name)
        new = module.namespace[name] = stored(old, value, strong)
        if old is None or not (new is old or new == old):
            self.module_stores += 1  # only a change can make a later call see something new
            self.changes.changed()

    def store_attribute(self, obj: Value, attr: str, value: Value, fr: Frame) -> None:
        """``obj.attr = value``: instances get a weak update of the heap; a project module's namespace is
        updated in place (strongly from a module's top level when the module is known, else weakly)."""
        strong = fr.kind is FrameKind.MODULE and len(obj.atoms) == 1 and not obj.top
        for atom in obj.atoms:
            if isinstance(atom, Instance):
                key = (atom, attr)
                old = self.heap.get(key)
                stored = self.model_storing_attribute(atom, value, old)
                self.heap_set(key, widen_if_large(stored if old is None else old.join(stored)))
            elif isinstance(atom, ClassRef) and (atom.cls, attr) not in self.class_stores:
                self.class_stores.add((atom.cls, attr))  # unknown from now on (:meth:`class_lookup`)
                self.changes.changed()
                if attr in self.class_names_read:
                    self.changes.read_went_stale()  # read before: the next pass reads it unknown
                    self.changes.havoc_grew = True
            elif isinstance(atom, ModuleRef):
                module = self.find_module(atom.name, atom.root)
                if self.load_module(module) is not None:
                    self.store_global(module, attr, value, strong=strong)

    def _store_subscript(self, target: ast.Subscript, value: Value, st: State, fr: Frame) -> None:
        container = self.eval(target.value, st, fr)
        key = self.eval(target.slice, st, fr)
        self.model_store_item(container, key, value, target, st, fr)  # ``t[idx] = v``: checked as ``t[idx]``
        self.forget_dict_items(container, fr)
        if isinstance(target.value, ast.Attribute) and isinstance(target.value.value, ast.Name):
            # ``self.cache[k] = v``: the attribute now holds the updated container (heap: weak update)
            updated = self._updated_container(container, key, value)
            base = target.value.value.id
            self.store_attribute(self.eval(target.value.value, st, fr), target.value.attr, updated, fr)
            overlay = Overlay(base, target.value.attr)
            st.overlays[overlay] = widen_if_large(updated)
            st.kill_aliases(overlay)
            return
        if not isinstance(target.value, ast.Name):
            return
        name = target.value.id
        st.drop_items(name)
        is_global = (fr.kind is FrameKind.FUNCTION and name not in st.vars and name not in fr.closure
                     and name in fr.module.namespace)
        if name not in st.vars and not is_global:
            return
        value = self._updated_container(container, key, value)
        if is_global:
            # a module-level dict or list filled from inside a function: a weak update of the module's
            # namespace (other functions see both), and this function reads on what it stored
            self.store_global(fr.module, name, value)
        self.update_variable_in_place(name, value, st, fr)

    def update_variable_in_place(self, name: Slot, value: Value, st: State, fr: Frame) -> None:
        """``name`` now holds ``value`` because the object it names changed in place (``xs[i] = v``,
        ``xs.append(v)``): where it is another variable's element (``row = grid[0]``), that one's too."""
        element = st.elements.get(name) if isinstance(name, str) else None
        if isinstance(name, str):
            st.drop_items(name)
        st.set(name, value)
        st.kill_aliases(name)
        holder = st.vars.get(element[0]) if element is not None else None
        if element is not None and holder is not None and holder.only(SeqAtom, DictAtom):
            owner, ((_item, index),) = element
            self.update_variable_in_place(owner, self._updated_container(holder, V(const(index)), value), st, fr)
            if isinstance(name, str):
                st.elements[name] = element  # still the same object

    def _updated_container(self, container: Value, key: Value, value: Value) -> Value:
        """``container[key] = value`` on each possibility: a dict with a constant key gets it replaced;
        with an unknown key any entry may now hold the value, or a new unknown key does; a library's
        container is as its model says (unchanged when it does not say)."""
        keys = key.consts()
        updated: list[Atom] = []
        for atom in container.atoms:
            if isinstance(atom, DictAtom) and len(atom.items) >= MAX_DICT_KEYS:
                # a registry of hundreds of entries: its keys stop mattering (each store would copy them all)
                updated.append(DictAtom((), join_all([atom.unknown_keys(), value, *(v for _k, v in atom.items)])))
            elif isinstance(atom, DictAtom) and keys and len(keys) == 1 and not key.top:
                updated.append(with_entry(atom, keys[0], value))
            elif isinstance(atom, DictAtom):
                entries = tuple((k, v.join(value)) for k, v in atom.items)
                updated.append(DictAtom(entries, atom.unknown_keys().join(value)))
            elif isinstance(atom, SeqAtom) and atom.kind == "list" and atom.items is not None and keys \
                    and len(keys) == 1 and not key.top and type(keys[0]) is int \
                    and -len(atom.items) <= keys[0] < len(atom.items):  # ``pairs[i] = ...`` with i known
                items = list(atom.items)
                items[keys[0]] = value
                updated.append(seq("list", items))
            elif isinstance(atom, SeqAtom) and atom.kind == "list":
                updated.append(seq_of("list", atom.elem.join(value)))
            elif (library := self.model_updated_item(atom, key, value)) is not None:
                if library.top:
                    return TOP  # what it holds now is not known
                updated.extend(library.atoms)
            else:
                updated.append(atom)
        return widen_if_large(Value(frozenset(updated), container.top))
