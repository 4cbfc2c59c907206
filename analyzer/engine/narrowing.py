"""Branch conditions: the states where a test is true and false, narrowed on device and tensor predicates."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from runtime_shim import semantics as S

from .. import lift
from ..choices import tags_of
from ..domain import (
    BOTTOM,
    TOP,
    Atom,
    BuiltinRef,
    ClassRef,
    Const,
    DeviceAtom,
    DictAtom,
    GradsAtom,
    GraphAtom,
    Instance,
    NumberAtom,
    Origin,
    ScopeAtom,
    SeqAtom,
    TensorAtom,
    V,
    Value,
    const,
    seq,
)
from .flow_state import Frame, Overlay, Slot, State, Step, dead, item_overlay, join_states
from .mixin import EngineMixin
from .program import ClassInfo
from .python_values import (
    CMP_OPS,
    bounds_where,
    compare_atoms,
    compare_values,
    constant_number,
    is_none_value,
    is_number_const,
    names_library_function,
    negate,
    truth_of,
)

#: a class an ``isinstance`` test names: a builtin type, a library class by the name its model gives, or a class
#: of the analysed code
TypeName = type | str | ClassInfo


class Narrowing(EngineMixin):
    """Branch conditions."""

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
        if None in truth and len(truth) == 2:
            known = self._known_answer(test, st, fr)
            truth = truth if known is None else {known}
        if truth == {True}:
            false.dead = True
        elif truth == {False}:
            true.dead = True
        for key, pred in self._narrowings(test, st, fr):
            self._narrow(key, pred, true, false, fr)
        self._bound_numbers(test, st, true, false, fr)
        item = self._item_narrowing(test, st, fr)
        if item is not None:
            _narrow_item(*item, true, false)
            self._narrow_read_item(*item, true, false, fr)
        return true, false

    def _narrow_read_item(self, name: str, key: object, pred: Callable[[Value], bool | None], true: State,
                          false: State, fr: Frame) -> None:
        """``isinstance(layer[0], Head)`` where ``layer`` is an object whose items are read through a model or
        ``__getitem__`` (a ``Sequential``, a project container): each branch reads ``layer[0]`` as the
        possibilities the test allows, until ``layer`` changes."""
        if not isinstance(key, (int, str)) or type(key) is bool:
            return
        for state, wanted in ((true, True), (false, False)):
            container = state.vars.get(name)
            if state.dead or container is None or all(isinstance(a, (SeqAtom, DictAtom)) for a in container.atoms):
                continue
            node = ast.Subscript(ast.Name(name, ast.Load()), ast.Constant(key), ast.Load())
            item = self.eval(node, state.copy(), fr, quiet=True)
            kept = item.filter(lambda a, w=wanted: pred(V(a)) in (w, None))
            if kept.is_bottom and not item.is_bottom:
                state.dead = True
            elif kept != item:
                state.overlays[item_overlay(name, key)] = kept

    def _item_narrowing(self, test: ast.expr, st: State,
                        fr: Frame) -> tuple[str, object, Callable[[Value], bool | None]] | None:
        """``batch["mask"] is not None``, ``isinstance(outputs[0], torch.Tensor)``: a test on one item of a
        variable's dict, list or tuple, by a constant key (the variable, the key, the test on the item)."""
        subject: ast.expr | None = None
        pred: Callable[[Value], bool | None] | None = None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            subject = test.left
            wanted = isinstance(test.ops[0], ast.Is)
            pred = (lambda v: is_none_value(v)) if wanted else (lambda v: negate(is_none_value(v)))
        elif isinstance(test, ast.Call) and len(test.args) == 2 and not test.keywords \
                and self.eval(test.func, st.copy(), fr, quiet=True) == V(BuiltinRef("isinstance")):
            types = _abc_types(test.args[1], fr.module.source.tree) or self._builtin_types(
                self.eval(test.args[1], st.copy(), fr, quiet=True))
            if types is not None:
                subject = test.args[0]
                pred = lambda v, t=types: _is_instance(v, t)  # noqa: E731
        if not (isinstance(subject, ast.Subscript) and isinstance(subject.value, ast.Name)
                and isinstance(subject.slice, ast.Constant) and pred is not None):
            return None
        return subject.value.id, subject.slice.value, pred

    def _narrow(self, key: Slot, pred: Callable[[Atom], bool | None], true: State, false: State, fr: Frame) -> None:
        for state, wanted in ((true, True), (false, False)):
            if state.dead:
                continue
            current = state.get(key)
            if current is None:
                if not isinstance(key, Overlay):
                    continue
                current = self.attribute(state.vars.get(key.base, TOP), key.attr, None, state, fr)
            kept = current.filter(lambda atom, w=wanted: pred(atom) in (w, None))
            if kept.is_bottom and not current.is_bottom:
                state.dead = True
            elif kept is not current:
                state.set(key, kept)
                self._decided_by_narrowing(current, kept, state, fr)

    def _bound_numbers(self, test: ast.expr, st: State, true: State, false: State, fr: Frame) -> None:
        """``n > 1``, ``0 < n``, ``n == 0`` on a variable holding numbers the analysis does not know: each branch
        keeps them within the bounds the test proves there (so a later ``n > 0`` is decided on them)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1) or type(test.ops[0]) not in (
                ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq):
            return
        compare = CMP_OPS[type(test.ops[0])]
        for subject, other, flipped in ((test.left, test.comparators[0], False),
                                        (test.comparators[0], test.left, True)):
            key: Slot
            if isinstance(subject, ast.Name):
                key = subject.id
            elif isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name):
                key = Overlay(subject.value.id, subject.attr)  # ``args.n_gpu``: each branch's bounds kept on it
            else:
                continue
            number = constant_number(self.eval(other, st.copy(), fr, quiet=True))
            if number is None:
                continue
            for state, holds in ((true, True), (false, False)):
                where = bounds_where(compare, number, holds, flipped)
                if state.dead or where is None:
                    continue
                current = state.get(key)
                if current is None and isinstance(key, Overlay):
                    current = self.eval(subject, state.copy(), fr, quiet=True)
                if current is None or not any(isinstance(a, NumberAtom) or is_number_const(a) for a in current.atoms):
                    continue
                atoms = {a.within(*where) if isinstance(a, NumberAtom) else a for a in current.atoms
                         if _compared(compare, a, number, flipped) is not (not holds)}
                kept = Value(frozenset(a for a in atoms if a is not None), current.top)
                if kept.is_bottom:
                    state.dead = True
                elif kept != current:
                    state.set(key, kept)
                    self._decided_by_narrowing(current, kept, state, fr)

    def _decided_by_narrowing(self, before: Value, after: Value, state: State, fr: Frame) -> None:
        """A test that left a value only possibilities of one way of an earlier undecided choice (``if n > 0:
        model.cuda()`` then ``if n > 1:``, which only a positive ``n`` passes): the branch is that way, for every
        value (one value is on one device at a time)."""
        if after.top or not after.atoms:
            return
        common = frozenset.intersection(*(tags_of(a) for a in after.atoms))
        dropped = set().union(*(tags_of(a) for a in before.atoms - after.atoms)) if before.atoms - after.atoms \
            else set()
        for choice, way in sorted(common, key=str):
            if (choice, not way) in dropped:
                self.restrict_state(state, choice, way, fr)

    def _narrowings(self, test: ast.expr, st: State, fr: Frame) -> list[tuple[Slot, Callable[[Atom], bool | None]]]:
        out: list[tuple[Slot, Callable[[Atom], bool | None]]] = []
        func: Value | None = None
        types: tuple[TypeName, ...] | None = None
        if isinstance(test, ast.Call) and test.args and not test.keywords and len(test.args) <= 2:
            func = self.eval(test.func, st.copy(), fr, quiet=True)
            tested = next(iter(func.atoms)).type_predicate() if len(func.atoms) == 1 and not func.top else None
            if len(test.args) == 1 and tested is not None:
                types = (tested,)  # ``torch.is_tensor(x)``: ``isinstance(x, torch.Tensor)``
            elif len(test.args) == 2 and func == V(BuiltinRef("isinstance")):
                # ``isinstance(tree, list)``: a recursive walk over nested containers takes one branch per value
                types = _abc_types(test.args[1], fr.module.source.tree) or self._builtin_types(
                    self.eval(test.args[1], st.copy(), fr, quiet=True))
            else:
                func = None
        if isinstance(test, ast.Call) and func is not None:
            if types is not None:
                for key, steps in self._targets(test.args[0], st):
                    out.append((key, self._predicate(steps, _instance_test(types))))
            return out
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, left, right = test.ops[0], test.left, test.comparators[0]
            if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
                for key, steps in self._targets(left, st):
                    out.append((key, self._predicate(steps, _none_test(isinstance(op, ast.Is)))))
                return out
            compare = CMP_OPS.get(type(op))
            if compare is None:
                return out
            for this, other, flipped in ((left, right, False), (right, left, True)):
                for key, steps in self._targets(this, st):
                    other_value = self.eval(other, st.copy(), fr, quiet=True)
                    if ("attr", "shape") in steps and other_value.top and other_value.atoms:
                        # ``self.grid.shape[2:4] != x.shape[2:4]`` with ``x`` partly unknown: one value has one
                        # shape, taken to be its known part's (as a partly unknown value's device is)
                        other_value = Value(other_value.atoms, False, other_value.notes)
                    out.append((key, self._predicate(steps, _compare_test(compare, other_value, flipped))))
            return out
        for key, steps in self._targets(test, st):
            out.append((key, self._predicate(steps, truth_of)))
        return out

    def _known_answer(self, test: ast.expr, st: State, fr: Frame) -> bool | None:
        """The answer of a test on a partly unknown value's device (``x.is_cuda``, ``x.device.type == "cuda"``)
        when every known possibility gives it: one value is on one device, so the unknown part is taken to be
        on theirs (a branch only it would take would pair what it makes with the known ones). None: no such
        answer."""
        subject, other, compare = test, None, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.NotEq):
            subject, other, compare = test.left, test.comparators[0], CMP_OPS.get(type(test.ops[0]))
            if compare is None:
                return None
        elif not isinstance(test, (ast.Attribute, ast.Call)):
            return None
        for key, steps in self._targets(subject, st):
            value = st.get(key)
            if not steps or value is None or not value.top or not value.atoms:
                continue
            check: Test = truth_of if other is None or compare is None else _compare_test(
                compare, self.eval(other, st.copy(), fr, quiet=True), False)
            answers = {self._project_pred(atom, steps, check) for atom in value.atoms}
            if len(answers) == 1 and None not in answers:
                return answers.pop()
        return None

    def _targets(self, expr: ast.expr, st: State) -> list[tuple[Slot, list[Step]]]:
        """The narrowable paths ``expr`` stands for: its own, and through a variable that copied a path
        (``b = t.device().backend``, ``ad = d.is_autodiff()``, a walrus), that path too."""
        if isinstance(expr, ast.NamedExpr):
            expr = expr.target
        path = self._target(expr, st)
        if path is None:
            return []
        out = [path]
        alias = st.aliases.get(path[0]) if isinstance(path[0], str) else None
        if alias is not None:
            out.append((alias[0], [*alias[1], *path[1]]))
        return out

    def _target(self, expr: ast.expr, st: State) -> tuple[Slot, list[Step]] | None:
        """A narrowable variable (``name`` or ``name.attr``) and the steps from it to ``expr``."""
        steps: list[Step] = []
        current = expr
        while True:
            if isinstance(current, ast.Call) and not current.args and not current.keywords and isinstance(
                    current.func, ast.Attribute):
                steps.append(("call", current.func.attr))
                current = current.func.value
            elif isinstance(current, ast.Attribute):
                steps.append(("attr", current.attr))
                current = current.value
            elif isinstance(current, ast.Subscript) and (key := _constant_key(current.slice)) is not None:
                steps.append(("item", key))  # ``t.shape[2:4]``, ``sizes[0]``
                current = current.value
            elif isinstance(current, ast.Subscript) and (key := _known_index(current.slice, st)) is not None:
                steps.append(("item", key))  # ``self.grid[i]`` where ``i`` is known here (a ``range`` loop's)
                current = current.value
            elif isinstance(current, ast.Name):
                break
            elif isinstance(current, ast.NamedExpr) and isinstance(current.target, ast.Name):
                current = current.target  # ``(d := pick()).is_autodiff()``: a test on d
                break
            else:
                return None
        steps.reverse()
        name = current.id
        if steps and steps[0][0] == "attr":
            overlay = Overlay(name, str(steps[0][1]))
            base = st.vars.get(name)
            if overlay in st.overlays or (base is not None and base.of_type(Instance)):
                return overlay, steps[1:]
        if name not in st.vars:
            return None
        return name, steps

    @staticmethod
    def _builtin_types(value: Value) -> tuple[TypeName, ...] | None:
        """The builtin container and scalar types an ``isinstance`` test names, the library classes a model's
        reference names (``torch.Tensor``, by name) and the classes of the analysed code; ``None``: anything
        else."""
        types: list[TypeName] = []
        for atom in value.atoms:
            if isinstance(atom, BuiltinRef) and atom.name in _BUILTIN_TYPES:
                types.append(_BUILTIN_TYPES[atom.name])
            elif isinstance(atom, ClassRef):
                types.append(atom.cls)
            elif (named := atom.names_type()) is not None:
                types.append(named)
            elif isinstance(atom, SeqAtom) and atom.kind == "tuple" and atom.items is not None:
                for item in atom.items:
                    inner = Narrowing._builtin_types(item)
                    if inner is None:
                        return None
                    types.extend(inner)
            else:
                return None
        return tuple(types) if types and len(value.atoms) == 1 and not value.top else None

    def _predicate(self, steps: list[Step], test: Test) -> Callable[[Atom], bool | None]:
        """What ``test`` says of an atom's value at ``steps`` (``None``: it cannot say)."""
        return lambda atom: self._project_pred(atom, steps, test)

    def _project_pred(self, atom: Atom, steps: list[Step],
                      test: Test) -> bool | None:
        value = V(atom)
        for kind, name in steps:
            stepped = self._pure_step(value, kind, name)
            if stepped is None:
                return None
            value = stepped
        return test(value)

    def _pure_step(self, value: Value, kind: str, name: object) -> Value | None:
        """Follow ``.name``, ``.name()`` or ``[key]`` (a constant index or slice of a known sequence) without
        recording facts; ``None`` when not modelled."""
        out = BOTTOM
        if kind == "item":
            for atom in value.atoms:
                if not (isinstance(atom, SeqAtom) and atom.items is not None):
                    return None
                if not isinstance(name, (int, slice)):
                    return None
                if isinstance(name, slice):
                    out = out.join(V(seq(atom.kind, atom.items[name])))
                    continue
                if not -len(atom.items) <= name < len(atom.items):
                    return None
                out = out.join(atom.items[name])
            return out.join(TOP) if value.top else out
        for atom in value.atoms:
            if isinstance(atom, TensorAtom):
                if kind == "call" and name == "device":
                    out = out.join(V(atom.reported_device()))
                elif kind == "call" and name == "is_require_grad":
                    out = out.join(V(const(S.is_require_grad(atom.cls, atom.role))))
                elif kind == "call" and name in S.TENSOR_QUERIES and S.has_tensor_method(self.profile, str(name)):
                    out = out.join(V(const(S.query_result(str(name), atom.cls, atom.role))))
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
                stepped = self.model_pure_attribute(atom, kind, str(name))
                if stepped is None:
                    return None
                out = out.join(stepped)
        return out.join(TOP) if value.top else out


def _constant_key(node: ast.expr) -> int | slice | None:
    """A subscript's constant index or slice (``[0]``, ``[2:4]``, ``[-1]``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, ast.Slice) and node.step is None:
        bounds = [None if b is None else _constant_key(b) for b in (node.lower, node.upper)]
        if all(b is None or type(b) is int for b in bounds) and not any(
                b is None and given is not None for b, given in zip(bounds, (node.lower, node.upper), strict=True)):
            return slice(bounds[0], bounds[1])
    return None


def _known_index(node: ast.expr, st: State) -> int | None:
    """A subscript's index held by a variable known to be one int here (``grid[i]`` in an unrolled loop)."""
    if not isinstance(node, ast.Name):
        return None
    held = st.vars.get(node.id)
    consts = held.consts() if held is not None else None
    return consts[0] if consts is not None and len(consts) == 1 and type(consts[0]) is int else None


def _compared(compare: Callable[[Any, Any], Any], atom: Atom, number: float, flipped: bool) -> bool | None:
    """``atom <op> number`` (``number <op> atom`` when ``flipped``): its answer where it has one."""
    other = const(number)
    return compare_atoms(compare, other, atom) if flipped else compare_atoms(compare, atom, other)


def _narrow_item(name: str, key: object, pred: Callable[[Value], bool | None], true: State, false: State) -> None:
    """Keep, in each branch, the possibilities of ``name[key]`` the test allows; a container whose item allows
    none is not a possibility there (the branch is dead when none is left)."""
    for state, wanted in ((true, True), (false, False)):
        container = state.vars.get(name)
        if state.dead or container is None:
            continue
        atoms: set[Atom] = set()
        for atom in container.atoms:
            if isinstance(atom, DictAtom) and isinstance(key, str):
                item = atom.get(key)
                if item is None:
                    atoms.add(atom)
                    continue
                kept = item.filter(lambda a, w=wanted: pred(V(a)) in (w, None))
                if kept.atoms or kept.top:
                    atoms.add(DictAtom(tuple((k, kept if k == key else v) for k, v in atom.items), atom.rest))
            elif isinstance(atom, SeqAtom) and atom.items is not None and type(key) is int \
                    and -len(atom.items) <= key < len(atom.items):
                item = atom.items[key]
                kept = item.filter(lambda a, w=wanted: pred(V(a)) in (w, None))
                if kept.atoms or kept.top:
                    items = list(atom.items)
                    items[key] = kept
                    atoms.add(SeqAtom(atom.kind, tuple(items), atom.elem))
            else:
                atoms.add(atom)
        if not atoms and not container.top:
            state.dead = True
        elif atoms != container.atoms:
            state.vars[name] = Value(frozenset(atoms), container.top)


_BUILTIN_TYPES: dict[str, type] = {t.__name__: t for t in (list, tuple, dict, set, str, int, float, bool)}
#: The abstract containers of ``collections.abc`` (and ``typing``) an ``isinstance`` test may name, as the
#: builtins they cover (an instance of the analysed code may register with them: :func:`_is_instance` says so).
_ABC_TYPES: dict[str, tuple[type, ...]] = {"Sequence": (list, tuple, str), "MutableSequence": (list,),
                                           "Mapping": (dict,), "MutableMapping": (dict,)}


def _abc_types(expr: ast.expr, tree: ast.Module | None) -> tuple[type, ...] | None:
    """``isinstance(x, Sequence)``, ``isinstance(x, (Mapping, Sequence))`` with the names imported from
    ``collections.abc`` or ``typing``: the builtins they cover; ``None`` for anything else."""
    out: list[type] = []
    for item in expr.elts if isinstance(expr, ast.Tuple) else [expr]:
        dotted = ast.unparse(item) if isinstance(item, ast.Attribute) else ""
        found = next((types for name, types in _ABC_TYPES.items() for module in ("collections.abc", "typing")
                      if names_library_function(item, module, name, tree) or dotted == f"{module}.{name}"), None)
        if found is None:
            return None
        out.extend(found)
    return tuple(out)


def isinstance_outcome(value: Value, types: Value) -> bool | None:
    """``isinstance(value, types)`` on any expression (a subscript, an attribute, a call's result): the
    answer when every possibility agrees and the types are builtins or library classes a model answers for
    (``torch.Tensor``); ``None`` otherwise. Narrowing a variable's own possibilities is :class:`Narrowing`'s."""
    names = Narrowing._builtin_types(types)
    return None if names is None or value.is_bottom else _is_instance(value, names)


Test = Callable[[Value], bool | None]  # a narrowing test of a value (None: it cannot say)


def _instance_test(types: tuple[TypeName, ...]) -> Test:
    return lambda value: _is_instance(value, types)


def _none_test(is_none: bool) -> Test:
    """``x is None`` (``is_none``) or ``x is not None``."""
    return lambda value: is_none_value(value) if is_none else negate(is_none_value(value))


def _compare_test(compare: Callable[[Any, Any], Any], other: Value, flipped: bool) -> Test:
    """``x <op> other``, or ``other <op> x`` when ``flipped``."""
    return lambda value: compare_values(compare, other, value) if flipped else compare_values(compare, value, other)


def _is_instance(value: Value, types: tuple[TypeName, ...]) -> bool | None:
    """Whether every possibility is (or none is) an instance of ``types``; ``None`` when it depends or is
    not known (an instance of the analysed code may subclass a builtin, a numpy scalar is a float)."""
    python = tuple(t for t in types if isinstance(t, type))
    library = {t for t in types if isinstance(t, str)}
    project = [t for t in types if isinstance(t, ClassInfo)]
    answers: set[bool | None] = set()
    for atom in value.atoms:
        derived = {atom.cls.derives_from(cls) for cls in project} if isinstance(atom, Instance) else set()
        if True in derived or None in derived:
            answers.add(True if True in derived else None)
        elif isinstance(atom, Instance) and project and not python and not library:
            answers.add(False)  # a class of the analysed code that derives from none of them
        elif isinstance(atom, SeqAtom):
            kind = _BUILTIN_TYPES.get(atom.kind)
            answers.add(kind in python if kind is not None else None)
        elif isinstance(atom, DictAtom):
            answers.add(dict in python)
        elif isinstance(atom, Const):
            answers.add(isinstance(atom.value, python))
        elif isinstance(atom, (TensorAtom, DeviceAtom, GradsAtom, ScopeAtom, GraphAtom)):
            answers.add(False)
        elif (library_kind := atom.library_type()) is not None:
            answers.add(library_kind in library)
        elif isinstance(atom, Instance) and any(atom.cls.has_library_base(t) for t in library):
            answers.add(True)  # a project class derived from the library class
        else:
            answers.add(None)
    if value.top:
        answers.add(None)
    return answers.pop() if len(answers) == 1 else None
