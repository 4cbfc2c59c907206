"""Compound statements: if/elif/else joins, loops to a fixpoint, try/except/finally, with, match."""

from __future__ import annotations

import ast
from typing import Any

from runtime_shim.semantics import PROFILES

from ..choices import PROGRAM, Choice, consistent
from ..domain import BOTTOM, TOP, Const, DictAtom, FuncRef, Instance, SeqAtom, ShimRef, V, Value, seq
from .configured import configured_before, fill_one_sided, restrict_filled, supersede_configured
from .flow_state import Frame, FrameKind, State, Widened, dead, force_top, join_states, widen_changed
from .limits import MAX_LOOP_ITERATIONS, MAX_UNROLL, MAX_UNROLLED_RUNS, WIDEN_AFTER
from .liveness import loop_reads
from .mixin import EngineMixin
from .python_values import is_nonempty_sequence, names_library_function, splice_items
from .relational import fewest_ways


class ControlFlow(EngineMixin):
    """Compound statements."""

    def stmt_If(self, node: ast.If, st: State, fr: Frame) -> State:
        true, false = self.branch(node.test, st, fr)
        undecided = not true.dead and not false.dead
        entry = configured_before(self, node, st, fr) if undecided else {}
        # (before anything is tagged there is nothing to restrict: the choice is looked for after the branches,
        # unless a branch may leave the function: what it returns, and what the rest returns, is one way's)
        # (or a caller's statement runs on one way of an option: a test of it here is decided by that way)
        run_ways = frozenset(t for t in self.program_ways if t[0].ctx == PROGRAM) if undecided else frozenset()
        choice = self.choice(node.test, st, fr) \
            if undecided and (fr.tagged or run_ways or leaves_function(node)) else None
        if choice is not None:  # each branch sees its own way of an earlier test of the same value
            self.restrict_state(true, choice[0], choice[1], fr)
            self.restrict_state(false, choice[0], not choice[1], fr)
            if choice[0].ctx == PROGRAM and run_ways:
                for branch, way in ((true, choice[1]), (false, not choice[1])):
                    if not consistent(run_ways, frozenset({(choice[0], way)})):
                        branch.dead = True
            if choice[0].ctx == PROGRAM:  # (a frame's own choices are dropped on the way out anyway)
                true.ways = fewest_ways(true.ways | {(choice[0], choice[1])})
                false.ways = fewest_ways(false.ways | {(choice[0], not choice[1])})
        # (``if not args.cpu and len(gpu_ids) > 1:``: whatever else it asks, its true way is ``--cpu``'s false one)
        implied = self.implied_ways(node.test, st, fr) if undecided and fr.tagged else (frozenset(), frozenset())
        if implied[0] or implied[1]:
            true.ways, false.ways = fewest_ways(true.ways | implied[0]), fewest_ways(false.ways | implied[1])
        if not true.dead:
            true = self.exec_block(node.body, true, fr)
        if not false.dead:
            false = self.exec_block(node.orelse, false, fr)
        if not true.dead and not false.dead:
            chosen = self.model_choose_branch(true, false)
            # ``if use_cuda: device = torch.device("cuda") else: ...`` in a world; not a command-line option's
            # test (``if args.cuda:``): both ways are runs of the program, and its tags keep them apart
            if chosen is not None and not _program_wide(choice or self.choice(node.test, st, fr)):
                return true if chosen else false
        filled = fill_one_sided(entry, true, false, fr) if entry else []
        if undecided and choice is None and self.differ_in_taggables(true, false):
            choice = self.choice(node.test, st, fr)
        if choice is not None:
            if filled:
                restrict_filled(filled, choice[0], choice[1], true, false, entry)
            self.tag_branches(choice[0], choice[1], true, false, fr, implied)
        elif implied[0] or implied[1]:
            self.tag_branches(None, True, true, false, fr, implied)
        joined = join_states([true, false])
        if filled and choice is not None:
            supersede_configured(self, filled, joined, fr)
        return joined

    def stmt_While(self, node: ast.While, st: State, fr: Frame) -> State:
        entry = st
        head = entry.copy()
        widened: Widened = ({}, {}, {})
        exit_state = dead()
        breaks: list[State] = []
        reads = self.loop_reads(node, fr)
        for iteration in range(MAX_LOOP_ITERATIONS):
            mutations = self.changes.count
            true, false = self.branch(node.test, head.copy(), fr)
            fr.loops.append(([], []))
            end = self.exec_block(node.body, true, fr) if not true.dead else true
            breaks, continues = fr.loops.pop()
            exit_state = false
            new_head = join_states([entry, end, *continues])
            force_top(new_head, widened)
            if self.loop_converged(head, new_head, reads, mutations):
                if not new_head.same(head):  # leave from the head the next iteration would have started at
                    exit_state = self.branch(node.test, new_head.copy(), fr)[1]
                break
            if iteration >= WIDEN_AFTER:
                widen_changed(head, new_head, widened)
            head = new_head
        if node.orelse and not exit_state.dead:
            exit_state = self.exec_block(node.orelse, exit_state, fr)
        return join_states([exit_state, *breaks])

    def stmt_For(self, node: ast.For | ast.AsyncFor, st: State, fr: Frame) -> State:
        iterable = self.eval(node.iter, st, fr)
        if not st.dead:
            iterable = self.iterated(iterable, node.iter, st, fr)
        if st.dead:
            return st
        items = known_items(iterable)
        if items is not None and self.unrolled_runs * len(items) <= MAX_UNROLLED_RUNS and (
                not all(item.only(Const) and type(item.consts()[0]) is int for item in items)  # type: ignore[index]
                or self._stores_at_counter(node)):
            return self._unrolled_for(node, items, st, fr)
        element = self.iter_element(iterable)
        entry = st
        head = entry.copy()
        widened: Widened = ({}, {}, {})
        breaks: list[State] = []
        after_iteration = dead()
        reads = self.loop_reads(node, fr)
        if not element.is_bottom:
            for iteration in range(MAX_LOOP_ITERATIONS):
                mutations = self.changes.count
                ends: list[State] = []
                breaks = []
                for part in _unpacked_parts(node.target, element):
                    body_in = head.copy()
                    self.assign(node.target, part, body_in, fr)
                    fr.loops.append(([], []))
                    end = self.exec_block(node.body, body_in, fr)
                    part_breaks, continues = fr.loops.pop()
                    ends.extend([end, *continues])
                    breaks.extend(part_breaks)
                after_iteration = join_states(ends)
                new_head = join_states([entry, after_iteration])
                force_top(new_head, widened)
                if self.loop_converged(head, new_head, reads, mutations):
                    head = new_head
                    break
                if iteration >= WIDEN_AFTER:
                    widen_changed(head, new_head, widened)
                head = new_head
        # a sequence of known, non-zero length runs the body at least once
        exit_state = after_iteration if is_nonempty_sequence(iterable) else head
        force_top(exit_state, widened)
        if node.orelse and not exit_state.dead:
            exit_state = self.exec_block(node.orelse, exit_state, fr)
        return join_states([exit_state, *breaks])

    stmt_AsyncFor = stmt_For

    def _stores_at_counter(self, node: ast.For | ast.AsyncFor) -> bool:
        """``for i in range(n): rows[i] = ...``: a loop over ints that stores at the index it counts (a counter
        used otherwise gains nothing from running each iteration in turn, and a retry loop of ten would cost ten
        runs of its body instead of a fixpoint's two)."""
        found = self._counter_stores.get(id(node))
        if found is None:
            name = node.target.id if isinstance(node.target, ast.Name) else None
            found = self._counter_stores[id(node)] = name is not None and any(
                isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store)
                and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(sub.slice))
                for stmt in node.body for sub in ast.walk(stmt))
        return found

    def _shared_element(self, node: ast.For | ast.AsyncFor) -> tuple[str, str] | None:
        """``for row in grid:`` whose body changes ``row`` in place and never rebinds it: (``grid``, ``row``). The
        element is the list ``grid`` holds, so what the body stores in it is ``grid``'s too (:func:`_write_back`)."""
        if not isinstance(node.iter, ast.Name) or not isinstance(node.target, ast.Name):
            return None
        found = self._shared_elements.get(id(node), False)
        if found is False:
            name = node.target.id
            rebinds = any(isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, (ast.Store, ast.Del))
                          for stmt in node.body for sub in ast.walk(stmt))
            found = self._shared_elements[id(node)] = None if rebinds else (node.iter.id, name)
        return found

    def _unrolled_for(self, node: ast.For | ast.AsyncFor, items: list[Value], st: State, fr: Frame) -> State:
        """A loop over elements the analysis knows one by one, in order (a list or tuple of known length, a
        dict's keys or items): each iteration in turn, as it runs, with no fixpoint to reach. The state an
        iteration ends in is the next one's start, so ``for k in batch: batch[k] = batch[k].to(device)``
        leaves every entry moved (a join over the iterations would keep each one's unmoved value too)."""
        state = st
        breaks: list[State] = []
        shared = self._shared_element(node)
        self.unrolled_runs *= max(1, len(items))
        try:
            for index, item in enumerate(items):
                body_in = state.copy()
                self.assign(node.target, item, body_in, fr)
                fr.loops.append(([], []))
                end = self.exec_block(node.body, body_in, fr)
                iteration_breaks, continues = fr.loops.pop()
                breaks.extend(iteration_breaks)
                state = join_states([end, *continues])
                if state.dead:
                    break
                if shared is not None:
                    _write_back(state, shared, index, item)
        finally:
            self.unrolled_runs //= max(1, len(items))
        if node.orelse and not state.dead:
            state = self.exec_block(node.orelse, state, fr)
        return join_states([state, *breaks])

    def loop_reads(self, node: ast.For | ast.AsyncFor | ast.While, fr: Frame) -> frozenset[str] | None:
        """What a loop's iteration may read of its head (:mod:`.liveness`); ``None`` at a module's top level
        or in a class body, whose names the functions called in the loop read too."""
        if fr.kind is not FrameKind.FUNCTION:
            return None
        found = self._loop_reads.get(id(node))
        if found is None:
            found = self._loop_reads[id(node)] = loop_reads(node)
        return found

    def loop_converged(self, head: State, new_head: State, reads: frozenset[str] | None, mutations: int) -> bool:
        """Would another iteration from ``new_head`` compute what the last one, from ``head``, did? Yes when
        the two agree on every name the body may read before assigning it (``reads``), the modes, the
        overlays of those names and their aliases, and the iteration changed nothing outside the frame
        (``mutations``: the heap, a namespace, a module loaded, the havoc sets)."""
        if new_head.same(head):
            return True
        if reads is None or self.changes.count != mutations or head.dead != new_head.dead:
            return False
        old, new = head.vars, new_head.vars
        if any(key in reads and old.get(key) != new.get(key) for key in old.keys() | new.keys()):
            return False
        if any(key.base in reads and head.overlays.get(key) != new_head.overlays.get(key)
               for key in head.overlays.keys() | new_head.overlays.keys()):
            return False
        if any(head.modes.get(key) != new_head.modes.get(key) for key in head.modes.keys() | new_head.modes.keys()):
            return False
        return all(head.aliases.get(name) == new_head.aliases.get(name)
                   for name in head.aliases.keys() | new_head.aliases.keys() if name in reads)

    def stmt_Try(self, node: ast.Try, st: State, fr: Frame) -> State:
        collector: list[State] = [st.copy()]
        returns_before = fr.returns
        jumps_before = [(len(breaks), len(continues)) for breaks, continues in fr.loops]
        fr.collectors.append(collector)
        self.catching += bool(node.handlers)
        try:
            body_end = self.exec_block(node.body, st, fr)
        finally:
            fr.collectors.pop()
            self.catching -= bool(node.handlers)
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
                entry.kill_aliases(handler.name)
            exits.append(self.exec_block(handler.body, entry, fr))
        after = join_states(exits)
        if node.finalbody:
            if not raised.dead and self.exec_block(node.finalbody, raised.copy(), fr).dead:
                # the finally block raises on every path: a return, break or continue inside never completes
                fr.returns = returns_before
                for (breaks, continues), (n_breaks, n_continues) in zip(fr.loops, jumps_before, strict=False):
                    del breaks[n_breaks:], continues[n_continues:]
            if not after.dead:
                after = self.exec_block(node.finalbody, after, fr)
        return after

    stmt_TryStar = stmt_Try

    def stmt_With(self, node: ast.With | ast.AsyncWith, st: State, fr: Frame) -> State:
        saved_profile = fr.profile
        exits: list[tuple[ast.expr, Value]] = []  # the ``__exit__`` methods to run on the way out
        restores: list[tuple[Any, Any]] = []  # (model, what it restores): library modes (``torch.no_grad()``)
        for item in node.items:
            value = self.eval(item.context_expr, st, fr)
            if st.dead:
                fr.profile = saved_profile
                return st
            profile = self._profile_switch(item.context_expr, st, fr)
            if profile is not None:
                fr.profile = profile
            # ``__enter__`` runs with or without ``as`` (its sites are checked either way)
            entered = TOP if value.top or not value.of_type(Instance) else BOTTOM
            for atom in value.atoms:
                enter = self.attribute_of(atom, "__enter__", item.context_expr, st, fr) \
                    if isinstance(atom, Instance) else None
                entered = entered.join(self.call(enter, [], {}, item.context_expr, st, fr)
                                       if enter is not None else TOP)
                leave = self.attribute_of(atom, "__exit__", item.context_expr, st, fr) \
                    if isinstance(atom, Instance) else None
                if leave is not None:
                    exits.append((item.context_expr, leave))
            if entered.is_bottom:
                st.dead = True  # entering raises on every path
                fr.profile = saved_profile
                return st
            saved = self.model_enter_with(value, st)
            if saved:
                restores.extend(saved)
                entered = value
            if item.optional_vars is not None:
                self.assign(item.optional_vars, entered, st, fr)
        suppressing = any(self._suppresses(item.context_expr, fr) for item in node.items) or any(
            _may_suppress(leave) for _expr, leave in exits)
        collector: list[State] = [st.copy()]
        if suppressing:
            fr.collectors.append(collector)
            self.catching += 1
        fr.mode_restores.append(restores)
        try:
            end = self.exec_block(node.body, st, fr)
        finally:
            fr.mode_restores.pop()
            fr.profile = saved_profile
            if suppressing:
                fr.collectors.pop()
                self.catching -= 1
        for model, saved in reversed(restores):
            for state in (end, *collector):
                model.exit_with(saved, state)
        # ``__exit__`` runs on the way out (on the raised path too: its facts count either way)
        for expr, leave in reversed(exits):
            if not end.dead:
                if self.call(leave, [TOP, TOP, TOP], {}, expr, end, fr).is_bottom and not leave.is_bottom:
                    end.dead = True  # ``__exit__`` raises on every path
            else:
                self.call(leave, [TOP, TOP, TOP], {}, expr, join_states(collector) if suppressing
                          else collector[0].copy(), fr)
        # ``contextlib.suppress`` or an ``__exit__`` that returns true: a raise in the body continues after it
        return join_states([end, *collector]) if suppressing else end

    stmt_AsyncWith = stmt_With

    @staticmethod
    def _suppresses(expr: ast.expr, fr: Frame) -> bool:
        """``contextlib.suppress(...)`` (or ``suppress`` imported from contextlib)."""
        return isinstance(expr, ast.Call) and names_library_function(expr.func, "contextlib", "suppress",
                                                                     fr.module.source.tree)

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
        subject = self.eval(node.subject, st, fr)
        if st.dead:
            return st
        exits = []
        rest = st  # the state where no case so far matched
        for case in node.cases:
            if rest.dead:
                break
            branch, rest = self._match_case(case.pattern, node.subject, rest, fr)
            for sub in ast.walk(case.pattern):
                if isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                    bound = subject if sub is case.pattern and isinstance(sub, ast.MatchAs) and sub.pattern is None \
                        else TOP
                    branch.vars[sub.name] = bound
                    branch.kill_aliases(sub.name)
                elif isinstance(sub, ast.MatchMapping) and sub.rest:
                    branch.vars[sub.rest] = TOP
                    branch.kill_aliases(sub.rest)
            if case.guard is not None and not branch.dead:
                branch, unguarded = self.branch(case.guard, branch, fr)
                rest = join_states([rest, unguarded])
            exits.append(self.exec_block(case.body, branch, fr) if not branch.dead else branch)
        exits.append(rest)
        return join_states(exits)

    def _match_case(self, pattern: ast.pattern, subject_expr: ast.expr, st: State,
                    fr: Frame) -> tuple[State, State]:
        """The states where ``pattern`` matches and where it does not: a wildcard or a capture always
        matches; literal patterns on a plain subject (``match d.backend:``) narrow it like ``==``."""
        if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
            return st.copy(), dead()
        test = self._pattern_test(pattern, subject_expr) if _pure_path(subject_expr) else None
        if test is None:
            return st.copy(), st.copy()
        return self.branch(test, st.copy(), fr)

    def _pattern_test(self, pattern: ast.pattern, subject: ast.expr) -> ast.expr | None:
        """The equivalent test of a literal pattern (``case "Flex" | "Cpu":``), or ``None``."""
        if isinstance(pattern, ast.MatchValue):
            test: ast.expr = ast.Compare(subject, [ast.Eq()], [pattern.value])
        elif isinstance(pattern, ast.MatchSingleton):
            test = ast.Compare(subject, [ast.Is()], [ast.Constant(pattern.value)])
        elif isinstance(pattern, ast.MatchOr):
            tests = [self._pattern_test(p, subject) for p in pattern.patterns]
            if any(t is None for t in tests):
                return None
            test = ast.BoolOp(ast.Or(), tests)  # type: ignore[arg-type]
        else:
            return None
        return ast.copy_location(test, pattern)


def _may_suppress(leave: Value) -> bool:
    """An ``__exit__`` that may return a true value (so it swallows the exception)."""
    for atom in leave.atoms:
        node = atom.fn.node if isinstance(atom, FuncRef) else None
        if node is None:
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Return) and sub.value is not None and not (
                    isinstance(sub.value, ast.Constant) and sub.value.value in (None, False)):
                return True
    return False


def _write_back(state: State, shared: tuple[str, str], index: int, item: Value) -> None:
    """The element ``shared[1]`` changed in place during iteration ``index``: the list ``shared[0]`` holds it."""
    outer, name = shared
    now, container = state.vars.get(name), state.vars.get(outer)
    if now is None or now is item or now == item or container is None or container.top or len(container.atoms) != 1:
        return
    atom = next(iter(container.atoms))
    if isinstance(atom, SeqAtom) and atom.kind == "list" and atom.items is not None and index < len(atom.items) \
            and now.only(SeqAtom, DictAtom):
        items = list(atom.items)
        items[index] = now
        state.vars[outer] = V(seq("list", items))


def known_items(iterable: Value) -> list[Value] | None:
    """The elements a loop over ``iterable`` gets, in order, when the analysis knows each (at most
    :data:`MAX_UNROLL`): a list or tuple of known length, a dict's keys (a dict with only known keys)."""
    items = splice_items(iterable)
    if items is None and len(iterable.atoms) == 1 and not iterable.top:
        atom = next(iter(iterable.atoms))
        items = atom.keys() if isinstance(atom, DictAtom) and atom.rest is None else None
    return items if items is not None and len(items) <= MAX_UNROLL else None


def _unpacked_parts(target: ast.expr, element: Value) -> list[Value]:
    """``for name, (dev, ck) in plan.items():``: each known tuple of the elements separately, so the names
    unpacked from one element stay together (not every name's join with every other's)."""
    if isinstance(target, (ast.Tuple, ast.List)) and not element.top and 1 < len(element.atoms) <= MAX_UNROLL \
            and all(isinstance(a, SeqAtom) and a.items is not None for a in element.atoms):
        return [V(atom) for atom in sorted(element.atoms, key=repr)]  # a stable order: stable contexts
    return [element]


def _pure_path(expr: ast.expr) -> bool:
    """A name or an attribute path (``d.backend``): evaluating it again in a test records nothing."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def leaves_function(node: ast.If) -> bool:
    """Whether a branch of ``node`` holds a ``return`` or a ``raise`` (not in a nested definition): the path
    that goes on after it took the other way (remembered on the node)."""
    found = getattr(node, "_devicelint_leaves", None)
    if found is None:
        found = False
        stack: list[ast.AST] = [*node.body, *node.orelse]
        while stack and not found:
            inner = stack.pop()
            if isinstance(inner, (ast.Return, ast.Raise)):
                found = True
            elif not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.expr)):
                stack.extend(ast.iter_child_nodes(inner))
        node._devicelint_leaves = found  # type: ignore[attr-defined]
    return found


def _program_wide(choice: tuple[Choice, bool] | None) -> bool:
    return choice is not None and choice[0].ctx == PROGRAM
