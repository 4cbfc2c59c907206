"""Modules of the analysed project: loading them (a cycle sees what is defined so far), their attributes,
and import statements."""

from __future__ import annotations

import ast
from typing import Any

from ..domain import TOP, ModuleRef, ShimModule, ShimRef, V, Value
from ..imports import (
    ProjectModuleTarget,
    ProjectNameTarget,
    ShimModuleTarget,
    ShimNameTarget,
    StarTarget,
    UnknownTarget,
    is_shim_module,
    shim_public_names,
)
from .flow_state import Frame, FrameKind, State
from .mixin import EngineMixin
from .program import LoadState, ModuleInfo
from .reuse import public_names


class ModuleLoading(EngineMixin):
    """Modules of the analysed project."""

    def find_module(self, name: str, root: str) -> ModuleInfo | None:
        """The analysed module ``name`` as seen from a module under ``root`` (the same root first)."""
        candidates = self.by_name.get(name)
        if not candidates:
            return None
        for module in candidates:
            if module.root == root:
                return module
        return candidates[0]

    def module_ref(self, name: str, root: str) -> ModuleRef:
        module = self.find_module(name, root)
        return ModuleRef(name, module.root if module is not None else root)

    def load_module(self, module: ModuleInfo | None) -> dict[str, Value] | None:
        if module is None:
            return None
        if module.state is not LoadState.NEW:
            return module.namespace  # done, or a cycle: what is defined so far
        if self.keep_module(module):  # the previous pass's run, if nothing it read changed
            return module.namespace
        module.state = LoadState.LOADING
        self.module_loads += 1  # a function run that loads a module is not kept for the next pass
        self.changes.changed()
        tree = module.source.tree
        assert tree is not None
        ctx = self.module_context(module)
        record = self.start_module_record(module)
        frame = Frame(module, ctx, kind=FrameKind.MODULE, profile=self.profile)
        state = State(module.namespace)
        state.vars["__name__"] = TOP
        state.vars["__file__"] = TOP
        self.exec_block(tree.body, state, frame)
        module.namespace = state.vars if not state.dead else module.namespace
        module.state = LoadState.DONE
        self.finish_module_record(record)
        return module.namespace

    def module_attr(self, ref: ModuleRef, attr: str) -> Value:
        module = self.find_module(ref.name, ref.root)
        namespace = self.load_module(module)
        if namespace is not None:
            self.note_global_read(("module", module, attr), namespace.get(attr))
            if attr in namespace:
                return self.havoc_attribute(None, attr, namespace[attr]) or TOP
        sub = f"{ref.name}.{attr}"
        if self.resolver.is_project(sub):
            return V(self.module_ref(sub, ref.root))
        return TOP

    def stmt_Import(self, node: ast.Import | ast.ImportFrom, st: State, fr: Frame) -> State:
        for name, target in self.resolver.resolve(node, fr.module.source.package):
            if name == "*" and isinstance(target, StarTarget):
                self._import_star(target.module, st, fr)
                continue
            st.vars[name] = self.import_value(target, fr)
            st.drop_overlays(name)
        return st

    stmt_ImportFrom = stmt_Import

    def _import_star(self, module: str, st: State, fr: Frame) -> None:
        if is_shim_module(module):
            for name in shim_public_names():
                st.vars[name] = V(ShimRef(name))
            return
        found = self.find_module(module, fr.module.root)
        namespace = self.load_module(found)
        if namespace is None:
            return
        names = public_names(namespace)
        self.note_global_read(("star", found), names)
        st.vars.update(names)

    def import_value(self, target: Any, fr: Frame) -> Value:
        if isinstance(target, ShimNameTarget):
            return V(ShimRef(target.name))
        if isinstance(target, ShimModuleTarget):
            return V(ShimModule(target.path))
        if isinstance(target, ProjectModuleTarget):
            ref = self.module_ref(target.module, fr.module.root)
            self.load_module(self.find_module(ref.name, ref.root))
            return V(ref)
        if isinstance(target, ProjectNameTarget):
            return self.module_attr(self.module_ref(target.module, fr.module.root), target.name)
        if isinstance(target, UnknownTarget):
            modelled = self.model_import(target.what)
            if modelled is not None:
                return modelled  # ``import torch``: a library model's name
        return TOP

