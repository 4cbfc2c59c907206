"""Calls: dispatch on the callee, and project functions summarised per calling context (recursion bounded)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..budget import FunctionOverBudget
from ..choices import consistent, has_tags, stripped, tagged, tags_of
from ..domain import (
    BOTTOM,
    NONE,
    TOP,
    Atom,
    BoundShim,
    BuiltinRef,
    ClassRef,
    Const,
    DictAtom,
    FuncRef,
    Instance,
    PartialRef,
    ScopeId,
    SeqAtom,
    ShimRef,
    V,
    Value,
    const,
    join_all,
    map_elements,
    seq,
    seq_of,
    with_entry,
    without_entry,
)
from ..facts import CallerLink, Context
from ..models.base import UNHANDLED
from .dispatch_helpers import NullFacts, argument_origins, describe_args, receiver_kind
from .flow_state import (
    Frame,
    FrameKind,
    Overlay,
    Slot,
    State,
    completed_scopes,
    is_item_overlay,
    mode_effect,
    widen_if_large,
)
from .limits import MAX_CALL_DEPTH, MAX_CONTEXTS_PER_FUNCTION, MAX_DEPTH, MAX_RECURSION_ROUNDS
from .mixin import EngineMixin
from .program import FunctionInfo
from .python_values import names_library_function, splice_items, splice_keywords, zip_columns
from .relational import helper_answer

#: Methods that change the list or dict they are called on, which the analysis follows.
LIST_MUTATORS = frozenset({"append", "extend", "insert", "add", "pop"})
DICT_MUTATORS = frozenset({"pop", "update", "setdefault"})
CONTAINER_MUTATORS = LIST_MUTATORS | DICT_MUTATORS


def _dict_mutation(container: Value, attr: str, values: list[Value], keywords: bool) -> tuple[Value, Value]:
    """``d.pop(k[, default])``, ``d.update(other)``, ``d.setdefault(k[, v])`` on dicts with known keys: the result
    and the dict after (``pop`` of a key not listed in a dict whose other keys are not known: one of their
    values). Anything less known leaves the dict unknown (its old entries may be gone or replaced)."""
    result, updated = BOTTOM, BOTTOM
    key = values[0].consts() if values and attr != "update" else None
    for atom in container.atoms:
        assert isinstance(atom, DictAtom)
        if attr == "update":
            other = next(iter(values[0].atoms)) if len(values) == 1 and len(values[0].atoms) == 1 \
                and not values[0].top else None
            if keywords or not isinstance(other, DictAtom) or other.rest is not None:
                return TOP, TOP
            merged = atom
            for k, v in other.items:
                merged = with_entry(merged, k, v)
            result, updated = NONE, updated.join(V(merged))
            continue
        if key is None or len(key) != 1 or len(values) > 2 or keywords \
                or (atom.rest is not None and attr != "pop"):
            return TOP, TOP
        found = atom.get(key[0])
        default = values[1] if len(values) > 1 else (NONE if attr == "setdefault" else BOTTOM)
        if found is None and atom.rest is not None:
            # a key not listed of a dict with keys not known (a batch): one of those values, or the default
            result = result.join(atom.rest.join(default))
            updated = updated.join(V(atom))
        elif attr == "pop":
            result = result.join(found if found is not None else default)
            updated = updated.join(V(without_entry(atom, key[0])))
        else:  # setdefault
            result = result.join(found if found is not None else default)
            updated = updated.join(V(atom if found is not None else with_entry(atom, key[0], default)))
    return result, updated


class Calls(EngineMixin):
    """Calls."""

    def expr_Call(self, node: ast.Call, st: State, fr: Frame) -> Value:
        if any(is_item_overlay(key) for key in st.overlays):
            # ``layers.insert(0, x)``, ``fill(layers)``: the call may change the items a test narrowed
            for name in _names_passed(node):
                st.drop_items(name)
        if isinstance(node.func, ast.Attribute) and node.func.attr in CONTAINER_MUTATORS:
            handled = self._container_mutation(node, st, fr)
            if handled is not None:
                return handled
        func = self.eval(node.func, st, fr)
        last = self.last_receiver
        receiver_ways = last[1] if last is not None and last[0] is node.func else None
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        star_unknown = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value, st, fr)
                spliced = splice_items(inner)
                if spliced is None:
                    star_unknown = True
                    columns = zip_columns(inner) if len(node.args) == 1 and not node.keywords \
                        and func.only(BuiltinRef) and {a.name for a in func.atoms} == {"zip"} else None
                    if columns is not None and not st.dead:
                        return columns  # ``zip(*batch)``: a collate function's columns
                else:
                    args.extend(spliced)
            else:
                args.append(self.eval(arg, st, fr))
        for keyword in node.keywords:
            value = self.eval(keyword.value, st, fr)
            if keyword.arg is None:
                spliced_keywords = splice_keywords(value)
                if spliced_keywords is None:
                    star_unknown = True
                else:
                    kwargs.update(spliced_keywords)  # ``model(**batch)`` with the batch's keys known
            else:
                kwargs[keyword.arg] = value
        if st.dead:
            return BOTTOM
        special = self.model_call_expression(node, func, args, kwargs, star_unknown, st, fr)
        if special is not None:
            result = special  # a call a library model knows by its syntax (``copy.deepcopy(x)``)
        elif func.top and not func.atoms and args and not star_unknown and names_library_function(
                node.func, "dataclasses", "replace", fr.module.source.tree):
            result = self.dataclass_replace(args[0], kwargs, node, st, fr)
        elif func.top and not func.atoms and args and not star_unknown and names_library_function(
                node.func, "functools", "partial", fr.module.source.tree):
            result = V(PartialRef(args[0], tuple(args[1:]), tuple(kwargs.items())))
        else:
            result = self.call(func, args, kwargs, node, st, fr, star_unknown=star_unknown,
                               receiver_ways=receiver_ways)
        if result.is_bottom and not func.is_bottom:
            st.dead = True  # the call raises on every path
        return result

    def _container_mutation(self, node: ast.Call, st: State, fr: Frame) -> Value | None:
        """``xs.append(v)`` on a list the analysis follows: the list now also holds ``v``."""
        receiver = node.func.value  # type: ignore[attr-defined]
        key: Slot | None = None
        if isinstance(receiver, ast.Name):
            key = receiver.id
        elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            key = Overlay(receiver.value.id, receiver.attr)
        attr = node.func.attr  # type: ignore[attr-defined]
        container = self.eval(receiver, st, fr)
        dicts = container.only(DictAtom) and not container.top and attr in DICT_MUTATORS
        if not dicts and (not container.of_type(SeqAtom) or attr not in LIST_MUTATORS):
            return None
        values = [self.eval(arg, st, fr) for arg in node.args]
        if st.dead:
            return BOTTOM
        if dicts:
            result, updated = _dict_mutation(container, attr, values, bool(node.keywords))
            if result.is_bottom:
                st.dead = True  # popping a key the dict does not have raises
        elif attr == "pop":
            if node.keywords or len(values) > 1 or not container.only(SeqAtom) or container.top or any(
                    a.kind == "tuple" for a in container.atoms):
                return None
            result, updated = _popped(container, values[0] if values else V(const(-1)))
            if result.is_bottom:
                st.dead = True  # popping from an empty list raises
        else:
            result = NONE
            added = values[-1] if values else BOTTOM
            if attr == "extend":
                added = self.iter_element(added)
            updated = Value(frozenset(seq_of(a.kind, a.elem.join(added)) if isinstance(a, SeqAtom) else a
                                      for a in container.atoms), container.top)
        if isinstance(key, str) and fr.kind is FrameKind.FUNCTION and key not in st.vars \
                and key not in fr.closure and key in fr.module.namespace:
            # a module-level list filled from inside a function: a weak update of the module's namespace
            self.store_global(fr.module, key, updated)
        elif key is not None:
            self.update_variable_in_place(key, updated, st, fr)
        if isinstance(receiver, ast.Attribute):
            self.store_attribute(self.eval(receiver.value, st, fr), receiver.attr, updated, fr)
        elif isinstance(receiver, ast.Subscript) and isinstance(receiver.slice, ast.Constant) \
                and isinstance(receiver.value, ast.Name) and container.only(SeqAtom):
            # ``history["loss"].append(v)``: the list under that key of a dict the analysis follows now holds ``v``
            self.assign(receiver, updated, st, fr)
        return result

    def call(self, func: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
             fr: Frame, star_unknown: bool = False, receiver_ways: dict | None = None) -> Value:
        """``receiver_ways``: for a method read from an object (``model.init_hidden``), the ways of a choice its
        notes keep for each instance: each bound method's result is on its instance's ways, as a project
        module's own call (``model(x)``) is on the ways its value's notes keep."""
        result = TOP if func.top else BOTTOM
        groups: dict[tuple[str, str], list[Atom]] = {}
        if len(func.atoms) > 1 and args:
            func = _layers_of_the_inputs_way(func, args[0])
        for atom in func.atoms:
            if isinstance(atom, BoundShim):
                groups.setdefault((atom.name, receiver_kind(atom.receiver)), []).append(atom.receiver)
            elif isinstance(atom, FuncRef):
                returned = self.call_function(atom, args, kwargs, node, fr, st=st, star_unknown=star_unknown)
                result = result.join(on_ways(returned, (receiver_ways or {}).get(atom.bound)))
            elif isinstance(atom, ClassRef):
                result = result.join(self.instantiate(atom.cls, args, kwargs, node, st, fr, star_unknown))
            elif isinstance(atom, PartialRef):
                result = result.join(self.call(atom.func, [*atom.args, *args], {**dict(atom.kwargs), **kwargs}, node,
                                               st, fr, star_unknown))
            elif isinstance(atom, ShimRef):
                result = result.join(self.call_shim_function(atom.name, args, kwargs, node, st, fr))
            elif isinstance(atom, BuiltinRef):
                result = result.join(self.call_builtin(atom.name, args, kwargs, node, st, fr))
            elif isinstance(atom, Const) and atom.value is None and (func.top or len(func.atoms) > 1):
                continue  # calling None raises: a call that returns is another callee's (``tqdm = None``)
            elif (modelled := self.model_call(atom, args, kwargs, node, st, fr, star_unknown)) is not UNHANDLED:
                result = result.join(modelled)  # a library name or object (``torch.ones``, a layer)
            elif isinstance(atom, Instance):
                method = self.attribute_of(atom, "__call__", node, st, fr)
                result = result.join(on_ways(self.call(method, args, kwargs, node, st, fr, star_unknown),
                                             (func.notes or {}).get(atom)) if method is not None else TOP)
            else:
                result = result.join(TOP)
        # several callees (``factories[name]()`` over Device.rocm and Device.flex): one that always raises
        # ends the path only if every other one does too
        several = func.top or len(groups) + sum(not isinstance(a, BoundShim) for a in func.atoms) > 1
        was_dead = st.dead
        for (name, kind), receivers in groups.items():
            receiver = Value(frozenset(receivers))
            result = result.join(self.call_method(kind, name, receiver, args, kwargs, node, st, fr))
            if several and not was_dead:
                st.dead = False
        if several and not was_dead and result.is_bottom:
            st.dead = True
        return result

    def call_function(self, fref: FuncRef, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                      fr: Frame, *, st: State | None = None, star_unknown: bool = False, uncalled: bool = False,
                      scopes: frozenset[ScopeId] | None = None, entry: str = "") -> Value:
        fn: FunctionInfo = fref.fn
        if st is not None:
            st.drop_overlays(attrs=self._attrs_written_elsewhere(fr))
        # a callee runs once per way of the caller's choices (the statement is split): no tag crosses a call
        bound = {name: stripped(value) for name, value in self._bind(fn, fref, args, kwargs, star_unknown).items()}
        if self.active_functions.get(fn):
            # a recursive call: constants that change at each level (counters, depths) would make a new
            # context per level, so they become unknown; tensors and devices keep their states
            bound = {name: TOP if value.only(Const) else value for name, value in bound.items()}
        if scopes is None:
            scopes = fr.scopes
            done, certain = completed_scopes(st) if st is not None else (frozenset(), True)
            if certain and done & scopes:
                scopes = scopes - done  # the caller completed them on every path: closed in the callee too
        profile = fr.profile
        # the module globals it reads itself; what its callees read is checked when a summary is reused (below)
        globals_key = tuple(fn.module.namespace.get(name, TOP) for name in global_names(fn, fref))
        # a function nobody in the analysed code calls may run under any default device (``with torch.device``)
        modes = self.model_context_key(st, uncalled)
        # (and the ways of the caller's split run: the heap reads on one way of a choice see that way's values)
        key: Any = (id(fn.node), fref.closure, tuple(bound[p] for p in fn.param_names), scopes, profile,
                    globals_key, uncalled, modes, None if self.active_functions.get(fn) else self.program_ways)
        ctx_id = self.ctx_ids.get(key)
        bound_key = None
        if ctx_id is None:
            count = self.contexts_per_function.get(fn, 0)
            if count >= MAX_CONTEXTS_PER_FUNCTION:
                bound = {p: TOP for p in fn.param_names}
                if fref.bound is not None and fn.positional:
                    bound[fn.positional[0]] = V(fref.bound)
                # one widened context per receiver: a summary run on one instance is not another's (a moved
                # copy's layers are not its CPU twin's); the instance is fixed by its allocation, so the key
                # does not depend on the order of analysis (as the heap's placement at a first call would)
                key = (id(fn.node), "widened", widened_receiver(fref.bound), scopes, profile, uncalled, modes)
            else:
                self.contexts_per_function[fn] = count + 1
            ctx_id = self.context_id(key)
        allocation = ctx_id
        if key[1] == "widened":
            bound_key = (globals_key, tuple(bound[p] for p in fn.param_names))
        else:
            ctx_id = self.current_generation(key, ctx_id)
        ctx = self.contexts.get(ctx_id)
        if ctx is None:
            ctx = self.contexts[ctx_id] = Context(ctx_id, fn.qualname, fn.module.file,
                                                   describe_args(fn, bound), uncalled=uncalled, entry=entry,
                                                   span=(fn.node.lineno, fn.node.end_lineno or fn.node.lineno),
                                                   arg_origins=argument_origins(bound, self.record_fields(fref.bound)))
            ctx.allocation = allocation
            if key[1] != "widened" and key[-1]:  # (run on one way of a command-line option: the values named)
                ctx.options = frozenset(tag for tag in self.program_ways if tag[0].shown)
        if node is not None and not uncalled:
            link = CallerLink(fr.file, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), fr.ctx,
                              getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)
            ctx.add_caller(link)
            self.note_link(ctx_id, link)
        # a quiet evaluation (a narrowing operand, an element-wise comprehension) discards its facts: it must
        # not leave a summary (a later call in this context would then skip the body and lose its facts)
        quiet = isinstance(self.facts, NullFacts)
        if not quiet and ctx_id not in self.summaries and ctx_id not in self.in_progress:
            self.keep_previous(ctx_id, bound_key)  # the previous pass's run, if its inputs are unchanged
        if ctx_id not in self.summaries and ctx_id not in self.in_progress and not uncalled \
                and self.function_runs >= self.run_budget:
            # over the pass's budget: the call's result is unknown and the function is left to the sweep of
            # uncalled functions (analysed once with unknown arguments), as a library function would be
            return TOP
        if not quiet:
            self.analyzed.add(fn)
        if ctx_id in self.summaries:
            summary = self.summaries[ctx_id]
            self.note_callee(ctx_id, summary)
            fr.tagged = fr.tagged or has_tags(summary)  # (a program-wide choice: the caller's statements split)
            self._apply_mode_effect(ctx_id, st)
            return summary
        if ctx_id in self.in_progress:
            self.recursive_hits.add(ctx_id)
            self.note_cycle(ctx_id)
            return self.in_progress[ctx_id]  # recursion: the approximation so far (iterated below)
        if self.depth >= MAX_CALL_DEPTH:
            return TOP
        self.in_progress[ctx_id] = BOTTOM
        self.function_runs += 1
        self.depth += 1
        self.active_functions[fn] = self.active_functions.get(fn, 0) + 1
        entered = self.model_enter_call(fn)  # (a model that follows which library code is running)
        record = None if quiet else self.start_record(ctx_id, fn, fref, globals_key, bound_key)
        result = None
        stopped = False
        self.budget.enter(ctx_id)
        try:
            for _attempt in range(MAX_RECURSION_ROUNDS):
                self.recursive_hits.discard(ctx_id)
                result = widen_if_large(stripped(self._run_function(fn, fref, ctx, bound, scopes, profile, modes)))
                result = helper_answer(fn, bound, result)  # (a device helper: one answer in every call)
                if ctx_id not in self.recursive_hits or result == self.in_progress[ctx_id]:
                    break
                self.in_progress[ctx_id] = self.in_progress[ctx_id].join(result)
            else:
                result = TOP
        except FunctionOverBudget as over:
            # this run, or one inside it, took more than a function's budget: what it recorded is partial
            self.forget_context(ctx_id)
            if over.ctx_id != ctx_id:
                raise
            stopped, result = True, TOP
            self.budget.stopped.append((fn.module.file, getattr(fn.node, "lineno", 1), fn.qualname))
        finally:
            self.budget.leave()
            self.depth -= 1
            self.active_functions[fn] -= 1
            for hook in entered:
                hook.__self__.exit_call(fn)
            del self.in_progress[ctx_id]
            if record is not None:
                self.finish_record(ctx_id, record, None if stopped else result)  # (a stopped run is not kept)
        if not quiet:
            self.set_summary(ctx_id, result)
            self.note_callee(ctx_id, result)
        fr.tagged = fr.tagged or has_tags(result)
        if not stopped:
            self._apply_mode_effect(ctx_id, st)
        return result

    def record_fields(self, receiver: object) -> Callable[[Instance], list[Value]]:
        """What a record of data passed to a call holds (its heap attributes), for where a call's arguments were
        made (:func:`.dispatch_helpers.argument_origins`); nothing for the method's own receiver, whose
        attributes are the object's own state, or an object that is not a record (a module, a trainer). Read
        for reporting only: not remembered as a read of the program."""
        heap, owners, record_bases = self.heap, self.heap_owners, self.model_record_bases()

        def fields(instance: Instance) -> list[Value]:
            if instance is receiver or not instance.cls.holds_data(record_bases):
                return []
            return [heap[(instance, attr)] for attr in owners.get(instance, ())]
        return fields

    def _apply_mode_effect(self, ctx_id: int, st: State | None) -> None:
        """Leave in the caller's state the library modes the callee set and did not restore (a helper that calls
        ``torch.set_default_device("cuda")`` or ``torch.cuda.set_device(rank)``)."""
        effect = self.mode_effects.get(ctx_id)
        if not effect or st is None or st.dead:
            return
        for key, value in effect.items():
            if value is None:
                st.modes.pop(key, None)
            else:
                st.modes[key] = value

    def forget_context(self, ctx_id: int) -> None:
        """Drop the facts a run of ``ctx_id`` recorded (it stopped before its end: they are partial)."""
        store = self.fact_store
        for facts in (store.sites, store.reveals):
            for key in [key for key in facts if key[1] == ctx_id]:
                del facts[key]
        store._grouped = None

    def _run_function(self, fn: FunctionInfo, fref: FuncRef, ctx: Context, bound: dict[str, Value],
                      scopes: frozenset[ScopeId], profile: str, modes: tuple | None = None) -> Value:
        frame = Frame(fn.module, ctx, func=fn, closure=dict(fref.closure), scopes=scopes, profile=profile,
                      kind=FrameKind.FUNCTION, cls=fn.cls)
        # (what a program-wide choice tagged, an option's value: the statements reading it split by it)
        frame.tagged = any(has_tags(value) for value in bound.values())
        state = State(dict(bound))
        self.model_enter_function(state, self.model_context_key(None, False) if modes is None else modes, fn)
        if isinstance(fn.node, ast.Lambda):
            result = self.eval(fn.node.body, state, frame)
        else:
            entry_modes = dict(state.modes)
            frame.exit_modes = [] if not fn.is_generator else None
            end = self.exec_block(fn.node.body, state, frame)
            if frame.exit_modes is not None:
                if not end.dead:
                    frame.exit_modes.append(end.modes)
                self.mode_effects[ctx.id] = mode_effect(entry_modes, frame.exit_modes)
            result = frame.returns if end.dead else frame.returns.join(NONE)
            if fn.name == "__init__" and fn.cls is not None and fn.positional and not end.dead \
                    and frame.returns.is_bottom:
                # what ``self`` is when ``__init__`` ends: an nn.Module that moved itself in place
                # (``self.to(device)``) is the moved one (:meth:`Instances.instantiate` gives it to the caller)
                result = end.vars.get(fn.positional[0], NONE)
        if fn.is_generator:
            if isinstance(fn.node, ast.AsyncFunctionDef):
                return TOP  # a coroutine or an async generator
            return V(seq_of("list", frame.yields))  # iterating a generator gives what it yields
        return result

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
        return {name: widen_if_large(value) for name, value in bound.items()}


def global_names(fn: FunctionInfo, fref: FuncRef) -> list[str]:
    """The free names of ``fn`` its closure does not bind: read from its module's namespace."""
    if not fref.closure:
        return fn.free
    bound = {name for name, _value in fref.closure}
    return [name for name in fn.free if name not in bound]


def _popped(container: Value, index: Value) -> tuple[Value, Value]:
    """``xs.pop(i)``: the element and the list after it. Element-wise for one list of known length and a
    constant index (a worklist drained in a loop stays precise); else any element, and the length unknown."""
    lists = [a for a in container.atoms if isinstance(a, SeqAtom)]
    assert len(lists) == len(container.atoms)  # the caller pops only from lists
    atom = lists[0]
    wanted = index.consts()
    if len(lists) == 1 and atom.kind == "list" and atom.items is not None and wanted and len(wanted) == 1 \
            and type(wanted[0]) is int and -len(atom.items) <= wanted[0] < len(atom.items):
        position = wanted[0] % len(atom.items)
        rest = atom.items[:position] + atom.items[position + 1:]
        return atom.items[position], V(seq(atom.kind, rest))
    element = join_all(a.elem for a in lists)
    return element, Value(frozenset(seq_of(a.kind, a.elem) for a in lists))


def on_ways(value: Value, ways: frozenset | None) -> Value:
    """``value`` on each of ``ways`` (tag sets of a choice's alternatives), inside tuples and lists too (an
    ``init_hidden()``'s pair of zeros); as it is where none are known."""
    if not ways or not value.atoms:
        return value
    return join_all(_tagged_within(value, way, 0) for way in ways)


def _tagged_within(value: Value, tags: frozenset, depth: int) -> Value:
    if depth >= MAX_DEPTH or not any(isinstance(a, SeqAtom) for a in value.atoms):
        return tagged(value, tags)
    inner = Value(frozenset(map_elements(a, lambda v: _tagged_within(v, tags, depth + 1))
                            if isinstance(a, SeqAtom) else a for a in value.atoms), value.top, value.notes)
    return tagged(inner, tags)


def _layers_of_the_inputs_way(func: Value, x: Value) -> Value:
    """Of the library layers ``func`` may be, those placed on a way of a choice that some possibility of the input
    ``x`` is on too (``self.model`` stored on each way of a command-line option, called on an input of one way);
    all of them where that would leave none."""
    if x.top or not x.atoms or not any(tags_of(a) for a in func.atoms if a.is_library_layer()):
        return func
    inputs = [tags_of(a) for a in x.atoms]
    kept = frozenset(a for a in func.atoms
                     if not a.is_library_layer() or any(consistent(tags_of(a), t) for t in inputs))
    return Value(kept, func.top) if kept else func


def _names_passed(node: ast.Call) -> list[str]:
    """The variables a call receives as its receiver (``xs.append``) or as arguments (``fill(xs)``)."""
    out = [node.func.value.id] if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
        else []
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        inner = arg.value if isinstance(arg, ast.Starred) else arg
        if isinstance(inner, ast.Name):
            out.append(inner.id)
    return out


def widened_receiver(receiver: object) -> object:
    """The part of a method's receiver that keys its widened context: the instance (None otherwise)."""
    return receiver if isinstance(receiver, Instance) else None
