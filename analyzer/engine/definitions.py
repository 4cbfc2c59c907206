"""``def``, ``lambda`` and ``class`` statements: function values with closures and defaults, class namespaces."""

from __future__ import annotations

import ast

from ..domain import TOP, BuiltinRef, ClassRef, FuncRef, V, Value
from .flow_state import Frame, FrameKind, State
from .mixin import EngineMixin
from .program import ClassInfo, FunctionInfo, FunctionKind
from .python_values import annotated_fields, call_name, is_dataclass_decorator, is_setter


class Definitions(EngineMixin):
    """``def``, ``lambda`` and ``class`` statements."""

    def stmt_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef, st: State, fr: Frame) -> State:
        decorators = [self.eval(deco, st, fr) for deco in node.decorator_list]  # staticmethod/classmethod/
        # property are FunctionInfo.kind; a project decorator is called with the function (outside class bodies)
        if st.dead:
            return st
        if is_setter(node) and node.name in st.vars:
            if fr.kind is FrameKind.CLASS and fr.cls is not None \
                    and any(call_name(d) == "setter" for d in node.decorator_list):
                fr.cls.setters[node.name] = V(self.make_function(node, st, fr))  # called on ``obj.x = v``
            return st  # ``@x.setter``: the property object stays
        function = V(self.make_function(node, st, fr))
        # a click command or hydra main: the name holds an object that runs the function as the framework does
        wrapped = node.decorator_list and self.model_wrapped(node, fr.module)
        if not wrapped and fr.kind is not FrameKind.CLASS:
            function = self._decorated_function(node, decorators, function, st, fr)
            if st.dead:
                return st
        st.vars[node.name] = TOP if wrapped else function
        st.kill_aliases(node.name)
        st.drop_overlays(node.name)
        return st

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def _decorated_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[Value],
                            function: Value, st: State, fr: Frame) -> Value:
        """What a function's project decorators return (a wrapper that converts or moves the arguments, a
        registry's ``register`` that returns the function): each is called with the function, innermost first.
        A library decorator, or a project one whose result is unknown, is taken to keep the function."""
        decorated = function
        for deco, decorator in reversed(list(zip(node.decorator_list, decorators, strict=True))):
            if decorator.atoms and not decorator.top and decorator.only(FuncRef):
                result = self.call(decorator, [decorated], {}, deco, st, fr)
                if st.dead:
                    return decorated
                if result.atoms and not result.top and result.only(FuncRef):
                    decorated = result
        return decorated

    def make_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, st: State,
                      fr: Frame) -> FuncRef:
        fn = self.functions.get(id(node))
        if fn is None:
            cls = fr.cls if fr.kind is FrameKind.CLASS else None
            prefix = fr.func.qualname + ".<locals>." if fr.func is not None else (
                cls.qualname + "." if cls is not None else "")
            fn = FunctionInfo(node, fr.module, prefix + getattr(node, "name", "<lambda>"), cls)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in node.decorator_list:
                    name = call_name(deco)
                    if name in ("staticmethod", "classmethod", "property"):
                        fn.kind = FunctionKind(name)
                    elif name == "cached_property":
                        fn.kind = FunctionKind.PROPERTY  # computed on first access, the same value after
                    elif name in ("setter", "deleter"):
                        fn.kind = FunctionKind.SETTER
                if isinstance(node, ast.AsyncFunctionDef):
                    fn.is_generator = True
            self.functions[id(node)] = fn
        args = node.args
        defaults = tuple(self.eval(d, st, fr) for d in args.defaults)
        kw_defaults = tuple((a.arg, self.eval(d, st, fr))
                            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                            if d is not None)
        closure: tuple[tuple[str, Value], ...] = ()
        if fr.kind is FrameKind.FUNCTION:
            captured = []
            late = self._rebound_later(fr.func.node, node) if fr.func is not None else frozenset()
            for name in fn.free:
                if name in late:
                    captured.append((name, TOP))  # closures see the variable's last value, not this one
                elif name in st.vars:
                    captured.append((name, st.vars[name]))
                elif name in fr.closure:
                    captured.append((name, fr.closure[name]))
            closure = tuple(captured)
        fref = FuncRef(fn, closure, defaults, kw_defaults)
        if fn.kind is not FunctionKind.SETTER:
            self.note_defined(fn, fref)
            if fn not in self.defined:
                self.defined[fn] = fref
        return fref

    def stmt_ClassDef(self, node: ast.ClassDef, st: State, fr: Frame) -> State:
        info = self.classes.get(id(node))
        if info is None:
            prefix = fr.func.qualname + ".<locals>." if fr.func is not None else ""
            info = self.classes[id(node)] = ClassInfo(node, fr.module, prefix + node.name)
        bases: list[ClassInfo] = []
        info.library_bases = ()
        info.unknown_base = False
        info.dict_base = False
        for base in node.bases:
            value = self.eval(base, st, fr)
            info.dict_base |= any(isinstance(atom, BuiltinRef) and atom.name == "dict" for atom in value.atoms)
            bases.extend(atom.cls for atom in value.atoms if isinstance(atom, ClassRef))
            # (a LightningModule, whose library is not analysed, is an nn.Module too: the framework's model says)
            found = self.model_class_base(value)
            if value.top:
                found += self.model_framework_class(info)
            info.library_bases = tuple(dict.fromkeys((*info.library_bases, *found)))
            if value.top and not found and not any(isinstance(atom, ClassRef) for atom in value.atoms):
                info.unknown_base = True
        info.set_bases(bases)
        body_frame = Frame(fr.module, fr.ctx, func=None, closure=dict(st.vars) if fr.kind is FrameKind.FUNCTION else {},
                           scopes=fr.scopes, profile=fr.profile, kind=FrameKind.CLASS, cls=info)
        body_state = State({})
        info.setters = {}
        body_state = self.exec_block(node.body, body_state, body_frame)
        info.namespace = body_state.vars
        self.changes.changed()
        info.dataclass_fields = None
        if any(is_dataclass_decorator(d) for d in node.decorator_list):
            info.dataclass_fields = annotated_fields(node.body)
        st.vars[node.name] = V(ClassRef(info))
        st.kill_aliases(node.name)
        st.drop_overlays(node.name)
        decorated = V(ClassRef(info))
        for deco in reversed(node.decorator_list):  # the innermost first, as Python applies them
            decorator = self.eval(deco, st, fr)
            if decorator.atoms and not decorator.top and decorator.only(FuncRef):
                # a project decorator (a registry's ``register``, ``@MODELS.register_module()``): called with the
                # class. The name holds what it returns when that is known and is not the class (a factory
                # function, another class); the class otherwise (library decorators are taken to return it)
                result = self.call(decorator, [decorated], {}, deco, st, fr)
                if result.atoms and not result.top and not any(isinstance(a, ClassRef) and a.cls is info
                                                               for a in result.atoms):
                    decorated = result
            if st.dead:
                return st
        st.vars[node.name] = decorated
        return st


