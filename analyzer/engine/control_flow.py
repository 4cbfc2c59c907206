"""Compound statements: if/elif/else joins, loops to a fixpoint, try/except/finally, with, match."""

from __future__ import annotations

import ast

from runtime_shim.semantics import PROFILES

from ..domain import BOTTOM, TOP, Instance, ShimRef
from .flow_state import Frame, State, dead, force_top, join_states, widen_changed
from .limits import MAX_LOOP_ITERATIONS, WIDEN_AFTER
from .python_values import is_nonempty_sequence


class ControlFlow:
    """Compound statements."""

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
            force_top(new_head, widened)
            if new_head.same(head):
                break
            if iteration >= WIDEN_AFTER:
                widen_changed(head, new_head, widened)
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
                force_top(new_head, widened)
                if new_head.same(head):
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
                entry.kill_aliases(handler.name)
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
            # ``__enter__`` runs with or without ``as`` (its sites are checked either way)
            entered = TOP if value.top or not value.of_type(Instance) else BOTTOM
            for atom in value.atoms:
                enter = self.attribute_of(atom, "__enter__", item.context_expr, st, fr) \
                    if isinstance(atom, Instance) else None
                entered = entered.join(self.call(enter, [], {}, item.context_expr, st, fr)
                                       if enter is not None else TOP)
            if entered.is_bottom:
                st.dead = True  # entering raises on every path
                fr.profile = saved_profile
                return st
            if item.optional_vars is not None:
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
                    branch.kill_aliases(sub.name)
                elif isinstance(sub, ast.MatchMapping) and sub.rest:
                    branch.vars[sub.rest] = TOP
                    branch.kill_aliases(sub.rest)
            if case.guard is not None:
                branch, _ = self.branch(case.guard, branch, fr)
            exits.append(self.exec_block(case.body, branch, fr))
        return join_states(exits)
