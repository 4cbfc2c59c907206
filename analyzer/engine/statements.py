"""Simple statements: blocks, expression statements, assignments, return/raise/break/continue."""

from __future__ import annotations

import ast

from ..budget import Budget
from ..choices import PROGRAM, tagged
from ..domain import NONE
from .attr_flow import exit_overlays
from .configured import supersede_top_level
from .flow_state import Frame, FrameKind, Overlay, Slot, State, Step, dead, exit_modes
from .mixin import EngineMixin
from .python_values import as_load


class Statements(EngineMixin):
    """Simple statements."""

    budget: Budget

    def exec_block(self, body: list[ast.stmt], st: State, fr: Frame) -> State:
        for stmt in body:
            if st.dead:
                return st
            if fr.collectors:
                self._collect(st, fr)
            st = self.exec_stmt(stmt, st, fr)
            if fr.kind is FrameKind.MODULE:
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
        self.budget.tick()  # past the component's budget: OverBudget ends its analysis
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            return st
        saved_path = self.path_ways
        self.path_ways = st.ways  # (what an in-place change here supersedes stays on the option's other ways)
        try:
            out = self.run_split(node, st, fr, method)
        finally:
            self.path_ways = saved_path
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and out.overlays:
            supersede_top_level(self, node, out, fr)  # ``config.device = ...`` after building ``config``
        return out

    def stmt_Expr(self, node: ast.Expr, st: State, fr: Frame) -> State:
        self.discarded_call = node.value  # a call whose result is thrown away (MV206 asks)
        self.eval(node.value, st, fr)
        return st

    def stmt_Assign(self, node: ast.Assign, st: State, fr: Frame) -> State:
        path = self._target(node.value, st)
        notes = self.model_assignment(node, st, fr)  # ``self.x = self.x.to(d)``: what ``self.x`` held before
        # ``self.lo, self.hi = self.lo.to(d), self.hi.to(d)``: each pair as the models see a single assignment
        element_notes = [(pair.targets[0], self.model_assignment(pair, st, fr)) for pair in element_pairs(node)]
        value = self.eval(node.value, st, fr)
        if value.is_bottom:
            st.dead = True  # the value raises on every path (a property that always fails, an empty index)
        if st.dead:
            return st
        for target in node.targets:
            self.assign(target, value, st, fr)
        for assigned, before in notes:
            assigned(node.targets[0], before, value, st, fr)
        for target, pair_notes in element_notes:
            if pair_notes:
                stored = self.eval(as_load(target), st.copy(), fr, quiet=True)
                for assigned, before in pair_notes:
                    assigned(target, before, stored, st, fr)
        self.remember_alias(node.targets, path, st)
        remember_element(node, st)
        return st

    @staticmethod
    def remember_alias(targets: list[ast.expr], path: tuple[Slot, list[Step]] | None,
                       st: State) -> None:
        """``b = t.device().backend``: a test on ``b`` is a test on that path (narrowing both)."""
        if path is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return
        name, (key, steps) = targets[0].id, path
        if key == name or (isinstance(key, Overlay) and key.base == name):
            return
        st.aliases[name] = (key, tuple(steps))

    def stmt_AnnAssign(self, node: ast.AnnAssign, st: State, fr: Frame) -> State:
        if node.value is None:
            return st
        value = self.eval(node.value, st, fr)
        if not st.dead:
            self.assign(node.target, value, st, fr)
        return st

    def stmt_AugAssign(self, node: ast.AugAssign, st: State, fr: Frame) -> State:
        current = self.eval(as_load(node.target), st, fr)
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
            # (returned on one way of a command-line option, after an ``if`` on it or in a run of the statement
            # split on it: the caller pairs it with that way's values only)
            ways = st.ways | frozenset(t for t in fr.split_ways if t[0].ctx == PROGRAM)
            if ways:
                value = tagged(value, ways)
            fr.returns = fr.returns.join(value)
            if fr.exit_modes is not None:
                fr.exit_modes.append(exit_modes(st, fr.mode_restores))
            if fr.exit_overlays is not None:
                fr.exit_overlays.append(exit_overlays(st, fr.bound))
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
                st.kill_aliases(target.id)
                st.drop_overlays(target.id)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                st.drop_items(target.value.id)
        return st


def remember_element(node: ast.Assign, st: State) -> None:
    """``row = grid[0]`` (a variable's element at a constant index or key): ``row`` is that element, the
    same object, until either name is rebound or ``grid[0]`` stored (``Assignment._store_subscript``)."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return
    value = node.value
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
            and isinstance(value.slice, ast.Constant)):
        return
    key = value.slice.value
    if not isinstance(key, int | str) or isinstance(key, bool):
        return
    name, container = node.targets[0].id, value.value.id
    if container != name and container in st.vars:
        st.elements[name] = (container, (("item", key),))


def element_pairs(node: ast.Assign) -> list[ast.Assign]:
    """``a, b = x, y`` (one target, a tuple or list of as many plain elements on both sides): one assignment
    per element, made once per statement (the models key their notes by node)."""
    pairs: list[ast.Assign] | None = getattr(node, "_element_pairs", None)
    if pairs is not None:
        return pairs
    pairs = []
    target = node.targets[0] if len(node.targets) == 1 else None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(node.value.elts) \
            and not any(isinstance(e, ast.Starred) for e in (*target.elts, *node.value.elts)):
        for left, right in zip(target.elts, node.value.elts, strict=True):
            pair = ast.Assign(targets=[left], value=right)
            ast.copy_location(pair, left)
            pairs.append(pair)
    node._element_pairs = pairs  # type: ignore[attr-defined]
    return pairs

