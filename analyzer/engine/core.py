"""The engine: whole-program driver (passes while the heap grows, uncalled functions) and calling contexts."""

from __future__ import annotations

import ast
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from runtime_shim.semantics import DEFAULT_PROFILE

from ..budget import active as active_budget
from ..choices import for_heap, lasting_tags, restricted, tagged
from ..domain import FuncRef, Instance, Value
from ..facts import Context, FactStore
from ..frontend import SourceFile
from ..imports import Resolver, is_shim_module
from ..models.registry import default_models
from ..tree_walk import store_targets
from .assignment import Assignment
from .attr_flow import Effect
from .attributes import Attributes
from .builtins import Builtins
from .calls import Calls
from .changes import PassChanges
from .control_flow import ControlFlow
from .definitions import Definitions
from .demand import DemandSweep, target_writes
from .expressions import Expressions
from .flow_state import Frame, FrameKind
from .instances import Instances
from .limits import MAX_PASSES, MIN_RUN_BUDGET, RUNS_PER_FUNCTION
from .model_hooks import ModelHooks
from .modules import ModuleLoading
from .narrowing import Narrowing
from .program import ClassInfo, FunctionInfo, FunctionKind, LoadState, ModuleInfo, stores_after
from .relational import Relational
from .reuse import PassReuse
from .shim_calls import ShimCalls
from .statements import Statements
from .sweep_groups import sweep_receivers

if TYPE_CHECKING:
    from ..models.base import Assumption, LibraryModel

# ``DEVICELINT_TRACE_PASSES=1``: each engine pass prints its time and how many contexts it ran and kept
TRACE_PASSES_ENV = "DEVICELINT_TRACE_PASSES"


class WrittenElsewhere:
    """The attribute names some function other than ``owner`` assigns (a membership test: materialising the
    set once per calling function is quadratic in a large project's functions and attribute names)."""

    __slots__ = ("owner", "writers")

    def __init__(self, writers: dict[str, set[tuple[str, int, int]]], owner: tuple[str, int, int] | None) -> None:
        self.writers = writers
        self.owner = owner

    def __contains__(self, attr: object) -> bool:
        funcs = self.writers.get(attr)  # type: ignore[call-overload]
        return funcs is not None and (len(funcs) > 1 or self.owner not in funcs)


class Engine(
    ModuleLoading, Statements, ControlFlow, Definitions, Assignment, Narrowing,
    Expressions, Attributes, Calls, Instances, Builtins, ShimCalls, ModelHooks, PassReuse, DemandSweep, Relational,
):
    """Whole-program abstract interpretation of the relevant files of one project."""

    def __init__(self, sources: list[SourceFile], facts: FactStore, profile: str = DEFAULT_PROFILE,
                 backends: frozenset[str] | None = None,
                 project_modules: set[str] | frozenset[str] | None = None,
                 assumptions: Mapping[Assumption[Any], object] | None = None,
                 models: Sequence[type[LibraryModel]] | None = None) -> None:
        self.facts = facts
        self.budget = active_budget()  # the component's work budget (statements, time, memory)
        self.fact_store = facts  # self.facts is swapped for a quiet evaluation; this one is not
        # the world analysed (:mod:`.worlds`): the models' keys it fixes (``LibraryModel.assumption``)
        self.assumptions: dict[Assumption[Any], object] = dict(assumptions or {})
        # analyses of a function in a new context per pass: bounded by the code's size (see limits.py)
        self.function_runs = 0
        self.run_budget = RUNS_PER_FUNCTION * sum(s.data.count(b"def ") + s.data.count(b"lambda") for s in sources) \
            + MIN_RUN_BUDGET
        self.profile = profile
        self.backends = backends
        self.modules: list[ModuleInfo] = []
        self.by_name: dict[str, list[ModuleInfo]] = {}
        for source in sources:
            if source.tree is not None and not is_shim_module(source.module):
                module = ModuleInfo(source)
                self.modules.append(module)
                self.by_name.setdefault(module.name, []).append(module)
        known = project_modules if isinstance(project_modules, frozenset) else frozenset(project_modules or ())
        if not known.issuperset(self.by_name):
            known = known.union(self.by_name)
        self.resolver = Resolver(known)
        self.functions: dict[int, FunctionInfo] = {}
        self.classes: dict[int, ClassInfo] = {}
        self.ctx_ids: dict[Any, int] = {}
        self.contexts: dict[int, Context] = {}
        self.contexts_per_function: dict[FunctionInfo, int] = {}
        self.summaries: dict[int, Value] = {}
        # context -> the library modes its run leaves changed in its caller (kept across passes with its record)
        self.mode_effects: dict[int, dict[str, Value | None]] = {}
        # context -> what its run leaves in its parameters' attributes (:mod:`.attr_flow`; kept with its record)
        self.attr_effects: dict[int, Effect] = {}
        self.attrs_read: dict[tuple[int, str], frozenset[str] | None] = {}  # (function, parameter) -> attributes
        self.in_progress: dict[int, Value] = {}  # context -> the current approximation of its result
        self.recursive_hits: set[int] = set()
        self.active_functions: dict[FunctionInfo, int] = {}
        self.depth = 0
        # ``try`` bodies with handlers (and suppressing ``with`` bodies) in progress, in this activation or a
        # caller's: a call that fails on every path inside one ends the path (the program goes on in the handler)
        self.catching = 0
        self.heap: dict[tuple[Instance, str], Value] = {}
        self.heap_owners: dict[Any, list[str]] = {}  # owner -> its keys' attribute names (heap_set keeps it)
        self.heap_reads: set = set()  # heap keys read in this pass
        self.superseded_names: set[str] = set()  # attributes whose object changed in place somewhere (attributes.py)
        self.module_stores = 0  # stores that changed a module global (reused summaries are checked when it moved)
        # every change a later evaluation could read, and whether a read of this pass went stale
        self.changes = PassChanges()
        self.class_stores: set[tuple[ClassInfo, str]] = set()  # attributes stored on a class outside its body
        self.class_names_read: set[str] = set()  # attribute names looked up on classes
        self.defined: dict[FunctionInfo, FuncRef] = {}
        self._late_names: dict[tuple[int, int], frozenset[str]] = {}  # (enclosing def, nested def) -> names
        self._loop_reads: dict[int, frozenset[str]] = {}  # loop node -> names its body may read first
        self.unrolled_runs = 1  # how many times the loops being unrolled run their innermost body (MAX_UNROLLED_RUNS)
        self._counter_stores: dict[int, bool] = {}  # loop node -> it stores at the index it counts
        self._shared_elements: dict[int, tuple[str, str] | None] = {}  # loop node -> (list, element) it changes
        self._own_stores: dict[int, list[tuple[int, str]]] = {}  # enclosing def -> (line, name) it stores
        self.analyzed: set[FunctionInfo] = set()
        self.instances: dict[ClassInfo, set[Instance]] = {}
        # attribute name -> the functions (file, line, column of the ``def``) with a statement that assigns it
        self.attr_writers: dict[str, set[tuple[str, int, int]]] = {}
        # the library models (None: the registered ones), asked at the hooks of :class:`ModelHooks`
        self.models: list[LibraryModel] = [model(self) for model in (default_models() if models is None else models)]
        self.index_hooks()
        self.init_reuse()
        self.init_demand(len(sources))
        self.index_writes()
        self.sweeping = False  # in the sweep of uncalled functions (or what they call)
        # (an attribute just read, the ways its object's notes keep for each instance): see ``expr_Attribute``
        self.last_receiver: tuple[ast.Attribute, dict] | None = None
        self.instantiated_early: set[ClassInfo] = set()  # classes instantiated outside the sweep (any pass)
        # class -> ((heap changes, instances) when grouped, the receivers its uncalled methods are swept with)
        self._receivers_kept: dict[ClassInfo, tuple[tuple[int, int], list[Value]]] = {}

    def run(self) -> None:
        """Analyse every module, then every function nothing called; repeat while the heap grows."""
        trace = os.environ.get(TRACE_PASSES_ENV) == "1"
        for number in range(1, MAX_PASSES + 1):
            started = time.perf_counter()
            before = dict(self.heap)
            self.begin_demand_pass()
            self.begin_pass()  # facts: kept for the contexts this pass will not need to run again
            self.summaries.clear()
            self.analyzed.clear()
            self.defined.clear()
            for ctx in self.contexts.values():
                ctx.clear_callers()
            self.module_stores = 0
            self.function_runs = 0
            self.heap_reads.clear()
            for module in self.modules:
                module.state = LoadState.NEW
                module.namespace = {}
            for module in self.modules:
                self.load_module(module)
            loaded = time.perf_counter()
            self._sweep_uncalled()
            self.end_pass()
            if trace:
                print(f"devicelint: pass {number} over {len(self.modules)} modules: "
                      f"{(time.perf_counter() - started) * 1000:.1f} ms "
                      f"(module level {(loaded - started) * 1000:.1f}), "
                      f"{self.skipped_uncalled} uncalled skipped, "
                      f"{len(self.ran_this_pass)} contexts run, {len(self.kept_this_pass)} kept, "
                      f"{len(self.modules_kept)} modules kept", file=sys.stderr)
            if (self.heap == before and not self.changes.havoc_grew) or not self.changes.stale:
                break  # no attribute was read before it changed: another pass would compute the same
        spans: dict[str, set[tuple[int, int]]] = {}
        for fn in self.functions.values():
            spans.setdefault(fn.module.file, set()).add((fn.node.lineno, fn.node.end_lineno or fn.node.lineno))
        self.fact_store.function_spans = {file: sorted(found) for file, found in spans.items()}

    def release(self) -> None:
        """Drop the program model once the facts are out.

        Module and class namespaces hold functions whose info points back at its module and class: without
        this the whole model (the trees with it) waits in reference cycles for the cyclic collector, whose
        pass over it is the tail of an editor's latency (the language server analyses on every edit)."""
        for module in self.modules:
            module.namespace = {}
        for cls in self.classes.values():
            cls.namespace = {}
            cls.setters = {}
        for table in (self.heap, self.heap_owners, self.summaries, self.mode_effects, self.attr_effects,
                      self.attrs_read, self.records,
                      self.module_records, self.instances, self.defined, self.functions,
                      self.classes, self.ctx_ids, self.in_progress, self.active_functions):
            table.clear()

    def _sweep_uncalled(self) -> None:
        """Functions and methods no analysed code called: analyse them with unknown arguments."""
        self.sweeping = True
        try:
            self._sweep_defined()
        finally:
            self.sweeping = False

    def _sweep_defined(self) -> None:
        progress = True
        while progress:
            progress = False
            pending = [(fn, fref) for fn, fref in self.defined.items() if fn not in self.analyzed]
            for fn, _fref in pending:
                # what the skipped ones may change first: the analysed ones then read it unknown from the start
                # (not stale reads that make the next pass run them again)
                if not self.sweep_worthy(fn, self.instantiated_early) and not self.worth_analyzing_instead(fn) \
                        and self.model_entry(fn) is None:
                    self.analyzed.add(fn)
                    self.skip_uncalled(fn)
            for fn, fref in pending:
                if fn in self.analyzed:
                    continue
                progress = True
                self.analyzed.add(fn)
                receivers: list[list[Value]] = [[]]
                bound = fref.bound
                if fn.cls is not None and fn.kind in (FunctionKind.FUNCTION, FunctionKind.PROPERTY) and bound is None \
                        and not self._constructs_its_instances(fn):
                    # one context per instance, or per group of instances placed alike: attributes read
                    # together come from one object (a join would pair one object's weights with another's)
                    receivers = [[receiver] for receiver in self._sweep_receivers(fn.cls)]
                module_ctx = self.module_context(fn.module)
                frame = Frame(fn.module, module_ctx, kind=FrameKind.MODULE, profile=self.profile)
                # called by a framework: as it calls it, from outside any ``with torch.device`` (its default modes)
                for model in self.models:
                    framework = model.entry_calls(fn, receivers, frame)
                    if framework is not None:
                        caller = model.entry_caller(fn)
                        for args, kwargs in framework:
                            self.call_function(fref, args, kwargs, None, frame, entry=caller)
                        break
                else:
                    for args in receivers:
                        self.call_function(fref, args, {}, None, frame, uncalled=True, star_unknown=True)

    def _sweep_receivers(self, cls: ClassInfo) -> list[Value]:
        """:func:`sweep_receivers` of ``cls``'s instances, kept while neither the heap nor the instances changed:
        a class's methods are swept one after another, and most of them store nothing (grouping a class of many
        instances by placement walks every instance's attributes)."""
        instances = self.instances.get(cls) or ()
        stamp = (self.changes.count, len(instances))
        kept = self._receivers_kept.get(cls)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        found = sweep_receivers(instances, self._placed_attributes, _instance_order)
        self._receivers_kept[cls] = (stamp, found)
        return found

    def _constructs_its_instances(self, fn: FunctionInfo) -> bool:
        """``fn`` is the ``__init__`` that made every instance of its class the analysis holds: each was made by a
        class call that ran it (or copied or moved from one that was), so running it again on one of them (an
        earlier pass's instance, or a module's moved copy, before this pass's call reaches the class) would
        re-initialise an object no run re-initialises. Swept on an unknown receiver instead."""
        if fn.name != "__init__" or fn.cls is None:
            return False
        return not (self.class_stores and any((c, "__init__") in self.class_stores for c in fn.cls.mro()))

    def index_writes(self) -> None:
        """Which functions assign ``x.attr`` for each attribute name (to invalidate overlays on calls): found
        by the demand sweep's scan of every module where it sweeps on demand (it walks the same statements),
        by a walk of the statements alone elsewhere (a quarter of the scan's time on a program)."""
        if self.demand_sweep:
            self.scan_modules(self.modules, self.attr_writers)
        else:
            self._index_attribute_writes()

    def _index_attribute_writes(self) -> None:
        """Which functions assign ``x.attr`` for each attribute name (to invalidate overlays on calls).

        Only statements can store to an attribute, so only statement lists are walked (a tenth of
        the nodes): assignment, loop and ``with`` targets."""
        for module in self.modules:
            tree = module.source.tree
            if tree is None:
                continue
            stack: list[tuple[ast.stmt, tuple[str, int, int] | None]] = [(stmt, None) for stmt in tree.body]
            while stack:
                node, owner = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    owner = (module.file, node.lineno, node.col_offset)
                elif owner is not None:
                    for write in target_writes(store_targets(node)):
                        if isinstance(write, ast.Attribute):
                            self.attr_writers.setdefault(write.attr, set()).add(owner)
                for name in _BLOCKS:
                    block = getattr(node, name, None)
                    if block:
                        for child in block:
                            if isinstance(child, ast.stmt):
                                stack.append((child, owner))
                            else:  # an except handler or a match case: its body
                                stack.extend((stmt, owner) for stmt in child.body)

    def _attrs_written_elsewhere(self, fr: Frame) -> WrittenElsewhere:
        """Attribute names some function other than the caller assigns: a call may change them."""
        node = fr.func.node if fr.func is not None else None
        return WrittenElsewhere(self.attr_writers, (fr.func.module.file, node.lineno, node.col_offset)
                                if fr.func is not None and node is not None else None)

    def _rebound_later(self, enclosing: ast.AST,
                       inner: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
        """The names ``enclosing`` binds textually after ``inner``: a closure reads a variable when it runs, so
        a later rebinding may be what it sees (in a loop the value at the def is already the join over the
        iterations). Each enclosing function's own-scope stores are collected once, not once per nested
        ``def``."""
        key = (id(enclosing), id(inner))
        found = self._late_names.get(key)
        if found is None:
            found = self._late_names[key] = stores_after(enclosing, inner.end_lineno or inner.lineno,
                                                         self._own_stores)
        return found

    def heap_get(self, key: Any) -> Value | None:
        """Read the heap (remembered: a later change of this key makes the pass stale)."""
        self.heap_reads.add(key)
        value = self.heap.get(key)
        self.note_read(key, value)
        if value is not None and self.program_ways:  # (read on one way of a choice: that way's value)
            for choice, way in self.program_ways:
                value = restricted(value, choice, way)
        return value

    def heap_set(self, key: Any, value: Value) -> None:
        if self.program_ways:  # (stored on one way of a choice: the value is that way's)
            value = tagged(value, lasting_tags(self.program_ways))  # (as the heap's own: contradictions seen)
        value = for_heap(value)  # an attribute outlives the activation whose choices tagged it
        old = self.heap.get(key)
        if old != value:
            if key in self.heap_reads:
                self.changes.read_went_stale()
            if old is None:
                self.heap_owners.setdefault(key[0], []).append(key[1])
            self.heap[key] = value
            self.changes.changed()

    def heap_attributes(self, owner: Any, skip: Callable[[str], bool] | None = None) -> list[tuple[str, Value]]:
        """Every heap attribute of ``owner`` (an instance's, for the scans of a module's whole state: a move,
        a freeze, its parameters) but those ``skip`` names (notes a model keeps on the object), without a walk
        over the whole heap. The run records which attributes it found and what each held (kept in a later
        pass only if the instance has the same ones)."""
        heap = self.heap
        attrs = [attr for attr in self.heap_owners.get(owner, ()) if skip is None or not skip(attr)]
        found = [(attr, heap[(owner, attr)]) for attr in attrs]
        if self.recording:
            self.note_heap_scan(owner, skip, found)
        return found

    def _placed_attributes(self, instance: Instance) -> list[tuple[str, Value]]:
        """An instance's heap attributes as they are now, for grouping it with others alike (a grouping, not a
        read of the program: neither remembered for staleness nor recorded)."""
        heap = self.heap
        return [(attr, heap[(instance, attr)]) for attr in self.heap_owners.get(instance, ())]

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


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # statement lists (handlers, cases hold bodies)


def _instance_order(instance: Instance) -> tuple:
    return (instance.file, instance.line, instance.col, instance.ctx)
