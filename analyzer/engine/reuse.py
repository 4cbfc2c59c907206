"""Reuse across passes: a context whose inputs did not change keeps the previous pass's result and facts.

The engine repeats whole-program passes while instance attributes read in a pass change after the
read (:meth:`Engine.run`). Most calling contexts of a later pass see exactly what they saw before:
the same arguments and globals (their context key), the same heap values, the same module and
class attributes. Re-running them computes the same summary and the same facts, so a later pass
keeps them instead, and re-runs only the contexts that read a changed value, and their callers.

What a run of a context depended on is recorded as it runs (:class:`RunRecord`): the first value of
each heap key, module attribute and class attribute it read, its globals, and, in the order they
happened, the contexts it called (with the summary each returned), the module globals it stored,
the caller links it made and the nested functions it defined. Keeping a run first checks every
dependency, simulating the run's own stores in order (a callee may read what its caller stored),
then replays what a pass rebuilds: summaries, the stores, the functions analysed (so the sweep of
uncalled functions skips them), the nested functions defined (so the sweep finds them, in the
same order), the caller links (a context's first caller names it in messages), the heap keys read
(so a later change of one still makes the pass stale), and the run budget it stands for. A run
that loaded a module or ran inside a recursion (it got the approximation of a context in progress around
it) is never kept: its effect is not a function of the inputs recorded. A run that scanned every attribute of
an instance (``module.to(device)`` copies them) records which attributes it found, and is kept only if the
instance has the same ones. The context that recursion returns to is: it iterates to its fixpoint, which the same
inputs give again, and so are the runs around it.

Within a pass, a context's key holds its arguments and the module globals its own function reads,
not what its callees read: a summary is reused as long as every global read below it still holds
what that run read (checked only after a store changed a module global), else the call gets the
key's next *generation*, a new context. A global count in the key (the first design) made every call
after an early store a new context, which shifted whole passes of contexts off their previous keys.

A module's top-level run is kept the same way (:class:`ModuleRecord`): its reads, and in order the
modules it loaded (each a record of its own), the other modules' attributes it read, the contexts it
called and the globals it stored; keeping it restores the namespace it ended with and replays the
rest. Reads of a module that is loading in the same simulated chain of loads (its own namespace, or an
importer's in an import cycle) are not inputs: what it holds at that point follows from the statements
and the inputs checked before it. A module loading for real (a run that is not kept imports a kept
one) is read as it is now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..domain import TOP, FuncRef, Value
from ..facts import CallerLink
from .attr_flow import Effect
from .calls import global_names
from .dispatch_helpers import NullFacts
from .flow_state import stored
from .mixin import EngineMixin
from .program import ClassInfo, FunctionInfo, LoadState, ModuleInfo

#: what a recorded run did, in order (the kinds are strings: they name the events wherever records are kept)
EventKind = Literal["call", "store", "link", "def", "load", "read"]
Event = tuple[EventKind, Any, Any]


@dataclass(eq=False)
class RunRecord:
    """What one run of a context read, called, stored and defined, and what it returned."""

    ctx_id: int
    fn: FunctionInfo
    free_names: tuple[str, ...]
    globals_key: tuple
    bound_key: tuple | None  # the arguments, for a widened context (its key does not hold them)
    module_loads: int  # module loads when the run began (a run that loaded a module is not kept)
    reads: dict[Any, Value | None] = field(default_factory=dict)  # heap key -> first value read
    # (instance, the names the scan skips) -> the instance's attributes at its first scan
    scans: dict[tuple[Any, Any], tuple[str, ...]] = field(default_factory=dict)
    # ("module", module, name) / ("class", cls, name, after) -> first value read
    global_reads: dict[tuple, Value | None] = field(default_factory=dict)
    # in the order they happened: ("call", context, its summary), ("store", (module, name, strong), value),
    # ("link", context, caller link), ("def", function, reference)
    events: list[Event] = field(default_factory=list)
    stores_below: bool = False  # this run or one it called stored a module global
    tainted: bool = False
    summary: Value | None = None


@dataclass(eq=False)
class ModuleRecord:
    """What one top-level run of a module read, loaded, called and stored, and the namespace it ended with."""

    module: ModuleInfo
    reads: dict[Any, Value | None] = field(default_factory=dict)
    scans: dict[tuple[Any, Any], tuple[str, ...]] = field(default_factory=dict)
    global_reads: dict[tuple, Value | None] = field(default_factory=dict)
    # as RunRecord.events, and ("load", module, None) for a module it loaded, ("read", key, value) for another
    # module's attribute (key ("module", module, name)) or public names (key ("star", module): ``import *``),
    # in the order they happened (a module read is valid only after its load)
    events: list[Event] = field(default_factory=list)
    stores_below: bool = False
    tainted: bool = False
    namespace: dict[str, Value] | None = None  # at the end of the run (None: not finished)


@dataclass
class Simulation:
    """The module globals as a kept run would leave them, before it is replayed."""

    overlay: dict[tuple[int, str], Value] = field(default_factory=dict)
    visited: set[int] = field(default_factory=set)
    loading: set[int] = field(default_factory=set)  # modules whose kept load is being simulated
    loaded: dict[int, dict[str, Value]] = field(default_factory=dict)  # module -> namespace its kept load leaves

    def value(self, module: ModuleInfo, name: str) -> Value | None:
        found = self.overlay.get((id(module), name))
        if found is not None:
            return found
        namespace = self.loaded.get(id(module))
        return (namespace if namespace is not None else module.namespace).get(name)

    def ready(self, module: ModuleInfo) -> bool:
        """Would ``module`` be loaded at this point of the simulated pass?"""
        return module.state is not LoadState.NEW or id(module) in self.loaded

    def store(self, module: ModuleInfo, name: str, value: Value, strong: bool) -> None:
        self.overlay[(id(module), name)] = stored(self.value(module, name), value, strong)  # as apply_store


def _same(now: Value | None, seen: Value | None) -> bool:
    return now is seen or now == seen


class PassReuse(EngineMixin):
    """Recording runs, and keeping the valid ones in the next pass (mixed into the engine)."""

    keep_runs = True  # off: every pass runs everything (the reference the tests compare against)

    def init_reuse(self) -> None:
        self.records: dict[int, RunRecord] = {}  # context -> its last complete run
        # the runs in progress, innermost last (quiet runs excluded)
        self.recording: list[RunRecord | ModuleRecord] = []
        self.ran_this_pass: set[int] = set()
        self.kept_this_pass: set[int] = set()
        self._validity: dict[tuple[int, int], bool] = {}
        self.module_loads = 0
        self.module_records: dict[ModuleInfo, ModuleRecord] = {}
        self.modules_kept: set[str] = set()  # this pass: names of the modules whose top-level run was kept
        self._start_generations()

    def _start_generations(self) -> None:
        self.generations: dict[Any, int] = {}  # this pass: context key -> its newest generation (absent: 0)
        self.summary_versions: dict[int, int] = {}  # context -> module_stores when its summary was last current
        self._freshness: dict[tuple[int, int], bool] = {}

    @property
    def reuse_enabled(self) -> bool:
        # hover asks for every expression's value: run everything
        return self.keep_runs and self.fact_store.expressions is None

    def begin_pass(self) -> None:
        self._start_generations()
        self.ran_this_pass = set()
        self.kept_this_pass = set()
        self._validity = {}
        self.modules_kept = set()
        if self.reuse_enabled:
            module_contexts = [self.module_context(module).id for module in self.module_records]
            self.fact_store.index_contexts([*self.records.keys(), *module_contexts])
        else:
            self.records.clear()
            self.module_records.clear()
            self.fact_store.clear_flow_facts()

    def end_pass(self) -> None:
        if self.reuse_enabled:
            self.fact_store.drop_indexed()  # contexts neither run nor kept this pass

    # ------------------------------------------------------------------ recording

    def start_record(self, ctx_id: int, fn: FunctionInfo, fref: FuncRef, globals_key: tuple,
                     bound_key: tuple | None) -> RunRecord:
        if ctx_id not in self.ran_this_pass:
            self.ran_this_pass.add(ctx_id)
            self.fact_store.drop_context(ctx_id)  # the previous pass's facts of this context
        record = RunRecord(ctx_id, fn, tuple(global_names(fn, fref)), globals_key, bound_key, self.module_loads)
        self.recording.append(record)
        return record

    def finish_record(self, ctx_id: int, record: RunRecord, summary: Value | None) -> None:
        popped = self.recording.pop()
        assert popped is record
        if summary is None:
            return
        record.summary = summary
        record.tainted |= record.module_loads != self.module_loads
        self.records[ctx_id] = record

    def note_read(self, key: Any, value: Value | None) -> None:
        if self.recording:
            self.recording[-1].reads.setdefault(key, value)

    def note_cycle(self, head: int) -> None:
        """A call of ``head``, a context in progress, got its approximation so far: the runs started inside
        ``head``'s run saw a value that is not a function of their inputs, and are not kept. ``head`` itself
        iterates to its fixpoint (its calls of itself are checked as such: :meth:`_same_events`), and so do
        the runs around it."""
        for record in reversed(self.recording):
            if isinstance(record, RunRecord) and record.ctx_id == head:
                return
            record.tainted = True

    def note_heap_scan(self, owner: Any, skip: Callable[[str], bool] | None, found: list[tuple[str, Value]]) -> None:
        """The run read every attribute of ``owner`` but those ``skip`` names (``module.to(device)`` copies them):
        which keys it read depends on which the instance has, so those are an input too, with the value of
        each."""
        record = self.recording[-1]
        record.scans.setdefault((owner, skip), tuple(attr for attr, _value in found))
        reads = record.reads
        for attr, value in found:
            reads.setdefault((owner, attr), value)

    def _same_scans(self, scans: dict[tuple[Any, Any], tuple[str, ...]]) -> bool:
        owners = self.heap_owners
        return all(tuple(attr for attr in owners.get(owner, ()) if skip is None or not skip(attr)) == attrs
                   for (owner, skip), attrs in scans.items())

    def note_global_read(self, key: tuple, value: Value | None) -> None:
        if self.recording:
            record = self.recording[-1]
            if key not in record.global_reads:
                record.global_reads[key] = value
                if key[0] in ("module", "star") and isinstance(record, ModuleRecord):
                    record.events.append(("read", key, value))

    # ------------------------------------------------------------------ module runs

    def start_module_record(self, module: ModuleInfo) -> ModuleRecord | None:
        """``module``'s top level runs: its previous facts go, and what it reads and does is recorded."""
        self.fact_store.drop_context(self.module_context(module).id)
        if self.recording:
            self.recording[-1].events.append(("load", module, None))
        if not self.reuse_enabled or isinstance(self.facts, NullFacts):
            self.module_records.pop(module, None)
            return None
        record = ModuleRecord(module)
        self.recording.append(record)
        return record

    def finish_module_record(self, record: ModuleRecord | None) -> None:
        if record is None:
            return
        popped = self.recording.pop()
        assert popped is record
        record.namespace = dict(record.module.namespace)
        self.module_records[record.module] = record
        if self.recording:
            self.recording[-1].tainted |= record.tainted
            self.recording[-1].stores_below |= record.stores_below

    def keep_module(self, module: ModuleInfo) -> bool:
        """Keep the previous pass's top-level run of ``module`` if nothing it depended on changed."""
        if not self.reuse_enabled or module not in self.module_records or isinstance(self.facts, NullFacts):
            return False
        if not self._valid_module(module, Simulation(), set()):
            return False
        if self.recording:
            self.recording[-1].events.append(("load", module, None))
        self._keep_module(module)
        return True

    def _valid_module(self, module: ModuleInfo, sim: Simulation, visiting: set[int]) -> bool:
        record = self.module_records.get(module)
        if record is None or record.tainted or record.namespace is None or module.state is not LoadState.NEW \
                or id(module) in sim.loaded or id(module) in sim.loading:
            return False
        heap = self.heap
        if not all(_same(heap.get(key), seen) for key, seen in record.reads.items()):
            return False
        if not self._same_scans(record.scans) or not self._same_class_reads(record.global_reads):
            return False
        sim.loading.add(id(module))
        try:
            if not self._same_events(record.events, sim, visiting):
                return False
        finally:
            sim.loading.discard(id(module))
        sim.loaded[id(module)] = record.namespace
        for key in [k for k in sim.overlay if k[0] == id(module)]:
            del sim.overlay[key]  # stores during its run are in the namespace it ended with
        return True

    def _keep_module(self, module: ModuleInfo) -> None:
        """Replay a kept module run: what it called and stored, the modules it loaded, its namespace."""
        record = self.module_records[module]
        module.state = LoadState.LOADING
        self.module_loads += 1
        self.modules_kept.add(module.name)
        self.fact_store.keep_context(self.module_context(module).id)
        self.heap_reads.update(record.reads)
        self._replay_havoc_reads(record.global_reads)
        for kind, subject, detail in record.events:
            if kind == "load":
                self._keep_module(subject)
            else:
                self._replay(kind, subject, detail)
        assert record.namespace is not None  # a module run is kept only once finished (_valid_module)
        module.namespace = dict(record.namespace)
        module.state = LoadState.DONE

    def class_lookup(self, cls: ClassInfo, name: str, after: ClassInfo | None = None) -> Value | None:
        """``cls.lookup`` (class namespaces are rebuilt each pass: a kept run must have seen the same). An
        attribute stored on the class from outside its body (``cls.__init__ = wrapper`` in a decorator) is
        unknown: where the store happens against the reads, the analysis does not follow."""
        self.class_names_read.add(name)
        if self.class_stores and any((c, name) in self.class_stores for c in cls.mro()):
            return TOP
        found = cls.lookup(name, after)
        if self.recording:
            self.recording[-1].global_reads.setdefault(("class", cls, name, after), found)
        return found

    def note_store(self, module: ModuleInfo, name: str, value: Value, strong: bool) -> None:
        if self.recording:
            record = self.recording[-1]
            record.events.append(("store", (module, name, strong), value))
            record.stores_below = True

    def note_callee(self, ctx_id: int, summary: Value) -> None:
        if self.recording:
            record = self.recording[-1]
            # (with what the call left in its arguments' attributes, which the caller's reads after it see)
            record.events.append(("call", ctx_id, (summary, self.attr_effects.get(ctx_id))))
            callee = self.records.get(ctx_id)
            if callee is not None:
                record.tainted |= callee.tainted
                record.stores_below |= callee.stores_below

    def note_link(self, ctx_id: int, link: CallerLink) -> None:
        if self.recording:
            self.recording[-1].events.append(("link", ctx_id, link))

    def note_defined(self, fn: FunctionInfo, fref: FuncRef) -> None:
        if self.recording:
            self.recording[-1].events.append(("def", fn, fref))

    # ------------------------------------------------------------------ generations

    def current_generation(self, key: tuple, ctx_id: int) -> int:
        """The context a call with ``key`` uses now (``ctx_id``: its first generation).

        A context's key holds its arguments and the module globals its function reads, not what its callees
        read. When a module global has changed since its summary was computed (``module_stores`` moved) and a
        run now would read a different value somewhere below (:meth:`_fresh`), the call gets the key's next
        generation: a new context, run with what the globals hold now. Only the contexts that read a changed
        global move on, so a pass that changes one global early does not give every later call a new context
        (the next pass could keep none of them)."""
        generation = self.generations.get(key, 0)
        if generation:
            ctx_id = self.context_id((*key, generation))
        while ctx_id in self.summaries and not self._summary_current(ctx_id):
            generation += 1
            self.generations[key] = generation
            ctx_id = self.context_id((*key, generation))
        return ctx_id

    def set_summary(self, ctx_id: int, summary: Value) -> None:
        self.summaries[ctx_id] = summary
        self.summary_versions[ctx_id] = self.module_stores

    def _summary_current(self, ctx_id: int) -> bool:
        version = self.module_stores
        if self.summary_versions.get(ctx_id) == version:
            return True
        if not self._fresh(ctx_id, set()):
            return False
        self.summary_versions[ctx_id] = version
        return True

    def _fresh(self, ctx_id: int, visiting: set[int]) -> bool:
        """Would a run of ``ctx_id`` and of everything it called read the module globals its record says they
        read, as the namespaces are now? (Instance attributes are not checked: a change after a read makes the
        pass stale instead.)"""
        memo = (ctx_id, self.module_stores)
        found = self._freshness.get(memo)
        if found is not None:
            return found
        record = self.records.get(ctx_id)
        if record is None or record.tainted or ctx_id in visiting:
            return False
        visiting.add(ctx_id)
        try:
            fresh = self._fresh_record(record, visiting)
        finally:
            visiting.discard(ctx_id)
        self._freshness[memo] = fresh
        return fresh

    def _fresh_record(self, record: RunRecord, visiting: set[int]) -> bool:
        namespace = record.fn.module.namespace
        if tuple(namespace.get(name, TOP) for name in record.free_names) != record.globals_key:
            return False
        for key, seen in record.global_reads.items():
            if key[0] == "module" and not _same(key[1].namespace.get(key[2]), seen):
                return False
            if key[0] == "star" and public_names(key[1].namespace) != seen:
                return False
        return all(self._fresh(subject, visiting) for kind, subject, _detail in record.events
                   if kind == "call" and subject != record.ctx_id)

    # ------------------------------------------------------------------ keeping

    def keep_previous(self, ctx_id: int, bound_key: tuple | None) -> bool:
        """Keep the previous pass's run of ``ctx_id`` if nothing it depended on changed (its summary, facts)."""
        if not self.reuse_enabled or ctx_id in self.ran_this_pass:
            return False
        record = self.records.get(ctx_id)
        if record is None or (record.bound_key is not None and record.bound_key != bound_key):
            return False
        if not self._valid(ctx_id, Simulation(), set()):
            return False
        self._keep(ctx_id)
        return True

    def _valid(self, ctx_id: int, sim: Simulation, visiting: set[int]) -> bool:
        """Would a run of ``ctx_id`` now compute what its record says? ``sim`` advances past its stores."""
        record = self.records.get(ctx_id)
        if record is None or record.tainted or record.summary is None or ctx_id in visiting:
            return False
        memo = None if record.stores_below or sim.overlay or sim.loading or sim.loaded else (ctx_id, self.module_stores)
        if memo is not None and memo in self._validity:
            return self._validity[memo]
        visiting.add(ctx_id)
        sim.visited.add(ctx_id)
        try:
            valid = self._same_inputs(record, sim) and self._same_events(record.events, sim, visiting, ctx_id)
        finally:
            visiting.discard(ctx_id)
        if memo is not None:
            self._validity[memo] = valid
        return valid

    def _same_inputs(self, record: RunRecord, sim: Simulation) -> bool:
        module = record.fn.module
        # called from its module's top level (a kept load), the namespace so far follows from the inputs checked
        if id(module) not in sim.loading and \
                tuple(_or_top(sim.value(module, name)) for name in record.free_names) != record.globals_key:
            return False
        heap = self.heap
        if not all(_same(heap.get(key), seen) for key, seen in record.reads.items()):
            return False
        if not self._same_scans(record.scans):
            return False
        for key, seen in record.global_reads.items():
            if key[0] in ("module", "star") and not self._same_module_read(key, seen, sim):
                return False
        return self._same_class_reads(record.global_reads)

    @staticmethod
    def _same_module_read(key: tuple, seen: Any, sim: Simulation) -> bool:
        """("module", module, name): one attribute; ("star", module): its public names (``import *``)."""
        read_module = key[1]
        if id(read_module) in sim.loading:
            return True  # what it holds at this point follows from what was checked before
        if not sim.ready(read_module):
            return False  # a run now would load the module
        if key[0] == "module":
            return _same(sim.value(read_module, key[2]), seen)
        namespace = sim.loaded.get(id(read_module), read_module.namespace)
        overlaid = {name: value for (module_id, name), value in sim.overlay.items() if module_id == id(read_module)}
        return public_names({**namespace, **overlaid}) == seen

    def _same_class_reads(self, global_reads: dict[tuple, Value | None]) -> bool:
        """Class attributes and skipped functions' assignments as a run saw them."""
        for key, seen in global_reads.items():
            if key[0] == "havoc":
                if self.havocked(key[1], key[2]) != (seen is not None):
                    return False  # a skipped function's assignments now (or no longer) reach this read
            elif key[0] == "class" and not _same(key[1].lookup(key[2], key[3]), seen):
                return False
        return True

    def _same_events(self, events: list[Event], sim: Simulation, visiting: set[int],
                     own: int | None = None) -> bool:
        """Would a run now do what these recorded events did, in order (``sim`` advances past its stores)?
        A call of the run's own context (``own``: recursion) returned the approximation of that round of its
        fixpoint iteration, which the same inputs give again."""
        for kind, subject, detail in events:
            if kind == "call":
                if subject != own and not self._same_call(subject, detail, sim, visiting):
                    return False
            elif kind == "store":
                module, name, strong = subject
                sim.store(module, name, detail, strong)
            elif kind == "read":  # (module runs only)
                if not self._same_module_read(subject, detail, sim):
                    return False
            elif kind == "load" and not self._valid_module(subject, sim, visiting):
                return False  # (a function run that loads a module is never kept)
        return True

    def _same_call(self, ctx_id: int, detail: tuple[Value, Effect | None], sim: Simulation,
                   visiting: set[int]) -> bool:
        """Would the call of ``ctx_id`` a record made return its summary now (its run valid, or already done),
        leaving the same attributes in its arguments (its effect is its last run's, which a kept run replays)?"""
        summary, effect = detail
        if self.attr_effects.get(ctx_id) != effect:
            return False
        if ctx_id in self.ran_this_pass or ctx_id in self.kept_this_pass or ctx_id in sim.visited:
            now = self.summaries.get(ctx_id) if ctx_id not in sim.visited else self.records[ctx_id].summary
            return now is not None and _same(now, summary)
        callee = self.records.get(ctx_id)
        return callee is not None and _same(callee.summary, summary) and self._valid(ctx_id, sim, visiting)

    def _keep(self, ctx_id: int) -> None:
        """Replay what a pass rebuilds for a kept context and every context it called, in the order it happened."""
        if ctx_id in self.kept_this_pass or ctx_id in self.ran_this_pass:
            return
        self.kept_this_pass.add(ctx_id)
        self.function_runs += 1  # it counts against the pass's budget as the run it stands for
        self.fact_store.keep_context(ctx_id)
        record = self.records[ctx_id]
        assert record.summary is not None  # a run is kept only once it returned (_valid)
        self.set_summary(ctx_id, record.summary)
        self.analyzed.add(record.fn)
        self.heap_reads.update(record.reads)
        self._replay_havoc_reads(record.global_reads)
        for kind, subject, detail in record.events:
            self._replay(kind, subject, detail)

    def _replay(self, kind: EventKind, subject: Any, detail: Any) -> None:
        if kind == "call":
            self._keep(subject)
        elif kind == "store":
            module, name, strong = subject
            self.apply_store(module, name, detail, strong)
        elif kind == "link":
            self.contexts[subject].add_caller(detail)
        elif kind == "def":
            self.defined.setdefault(subject, detail)

    def _replay_havoc_reads(self, global_reads: dict[tuple, Value | None]) -> None:
        """A kept run's reads of names skipped functions may assign: a later havoc of one makes the pass stale."""
        for key, seen in global_reads.items():
            if key[0] == "havoc" and seen is None:
                self.unhavocked_reads.setdefault(key[2], set()).add(key[1])


def public_names(namespace: dict[str, Value]) -> dict[str, Value]:
    """What ``from module import *`` copies."""
    return {name: value for name, value in namespace.items() if not name.startswith("_")}


def _or_top(value: Value | None) -> Value:
    return TOP if value is None else value
