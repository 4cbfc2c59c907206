"""Expressions: names, containers, operators, conditional expressions, walrus, comprehensions, lambdas."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from .. import lift
from ..choices import common_tags, each_way, tag_except, tagged, tags_of, tracked
from ..domain import (
    BOOL,
    BOTTOM,
    FALSE,
    NONE,
    TOP,
    TRUE,
    Atom,
    BuiltinRef,
    DeviceAtom,
    DictAtom,
    Instance,
    NumberAtom,
    SeqAtom,
    TensorAtom,
    V,
    Value,
    const,
    const_value,
    join_all,
    reveal_text,
    seq,
    seq_of,
)
from ..facts import FactStore
from ..shim_api import BINARY, BINOPS, UNARY
from .dispatch_helpers import NullFacts
from .flow_state import Frame, FrameKind, State, item_overlay, join_states, widen_if_large
from .limits import MAX_UNROLL, MAX_WAYS_UNROLLED
from .mixin import EngineMixin
from .program import DICT_ITEMS
from .python_values import (
    ARITH_OPS,
    BUILTIN_NAMES,
    CMP_OPS,
    and_bools,
    compare_values,
    fold_constants,
    is_nonempty_sequence,
    keep_walrus_bindings,
    number_arithmetic,
    splice_items,
)

# the expressions an editor's hover can point at
_HOVERED = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


# a unary operator applied to a constant operand
_CONST_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


class Expressions(EngineMixin):
    """Expressions."""

    facts: FactStore  # swapped for NullFacts during a quiet evaluation

    def eval(self, node: ast.expr | None, st: State, fr: Frame, quiet: bool = False) -> Value:
        if node is None:
            return NONE
        if st.dead:
            return BOTTOM
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            return TOP
        if quiet:
            saved, self.facts = self.facts, NullFacts()
            try:
                return method(node, st, fr)
            finally:
                self.facts = saved
        value = method(node, st, fr)
        if self.facts.expressions is not None and isinstance(node, _HOVERED):
            self._record_expression(node, value, fr)
        return value

    def _record_expression(self, node: ast.expr, value: Value, fr: Frame) -> None:
        if not any(isinstance(a, (TensorAtom, DeviceAtom)) or a.revealable() for a in value.atoms):
            return  # hover shows tensors and devices only
        key = (fr.file, node.lineno, node.col_offset, node.end_lineno or node.lineno,
               node.end_col_offset or node.col_offset)
        expressions = self.facts.expressions
        assert expressions is not None  # eval records only while the store collects expressions
        expressions.setdefault(key, set()).add(reveal_text(value))

    def expr_Constant(self, node: ast.Constant, st: State, fr: Frame) -> Value:
        return const_value(node.value)

    def expr_Name(self, node: ast.Name, st: State, fr: Frame) -> Value:
        return self.lookup(node.id, st, fr)

    def lookup(self, name: str, st: State, fr: Frame) -> Value:
        value = st.vars.get(name)
        if value is not None:
            return value
        if fr.kind is not FrameKind.MODULE:
            value = fr.closure.get(name)
            if value is not None:
                return value
            value = fr.module.namespace.get(name)
            if value is not None:
                return value
        if name in BUILTIN_NAMES:
            return V(BuiltinRef(name))
        return TOP

    def expr_Subscript(self, node: ast.Subscript, st: State, fr: Frame) -> Value:
        if st.overlays and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, (int, str)):
            narrowed = st.overlays.get(item_overlay(node.value.id, node.slice.value))
            if narrowed is not None:
                return narrowed  # ``layer[0]`` where ``isinstance(layer[0], Head)`` held
        container = self.eval(node.value, st, fr)
        if isinstance(node.slice, ast.Slice):
            bounds: list[int | None] | None = []
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is None:
                    bounds = bounds if bounds is None else [*bounds, None]
                    continue
                consts = self.eval(part, st, fr).consts()
                known = consts is not None and len(consts) == 1 and type(consts[0]) is int
                bounds = [*bounds, consts[0]] if bounds is not None and known else None  # type: ignore[index]
            return self._slice(container, bounds)
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
                out = out.join(self._mapped(V(atom), keys))
            elif (modelled := self.model_index(atom, key, node, st, fr)) is not None:
                out = out.join(modelled)  # a library object's item (a tensor's rows, a layer of a Sequential)
            elif isinstance(atom, Instance) and atom.cls.dict_items_kept():
                out = out.join(self._mapped(self.attribute(V(atom), DICT_ITEMS, None, st, fr), keys))
            elif isinstance(atom, Instance):
                getter = self.attribute_of(atom, "__getitem__", node, st, fr)
                out = out.join(self.call(getter, [key], {}, node, st, fr) if getter is not None else TOP)
            else:
                out = out.join(TOP)
        return out

    @staticmethod
    def _mapped(mapping: Value, keys: list | None) -> Value:
        """``mapping[key]`` for dicts (``keys``: the key's constants, None when not known)."""
        out = TOP if mapping.top else BOTTOM
        for atom in mapping.atoms:
            if not isinstance(atom, DictAtom):
                out = out.join(TOP)
            elif keys:
                for k in keys:
                    found = atom.get(k)
                    out = out.join(found if found is not None else atom.rest if atom.rest is not None else TOP)
            else:
                out = out.join(join_all(v for _k, v in atom.items)).join(atom.unknown_keys()).join(TOP)
        return out

    def _slice(self, container: Value, bounds: list[int | None] | None = None) -> Value:
        """``xs[a:b:c]``: element-wise when the bounds are constants (``names[1:]`` in a recursion)."""
        out = TOP if container.top else BOTTOM
        for atom in container.atoms:
            if isinstance(atom, SeqAtom):
                if atom.items is not None and bounds is not None and bounds[2] != 0:
                    out = out.join(V(seq(atom.kind, atom.items[slice(*bounds)])))
                else:
                    out = out.join(V(seq_of(atom.kind, atom.elem)))
            else:
                modelled = self.model_element(atom, "slice")  # a library object's slice (a tensor's view)
                out = out.join(TOP if modelled is None else modelled)
        return out

    def expr_Tuple(self, node: ast.Tuple | ast.List | ast.Set, st: State, fr: Frame) -> Value:
        kind = {ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}[type(node)]
        items: list[Value] = []
        known = True
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                inner = self.eval(elt.value, st, fr)
                spliced = splice_items(inner)
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
        # keyed by (type, key): ``1`` and ``True`` stay apart, as the analysis keeps them; a later key replaces
        # the value in place, as Python does (one dict, not a rebuilt list per key: linear in the literal)
        items: dict[tuple[type, Any], tuple[Any, Value]] = {}
        known = True
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.eval(value_node, st, fr)
            if key_node is None:
                # ``{**base, "eval": d}``: a splatted dict with known keys keeps them
                splat = next(iter(value.atoms)) if len(value.atoms) == 1 and not value.top else None
                if isinstance(splat, DictAtom) and splat.rest is None:
                    for k, v in splat.items:
                        items[(type(k), k)] = (k, v)
                else:
                    known = False
                continue
            keys = self.eval(key_node, st, fr).consts()
            if keys and len(keys) == 1:
                items[(type(keys[0]), keys[0])] = (keys[0], value)
            else:
                known = False
        if st.dead:
            return BOTTOM
        return V(DictAtom(tuple(items.values()))) if known else TOP

    def expr_JoinedStr(self, node: ast.JoinedStr, st: State, fr: Frame) -> Value:
        """An f-string: its text when every part is a known int or str (``f"cuda:{rank}"`` with ``rank = 1``)."""
        parts: list[str] | None = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                found = self.eval(value.value, st, fr).consts()
                if parts is not None and found is not None and len(found) == 1 and type(found[0]) in (int, str) \
                        and value.conversion == -1 and value.format_spec is None:
                    parts.append(str(found[0]))
                else:
                    parts = None
            elif parts is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                parts = None
        return V(const("".join(parts))) if parts is not None and not st.dead else TOP

    def expr_FormattedValue(self, node: ast.FormattedValue, st: State, fr: Frame) -> Value:
        self.eval(node.value, st, fr)
        return TOP

    def expr_NamedExpr(self, node: ast.NamedExpr, st: State, fr: Frame) -> Value:
        path = self._target(node.value, st)
        value = self.eval(node.value, st, fr)
        if not st.dead:
            self.assign(node.target, value, st, fr)
            self.remember_alias([node.target], path, st)
        return value

    def expr_IfExp(self, node: ast.IfExp, st: State, fr: Frame) -> Value:
        # the value of an assignment (not a comprehension's element: one test, many outcomes) tags its ways
        forced = self.forced_way(node)
        if forced is not None:
            taken = self._forced_branch(node, forced, st, fr)
            if taken is not None:
                return taken
        true, false = self.branch(node.test, st, fr)
        once = self.statement_choice(node) and not (true.dead or false.dead)
        # (before anything is tagged there is nothing to restrict: the choice is looked for after the branches)
        choice = self.choice(node.test, st, fr) if once and fr.tagged else None
        if choice is not None:
            self.restrict_state(true, choice[0], choice[1], fr)
            self.restrict_state(false, choice[0], not choice[1], fr)
        body = self.eval(node.body, true, fr) if not true.dead else BOTTOM
        orelse = self.eval(node.orelse, false, fr) if not false.dead else BOTTOM
        if not true.dead and not false.dead:
            chosen = self.model_choose_value(body, orelse)
            if chosen is not None:  # ``"cuda" if use_cuda else "cpu"`` in a world of torch.cuda.is_available()
                taken = true if chosen else false
                st.take_values(taken)
                return body if chosen else orelse
        if once and choice is None and ((body != orelse and any(tracked(a) for a in body.atoms ^ orelse.atoms))
                                        or self.differ_in_taggables(true, false)):
            # (or the test narrowed a value: ``x`` of ``x.is_cuda`` goes the way of the branch it let through)
            choice = self.choice(node.test, st, fr)
        if choice is not None:
            # what the test narrowed (``x`` of ``x.is_cuda``) goes the same way as the branch it let through
            self.tag_branches(choice[0], choice[1], true, false, fr)
        merged = join_states([true, false])
        st.take_values(merged)
        if choice is not None and not true.dead and not false.dead and body != orelse:
            common = body.atoms & orelse.atoms
            fr.tagged = True
            body = tag_except(body, common, frozenset({(choice[0], choice[1])}))
            orelse = tag_except(orelse, common, frozenset({(choice[0], not choice[1])}))
        return body.join(orelse)

    def _forced_branch(self, node: ast.IfExp, forced: bool, st: State, fr: Frame) -> Value | None:
        """The branch a split run of the statement takes (None: it cannot be taken here; both are joined)."""
        true, false = self.branch(node.test, st, fr)
        taken, other = (true, false) if forced else (false, true)
        if taken.dead:
            return None
        value = self.eval(node.body if forced else node.orelse, taken, fr)
        if not other.dead and any(model.decides_values() for model in self.models):
            # the world's answer to an unknown device choice (:meth:`model_choose_value`) rules this way out
            rest = self.eval(node.orelse if forced else node.body, other.copy(), fr, quiet=True)
            if self.model_choose_value(value, rest) is False:
                st.dead = True
                return BOTTOM
        st.take_values(taken)
        return value

    def expr_BoolOp(self, node: ast.BoolOp, st: State, fr: Frame) -> Value:
        """``a or b`` / ``a and b``: each operand evaluated where the previous ones decided to go on."""
        is_and = isinstance(node.op, ast.And)
        result = BOTTOM
        exits: list[State] = []
        current = st.copy()
        decided: frozenset = frozenset()  # the tags every value that let the evaluation go on carried
        for i, value_node in enumerate(node.values):
            value = self.eval(value_node, current, fr)
            if current.dead:
                break
            value = tagged(value, decided) if decided else value  # (``not args.no_cuda and ok``: the flag's way)
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
            decided = decided | common_tags(going_on)
            path = self._target(value_node, current)
            if path is not None and not path[1]:
                current.set(path[0], going_on)
        merged = join_states(exits)
        st.take_values(merged)
        return result

    def expr_Compare(self, node: ast.Compare, st: State, fr: Frame) -> Value:
        left = self.eval(node.left, st, fr)
        result: Value | None = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node, st, fr)
            modelled = self.model_binop(op, left, right, node, st, fr, compare=True) if len(node.ops) == 1 else None
            if modelled is not None:
                return modelled if not st.dead else BOTTOM  # element-wise (a bool tensor, a bool array)
            compare = CMP_OPS.get(type(op))
            outcome = compare_values(compare, left, right) if compare is not None else None
            value = BOOL if outcome is None else (TRUE if outcome else FALSE)
            if outcome is None and compare is not None and len(node.ops) == 1:  # a tagged side: per way
                value = _compared_per_way(compare, left, right) or value
            result = value if result is None else and_bools(result, value)
            left = right
        return result if result is not None and not st.dead else BOTTOM

    def expr_UnaryOp(self, node: ast.UnaryOp, st: State, fr: Frame) -> Value:
        operand = self.eval(node.operand, st, fr)
        if st.dead:
            return BOTTOM
        if isinstance(node.op, ast.Not):
            per_way = each_way(operand, lambda a: None if a.truthy() is None else const(not a.truthy()))
            if per_way is not None:  # ``not args.no_cuda`` of a flag an option's choice tagged
                return per_way
            truth = operand.truthiness()
            if truth == {True}:
                return FALSE
            if truth == {False}:
                return TRUE
            return BOOL
        modelled = self.model_unary(node.op, operand, node, st, fr)
        if modelled is not None:
            return modelled
        if isinstance(node.op, ast.USub) and operand.tensors():
            site = self.site(node, "Tensor.neg", fr)
            lifted = lift.unary(fr.profile, UNARY["neg"], operand, fr.scopes, self.origin(node, fr))
            return self.record(site, lifted, st, fr)
        if isinstance(node.op, (ast.USub, ast.UAdd)) and operand.only(NumberAtom):
            return operand
        consts = operand.consts()
        if consts is not None and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            try:
                fn = _CONST_UNARY[type(node.op)]
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
        modelled = self.model_binop(op, left, right, node, st, fr)  # (a model leaves runtime_shim tensors alone)
        if modelled is not None:
            return modelled
        name = BINOPS.get(type(op))
        if name is not None and (left.tensors() or right.tensors()):
            return self.tensor_binary(BINARY[name], left, right, node, st, fr, reflected=True)
        lc, rc = left.consts(), right.consts()
        fn = ARITH_OPS.get(type(op))
        if lc is not None and rc is not None and fn is not None and len(lc) * len(rc) <= 8:
            results = [fold_constants(fn, a, b) for a in lc for b in rc]
            if results and all(r is not None for r in results):
                return Value(frozenset(const(r) for r in results))
        numbers = number_arithmetic(op, left, right)
        if numbers is not None:
            return numbers
        if isinstance(op, ast.Add) and left.only(SeqAtom) and right.only(SeqAtom):
            return V(seq_of("list", join_all(a.elem for a in (*left.atoms, *right.atoms))))  # type: ignore[attr-defined]
        if isinstance(op, ast.Mult):
            repeated = _repeat(left, right) if left.only(SeqAtom) else _repeat(right, left) if right.only(SeqAtom) \
                else None
            if repeated is not None:
                return repeated
        return TOP

    def expr_Lambda(self, node: ast.Lambda, st: State, fr: Frame) -> Value:
        return V(self.make_function(node, st, fr))

    def expr_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp, st: State, fr: Frame) -> Value:
        inner = self._comprehension(node.generators, st, fr)
        if inner is None:
            return V(seq("list", ())) if not st.dead else BOTTOM
        element = self.eval(node.elt, inner, fr)
        keep_walrus_bindings(st, inner, node)
        if inner.dead and self._runs_at_least_once(node.generators, st, fr):
            st.dead = True  # every element raises and there is at least one
            return BOTTOM
        kind = "set" if isinstance(node, ast.SetComp) else "list"
        if kind == "list":
            ways = self._unrolled_ways(node.generators, [node.elt], st, fr)
            if ways is not None:
                return join_all(tagged(V(seq("list", [row[0] for row in rows])), tags) for tags, rows in ways)
        return V(seq_of(kind, element))

    expr_SetComp = expr_ListComp

    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node: ast.DictComp, st: State, fr: Frame) -> Value:
        inner = self._comprehension(node.generators, st, fr)
        if inner is None:
            return V(DictAtom(())) if not st.dead else BOTTOM
        self.eval(node.key, inner, fr)
        value = self.eval(node.value, inner, fr)
        keep_walrus_bindings(st, inner, node)
        if inner.dead and self._runs_at_least_once(node.generators, st, fr):
            st.dead = True
            return BOTTOM
        rows = self._unrolled(node.generators, [node.key, node.value], st, fr)
        if rows is not None:
            items: dict = {}
            for key, item in rows:
                keys = key.consts()
                if not keys or len(keys) != 1 or key.top:
                    break
                items[keys[0]] = item  # a later equal key replaces the value in place, as in Python
            else:
                return V(DictAtom(tuple(items.items())))
        return V(DictAtom((), rest=value))

    def _unrolled_ways(self, generators: list[ast.comprehension], exprs: list[ast.expr], st: State,
                       fr: Frame) -> list[tuple[frozenset, list[list[Value]]]] | None:
        """:meth:`_unrolled` over each sequence the iterable may be, when every one has a known length (a
        recurrent state that is the tuple made in ``__init__`` or the one the layer gave back: ``tuple(h.detach()
        for h in hidden)`` stays a pair, each of one tuple's elements): (the sequence's tags, its rows) each."""
        if len(generators) != 1 or generators[0].ifs or generators[0].is_async:
            return None
        iterable = self.eval(generators[0].iter, st.copy(), fr, quiet=True)
        if iterable.top or not 1 < len(iterable.atoms) <= MAX_WAYS_UNROLLED \
                or not all(isinstance(a, SeqAtom) and a.items is not None for a in iterable.atoms):
            rows = self._unrolled(generators, exprs, st, fr, iterable)
            return None if rows is None else [(frozenset(), rows)]
        ways = []
        for atom in sorted(iterable.atoms, key=repr):  # (a stable order: stable contexts of calls inside)
            rows = self._unrolled(generators, exprs, st, fr, V(atom))
            if rows is None:
                return None
            ways.append((tags_of(atom), rows))
        return ways

    def _unrolled(self, generators: list[ast.comprehension], exprs: list[ast.expr], st: State,
                  fr: Frame, iterable: Value | None = None) -> list[list[Value]] | None:
        """Element-wise values of a comprehension with one unconditional generator over a short sequence of
        known length (``range(3)``, a literal tuple, ``d.items()``); ``None`` otherwise. Evaluated quietly:
        the facts at sites inside come from the joined evaluation. ``iterable``: what it iterates, when known."""
        if len(generators) != 1 or generators[0].ifs or generators[0].is_async:
            return None
        if iterable is None:
            iterable = self.eval(generators[0].iter, st.copy(), fr, quiet=True)
        items = splice_items(iterable)
        if items is None or len(items) > MAX_UNROLL:
            return None
        rows = []
        for item in items:
            inner = st.copy()
            self.assign(generators[0].target, item, inner, fr)
            row = [self.eval(e, inner, fr, quiet=True) for e in exprs]
            if inner.dead:
                return None
            rows.append(row)
        return rows

    def _runs_at_least_once(self, generators: list[ast.comprehension], st: State, fr: Frame) -> bool:
        """A single unconditional generator over a sequence of known, non-zero length."""
        if len(generators) != 1 or generators[0].ifs:
            return False
        return is_nonempty_sequence(self.eval(generators[0].iter, st.copy(), fr, quiet=True))

    def _comprehension(self, generators: list[ast.comprehension], st: State, fr: Frame) -> State | None:
        """The state inside the comprehension (targets bound to the element values), or ``None`` if empty."""
        inner = st.copy()
        for gen in generators:
            iterable = self.eval(gen.iter, inner, fr)
            if not inner.dead:
                iterable = self.iterated(iterable, gen.iter, inner, fr)
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
        """A generator's items: the join of what it yields (``yield from xs``: the items of xs)."""
        value = self.eval(node.value, st, fr) if node.value is not None else NONE
        if not st.dead:
            fr.yields = fr.yields.join(self.iter_element(value) if isinstance(node, ast.YieldFrom) else value)
        return TOP  # what the consumer sends back

    expr_YieldFrom = expr_Yield

    def iterated(self, iterable: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """What a ``for`` loop iterates: a project object's ``__iter__()`` result in place of the object (a
        generator method gives what it yields), so ``for batch in loader:`` over a project loader follows its
        batches; an object without a project ``__iter__`` is left as it is (its items unknown)."""
        return self._through_method(iterable, "__iter__", node, st, fr,
                                    lambda items: self._iterator_items(items, node, st, fr))

    def _iterator_items(self, iterator: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """What ``__iter__()`` gave, as a loop takes its items: a project iterator (often ``self``, a hand-written
        batch iterator) stands for what its ``__next__()`` returns; anything else is left as it is. ``__next__``
        runs on a copy of the state: its ``raise StopIteration`` ends the loop, not the path."""
        return self._through_method(iterator, "__next__", node, st, fr, lambda item: V(seq_of("list", item)),
                                    on_copy=True)

    def _through_method(self, value: Value, name: str, node: ast.AST, st: State, fr: Frame,
                        then: Callable[[Value], Value], on_copy: bool = False) -> Value:
        """``value`` with each project instance that has the method ``name`` replaced by ``then`` of that method's
        result (called with no arguments on ``st``, or on a copy of it for each); other atoms are kept."""
        instances = [atom for atom in value.atoms if isinstance(atom, Instance)]
        if not instances:
            return value
        out = Value(value.atoms.difference(instances), value.top)
        for atom in instances:
            method = self.attribute_of(atom, name, None, st, fr)
            if method is None or method.top or not method.atoms:
                out = out.join(V(atom))
                continue
            out = out.join(then(self.call(method, [], {}, node, st.copy() if on_copy else st, fr)))
        return out

    def iter_element(self, value: Value) -> Value:
        out = TOP if value.top else BOTTOM
        for atom in value.atoms:
            if isinstance(atom, SeqAtom):
                out = out.join(atom.elem)
            elif isinstance(atom, DictAtom):
                out = out.join(Value(frozenset(const(k) for k, _v in atom.items), atom.rest is not None))
            elif (modelled := self.model_element(atom, "iterate")) is not None:
                out = out.join(modelled)  # a tensor's rows, the modules of a ``ModuleList``
            else:
                out = out.join(TOP)
        return widen_if_large(out)  # the keys of a registry of hundreds: any of them


def _repeat(sequence: Value, count: Value) -> Value | None:
    """``[batch] * n``: the same elements, element-wise when the count is a small known int (an unknown
    count is taken as an int: the elements are still these)."""
    counts = count.consts()
    if counts is None and ((count.top and not count.atoms) or count.only(NumberAtom)):
        counts = [-1]
    if counts is None or not all(type(c) is int for c in counts):
        return None
    out = BOTTOM
    for atom in sequence.atoms:
        assert isinstance(atom, SeqAtom)
        for n in counts:
            if atom.items is not None and n >= 0 and len(atom.items) * n <= MAX_UNROLL:
                out = out.join(V(seq(atom.kind, atom.items * n)))
            else:
                out = out.join(V(seq_of(atom.kind, atom.elem)))
    return out


def _compared_per_way(compare: Any, left: Value, right: Value) -> Value | None:
    """``left <op> right`` where one side's possibilities carry choice tags: each one's outcome, with its tags
    (``args.device == "cuda"``: true on one way of the option, false on the other)."""
    def outcome(mine: Atom, other: Value, flip: bool) -> Atom | None:
        pair = (other, V(mine)) if flip else (V(mine), other)
        found = compare_values(compare, *pair)
        return None if found is None else const(found)

    if any(tags_of(a) for a in left.atoms):
        return each_way(left, lambda a: outcome(a, right, False))
    return each_way(right, lambda a: outcome(a, left, True))
