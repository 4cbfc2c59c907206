"""The abstract interpreter: follows every tensor and device through the program.

Flow-sensitive inside a body (module top level, function, class body):
assignments, unpacking, augmented assignment, branches joined at merge points
with narrowing on the condition (``d.is_autodiff()``, ``t.device().is_autodiff()``,
``d.backend == "Flex"``, ``t.device() == d``, ``x is None``, truthiness),
loops iterated to a fixpoint (widened after a bound), ``break``/``continue``/
``return``, ``try`` (the handlers see the state before and after every
statement of the body), ``with``, conditional expressions, the walrus,
comprehensions and lambdas.

Interprocedural: a call to a function of the analysed project is analysed once
per *calling context* (the tuple of argument values, the closure, the module
globals it reads, the open capture scopes and the profile) and summarised by
its return value; the facts at sites inside are recorded under that context.
Recursion and depth are bounded. Instances are abstracted per allocation site
and context; their attributes live in a heap (weak updates; flow-sensitive
overlays inside one body) which is iterated to a fixpoint over whole passes.

Every runtime_shim call is evaluated by :mod:`analyzer.lift` (the semantics
table) and recorded as a fact (:mod:`analyzer.facts`).
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from runtime_shim.capture import CaptureError
from runtime_shim.semantics import AF, DEFAULT_PROFILE, PROFILES, CheckpointingStrategy, Role

from . import lift
from .domain import (
    BOOL,
    BOTTOM,
    FALSE,
    NONE,
    TOP,
    TRUE,
    Atom,
    BoundShim,
    BuiltinRef,
    CaptureId,
    ClassRef,
    Const,
    DeviceAtom,
    DictAtom,
    FuncRef,
    GradsAtom,
    GraphAtom,
    Instance,
    ModuleRef,
    Origin,
    PlainDev,
    ScopeAtom,
    ScopeId,
    SeqAtom,
    ShimModule,
    ShimRef,
    TensorAtom,
    V,
    Value,
    const,
    const_value,
    join_all,
    reveal_text,
    same_device,
    seq,
    seq_of,
)
from .facts import CallerLink, Context, FactStore, Site
from .frontend import SourceFile
from .imports import (
    ProjectModuleTarget,
    ProjectNameTarget,
    Resolver,
    ShimModuleTarget,
    ShimNameTarget,
    StarTarget,
    is_shim_module,
    shim_public_names,
    shim_submodules,
)
from .shim_api import (
    AUTODIFF_METHODS,
    BINARY,
    BINOPS,
    CREATORS,
    DEVICE_CHECKED,
    DEVICE_CTORS,
    MASK_FILL,
    UNARY,
    BinarySpec,
    scalar_kind,
)

# --- limits -------------------------------------------------------------------------------------

MAX_LOOP_ITERATIONS = 12  # a loop that has not converged by then is cut (its changing names become unknown)
WIDEN_AFTER = 4  # iterations before names that keep changing are widened to unknown
MAX_CALL_DEPTH = 24
MAX_CONTEXTS_PER_FUNCTION = 24  # beyond this, a function is analysed with unknown arguments
MAX_PASSES = 4  # whole-program passes while the heap of instance attributes grows
MAX_ATOMS = 64  # a value with more possibilities is widened to unknown
MAX_DEPTH = 6  # lists of lists of ... deeper than this are widened to unknown
MAX_RECURSION_ROUNDS = 6  # re-analyses of a recursive context until its result is stable

_CMP_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a), ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_BUILTINS = frozenset({
    "range", "enumerate", "zip", "list", "tuple", "set", "dict", "len", "isinstance", "print", "super",
    "property", "staticmethod", "classmethod", "getattr", "hasattr", "setattr", "sorted", "reversed", "min",
    "max", "sum", "abs", "int", "float", "str", "bool", "iter", "next", "repr", "type", "id", "round",
    "any", "all", "map", "filter", "Exception", "RuntimeError", "ValueError", "TypeError", "KeyError",
    "NotImplementedError", "AssertionError", "StopIteration", "object", "open", "format", "hash", "callable",
})


# --- program structure ------------------------------------------------------------------------------


class FunctionInfo:
    """A ``def`` or ``lambda`` of the analysed code (one per AST node, stable across passes)."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, module: ModuleInfo,
                 qualname: str, cls: ClassInfo | None) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = getattr(node, "name", "<lambda>")
        self.cls = cls
        self.kind = "function"  # or "staticmethod", "classmethod", "property"
        args = node.args
        self.positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        self.vararg = args.vararg.arg if args.vararg else None
        self.kwonly = [a.arg for a in args.kwonlyargs]
        self.kwarg = args.kwarg.arg if args.kwarg else None
        self.param_names = [*self.positional, *([self.vararg] if self.vararg else []), *self.kwonly,
                            *([self.kwarg] if self.kwarg else [])]
        self.locals, loads, self.is_generator = _scope_names(node)
        self.locals.update(self.param_names)
        self.free = sorted(loads - self.locals)

    def __repr__(self) -> str:
        return f"<function {self.qualname}>"


class ClassInfo:
    """A ``class`` of the analysed code; its namespace is rebuilt each pass, its identity is stable."""

    def __init__(self, node: ast.ClassDef, module: ModuleInfo, qualname: str) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = node.name
        self.bases: list[ClassInfo] = []
        self.namespace: dict[str, Value] = {}
        self.dataclass_fields: list[tuple[str, ast.expr | None]] | None = None

    def mro(self) -> list[ClassInfo]:
        out: list[ClassInfo] = []
        pending = [self]
        while pending:
            cls = pending.pop(0)
            if cls not in out:
                out.append(cls)
                pending.extend(cls.bases)
        return out

    def lookup(self, name: str, after: ClassInfo | None = None) -> Value | None:
        chain = self.mro()
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1:]
        for cls in chain:
            if name in cls.namespace:
                return cls.namespace[name]
        return None

    def defines_truth(self) -> bool:
        return any("__bool__" in c.namespace or "__len__" in c.namespace for c in self.mro())

    def __repr__(self) -> str:
        return f"<class {self.qualname}>"


class ModuleInfo:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.name = source.module
        self.file = source.path
        # the directory the top-level package (or the script) is in: where its absolute imports start
        directory = os.path.dirname(os.path.abspath(source.path))
        for _ in range(source.module.count(".") + (1 if source.is_package else 0)):
            directory = os.path.dirname(directory)
        self.root = directory
        self.namespace: dict[str, Value] = {}
        self.state = "new"  # "new", "loading", "done"


@dataclass(frozen=True, slots=True)
class SuperRef(Atom):
    """``super()`` inside a method: attribute lookups start after ``cls`` in the instance's MRO."""

    cls: Any
    instance: Atom


def _scope_names(node: ast.AST) -> tuple[set[str], set[str], bool]:
    """Names bound in a function's own scope, names it (or its nested scopes) loads, and whether it yields."""
    bound: set[str] = set()
    loads: set[str] = set()
    declared: set[str] = set()
    generator = False
    body = node.body if isinstance(node.body, list) else [node.body]
    stack: list[tuple[ast.AST, bool]] = [(child, True) for child in body]
    while stack:
        current, own = stack.pop()
        if isinstance(current, ast.Name):
            if isinstance(current.ctx, ast.Load):
                loads.add(current.id)
            elif own:
                bound.add(current.id)
            continue
        if isinstance(current, (ast.Global, ast.Nonlocal)):
            declared.update(current.names)
            continue
        if own and isinstance(current, (ast.Yield, ast.YieldFrom)):
            generator = True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if own:
                bound.add(current.name)
            for deco in current.decorator_list:
                stack.append((deco, own))
            if isinstance(current, ast.ClassDef):
                stack.extend((b, own) for b in current.bases)
                stack.extend((child, False) for child in current.body)
            else:
                stack.extend((d, own) for d in (*current.args.defaults, *current.args.kw_defaults) if d is not None)
                stack.extend((child, False) for child in current.body)
            continue
        if isinstance(current, ast.Lambda):
            stack.extend((d, own) for d in current.args.defaults)
            stack.append((current.body, False))
            continue
        if isinstance(current, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for child in ast.iter_child_nodes(current):
                if isinstance(child, ast.comprehension):
                    stack.append((child.iter, own))
                    stack.append((child.target, False))
                    stack.extend((cond, False) for cond in child.ifs)
                else:
                    stack.append((child, False))
            continue
        if isinstance(current, ast.NamedExpr) and isinstance(current.target, ast.Name):
            bound.add(current.target.id)  # the walrus binds in the enclosing function, even from a comprehension
            stack.append((current.value, own))
            continue
        if own and isinstance(current, (ast.Import, ast.ImportFrom)):
            for alias in current.names:
                if alias.name != "*":
                    bound.add((alias.asname or alias.name).split(".")[0])
            continue
        if own and isinstance(current, ast.ExceptHandler) and current.name:
            bound.add(current.name)
        stack.extend((child, own) for child in ast.iter_child_nodes(current))
    return bound - declared, loads, generator


# --- flow state ------------------------------------------------------------------------------------


class State:
    """Variables (and ``name.attr`` overlays of instance attributes) on one program point."""

    __slots__ = ("vars", "dead")

    def __init__(self, variables: dict[str, Value] | None = None, dead: bool = False) -> None:
        self.vars: dict[str, Value] = variables if variables is not None else {}
        self.dead = dead

    def copy(self) -> State:
        return State(dict(self.vars), self.dead)

    def same(self, other: State) -> bool:
        return self.dead == other.dead and self.vars == other.vars

    def drop_overlays(self, base: str | None = None, attrs: Iterable[str] | None = None) -> None:
        keys = [k for k in self.vars if "." in k]
        for key in keys:
            name, _, attr = key.partition(".")
            if base is not None and name != base:
                continue
            if attrs is not None and attr not in attrs:
                continue
            del self.vars[key]


def dead() -> State:
    return State({}, True)


def join_states(states: Iterable[State]) -> State:
    live = [s for s in states if not s.dead]
    if not live:
        return dead()
    out = dict(live[0].vars)
    for other in live[1:]:
        for key in [k for k in out if "." in k and k not in other.vars]:
            del out[key]  # an overlay on one path only: fall back to the heap
        for key, value in other.vars.items():
            if key in out:
                out[key] = out[key].join(value)
            elif "." not in key:
                out[key] = value
    return State(out)


class Frame:
    """One activation: a module's top level, a class body, or a function in one context."""

    def __init__(self, module: ModuleInfo, ctx: Context, *, func: FunctionInfo | None = None,
                 closure: dict[str, Value] | None = None, scopes: frozenset[ScopeId] = frozenset(),
                 profile: str = DEFAULT_PROFILE, kind: str = "function", cls: ClassInfo | None = None) -> None:
        self.module = module
        self.ctx = ctx
        self.func = func
        self.closure = closure or {}
        self.scopes = scopes
        self.profile = profile
        self.kind = kind  # "module", "class", "function"
        self.cls = cls
        self.loops: list[tuple[list[State], list[State]]] = []
        self.collectors: list[list[State]] = []
        self.returns: Value = BOTTOM

    @property
    def file(self) -> str:
        return self.module.file


# --- the engine -----------------------------------------------------------------------------------------


class Engine:
    """Whole-program abstract interpretation of the relevant files of one project."""

    def __init__(self, sources: list[SourceFile], facts: FactStore, profile: str = DEFAULT_PROFILE,
                 backends: frozenset[str] | None = None, project_modules: set[str] | None = None) -> None:
        self.facts = facts
        self.profile = profile
        self.backends = backends
        self.modules: list[ModuleInfo] = []
        self.by_name: dict[str, list[ModuleInfo]] = {}
        for source in sources:
            if source.tree is not None and not is_shim_module(source.module):
                module = ModuleInfo(source)
                self.modules.append(module)
                self.by_name.setdefault(module.name, []).append(module)
        self.resolver = Resolver(set(project_modules or ()) | set(self.by_name))
        self.functions: dict[int, FunctionInfo] = {}
        self.classes: dict[int, ClassInfo] = {}
        self.ctx_ids: dict[Any, int] = {}
        self.contexts: dict[int, Context] = {}
        self.contexts_per_function: dict[FunctionInfo, int] = {}
        self.summaries: dict[int, Value] = {}
        self.in_progress: dict[int, Value] = {}  # context -> the current approximation of its result
        self.recursive_hits: set[int] = set()
        self.active_functions: dict[FunctionInfo, int] = {}
        self.depth = 0
        self.heap: dict[tuple[Instance, str], Value] = {}
        self.module_stores = 0  # assignments to attributes of project modules so far
        self.defined: dict[FunctionInfo, FuncRef] = {}
        self.analysed: set[FunctionInfo] = set()
        self.instances: dict[ClassInfo, set[Instance]] = {}
        self.attr_writers: dict[str, set[int]] = {}
        self._writers_cache: dict[int | None, frozenset[str]] = {}
        self._index_attribute_writes()

    # --- driver ------------------------------------------------------------------------------------

    def run(self) -> None:
        """Analyse every module, then every function nothing called; repeat while the heap grows."""
        for _ in range(MAX_PASSES):
            before = dict(self.heap)
            self.facts.clear_flow_facts()
            self.summaries.clear()
            self.analysed.clear()
            self.defined.clear()
            for ctx in self.contexts.values():
                ctx.callers.clear()
            self.module_stores = 0
            for module in self.modules:
                module.state = "new"
                module.namespace = {}
            for module in self.modules:
                self.load_module(module)
            self._sweep_uncalled()
            if self.heap == before:
                break

    def _sweep_uncalled(self) -> None:
        """Functions and methods no analysed code called: analyse them with unknown arguments."""
        progress = True
        while progress:
            progress = False
            for fn, fref in list(self.defined.items()):
                if fn in self.analysed:
                    continue
                progress = True
                self.analysed.add(fn)
                args: list[Value] = []
                bound = fref.bound
                if fn.cls is not None and fn.kind in ("function", "property") and bound is None:
                    instances = self.instances.get(fn.cls) or set()
                    args.append(Value(frozenset(instances), top=not instances))
                module_ctx = self.module_context(fn.module)
                frame = Frame(fn.module, module_ctx, kind="module", profile=self.profile)
                self.call_function(fref, args, {}, None, frame, uncalled=True, star_unknown=True)

    def _index_attribute_writes(self) -> None:
        """Which functions assign ``x.attr`` for each attribute name (to invalidate overlays on calls)."""
        for module in self.modules:
            tree = module.source.tree
            if tree is None:
                continue
            stack: list[tuple[ast.AST, int | None]] = [(tree, None)]
            while stack:
                node, owner = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    owner = id(node)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and owner is not None:
                    self.attr_writers.setdefault(node.attr, set()).add(owner)
                stack.extend((child, owner) for child in ast.iter_child_nodes(node))

    def _attrs_written_elsewhere(self, fr: Frame) -> frozenset[str]:
        """Attribute names some function other than the caller assigns: a call may change them."""
        key = id(fr.func.node) if fr.func is not None else None
        cached = self._writers_cache.get(key)
        if cached is None:
            cached = frozenset(attr for attr, funcs in self.attr_writers.items() if funcs - {key})
            self._writers_cache[key] = cached
        return cached

    # --- contexts -----------------------------------------------------------------------------------

    def context_id(self, key: Any) -> int:
        ctx_id = self.ctx_ids.get(key)
        if ctx_id is None:
            ctx_id = self.ctx_ids[key] = len(self.ctx_ids) + 1
        return ctx_id

    def module_context(self, module: ModuleInfo) -> Context:
        ctx_id = self.context_id(("module", module.file))
        ctx = self.contexts.get(ctx_id)
        if ctx is None:
            ctx = self.contexts[ctx_id] = Context(ctx_id, None, module.file)
        return ctx

    # --- modules ------------------------------------------------------------------------------------

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
        if module.state != "new":
            return module.namespace  # done, or a cycle: what is defined so far
        module.state = "loading"
        tree = module.source.tree
        assert tree is not None
        ctx = self.module_context(module)
        frame = Frame(module, ctx, kind="module", profile=self.profile)
        state = State(module.namespace)
        state.vars["__name__"] = TOP
        state.vars["__file__"] = TOP
        self.exec_block(tree.body, state, frame)
        module.namespace = state.vars if not state.dead else module.namespace
        module.state = "done"
        return module.namespace

    def module_attr(self, ref: ModuleRef, attr: str) -> Value:
        namespace = self.load_module(self.find_module(ref.name, ref.root))
        if namespace is not None and attr in namespace:
            return namespace[attr]
        sub = f"{ref.name}.{attr}"
        if self.resolver.is_project(sub):
            return V(self.module_ref(sub, ref.root))
        return TOP

    # --- statements -------------------------------------------------------------------------------------

    def exec_block(self, body: list[ast.stmt], st: State, fr: Frame) -> State:
        for stmt in body:
            if st.dead:
                return st
            if fr.collectors:
                self._collect(st, fr)
            st = self.exec_stmt(stmt, st, fr)
            if fr.kind == "module":
                fr.module.namespace = st.vars if not st.dead else fr.module.namespace
        if fr.collectors and not st.dead:
            self._collect(st, fr)
        return st

    @staticmethod
    def _collect(st: State, fr: Frame) -> None:
        snapshot = st.copy()
        for collector in fr.collectors:
            collector.append(snapshot)

    def exec_stmt(self, node: ast.stmt, st: State, fr: Frame) -> State:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            return st
        return method(node, st, fr)

    def stmt_Expr(self, node: ast.Expr, st: State, fr: Frame) -> State:
        self.eval(node.value, st, fr)
        return st

    def stmt_Assign(self, node: ast.Assign, st: State, fr: Frame) -> State:
        value = self.eval(node.value, st, fr)
        if st.dead:
            return st
        for target in node.targets:
            self.assign(target, value, st, fr)
        return st

    def stmt_AnnAssign(self, node: ast.AnnAssign, st: State, fr: Frame) -> State:
        if node.value is None:
            return st
        value = self.eval(node.value, st, fr)
        if not st.dead:
            self.assign(node.target, value, st, fr)
        return st

    def stmt_AugAssign(self, node: ast.AugAssign, st: State, fr: Frame) -> State:
        current = self.eval(_as_load(node.target), st, fr)
        right = self.eval(node.value, st, fr)
        if st.dead:
            return st
        value = self.binop(node.op, current, right, node, st, fr)
        if not st.dead:
            self.assign(node.target, value, st, fr)
        return st

    def stmt_Return(self, node: ast.Return, st: State, fr: Frame) -> State:
        value = self.eval(node.value, st, fr) if node.value is not None else NONE
        if not st.dead:
            fr.returns = fr.returns.join(value)
        return dead()

    def stmt_Raise(self, node: ast.Raise, st: State, fr: Frame) -> State:
        if node.exc is not None:
            self.eval(node.exc, st, fr)
        return dead()

    def stmt_Assert(self, node: ast.Assert, st: State, fr: Frame) -> State:
        true, _false = self.branch(node.test, st, fr)
        return true

    def stmt_Break(self, node: ast.Break, st: State, fr: Frame) -> State:
        if fr.loops:
            fr.loops[-1][0].append(st)
        return dead()

    def stmt_Continue(self, node: ast.Continue, st: State, fr: Frame) -> State:
        if fr.loops:
            fr.loops[-1][1].append(st)
        return dead()

    def stmt_Delete(self, node: ast.Delete, st: State, fr: Frame) -> State:
        for target in node.targets:
            if isinstance(target, ast.Name):
                st.vars.pop(target.id, None)
                st.drop_overlays(target.id)
        return st

    def stmt_If(self, node: ast.If, st: State, fr: Frame) -> State:
        true, false = self.branch(node.test, st, fr)
        if not true.dead:
            true = self.exec_block(node.body, true, fr)
        if not false.dead:
            false = self.exec_block(node.orelse, false, fr)
        return join_states([true, false])

    def stmt_While(self, node: ast.While, st: State, fr: Frame) -> State:
        entry = st
        head = entry.copy()
        widened: set[str] = set()
        exit_state, breaks = dead(), []
        for iteration in range(MAX_LOOP_ITERATIONS):
            true, false = self.branch(node.test, head.copy(), fr)
            fr.loops.append(([], []))
            end = self.exec_block(node.body, true, fr) if not true.dead else true
            breaks, continues = fr.loops.pop()
            exit_state = false
            new_head = join_states([entry, end, *continues])
            _force_top(new_head, widened)
            if new_head.same(head):
                break
            if iteration >= WIDEN_AFTER:
                _widen(head, new_head, widened)
            head = new_head
        if node.orelse and not exit_state.dead:
            exit_state = self.exec_block(node.orelse, exit_state, fr)
        return join_states([exit_state, *breaks])

    def stmt_For(self, node: ast.For | ast.AsyncFor, st: State, fr: Frame) -> State:
        iterable = self.eval(node.iter, st, fr)
        if st.dead:
            return st
        element = self.iter_element(iterable)
        entry = st
        head = entry.copy()
        widened: set[str] = set()
        breaks: list[State] = []
        after_iteration = dead()
        if not element.is_bottom:
            for iteration in range(MAX_LOOP_ITERATIONS):
                body_in = head.copy()
                self.assign(node.target, element, body_in, fr)
                fr.loops.append(([], []))
                end = self.exec_block(node.body, body_in, fr)
                breaks, continues = fr.loops.pop()
                after_iteration = join_states([end, *continues])
                new_head = join_states([entry, after_iteration])
                _force_top(new_head, widened)
                if new_head.same(head):
                    break
                if iteration >= WIDEN_AFTER:
                    _widen(head, new_head, widened)
                head = new_head
        # a sequence of known, non-zero length runs the body at least once
        exit_state = after_iteration if _nonempty(iterable) else head
        _force_top(exit_state, widened)
        if node.orelse and not exit_state.dead:
            exit_state = self.exec_block(node.orelse, exit_state, fr)
        return join_states([exit_state, *breaks])

    stmt_AsyncFor = stmt_For

    def stmt_Try(self, node: ast.Try, st: State, fr: Frame) -> State:
        collector: list[State] = [st.copy()]
        fr.collectors.append(collector)
        body_end = self.exec_block(node.body, st, fr)
        fr.collectors.pop()
        if fr.collectors:
            for snapshot in collector:
                for outer in fr.collectors:
                    outer.append(snapshot)
        normal = self.exec_block(node.orelse, body_end, fr) if not body_end.dead else body_end
        raised = join_states(collector)
        exits = [normal]
        for handler in node.handlers:
            if raised.dead:
                break
            entry = raised.copy()
            if handler.type is not None:
                self.eval(handler.type, entry, fr)
            if handler.name:
                entry.vars[handler.name] = TOP
            exits.append(self.exec_block(handler.body, entry, fr))
        after = join_states(exits)
        if node.finalbody:
            if not raised.dead:
                self.exec_block(node.finalbody, raised.copy(), fr)  # the exceptional path: facts only
            if not after.dead:
                after = self.exec_block(node.finalbody, after, fr)
        return after

    stmt_TryStar = stmt_Try

    def stmt_With(self, node: ast.With | ast.AsyncWith, st: State, fr: Frame) -> State:
        saved_profile = fr.profile
        for item in node.items:
            value = self.eval(item.context_expr, st, fr)
            if st.dead:
                fr.profile = saved_profile
                return st
            profile = self._profile_switch(item.context_expr, st, fr)
            if profile is not None:
                fr.profile = profile
            if item.optional_vars is not None:
                entered = TOP
                for atom in value.atoms:
                    if isinstance(atom, Instance):
                        enter = self.attribute_of(atom, "__enter__", item.context_expr, st, fr)
                        if enter is not None:
                            entered = self.call(enter, [], {}, item.context_expr, st, fr)
                self.assign(item.optional_vars, entered, st, fr)
        try:
            return self.exec_block(node.body, st, fr)
        finally:
            fr.profile = saved_profile

    stmt_AsyncWith = stmt_With

    def _profile_switch(self, expr: ast.expr, st: State, fr: Frame) -> str | None:
        """``with runtime_shim.profile("burn-0.21"):`` changes the semantics inside the block."""
        if not isinstance(expr, ast.Call) or not expr.args:
            return None
        func = self.eval(expr.func, st.copy(), fr)
        if func.atoms != {ShimRef("profile")} or func.top:
            return None
        names = self.eval(expr.args[0], st.copy(), fr).consts()
        if names and len(names) == 1 and names[0] in PROFILES:
            return names[0]
        return None

    def stmt_Match(self, node: ast.Match, st: State, fr: Frame) -> State:
        self.eval(node.subject, st, fr)
        if st.dead:
            return st
        exits = [st.copy()]
        for case in node.cases:
            branch = st.copy()
            for sub in ast.walk(case.pattern):
                if isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                    branch.vars[sub.name] = TOP
                elif isinstance(sub, ast.MatchMapping) and sub.rest:
                    branch.vars[sub.rest] = TOP
            if case.guard is not None:
                branch, _ = self.branch(case.guard, branch, fr)
            exits.append(self.exec_block(case.body, branch, fr))
        return join_states(exits)

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
        namespace = self.load_module(self.find_module(module, fr.module.root)) or {}
        for name, value in namespace.items():
            if not name.startswith("_") and "." not in name:
                st.vars[name] = value

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
        return TOP

    def stmt_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef, st: State, fr: Frame) -> State:
        for deco in node.decorator_list:
            self.eval(deco, st, fr)  # decorators are evaluated for their facts; staticmethod/classmethod/
            # property are FunctionInfo.kind, and any other decorator is assumed to keep the behaviour
        if st.dead:
            return st
        if _setter_of(node) and node.name in st.vars:
            return st  # ``@x.setter``: the property object stays
        st.vars[node.name] = V(self.make_function(node, st, fr))
        st.drop_overlays(node.name)
        return st

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def make_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, st: State,
                      fr: Frame) -> FuncRef:
        fn = self.functions.get(id(node))
        if fn is None:
            cls = fr.cls if fr.kind == "class" else None
            prefix = fr.func.qualname + ".<locals>." if fr.func is not None else (
                fr.cls.qualname + "." if cls is not None else "")
            fn = FunctionInfo(node, fr.module, prefix + getattr(node, "name", "<lambda>"), cls)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in node.decorator_list:
                    name = _call_name(deco)
                    if name in ("staticmethod", "classmethod", "property"):
                        fn.kind = name
                    elif name in ("setter", "deleter"):
                        fn.kind = "setter"
                if isinstance(node, ast.AsyncFunctionDef):
                    fn.is_generator = True
            self.functions[id(node)] = fn
        args = node.args
        defaults = tuple(self.eval(d, st, fr) for d in args.defaults)
        kw_defaults = tuple((a.arg, self.eval(d, st, fr))
                            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                            if d is not None)
        closure: tuple[tuple[str, Value], ...] = ()
        if fr.kind == "function":
            captured = []
            for name in fn.free:
                if name in st.vars:
                    captured.append((name, st.vars[name]))
                elif name in fr.closure:
                    captured.append((name, fr.closure[name]))
            closure = tuple(captured)
        fref = FuncRef(fn, closure, defaults, kw_defaults)
        if fn not in self.defined and fn.kind != "setter":
            self.defined[fn] = fref
        return fref

    def stmt_ClassDef(self, node: ast.ClassDef, st: State, fr: Frame) -> State:
        info = self.classes.get(id(node))
        if info is None:
            prefix = fr.func.qualname + ".<locals>." if fr.func is not None else ""
            info = self.classes[id(node)] = ClassInfo(node, fr.module, prefix + node.name)
        info.bases = []
        for base in node.bases:
            value = self.eval(base, st, fr)
            info.bases.extend(atom.cls for atom in value.atoms if isinstance(atom, ClassRef))
        body_frame = Frame(fr.module, fr.ctx, func=None, closure=dict(st.vars) if fr.kind == "function" else {},
                           scopes=fr.scopes, profile=fr.profile, kind="class", cls=info)
        body_state = State({})
        body_state = self.exec_block(node.body, body_state, body_frame)
        info.namespace = body_state.vars
        info.dataclass_fields = None
        if any(_is_dataclass_decorator(d) for d in node.decorator_list):
            info.dataclass_fields = [
                (stmt.target.id, stmt.value) for stmt in node.body
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and "ClassVar" not in ast.unparse(stmt.annotation)
            ]
        st.vars[node.name] = V(ClassRef(info))
        st.drop_overlays(node.name)
        return st

    # --- assignment -------------------------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Value, st: State, fr: Frame) -> None:
        if isinstance(target, ast.Name):
            st.vars[target.id] = _cap(value)
            st.drop_overlays(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, st, fr)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, V(seq_of("list", self.iter_element(value))), st, fr)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, st, fr)
            self.store_attribute(obj, target.attr, value, fr)
            if isinstance(target.value, ast.Name):
                st.vars[f"{target.value.id}.{target.attr}"] = _cap(value)
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
                self.heap[key] = _cap(value if old is None else old.join(value))
            elif isinstance(atom, ModuleRef):
                namespace = self.load_module(self.find_module(atom.name, atom.root))
                if namespace is not None:
                    old = namespace.get(attr)
                    namespace[attr] = value if strong or old is None else _cap(old.join(value))
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

    # --- branches and narrowing ---------------------------------------------------------------------------

    def branch(self, test: ast.expr, st: State, fr: Frame) -> tuple[State, State]:
        """The states where ``test`` is true and where it is false (each dead when impossible)."""
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And):
                falses = []
                current = st
                for value in test.values:
                    current, false = self.branch(value, current, fr)
                    falses.append(false)
                    if current.dead:
                        break
                return current, join_states(falses)
            trues = []
            current = st
            for value in test.values:
                true, current = self.branch(value, current, fr)
                trues.append(true)
                if current.dead:
                    break
            return join_states(trues), current
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            true, false = self.branch(test.operand, st, fr)
            return false, true
        value = self.eval(test, st, fr)
        if st.dead:
            return st, dead()
        true, false = st.copy(), st.copy()
        truth = value.truthiness()
        if truth == {True}:
            false.dead = True
        elif truth == {False}:
            true.dead = True
        for key, pred in self._narrowings(test, st, fr):
            self._narrow(key, pred, true, false, fr)
        return true, false

    def _narrow(self, key: str, pred: Callable[[Atom], bool | None], true: State, false: State, fr: Frame) -> None:
        for state, wanted in ((true, True), (false, False)):
            if state.dead:
                continue
            current = state.vars.get(key)
            if current is None:
                if "." not in key:
                    continue
                base, _, attr = key.partition(".")
                current = self.attribute(state.vars.get(base, TOP), attr, None, state, fr)
            kept = current.filter(lambda atom, w=wanted: pred(atom) in (w, None))
            if kept.is_bottom and not current.is_bottom:
                state.dead = True
            elif kept is not current:
                state.vars[key] = kept

    def _narrowings(self, test: ast.expr, st: State, fr: Frame) -> list[tuple[str, Callable[[Atom], bool | None]]]:
        out: list[tuple[str, Callable[[Atom], bool | None]]] = []
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, left, right = test.ops[0], test.left, test.comparators[0]
            if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
                path = self._target(left, st)
                if path is not None:
                    key, steps = path
                    is_none = isinstance(op, ast.Is)
                    out.append((key, lambda atom, s=steps, w=is_none: self._project_pred(
                        atom, s, lambda v: _is_none(v) if w else _not(_is_none(v)))))
                return out
            compare = _CMP_OPS.get(type(op))
            if compare is None:
                return out
            for this, other, flipped in ((left, right, False), (right, left, True)):
                path = self._target(this, st)
                if path is None:
                    continue
                key, steps = path
                other_value = self.eval(other, st.copy(), fr, quiet=True)
                out.append((key, lambda atom, s=steps, o=other_value, f=flipped: self._project_pred(
                    atom, s, lambda v: _compare_values(compare, o, v) if f else _compare_values(compare, v, o))))
            return out
        path = self._target(test, st)
        if path is not None:
            key, steps = path
            out.append((key, lambda atom, s=steps: self._project_pred(atom, s, _truth)))
        return out

    def _target(self, expr: ast.expr, st: State) -> tuple[str, list[tuple[str, str]]] | None:
        """A narrowable variable (``name`` or ``name.attr``) and the steps from it to ``expr``."""
        steps: list[tuple[str, str]] = []
        current = expr
        while True:
            if isinstance(current, ast.Call) and not current.args and not current.keywords and isinstance(
                    current.func, ast.Attribute):
                steps.append(("call", current.func.attr))
                current = current.func.value
            elif isinstance(current, ast.Attribute):
                steps.append(("attr", current.attr))
                current = current.value
            elif isinstance(current, ast.Name):
                break
            else:
                return None
        steps.reverse()
        name = current.id
        if steps and steps[0][0] == "attr":
            dotted = f"{name}.{steps[0][1]}"
            base = st.vars.get(name)
            if dotted in st.vars or (base is not None and base.of_type(Instance)):
                return dotted, steps[1:]
        if name not in st.vars:
            return None
        return name, steps

    def _project_pred(self, atom: Atom, steps: list[tuple[str, str]],
                      test: Callable[[Value], bool | None]) -> bool | None:
        value = V(atom)
        for kind, name in steps:
            value = self._pure_step(value, kind, name)
            if value is None:
                return None
        return test(value)

    def _pure_step(self, value: Value, kind: str, name: str) -> Value | None:
        """Follow ``.name`` or ``.name()`` without recording facts; ``None`` when not modelled."""
        out = BOTTOM
        for atom in value.atoms:
            if isinstance(atom, TensorAtom):
                if kind == "call" and name == "device":
                    out = out.join(V(atom.reported_device()))
                elif kind == "call" and name == "is_require_grad":
                    out = out.join(V(const(atom.cls is AF and atom.role is not Role.UNTRACKED)))
                elif kind == "attr" and name == "kind":
                    out = out.join(V(const(atom.kind)))
                else:
                    return None
            elif isinstance(atom, DeviceAtom):
                if kind == "call" and name == "is_autodiff":
                    out = out.join(V(const(atom.ad)))
                elif kind == "call" and name == "inner":
                    out = out.join(V(atom.inner()))
                elif kind == "call" and name == "gradient_checkpointing_strategy":
                    lifted = lift.device_call(self.profile, name, V(atom), Origin("", 0, 0, ""))
                    out = out.join(lifted.results)
                elif kind == "attr" and name in ("backend", "index", "is_capture"):
                    out = out.join(self._device_attr(atom, name))
                else:
                    return None
            else:
                return None
        return out.join(TOP) if value.top else out

    # --- expressions -----------------------------------------------------------------------------------------

    def eval(self, node: ast.expr | None, st: State, fr: Frame, quiet: bool = False) -> Value:
        if node is None:
            return NONE
        if st.dead:
            return BOTTOM
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            return TOP
        if quiet:
            saved, self.facts = self.facts, _NullFacts()
            try:
                return method(node, st, fr)
            finally:
                self.facts = saved
        return method(node, st, fr)

    def expr_Constant(self, node: ast.Constant, st: State, fr: Frame) -> Value:
        return const_value(node.value)

    def expr_Name(self, node: ast.Name, st: State, fr: Frame) -> Value:
        return self.lookup(node.id, st, fr)

    def lookup(self, name: str, st: State, fr: Frame) -> Value:
        value = st.vars.get(name)
        if value is not None:
            return value
        if fr.kind != "module":
            value = fr.closure.get(name)
            if value is not None:
                return value
            value = fr.module.namespace.get(name)
            if value is not None:
                return value
        if name in _BUILTINS:
            return V(BuiltinRef(name))
        return TOP

    def expr_Attribute(self, node: ast.Attribute, st: State, fr: Frame) -> Value:
        if isinstance(node.value, ast.Name):
            overlay = st.vars.get(f"{node.value.id}.{node.attr}")
            if overlay is not None:
                return overlay
        obj = self.eval(node.value, st, fr)
        return self.attribute(obj, node.attr, node, st, fr)

    def attribute(self, obj: Value, attr: str, node: ast.expr | None, st: State, fr: Frame) -> Value:
        out = TOP if obj.top else BOTTOM
        for atom in obj.atoms:
            value = self.attribute_of(atom, attr, node, st, fr)
            out = out.join(TOP if value is None else value)
        return out

    def attribute_of(self, atom: Atom, attr: str, node: ast.expr | None, st: State, fr: Frame) -> Value | None:
        """``atom.attr``; ``None`` when unknown."""
        if isinstance(atom, TensorAtom):
            if attr == "kind":
                return V(const(atom.kind))
            return V(BoundShim(atom, attr))
        if isinstance(atom, DeviceAtom):
            if attr in ("backend", "index", "is_capture"):
                return self._device_attr(atom, attr)
            return V(BoundShim(atom, attr))
        if isinstance(atom, ShimRef):
            if atom.name == "CheckpointingStrategy" and attr in CheckpointingStrategy.__members__:
                return V(const(CheckpointingStrategy[attr]))
            if atom.name == "CaptureError" and attr in CaptureError.__members__:
                return V(Const(CaptureError[attr], "CaptureError"))
            if atom.name in ("Device", "Tensor"):
                return V(BoundShim(atom, attr))
            return None
        if isinstance(atom, ShimModule):
            if attr in shim_public_names():
                return V(ShimRef(attr))
            sub = f"{atom.path}.{attr}"
            if sub in shim_submodules():
                return V(ShimModule(sub))
            return None
        if isinstance(atom, ModuleRef):
            return self.module_attr(atom, attr)
        if isinstance(atom, Instance):
            stored = self.heap.get((atom, attr))
            from_class = atom.cls.lookup(attr)
            if stored is not None:
                return stored
            if from_class is not None:
                return self._bind_class_attr(from_class, atom, node, st, fr)
            return None  # set somewhere the analysis does not see, or inherited from an unknown base
        if isinstance(atom, SuperRef):
            found = atom.instance.cls.lookup(attr, after=atom.cls) if isinstance(atom.instance, Instance) else None
            if found is None:
                return None
            return self._bind_class_attr(found, atom.instance, node, st, fr)
        if isinstance(atom, ClassRef):
            found = atom.cls.lookup(attr)
            if found is None:
                return None
            out = BOTTOM
            for item in found.atoms:
                if isinstance(item, FuncRef) and item.fn.kind == "classmethod":
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, atom)))
                else:
                    out = out.join(V(item))
            return out.join(TOP) if found.top else out
        if isinstance(atom, (ScopeAtom, DictAtom, SeqAtom, GradsAtom, GraphAtom)):
            return V(BoundShim(atom, attr))
        return None

    def _bind_class_attr(self, found: Value, instance: Atom, node: ast.expr | None, st: State, fr: Frame) -> Value:
        out = TOP if found.top else BOTTOM
        for item in found.atoms:
            if isinstance(item, FuncRef) and item.bound is None:
                if item.fn.kind == "staticmethod":
                    out = out.join(V(item))
                elif item.fn.kind == "classmethod":
                    cls_atom = ClassRef(instance.cls) if isinstance(instance, Instance) else instance
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, cls_atom)))
                elif item.fn.kind == "property":
                    getter = FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, instance)
                    out = out.join(self.call(V(getter), [], {}, node, st, fr))
                else:
                    out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, instance)))
            else:
                out = out.join(V(item))
        return out

    @staticmethod
    def _device_attr(atom: DeviceAtom, attr: str) -> Value:
        if attr == "backend":
            return V(const(atom.dev.backend))
        if attr == "is_capture":
            return V(const(atom.dev.is_capture))
        return V(const(atom.dev.index)) if isinstance(atom.dev.index, int) else TOP

    def expr_Subscript(self, node: ast.Subscript, st: State, fr: Frame) -> Value:
        container = self.eval(node.value, st, fr)
        if isinstance(node.slice, ast.Slice):
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    self.eval(part, st, fr)
            return self._slice(container)
        key = self.eval(node.slice, st, fr)
        keys = key.consts()
        out = TOP if container.top else BOTTOM
        for atom in container.atoms:
            if isinstance(atom, SeqAtom):
                if atom.items is not None and keys and all(isinstance(k, int) and not isinstance(k, bool)
                                                           for k in keys):
                    for k in keys:
                        if -len(atom.items) <= k < len(atom.items):
                            out = out.join(atom.items[k])
                else:
                    out = out.join(atom.elem if not atom.elem.is_bottom else TOP)
            elif isinstance(atom, DictAtom):
                if keys:
                    for k in keys:
                        found = atom.get(k)
                        out = out.join(found if found is not None else TOP)
                else:
                    out = out.join(join_all(v for _k, v in atom.items)).join(TOP)
            elif isinstance(atom, Instance):
                getter = self.attribute_of(atom, "__getitem__", node, st, fr)
                out = out.join(self.call(getter, [key], {}, node, st, fr) if getter is not None else TOP)
            else:
                out = out.join(TOP)
        return out

    @staticmethod
    def _slice(container: Value) -> Value:
        out = TOP if container.top else BOTTOM
        for atom in container.atoms:
            out = out.join(V(seq_of(atom.kind, atom.elem)) if isinstance(atom, SeqAtom) else TOP)
        return out

    def expr_Tuple(self, node: ast.Tuple | ast.List | ast.Set, st: State, fr: Frame) -> Value:
        kind = {ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}[type(node)]
        items: list[Value] = []
        known = True
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                inner = self.eval(elt.value, st, fr)
                spliced = _splice(inner)
                if spliced is None:
                    known = False
                    items.append(self.iter_element(inner))
                else:
                    items.extend(spliced)
            else:
                items.append(self.eval(elt, st, fr))
        if st.dead:
            return BOTTOM
        if not known:
            return V(seq_of(kind, join_all(items)))
        return V(seq(kind, items))

    expr_List = expr_Tuple
    expr_Set = expr_Tuple

    def expr_Dict(self, node: ast.Dict, st: State, fr: Frame) -> Value:
        items = []
        known = True
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.eval(value_node, st, fr)
            if key_node is None:
                known = False
                continue
            keys = self.eval(key_node, st, fr).consts()
            if keys and len(keys) == 1:
                items.append((keys[0], value))
            else:
                known = False
        if st.dead:
            return BOTTOM
        return V(DictAtom(tuple(items))) if known else TOP

    def expr_JoinedStr(self, node: ast.JoinedStr, st: State, fr: Frame) -> Value:
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                self.eval(value.value, st, fr)
        return TOP

    def expr_FormattedValue(self, node: ast.FormattedValue, st: State, fr: Frame) -> Value:
        self.eval(node.value, st, fr)
        return TOP

    def expr_NamedExpr(self, node: ast.NamedExpr, st: State, fr: Frame) -> Value:
        value = self.eval(node.value, st, fr)
        if not st.dead:
            self.assign(node.target, value, st, fr)
        return value

    def expr_IfExp(self, node: ast.IfExp, st: State, fr: Frame) -> Value:
        true, false = self.branch(node.test, st, fr)
        body = self.eval(node.body, true, fr) if not true.dead else BOTTOM
        orelse = self.eval(node.orelse, false, fr) if not false.dead else BOTTOM
        merged = join_states([true, false])
        st.vars, st.dead = merged.vars, merged.dead
        return body.join(orelse)

    def expr_BoolOp(self, node: ast.BoolOp, st: State, fr: Frame) -> Value:
        """``a or b`` / ``a and b``: each operand evaluated where the previous ones decided to go on."""
        is_and = isinstance(node.op, ast.And)
        result = BOTTOM
        exits: list[State] = []
        current = st.copy()
        for i, value_node in enumerate(node.values):
            value = self.eval(value_node, current, fr)
            if current.dead:
                break
            if i == len(node.values) - 1:
                result = result.join(value)
                exits.append(current)
                break
            stop_when = not is_and  # "and" stops on a falsy value, "or" on a truthy one
            stopping = value.filter(lambda a, w=stop_when: a.truthy() in (w, None))
            going_on = value.filter(lambda a, w=stop_when: a.truthy() in (not w, None))
            if not stopping.is_bottom or stopping.top:
                result = result.join(stopping)
                exits.append(current.copy())
            if going_on.is_bottom and not going_on.top:
                break
            path = self._target(value_node, current)
            if path is not None and not path[1]:
                current.vars[path[0]] = going_on
        merged = join_states(exits)
        st.vars, st.dead = merged.vars, merged.dead
        return result

    def expr_Compare(self, node: ast.Compare, st: State, fr: Frame) -> Value:
        left = self.eval(node.left, st, fr)
        result: Value | None = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node, st, fr)
            compare = _CMP_OPS.get(type(op))
            outcome = _compare_values(compare, left, right) if compare is not None else None
            value = BOOL if outcome is None else (TRUE if outcome else FALSE)
            result = value if result is None else _and_bools(result, value)
            left = right
        return result if result is not None and not st.dead else BOTTOM

    def expr_UnaryOp(self, node: ast.UnaryOp, st: State, fr: Frame) -> Value:
        operand = self.eval(node.operand, st, fr)
        if st.dead:
            return BOTTOM
        if isinstance(node.op, ast.Not):
            truth = operand.truthiness()
            if truth == {True}:
                return FALSE
            if truth == {False}:
                return TRUE
            return BOOL
        if isinstance(node.op, ast.USub) and operand.tensors():
            site = self.site(node, "Tensor.neg", fr)
            lifted = lift.unary(fr.profile, UNARY["neg"], operand, fr.scopes, self.origin(node, fr))
            return self.record(site, lifted, st, fr)
        consts = operand.consts()
        if consts is not None and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            try:
                fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
                return Value(frozenset(const(fn(c)) for c in consts))
            except Exception:  # noqa: BLE001 - a constant the program would fail on
                return TOP
        return TOP

    def expr_BinOp(self, node: ast.BinOp, st: State, fr: Frame) -> Value:
        left = self.eval(node.left, st, fr)
        right = self.eval(node.right, st, fr)
        if st.dead:
            return BOTTOM
        return self.binop(node.op, left, right, node, st, fr)

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        name = BINOPS.get(type(op))
        if name is not None and (left.tensors() or right.tensors()):
            return self.tensor_binary(BINARY[name], left, right, node, st, fr, reflected=True)
        lc, rc = left.consts(), right.consts()
        fn = _ARITH.get(type(op))
        if lc is not None and rc is not None and fn is not None and len(lc) * len(rc) <= 8:
            results = [_fold(fn, a, b) for a in lc for b in rc]
            if results and all(r is not None for r in results):
                return Value(frozenset(const(r) for r in results))
        if isinstance(op, ast.Add) and left.only(SeqAtom) and right.only(SeqAtom):
            return V(seq_of("list", join_all(a.elem for a in (*left.atoms, *right.atoms))))  # type: ignore[attr-defined]
        return TOP

    def expr_Lambda(self, node: ast.Lambda, st: State, fr: Frame) -> Value:
        return V(self.make_function(node, st, fr))

    def expr_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp, st: State, fr: Frame) -> Value:
        inner = self._comprehension(node.generators, st, fr)
        if inner is None:
            return V(seq("list", ())) if not st.dead else BOTTOM
        element = self.eval(node.elt, inner, fr)
        _keep_walrus(st, inner, node)
        if inner.dead and self._runs_at_least_once(node.generators, st, fr):
            st.dead = True  # every element raises and there is at least one
            return BOTTOM
        kind = "set" if isinstance(node, ast.SetComp) else "list"
        return V(seq_of(kind, element))

    expr_SetComp = expr_ListComp
    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node: ast.DictComp, st: State, fr: Frame) -> Value:
        inner = self._comprehension(node.generators, st, fr)
        if inner is not None:
            self.eval(node.key, inner, fr)
            self.eval(node.value, inner, fr)
            _keep_walrus(st, inner, node)
            if inner.dead and self._runs_at_least_once(node.generators, st, fr):
                st.dead = True
                return BOTTOM
        return TOP

    def _runs_at_least_once(self, generators: list[ast.comprehension], st: State, fr: Frame) -> bool:
        """A single unconditional generator over a sequence of known, non-zero length."""
        if len(generators) != 1 or generators[0].ifs:
            return False
        return _nonempty(self.eval(generators[0].iter, st.copy(), fr, quiet=True))

    def _comprehension(self, generators: list[ast.comprehension], st: State, fr: Frame) -> State | None:
        """The state inside the comprehension (targets bound to the element values), or ``None`` if empty."""
        inner = st.copy()
        for gen in generators:
            iterable = self.eval(gen.iter, inner, fr)
            if inner.dead:
                st.dead = True
                return None
            element = self.iter_element(iterable)
            if element.is_bottom:
                return None
            self.assign(gen.target, element, inner, fr)
            for cond in gen.ifs:
                inner, _ = self.branch(cond, inner, fr)
                if inner.dead:
                    return None
        return inner

    def expr_Starred(self, node: ast.Starred, st: State, fr: Frame) -> Value:
        return self.eval(node.value, st, fr)

    def expr_Await(self, node: ast.Await, st: State, fr: Frame) -> Value:
        self.eval(node.value, st, fr)
        return TOP

    def expr_Yield(self, node: ast.Yield | ast.YieldFrom, st: State, fr: Frame) -> Value:
        if node.value is not None:
            self.eval(node.value, st, fr)
        return TOP

    expr_YieldFrom = expr_Yield

    def iter_element(self, value: Value) -> Value:
        out = TOP if value.top else BOTTOM
        for atom in value.atoms:
            if isinstance(atom, SeqAtom):
                out = out.join(atom.elem)
            elif isinstance(atom, DictAtom):
                out = out.join(Value(frozenset(const(k) for k, _v in atom.items)))
            else:
                out = out.join(TOP)
        return out

    # --- calls --------------------------------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call, st: State, fr: Frame) -> Value:
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend", "insert", "add"):
            handled = self._container_mutation(node, st, fr)
            if handled is not None:
                return handled
        func = self.eval(node.func, st, fr)
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        star_unknown = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value, st, fr)
                spliced = _splice(inner)
                if spliced is None:
                    star_unknown = True
                else:
                    args.extend(spliced)
            else:
                args.append(self.eval(arg, st, fr))
        for keyword in node.keywords:
            value = self.eval(keyword.value, st, fr)
            if keyword.arg is None:
                star_unknown = True
            else:
                kwargs[keyword.arg] = value
        if st.dead:
            return BOTTOM
        result = self.call(func, args, kwargs, node, st, fr, star_unknown=star_unknown)
        if result.is_bottom and not func.is_bottom:
            st.dead = True  # the call raises on every path
        return result

    def _container_mutation(self, node: ast.Call, st: State, fr: Frame) -> Value | None:
        """``xs.append(v)`` on a list the analysis follows: the list now also holds ``v``."""
        receiver = node.func.value  # type: ignore[attr-defined]
        key = None
        if isinstance(receiver, ast.Name):
            key = receiver.id
        elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            key = f"{receiver.value.id}.{receiver.attr}"
        container = self.eval(receiver, st, fr)
        if not container.of_type(SeqAtom):
            return None
        values = [self.eval(arg, st, fr) for arg in node.args]
        if st.dead:
            return BOTTOM
        attr = node.func.attr  # type: ignore[attr-defined]
        added = values[-1] if values else BOTTOM
        if attr == "extend":
            added = self.iter_element(added)
        updated = Value(frozenset(seq_of(a.kind, a.elem.join(added)) if isinstance(a, SeqAtom) else a
                                  for a in container.atoms), container.top)
        if key is not None:
            st.vars[key] = updated
        if isinstance(receiver, ast.Attribute):
            self.store_attribute(self.eval(receiver.value, st, fr), receiver.attr, updated, fr)
        return NONE

    def call(self, func: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
             fr: Frame, star_unknown: bool = False) -> Value:
        result = TOP if func.top else BOTTOM
        groups: dict[tuple[str, str], list[Atom]] = {}
        for atom in func.atoms:
            if isinstance(atom, BoundShim):
                groups.setdefault((atom.name, _receiver_kind(atom.receiver)), []).append(atom.receiver)
            elif isinstance(atom, FuncRef):
                result = result.join(self.call_function(atom, args, kwargs, node, fr, st=st,
                                                        star_unknown=star_unknown))
            elif isinstance(atom, ClassRef):
                result = result.join(self.instantiate(atom.cls, args, kwargs, node, st, fr, star_unknown))
            elif isinstance(atom, ShimRef):
                result = result.join(self.call_shim_function(atom.name, args, kwargs, node, st, fr))
            elif isinstance(atom, BuiltinRef):
                result = result.join(self.call_builtin(atom.name, args, kwargs, node, st, fr))
            elif isinstance(atom, Instance):
                method = self.attribute_of(atom, "__call__", node, st, fr)
                result = result.join(self.call(method, args, kwargs, node, st, fr, star_unknown)
                                     if method is not None else TOP)
            else:
                result = result.join(TOP)
        for (name, kind), receivers in groups.items():
            receiver = Value(frozenset(receivers))
            result = result.join(self.call_method(kind, name, receiver, args, kwargs, node, st, fr))
        return result

    # --- project functions ---------------------------------------------------------------------------------------

    def call_function(self, fref: FuncRef, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                      fr: Frame, *, st: State | None = None, star_unknown: bool = False, uncalled: bool = False,
                      scopes: frozenset[ScopeId] | None = None) -> Value:
        fn: FunctionInfo = fref.fn
        if st is not None:
            st.drop_overlays(attrs=self._attrs_written_elsewhere(fr))
        bound = self._bind(fn, fref, args, kwargs, star_unknown)
        if self.active_functions.get(fn):
            # a recursive call: constants that change at each level (counters, depths) would make a new
            # context per level, so they become unknown; tensors and devices keep their states
            bound = {name: TOP if value.only(Const) else value for name, value in bound.items()}
        scopes = fr.scopes if scopes is None else scopes
        profile = fr.profile
        globals_key = (self.module_stores,
                       *(fn.module.namespace.get(name, TOP) for name in fn.free if name not in fref.closure))
        key: Any = (id(fn.node), fref.closure, tuple(bound[p] for p in fn.param_names), scopes, profile,
                    globals_key, uncalled)
        ctx_id = self.ctx_ids.get(key)
        if ctx_id is None:
            count = self.contexts_per_function.get(fn, 0)
            if count >= MAX_CONTEXTS_PER_FUNCTION:
                bound = {p: TOP for p in fn.param_names}
                if fref.bound is not None and fn.positional:
                    bound[fn.positional[0]] = V(fref.bound)
                key = (id(fn.node), "widened", scopes, profile, uncalled)
            else:
                self.contexts_per_function[fn] = count + 1
            ctx_id = self.context_id(key)
        ctx = self.contexts.get(ctx_id)
        if ctx is None:
            ctx = self.contexts[ctx_id] = Context(ctx_id, fn.qualname, fn.module.file,
                                                   _describe_args(fn, bound), uncalled=uncalled)
        if node is not None and not uncalled:
            link = CallerLink(fr.file, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), fr.ctx)
            if not any((c.file, c.line, c.col, c.caller) == (link.file, link.line, link.col, link.caller)
                       for c in ctx.callers):
                ctx.callers.append(link)
        self.analysed.add(fn)
        if ctx_id in self.summaries:
            return self.summaries[ctx_id]
        if ctx_id in self.in_progress:
            self.recursive_hits.add(ctx_id)
            return self.in_progress[ctx_id]  # recursion: the approximation so far (iterated below)
        if self.depth >= MAX_CALL_DEPTH:
            return TOP
        self.in_progress[ctx_id] = BOTTOM
        self.depth += 1
        self.active_functions[fn] = self.active_functions.get(fn, 0) + 1
        try:
            for _attempt in range(MAX_RECURSION_ROUNDS):
                self.recursive_hits.discard(ctx_id)
                result = _cap(self._run_function(fn, fref, ctx, bound, scopes, profile))
                if ctx_id not in self.recursive_hits or result == self.in_progress[ctx_id]:
                    break
                self.in_progress[ctx_id] = self.in_progress[ctx_id].join(result)
            else:
                result = TOP
        finally:
            self.depth -= 1
            self.active_functions[fn] -= 1
            del self.in_progress[ctx_id]
        self.summaries[ctx_id] = result
        return result

    def _run_function(self, fn: FunctionInfo, fref: FuncRef, ctx: Context, bound: dict[str, Value],
                      scopes: frozenset[ScopeId], profile: str) -> Value:
        frame = Frame(fn.module, ctx, func=fn, closure=dict(fref.closure), scopes=scopes, profile=profile,
                      kind="function", cls=fn.cls)
        state = State(dict(bound))
        if isinstance(fn.node, ast.Lambda):
            result = self.eval(fn.node.body, state, frame)
        else:
            end = self.exec_block(fn.node.body, state, frame)
            result = frame.returns if end.dead else frame.returns.join(NONE)
        return TOP if fn.is_generator else result

    def _bind(self, fn: FunctionInfo, fref: FuncRef, args: list[Value], kwargs: dict[str, Value],
              star_unknown: bool) -> dict[str, Value]:
        bound: dict[str, Value] = {}
        positional = list(args)
        if fref.bound is not None:
            positional.insert(0, V(fref.bound))
        names = fn.positional
        for name, value in zip(names, positional, strict=False):
            bound[name] = value
        extra = positional[len(names):]
        if fn.vararg:
            bound[fn.vararg] = TOP if star_unknown else V(seq("tuple", extra))
        leftover = dict(kwargs)
        for name in [*names, *fn.kwonly]:
            if name in leftover and name not in bound:
                bound[name] = leftover.pop(name)
        defaults: dict[str, Value] = {}
        if fref.defaults:
            defaults.update(zip(names[len(names) - len(fref.defaults):], fref.defaults, strict=True))
        defaults.update(dict(fref.kw_defaults))
        for name in [*names, *fn.kwonly]:
            if name not in bound:
                bound[name] = TOP if star_unknown else defaults.get(name, TOP)
        if fn.kwarg:
            bound[fn.kwarg] = TOP if star_unknown else V(DictAtom(tuple(leftover.items())))
        return {name: _cap(value) for name, value in bound.items()}

    def instantiate(self, cls: ClassInfo, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                    st: State, fr: Frame, star_unknown: bool = False) -> Value:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0)
        instance = Instance(cls, fr.file, line, col, fr.ctx.id)
        self.instances.setdefault(cls, set()).add(instance)
        init = cls.lookup("__init__")
        if init is not None:
            for atom in init.atoms:
                if isinstance(atom, FuncRef):
                    bound = FuncRef(atom.fn, atom.closure, atom.defaults, atom.kw_defaults, instance)
                    self.call_function(bound, args, kwargs, node, fr, st=st, star_unknown=star_unknown)
        elif cls.dataclass_fields is not None:
            self._dataclass_init(cls, instance, args, kwargs, node, st, fr)
        post_init = cls.lookup("__post_init__")
        if post_init is not None and init is None and cls.dataclass_fields is not None:
            self.call(self._bind_class_attr(post_init, instance, node, st, fr), [], {}, node, st, fr)
        return V(instance)

    def _dataclass_init(self, cls: ClassInfo, instance: Instance, args: list[Value], kwargs: dict[str, Value],
                        node: ast.AST | None, st: State, fr: Frame) -> None:
        fields = [f for c in reversed(cls.mro()) for f in (c.dataclass_fields or [])]
        for i, (name, default) in enumerate(fields):
            if i < len(args):
                value = args[i]
            elif name in kwargs:
                value = kwargs[name]
            elif default is None:
                value = TOP
            elif isinstance(default, ast.Call) and _call_name(default) == "field":
                value = TOP
                for keyword in default.keywords:
                    if keyword.arg == "default":
                        value = self.eval(keyword.value, st.copy(), fr)
                    elif keyword.arg == "default_factory":
                        factory = self.eval(keyword.value, st.copy(), fr)
                        value = self.call(factory, [], {}, node, st, fr)
            else:
                value = cls.namespace.get(name, TOP)
            self.store_attribute(V(instance), name, value, fr)

    # --- builtins ------------------------------------------------------------------------------------------------

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                     st: State, fr: Frame) -> Value:
        if name == "range":
            return V(seq_of("list", TOP))
        if name == "enumerate" and args:
            items = _splice(args[0])
            if items is not None and not kwargs and len(args) == 1:
                return V(seq("list", [V(seq("tuple", (V(const(i)), item))) for i, item in enumerate(items)]))
            return V(seq_of("list", V(seq("tuple", (TOP, self.iter_element(args[0]))))))
        if name == "zip" and args:
            columns = [_splice(a) for a in args]
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

    def _super(self, st: State, fr: Frame) -> Value:
        if fr.func is None or fr.func.cls is None or not fr.func.positional:
            return TOP
        this = st.vars.get(fr.func.positional[0], TOP)
        atoms = [SuperRef(fr.func.cls, atom) for atom in this.atoms if isinstance(atom, Instance)]
        return Value(frozenset(atoms), this.top)

    # --- runtime_shim: functions and class methods ------------------------------------------------------------------

    def site(self, node: ast.AST, api: str, fr: Frame) -> Site:
        return Site(fr.file, node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                    node.end_col_offset or 0, api)  # type: ignore[attr-defined]

    def origin(self, node: ast.AST, fr: Frame, what: str = "") -> Origin:
        return Origin(fr.file, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), what)

    def record(self, site: Site, lifted: lift.Lifted, st: State, fr: Frame) -> Value:
        """Store the facts of one call and return its result (``BOTTOM``: it raises on every path)."""
        fact = self.facts.site(site, fr.ctx)
        fact.possibilities.update(lifted.possibilities)
        fact.unknown = fact.unknown or lifted.unknown
        for role, value in lifted.operands.items():
            fact.operands[role] = fact.operands[role].join(value) if role in fact.operands else value
        if not lifted.possibilities and not lifted.unknown:
            return TOP  # no tensor or device reached the call (None, a str ...): not a dispatch question
        if lifted.always_fails:
            st.dead = True  # the call raises on every path that reaches it
            return BOTTOM
        return _cap(lifted.results)

    def call_shim_function(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                           st: State, fr: Frame) -> Value:
        if name == "reveal_device":
            value = args[0] if args else kwargs.get("x", TOP)
            if node is not None:
                fact = self.facts.reveal(self.site(node, "reveal_device", fr), fr.ctx)
                fact.texts.add(reveal_text(value))
            return TOP
        if name in ("Device", "Tensor"):
            return TOP
        return TOP

    def call_method(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST | None, st: State, fr: Frame) -> Value:
        if node is None:
            return TOP
        if kind == "tensor":
            return self.tensor_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "device":
            return self.device_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "Device":
            return self.device_class_method(name, args, kwargs, node, st, fr)
        if kind == "Tensor":
            return self.tensor_class_method(name, args, kwargs, node, st, fr)
        if kind == "scope" and name == "complete":
            scopes = [a.scope for a in receiver.atoms if isinstance(a, ScopeAtom)]
            return Value(frozenset(GraphAtom(s) for s in scopes))
        if kind == "dict":
            return self._dict_method(name, receiver, args)
        return TOP

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

    def device_class_method(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value:
        spec = DEVICE_CTORS.get(name)
        if spec is not None:
            index: int | None = 0
            if spec.indexed:
                arg = args[0] if args else kwargs.get("index", V(const(0)))
                values = arg.consts()
                index = values[0] if values and len(values) == 1 and isinstance(values[0], int) else None
            dev = PlainDev(spec.backend, spec.sub, index)
            site = self.site(node, f"Device.{spec.backend.lower()}", fr)
            lifted = lift.device_create(dev, self.backends, self.origin(node, fr), f"Device.{name}")
            return self.record(site, lifted, st, fr)
        if name == "capture":
            capture = CaptureId(fr.file, node.lineno, node.col_offset, fr.ctx.id)  # type: ignore[attr-defined]
            return V(DeviceAtom(PlainDev("Capture", None, capture), False, None,
                                self.origin(node, fr, "Device.capture()")))
        return TOP  # Device.default(): depends on the environment

    def tensor_class_method(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value:
        creator = CREATORS.get(name)
        if creator is not None:
            device = args[creator.device_pos] if len(args) > creator.device_pos else kwargs.get("device")
            if device is None:
                return TOP  # Device.default()
            kinds = _created_kinds(creator, args, kwargs)
            site = self.site(node, f"Tensor.{name}", fr)
            if kinds is None:
                self.facts.site(site, fr.ctx).unknown = True
                return TOP
            lifted = lift.create(fr.profile, kinds, device, fr.scopes, self.origin(node, fr))
            return self.record(site, lifted, st, fr)
        if name == "from_inner":
            value = args[0] if args else kwargs.get("tensor", TOP)
            lifted = lift.autodiff(fr.profile, "from_inner", value, self.origin(node, fr))
            return self.record(self.site(node, "Tensor.from_inner", fr), lifted, st, fr)
        if name == "cat":
            tensors = args[0] if args else kwargs.get("tensors", TOP)
            return self._cat(tensors, node, st, fr)
        return TOP

    def _cat(self, tensors: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        site = self.site(node, "Tensor.cat", fr)
        lifted = lift.Lifted()
        lifted.unknown = tensors.top
        for atom in tensors.atoms:
            if isinstance(atom, SeqAtom) and atom.items:
                others = [(f"tensors[{i}]", item) for i, item in enumerate(atom.items[1:], 1)]
                part = lift.multi(fr.profile, "cat", atom.items[0], others, fr.scopes, self.origin(node, fr), "cat")
                _merge(lifted, part)
            elif isinstance(atom, SeqAtom) and atom.items is None and not atom.elem.is_bottom:
                # a list of unknown length: the first tensor and any other one are each one of the elements
                part = lift.multi(fr.profile, "cat", atom.elem, [("tensors[1]", atom.elem)], fr.scopes,
                                  self.origin(node, fr), "cat")
                _merge(lifted, part)
            else:
                lifted.unknown = True
        return self.record(site, lifted.finish(), st, fr)

    # --- runtime_shim: tensor methods ------------------------------------------------------------------------------

    def tensor_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                      st: State, fr: Frame) -> Value:
        origin = self.origin(node, fr)
        profile = fr.profile
        if name == "to_device":
            device = args[0] if args else kwargs.get("device", TOP)
            return self.record(self.site(node, "Tensor.to_device", fr),
                               lift.move(profile, receiver, device, fr.scopes, origin), st, fr)
        if name in BINARY or name == "mask_fill":
            spec = BINARY.get(name, MASK_FILL)
            other = args[0] if args else kwargs.get("other", kwargs.get("mask", TOP))
            fill_kinds = None
            if name == "mask_fill":
                fill = args[1] if len(args) > 1 else kwargs.get("value", TOP)
                fill_kinds = _scalar_kinds(fill) if fill.only(Const) else None
            return self.tensor_binary(spec, receiver, other, node, st, fr, reflected=False, fill_kinds=fill_kinds)
        if name in UNARY:
            lifted = lift.unary(profile, UNARY[name], receiver, fr.scopes, origin)
            return self.record(self.site(node, f"Tensor.{name}", fr), lifted, st, fr)
        if name == "mask_where":
            mask = args[0] if args else kwargs.get("mask", TOP)
            value = args[1] if len(args) > 1 else kwargs.get("value", TOP)
            lifted = lift.multi(profile, "input", receiver, [("mask", mask), ("value", value)], fr.scopes, origin,
                                "mask_where")
            return self.record(self.site(node, "Tensor.mask_where", fr), lifted, st, fr)
        if name == "grad_replace":
            gradient = args[1] if len(args) > 1 else kwargs.get("gradient", TOP)
            lifted = lift.grad_replace(profile, receiver, gradient, origin)
            return self.record(self.site(node, "Tensor.grad_replace", fr), lifted, st, fr)
        if name in AUTODIFF_METHODS:
            call = AUTODIFF_METHODS[name]
            strategies = None
            if call == "with_strategy":
                strategies = args[0] if args else kwargs.get("strategy", TOP)
            lifted = lift.autodiff(profile, call, receiver, origin, strategies)
            return self.record(self.site(node, f"Tensor.{call}", fr), lifted, st, fr)
        if name == "set_require_grad":
            flag = args[0] if args else kwargs.get("flag", TOP)
            lifted = lift.Lifted()
            truth = flag.truthiness()
            if True in truth or None in truth:
                _merge(lifted, lift.autodiff(profile, "require_grad", receiver, origin))
            if False in truth or None in truth:
                _merge(lifted, lift.autodiff(profile, "unrequire_grad", receiver, origin))
            return self.record(self.site(node, "Tensor.require_grad", fr), lifted.finish(), st, fr)
        if name == "is_require_grad":
            return Value(frozenset(const(t.cls is AF and t.role is not Role.UNTRACKED) for t in receiver.tensors()),
                         receiver.top)
        if name == "device":
            return Value(frozenset(t.reported_device() for t in receiver.tensors()), receiver.top)
        return TOP

    def tensor_binary(self, spec: BinarySpec, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
                      reflected: bool, fill_kinds: list[str] | None = None) -> Value:
        """A two-input op where either side may be a tensor or a Python scalar."""
        origin = self.origin(node, fr)
        lifted = lift.Lifted()
        lifted.unknown = left.top or right.top
        left_tensors = Value(frozenset(left.tensors()))
        right_tensors = Value(frozenset(right.tensors()))
        if left_tensors.atoms and right_tensors.atoms:
            _merge(lifted, lift.binary(fr.profile, spec, left_tensors, right_tensors, fr.scopes, origin,
                                       fill_kinds=fill_kinds))
        if spec.scalar and left_tensors.atoms and _scalar_kinds(right):
            _merge(lifted, lift.scalar_op(fr.profile, spec, left_tensors, _scalar_kinds(right), fr.scopes, origin))
        if reflected and spec.scalar and right_tensors.atoms and _scalar_kinds(left) and spec.name in (
                "add", "sub", "mul", "div"):
            _merge(lifted, lift.scalar_op(fr.profile, spec, right_tensors, _scalar_kinds(left), fr.scopes, origin))
        return self.record(self.site(node, f"Tensor.{spec.name}", fr), lifted.finish(), st, fr)

    # --- runtime_shim: device methods --------------------------------------------------------------------------------

    def device_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                      st: State, fr: Frame) -> Value:
        if name in DEVICE_CHECKED:
            lifted = lift.device_call(fr.profile, name, receiver, self.origin(node, fr))
            return self.record(self.site(node, f"Device.{name}", fr), lifted, st, fr)
        if name == "inner":
            return Value(frozenset(d.inner() for d in receiver.devices()), receiver.top)
        if name == "is_autodiff":
            return Value(frozenset(const(d.ad) for d in receiver.devices()), receiver.top)
        if name == "capture_scope":
            fn = args[0] if args else kwargs.get("fn", TOP)
            return self._capture_scope(receiver, fn, node, st, fr)
        return TOP

    def _capture_scope(self, receiver: Value, fn: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        out = TOP if receiver.top else BOTTOM
        for d in receiver.devices():
            if not d.dev.is_capture or d.ad:
                out = out.join(V(Const(CaptureError.INVALID_DEVICE, "CaptureError")))
                continue
            if lift.active_scope(fr.scopes, d.dev) is not None:
                out = out.join(V(Const(CaptureError.ALREADY_ACTIVE, "CaptureError")))
                continue
            assert isinstance(d.dev.index, CaptureId)
            scope = ScopeId(d.dev.index, fr.file, node.lineno, node.col_offset, fr.ctx.id)  # type: ignore
            result = TOP if fn.top else BOTTOM
            for atom in fn.atoms:
                if isinstance(atom, FuncRef):
                    result = result.join(self.call_function(atom, [V(ScopeAtom(scope))], {}, node, fr, st=st,
                                                            scopes=fr.scopes | {scope}))
                else:
                    result = result.join(TOP)
            none = Const(None, "NoneType")
            if none in result.atoms:
                result = Value(result.atoms - {none}, result.top).join(V(GraphAtom(scope)))
            out = out.join(result)
        return out


# --- helpers ----------------------------------------------------------------------------------------------------


class _NullFacts(FactStore):
    """Facts of a quiet evaluation (narrowing operands): discarded."""


def _merge(into: lift.Lifted, part: lift.Lifted) -> None:
    into.given(**part.operands)
    into.possibilities.extend(part.possibilities)
    into.results = into.results.join(part.results)
    into.unknown = into.unknown or part.unknown


def _receiver_kind(atom: Atom) -> str:
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
    return type(atom).__name__


def _scalar_kinds(value: Value) -> list[str]:
    """The kinds of the Python number possibilities of a value."""
    return sorted({scalar_kind(a.value) for a in value.atoms
                   if isinstance(a, Const) and isinstance(a.value, (int, float, bool))})


def _cap(value: Value) -> Value:
    """Widen a value that has grown too many possibilities, or nests too deeply."""
    if len(value.atoms) > MAX_ATOMS or value.depth > MAX_DEPTH:
        return TOP
    return value


def _force_top(state: State, widened: set[str]) -> None:
    for name in widened:
        if name in state.vars:
            state.vars[name] = TOP


def _widen(old: State, new: State, widened: set[str]) -> None:
    for name, value in new.vars.items():
        if old.vars.get(name) != value:
            widened.add(name)
            new.vars[name] = TOP


def _fold(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """Fold small constant arithmetic (``None``: too large, not a number or string, or it raises)."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        if fn is operator.pow and (abs(b) > 64 or abs(a) > 2**32):
            return None
        try:
            result = fn(a, b)
        except Exception:  # noqa: BLE001 - the program would fail here; the value is unknown
            return None
        if isinstance(result, int) and abs(result) > 2**63:
            return None
        return result if isinstance(result, numbers) else None
    if isinstance(a, str) and isinstance(b, str) and fn is operator.add and len(a) + len(b) <= 256:
        return a + b
    if isinstance(a, str) and isinstance(b, int) and fn is operator.mul and b >= 0 and len(a) * b <= 256:
        return a * b
    return None


def _nonempty(value: Value) -> bool:
    return value.only(SeqAtom) and all(a.items for a in value.atoms)  # type: ignore[attr-defined]


def _splice(value: Value) -> list[Value] | None:
    """The items of ``*value`` when it is one sequence of known length."""
    if not value.top and len(value.atoms) == 1:
        atom = next(iter(value.atoms))
        if isinstance(atom, SeqAtom) and atom.items is not None:
            return list(atom.items)
    return None


def _keep_walrus(st: State, inner: State, node: ast.AST) -> None:
    """A walrus inside a comprehension binds in the enclosing scope."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name) and sub.target.id in inner.vars:
            name = sub.target.id
            st.vars[name] = st.vars[name].join(inner.vars[name]) if name in st.vars else inner.vars[name]


def _is_none(value: Value) -> bool | None:
    if value.top:
        return None
    flags = {isinstance(a, Const) and a.value is None for a in value.atoms}
    return flags.pop() if len(flags) == 1 else None


def _not(flag: bool | None) -> bool | None:
    return None if flag is None else not flag


def _truth(value: Value) -> bool | None:
    truth = value.truthiness()
    return truth.pop() if len(truth) == 1 else None


def _compare_values(compare: Callable[[Any, Any], Any] | None, left: Value, right: Value) -> bool | None:
    """The outcome of ``left <op> right`` when every pair of possibilities agrees; ``None`` otherwise."""
    if compare is None or left.top or right.top or left.is_bottom or right.is_bottom:
        return None
    outcomes: set[bool] = set()
    for a in left.atoms:
        for b in right.atoms:
            outcome = _compare_atoms(compare, a, b)
            if outcome is None:
                return None
            outcomes.add(outcome)
            if len(outcomes) > 1:
                return None
    return outcomes.pop() if outcomes else None


def _compare_atoms(compare: Callable[[Any, Any], Any], a: Atom, b: Atom) -> bool | None:
    if isinstance(a, DeviceAtom) and isinstance(b, DeviceAtom):
        if compare not in (operator.eq, operator.ne):
            return None
        same = same_device(a.dev, b.dev)
        if same is None:
            return None
        return same if compare is operator.eq else not same
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return bool(compare(a.value, b.value))
        except Exception:  # noqa: BLE001
            return None
    if isinstance(b, SeqAtom) and isinstance(a, Const) and b.items is not None and compare in (
            _CMP_OPS[ast.In], _CMP_OPS[ast.NotIn]):
        values = []
        for item in b.items:
            consts = item.consts()
            if consts is None or len(consts) != 1:
                return None
            values.append(consts[0])
        try:
            return bool(compare(a.value, values))
        except Exception:  # noqa: BLE001
            return None
    if compare in (operator.is_, operator.is_not):
        a_none = isinstance(a, Const) and a.value is None
        b_none = isinstance(b, Const) and b.value is None
        if a_none and b_none:
            return compare is operator.is_
        if a_none or b_none:
            return compare is operator.is_not
    return None


def _and_bools(a: Value, b: Value) -> Value:
    if a == FALSE or b == FALSE:
        return FALSE
    if a == TRUE and b == TRUE:
        return TRUE
    return BOOL


def _as_load(target: ast.expr) -> ast.expr:
    """The load form of an augmented-assignment target."""
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(target.id, ast.Load()), target)
    if isinstance(target, ast.Attribute):
        return ast.copy_location(ast.Attribute(target.value, target.attr, ast.Load()), target)
    if isinstance(target, ast.Subscript):
        return ast.copy_location(ast.Subscript(target.value, target.slice, ast.Load()), target)
    return target


def _call_name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_dataclass_decorator(node: ast.expr) -> bool:
    return _call_name(node) == "dataclass"


def _setter_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_call_name(d) in ("setter", "deleter") for d in node.decorator_list)


def _scalar_kind(value: Any) -> str:
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"


def _created_kinds(creator: Any, args: list[Value], kwargs: dict[str, Value]) -> list[str] | None:
    """The kinds a creation call makes (``None``: they depend on data the analysis does not know)."""
    if creator.kind in ("float", "int", "bool"):
        return [creator.kind]
    if creator.kind == "value":
        value = args[creator.data_pos] if len(args) > creator.data_pos else kwargs.get("value", TOP)
        consts = value.consts()
        if consts is None or not all(isinstance(c, (bool, int, float)) for c in consts):
            return None
        return sorted({_scalar_kind(c) for c in consts})
    data = args[creator.data_pos] if len(args) > creator.data_pos else kwargs.get("data", TOP)
    return _data_kinds(data)


def _data_kinds(data: Value) -> list[str] | None:
    """The kind ``Tensor.from_data`` infers from (nested) Python lists of scalars, like numpy would."""
    kinds: set[str] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        if value.top:
            return None
        for atom in value.atoms:
            if isinstance(atom, SeqAtom):
                stack.extend(atom.items if atom.items is not None else (atom.elem,))
            elif isinstance(atom, Const) and isinstance(atom.value, (bool, int, float)):
                kinds.add(_scalar_kind(atom.value))
            else:
                return None
    if not kinds or "float" in kinds:
        return ["float"]  # numpy's float64 of Python floats becomes float32
    return ["int"] if "int" in kinds else ["bool"]


def _describe_args(fn: FunctionInfo, bound: dict[str, Value]) -> tuple[tuple[str, str], ...]:
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


__all__ = ["Engine", "FunctionInfo", "ClassInfo", "ModuleInfo", "State", "join_states"]
