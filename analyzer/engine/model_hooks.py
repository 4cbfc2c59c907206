"""Where the engine asks the library models (:mod:`analyzer.models`): one method per hook of
:class:`~analyzer.models.base.LibraryModel`, each a loop over the models that define that hook (the first
answer wins). The engine names no library: with no model loaded, every hook says "not mine"."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..domain import Atom, Value
from ..models.base import UNHANDLED, LibraryModel, Unhandled
from .flow_state import Frame, State
from .mixin import EngineMixin

if TYPE_CHECKING:
    from .program import ClassInfo, FunctionInfo, ModuleInfo


#: every hook of :class:`LibraryModel`
HOOKS = tuple(name for name, value in vars(LibraryModel).items() if callable(value) and not name.startswith("_"))


class BoundHook(Protocol):
    """A model's hook as the engine holds it: a bound method, which knows its model."""

    __self__: LibraryModel

    def __call__(self, *args: Any) -> Any: ...


_OWN_HOOKS: dict[type[LibraryModel], tuple[str, ...]] = {}  # (a dict, not functools.cache: typed by class)


def _own_hooks(model: type[LibraryModel]) -> tuple[str, ...]:
    """The hooks a model class defines (an engine per component binds them: once per class)."""
    found = _OWN_HOOKS.get(model)
    if found is None:
        found = _OWN_HOOKS[model] = tuple(hook for hook in HOOKS
                                          if getattr(model, hook) is not getattr(LibraryModel, hook))
    return found


class ModelHooks(EngineMixin):
    """The engine's side of the model boundary (mixed into the engine)."""

    models: list[LibraryModel]

    def index_hooks(self) -> None:
        """For each hook, the bound methods of the models that define their own (asked at every hook)."""
        self.hook_table: dict[str, list[BoundHook]] = {hook: [] for hook in HOOKS}
        for model in self.models:
            for hook in _own_hooks(type(model)):
                self.hook_table[hook].append(getattr(model, hook))

    def _first_answer(self, hook: str, *args: Any) -> Any:
        """The first answer other than ``None`` of the models defining ``hook``, asked in registration order."""
        for answer_of in self.hook_table[hook]:
            found = answer_of(*args)
            if found is not None:
                return found
        return None

    def model_named(self, name: str) -> LibraryModel | None:
        return next((m for m in self.models if m.name == name), None)

    # -- names and calls -------------------------------------------------------------------------------
    def model_import(self, path: str) -> Value | None:
        return self._first_answer("import_ref", path)

    def model_call(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        for hook in self.hook_table["call_value"]:
            found = hook(atom, args, kwargs, node, st, fr, star_unknown)
            if found is not UNHANDLED:
                return found
        return UNHANDLED

    def model_call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                              star_unknown: bool, st: State, fr: Frame) -> Value | None:
        return self._first_answer("call_expression", node, func, args, kwargs, star_unknown, st, fr)

    def model_method(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                     node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        for hook in self.hook_table["method_call"]:
            found = hook(kind, name, receiver, args, kwargs, node, st, fr)
            if found is not UNHANDLED:
                return found
        return UNHANDLED

    def model_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        return self._first_answer("builtin", name, args, kwargs)

    # -- attributes ----------------------------------------------------------------------------------
    def model_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                        fr: Frame) -> Value | None | Unhandled:
        for hook in self.hook_table["read_attribute"]:
            found = hook(atom, attr, node, st, fr)
            if found is not UNHANDLED:
                return found
        return UNHANDLED

    def model_value_attribute(self, obj: Value, attr: str, node: ast.expr, st: State, fr: Frame) -> Value | None:
        return self._first_answer("value_attribute", obj, attr, node, st, fr)

    def model_instance_attribute(self, instance: Atom, attr: str, node: ast.expr | None, st: State,
                                 fr: Frame) -> Value | None:
        return self._first_answer("instance_attribute", instance, attr, node, st, fr)

    def model_stored_attribute(self, instance: Atom, attr: str, stored: Value) -> Value:
        for hook in self.hook_table["stored_attribute"]:
            stored = hook(instance, attr, stored)
        return stored

    def model_storing_attribute(self, instance: Atom, value: Value, old: Value | None) -> Value:
        for hook in self.hook_table["storing_attribute"]:
            value = hook(instance, value, old)
        return value

    def model_attribute_stored(self, target: ast.Attribute, obj: Value, value: Value, st: State,
                               fr: Frame) -> None:
        for hook in self.hook_table["attribute_stored"]:
            hook(target, obj, value, st, fr)

    def model_attributes_read(self, value: Value, attributes: Iterable[str]) -> Value:
        for hook in self.hook_table["attributes_read"]:
            value = hook(value, attributes)
        return value

    def model_namespace_store(self, obj: Value, attr: str, value: Value) -> Value | None:
        return self._first_answer("namespace_store", obj, attr, value)

    # -- operators -----------------------------------------------------------------------------------
    def model_binop(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
                    compare: bool = False) -> Value | None:
        return self._first_answer("binary", op, left, right, node, st, fr, compare)

    def model_unary(self, op: ast.unaryop, operand: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        return self._first_answer("unary", op, operand, node, st, fr)

    def model_index(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        return self._first_answer("item", atom, key, node, st, fr)

    def model_store_item(self, container: Value, key: Value, value: Value, target: ast.Subscript, st: State,
                         fr: Frame) -> None:
        for hook in self.hook_table["store_item"]:
            hook(container, key, value, target, st, fr)

    def model_updated_item(self, atom: Atom, key: Value, value: Value) -> Value | None:
        return self._first_answer("updated_item", atom, key, value)

    def model_pure_attribute(self, atom: Atom, kind: str, name: str) -> Value | None:
        return self._first_answer("pure_attribute", atom, kind, name)

    def model_items(self, atom: Atom, st: State, fr: Frame) -> list[Value] | None:
        return self._first_answer("items", atom, st, fr)

    def model_element(self, atom: Atom, how: str) -> Value | None:
        return self._first_answer("element", atom, how)

    # -- control flow ----------------------------------------------------------------------------------
    def model_enter_with(self, value: Value, st: State) -> list[tuple[LibraryModel, Any]]:
        """The models whose context ``value`` is, with what each restores on the way out."""
        entered = []
        for hook in self.hook_table["enter_with"]:
            saved = hook(value, st)
            if saved is not None:
                entered.append((hook.__self__, saved))
        return entered

    def model_choose_branch(self, true: State, false: State) -> bool | None:
        return self._first_answer("choose_branch", true, false)

    def model_choose_value(self, body: Value, orelse: Value) -> bool | None:
        return self._first_answer("choose_value", body, orelse)

    def model_assignment(self, node: ast.Assign, st: State, fr: Frame) -> list[tuple[Callable[..., Any], Value]]:
        """What the models need after ``node`` (:meth:`model_assigned`)."""
        notes = []
        for hook in self.hook_table["assignment"]:
            before = hook(node, st, fr)
            if before is not None:
                notes.append((hook.__self__.assigned, before))
        return notes

    # -- calling contexts ------------------------------------------------------------------------------
    def model_context_key(self, st: State | None, uncalled: bool) -> tuple:
        return tuple(hook(st, uncalled) for hook in self.hook_table["context_key"])

    def model_enter_function(self, state: State, key: tuple, fn: FunctionInfo) -> None:
        for hook, part in zip(self.hook_table["context_key"], key, strict=True):
            hook.__self__.enter_function(state, part, fn)

    def model_enter_call(self, fn: FunctionInfo) -> list[BoundHook]:
        """The models told that ``fn`` starts to run (each is told when it ends: ``exit_call``)."""
        hooks = self.hook_table["enter_call"]
        for hook in hooks:
            hook(fn)
        return hooks

    # -- definitions and entry points ------------------------------------------------------------------
    def model_class_base(self, value: Value) -> tuple[str, ...]:
        kinds: tuple[str, ...] = ()
        for hook in self.hook_table["class_base"]:
            kinds += hook(value)
        return kinds

    def model_framework_class(self, cls: ClassInfo) -> tuple[str, ...]:
        kinds: tuple[str, ...] = ()
        for hook in self.hook_table["framework_class"]:
            kinds += hook(cls)
        return kinds

    def model_record_bases(self) -> frozenset[str]:
        bases: frozenset[str] = frozenset()
        for hook in self.hook_table["record_bases"]:
            bases |= hook()
        return bases

    def model_library_init(self, cls: ClassInfo, instance: Value, args: list[Value], kwargs: dict[str, Value],
                           st: State, fr: Frame) -> None:
        for hook in self.hook_table["library_init"]:
            hook(cls, instance, args, kwargs, st, fr)

    def model_class_attribute(self, cls: ClassInfo, attr: str) -> Value | None:
        return self._first_answer("class_attribute", cls, attr)

    def model_wrapped(self, node: ast.FunctionDef | ast.AsyncFunctionDef, module: ModuleInfo) -> bool:
        return any(hook(node, module) for hook in self.hook_table["wrapped"])

    def model_entry(self, fn: FunctionInfo) -> Any:
        return self._first_answer("entry", fn)
