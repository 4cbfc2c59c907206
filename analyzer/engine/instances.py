"""Class instantiation: ``__init__``, dataclass fields with defaults and factories, ``super()``."""

from __future__ import annotations

import ast

from ..domain import BOTTOM, TOP, FuncRef, Instance, V, Value
from .flow_state import Frame, State
from .mixin import EngineMixin
from .program import DICT_ITEMS, ClassInfo, SuperRef
from .python_values import field_call, in_init, inherited_fields


class Instances(EngineMixin):
    """Class instantiation."""

    def instantiate(self, cls: ClassInfo, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                    st: State, fr: Frame, star_unknown: bool = False) -> Value:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0)
        instance = Instance(cls, fr.file, line, col, fr.ctx.allocation or fr.ctx.id)
        self.instances.setdefault(cls, set()).add(instance)
        if not self.sweeping:
            self.instantiated_early.add(cls)
        if self.class_stores and any((c, name) in self.class_stores for c in cls.mro()
                                     for name in ("__init__", "__post_init__")):
            return V(instance)  # an ``__init__`` replaced from outside the class (a decorator's): not followed
        init = cls.lookup("__init__")
        made = V(instance)
        if init is not None:
            ends = BOTTOM
            for atom in init.atoms:
                if isinstance(atom, FuncRef):
                    bound = FuncRef(atom.fn, atom.closure, atom.defaults, atom.kw_defaults, instance)
                    ends = ends.join(self.call_function(bound, args, kwargs, node, fr, st=st,
                                                        star_unknown=star_unknown))
            if ends.atoms and not ends.top and all(isinstance(a, Instance) and a.cls is cls for a in ends.atoms):
                made = ends  # ``self.to(device)`` in ``__init__``: the instance as its ``__init__`` left it
        elif cls.dataclass_fields is not None:
            self._dataclass_init(cls, instance, args, kwargs, node, st, fr, star_unknown)
        elif cls.dict_items_kept():  # ``BatchEncoding(input_ids=ids)``: a dict of what it was given
            items = self._dict_call(args, kwargs) if len(args) <= 1 and not star_unknown else TOP
            self.store_attribute(made, DICT_ITEMS, items, fr)
        else:  # a library base's constructor (``torch.distributions.Normal``'s)
            self.model_library_init(cls, V(instance), args, kwargs, st, fr)
        post_init = cls.lookup("__post_init__")
        if post_init is not None and init is None and cls.dataclass_fields is not None:
            self.call(self._bind_class_attr(post_init, instance, node, st, fr), [], {}, node, st, fr)
        return made

    def _dataclass_init(self, cls: ClassInfo, instance: Instance, args: list[Value], kwargs: dict[str, Value],
                        node: ast.AST | None, st: State, fr: Frame, star_unknown: bool = False) -> None:
        fields = inherited_fields(c.dataclass_fields for c in reversed(cls.mro()))
        params = [name for name, default in fields if in_init(default)]  # (``field(init=False)``: not one)
        for name, default in fields:
            position = params.index(name) if name in params else len(args)
            if position < len(args):
                value = args[position]
            elif name in kwargs and name in params:
                value = kwargs[name]
            elif default is None or (star_unknown and name in params):  # (``Config(**options)``: any may be given)
                value = TOP
            elif (call := field_call(default)) is not None:
                value = TOP
                for keyword in call.keywords:
                    if keyword.arg == "default":
                        value = self.eval(keyword.value, st.copy(), fr)
                    elif keyword.arg == "default_factory":
                        factory = self.eval(keyword.value, st.copy(), fr)
                        value = self.call(factory, [], {}, node, st, fr)
            else:
                value = cls.namespace.get(name, TOP)
            self.store_attribute(V(instance), name, value, fr)

    def dataclass_replace(self, obj: Value, changes: dict[str, Value], node: ast.AST | None, st: State,
                          fr: Frame) -> Value:
        """``dataclasses.replace(obj, **changes)``: a new instance whose other fields are ``obj``'s."""
        out = TOP if obj.top else BOTTOM
        for atom in obj.atoms:
            if not isinstance(atom, Instance) or atom.cls.dataclass_fields is None:
                out = out.join(TOP)
                continue
            fields = [name for name, default in inherited_fields(c.dataclass_fields for c in reversed(atom.cls.mro()))
                      if in_init(default)]
            kwargs = {name: changes[name] if name in changes else self.attribute(V(atom), name, None, st, fr)
                      for name in fields}
            out = out.join(self.instantiate(atom.cls, [], kwargs, node, st, fr))
        return out

    def _super(self, st: State, fr: Frame) -> Value:
        if fr.func is None or fr.func.cls is None or not fr.func.positional:
            return TOP
        this = st.vars.get(fr.func.positional[0], TOP)
        atoms = [SuperRef(fr.func.cls, atom) for atom in this.atoms if isinstance(atom, Instance)]
        return Value(frozenset(atoms), this.top)
