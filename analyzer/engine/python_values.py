"""Plain Python semantics over abstract values: constant folding, comparisons, truthiness, AST helpers."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from typing import Any

from ..domain import (
    BOOL,
    FALSE,
    TRUE,
    Atom,
    Const,
    DeviceAtom,
    DictAtom,
    NumberAtom,
    SeqAtom,
    V,
    Value,
    join_all,
    same_device,
    seq,
    seq_of,
)
from .flow_state import State

CMP_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a), ast.Is: operator.is_, ast.IsNot: operator.is_not,
}

ARITH_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}

BUILTIN_NAMES = frozenset({
    "range", "enumerate", "zip", "list", "tuple", "set", "dict", "len", "isinstance", "print", "super",
    "property", "staticmethod", "classmethod", "getattr", "hasattr", "setattr", "sorted", "reversed", "min",
    "max", "sum", "abs", "int", "float", "str", "bool", "iter", "next", "repr", "type", "id", "round",
    "any", "all", "map", "filter", "Exception", "RuntimeError", "ValueError", "TypeError", "KeyError",
    "NotImplementedError", "AssertionError", "StopIteration", "object", "open", "format", "hash", "callable", "vars",
})

def fold_constants(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
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



def number_arithmetic(op: ast.operator, left: Value, right: Value) -> Value | None:
    """Arithmetic on a number of unknown value (``float(t) / 2``), or on numbers with too many values to fold
    (``offset += n`` over a list of sizes): a number again, a float where either side is one or the operator is
    ``/`` (``**`` of ints may be either). None: not such an operation."""
    sides = (*left.atoms, *right.atoms)
    if left.top or right.top or type(op) not in ARITH_OPS \
            or not all(isinstance(a, NumberAtom) or (isinstance(a, Const) and a.tname in ("int", "float", "bool"))
                       for a in sides) or not left.atoms or not right.atoms:
        return None
    if isinstance(op, ast.Div) or any(a.tname == "float" for a in sides):  # type: ignore[attr-defined]
        return Value((NumberAtom("float"),))
    if isinstance(op, ast.Pow):
        return Value((NumberAtom("int"), NumberAtom("float")))
    return Value((NumberAtom("int"),))


def is_nonempty_sequence(value: Value) -> bool:
    return value.only(SeqAtom) and all(a.items for a in value.atoms)  # type: ignore[attr-defined]



def splice_items(value: Value) -> list[Value] | None:
    """The items of ``*value`` when it is one sequence of known length."""
    if not value.top and len(value.atoms) == 1:
        atom = next(iter(value.atoms))
        if isinstance(atom, SeqAtom) and atom.items is not None:
            return list(atom.items)
    return None


def zip_columns(value: Value) -> Value | None:
    """``zip(*rows)`` of a list of unknown length whose rows are tuples of one known length (the collate idiom
    ``src, tgt = zip(*batch)``): that many columns, each a tuple of unknown length of that position's values."""
    if value.top or not value.atoms:
        return None
    elements: list[Atom] = []
    for atom in value.atoms:  # (a list attribute: its empty start and the rows appended since, joined)
        if not isinstance(atom, SeqAtom) or atom.items == ():
            if not isinstance(atom, SeqAtom):
                return None
            continue
        if atom.items is not None or atom.elem.top or not atom.elem.atoms:
            return None
        elements.extend(atom.elem.atoms)
    rows = [row for row in elements if isinstance(row, SeqAtom) and row.items is not None]
    widths = {len(row.items) for row in rows if row.items is not None}
    if not rows or len(rows) != len(elements) or len(widths) != 1:
        return None
    width = widths.pop()
    columns = [join_all(row.items[i] for row in rows if row.items is not None) for i in range(width)]
    return V(seq("list", [V(seq_of("tuple", column)) for column in columns]))



def splice_keywords(value: Value) -> dict[str, Value] | None:
    """The keyword arguments of ``**value`` when it is one dict whose keys are all known strings."""
    if not value.top and len(value.atoms) == 1:
        atom = next(iter(value.atoms))
        if isinstance(atom, DictAtom) and atom.rest is None and all(type(key) is str for key, _ in atom.items):
            return dict(atom.items)
    return None


def keep_walrus_bindings(st: State, inner: State, node: ast.AST) -> None:
    """A walrus inside a comprehension binds in the enclosing scope."""
    for name in _walrus_names(node):
        if name in inner.vars:
            st.vars[name] = st.vars[name].join(inner.vars[name]) if name in st.vars else inner.vars[name]
            st.kill_aliases(name)


def _walrus_names(node: ast.AST) -> tuple[str, ...]:
    """The names the walruses inside ``node`` bind, in walk order (walked once per comprehension node)."""
    known = getattr(node, "_devicelint_walrus_names", None)
    if known is None:
        known = tuple(sub.target.id for sub in ast.walk(node)
                      if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name))
        node._devicelint_walrus_names = known  # type: ignore[attr-defined]
    return known


def is_none_value(value: Value) -> bool | None:
    if value.top:
        return None
    flags = {isinstance(a, Const) and a.value is None for a in value.atoms}
    return flags.pop() if len(flags) == 1 else None



def negate(flag: bool | None) -> bool | None:
    return None if flag is None else not flag



def truth_of(value: Value) -> bool | None:
    truth = value.truthiness()
    return truth.pop() if len(truth) == 1 else None



def compare_values(compare: Callable[[Any, Any], Any] | None, left: Value, right: Value) -> bool | None:
    """The outcome of ``left <op> right`` when every pair of possibilities agrees; ``None`` otherwise."""
    if compare is None or left.top or right.top or left.is_bottom or right.is_bottom:
        return None
    outcomes: set[bool] = set()
    for a in left.atoms:
        for b in right.atoms:
            outcome = compare_atoms(compare, a, b)
            if outcome is None:
                return None
            outcomes.add(outcome)
            if len(outcomes) > 1:
                return None
    return outcomes.pop() if outcomes else None



def compare_atoms(compare: Callable[[Any, Any], Any], a: Atom, b: Atom) -> bool | None:
    if isinstance(a, SeqAtom) and isinstance(b, SeqAtom) and compare in (operator.eq, operator.ne) \
            and a.kind == b.kind and a.items is not None and b.items is not None and len(a.items) != len(b.items):
        return compare is operator.ne  # sequences of two lengths (``t.shape[2:4]`` of a 1-dim and a 5-dim tensor)
    if isinstance(a, DeviceAtom) and isinstance(b, DeviceAtom):
        if compare not in (operator.eq, operator.ne):
            return None
        same = same_device(a.dev, b.dev)
        if same is None:
            return None
        return same if compare is operator.eq else not same
    if compare in (operator.eq, operator.ne) and (equal := a.equals(b)) is not NotImplemented:
        return None if equal is None else equal is (compare is operator.eq)  # library values (torch devices)
    if isinstance(a, NumberAtom) and is_number_const(b) or isinstance(b, NumberAtom) and is_number_const(a):
        return _compare_bounds(compare, a, b)
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return bool(compare(a.value, b.value))
        except Exception:  # noqa: BLE001
            return None
    if isinstance(b, SeqAtom) and isinstance(a, Const) and b.items is not None and compare in (
            CMP_OPS[ast.In], CMP_OPS[ast.NotIn]):
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



def and_bools(a: Value, b: Value) -> Value:
    if a == FALSE or b == FALSE:
        return FALSE
    if a == TRUE and b == TRUE:
        return TRUE
    return BOOL



def as_load(target: ast.expr) -> ast.expr:
    """The load form of an augmented-assignment target."""
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(target.id, ast.Load()), target)
    if isinstance(target, ast.Attribute):
        return ast.copy_location(ast.Attribute(target.value, target.attr, ast.Load()), target)
    if isinstance(target, ast.Subscript):
        return ast.copy_location(ast.Subscript(target.value, target.slice, ast.Load()), target)
    return target



def call_name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""



def is_dataclass_decorator(node: ast.expr) -> bool:
    return call_name(node) == "dataclass"


#: annotations that declare no field of a dataclass (``KW_ONLY``: a marker, ``ClassVar``: a class attribute)
_NOT_FIELDS = ("ClassVar", "KW_ONLY")


def annotated_fields(body: list[ast.stmt]) -> list[tuple[str, ast.expr | None]]:
    """The fields a class body declares by annotation, in order, with the expression each is assigned (its
    default, or a ``field(...)`` call): a dataclass's or a ``typing.NamedTuple``'s."""
    return [(stmt.target.id, stmt.value) for stmt in body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            and not any(word in ast.unparse(stmt.annotation) for word in _NOT_FIELDS)]


def inherited_fields(classes: Iterable[list[tuple[str, ast.expr | None]] | None]) -> list[tuple[str, ast.expr | None]]:
    """The fields of a class whose bases, from the first to the class itself, declare ``classes``' fields: a
    field declared again keeps its first place, with the later default (as ``dataclasses`` orders them)."""
    out: dict[str, ast.expr | None] = {}
    for fields in classes:
        for name, default in fields or ():
            out[name] = default
    return list(out.items())


def field_call(default: ast.expr | None) -> ast.Call | None:
    """``default`` where it is a ``field(...)`` call (``dataclasses.field``)."""
    return default if isinstance(default, ast.Call) and call_name(default) == "field" else None


def in_init(default: ast.expr | None) -> bool:
    """Whether a dataclass field with this default is a parameter of the generated ``__init__`` (not
    ``field(init=False)``)."""
    call = field_call(default)
    return call is None or not any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                                   for k in call.keywords)



def is_setter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(call_name(d) in ("setter", "deleter") for d in node.decorator_list)





def names_library_function(func: ast.expr, module: str, name: str, tree: ast.Module | None) -> bool:
    """``func`` is ``module.name``, or ``name`` imported from ``module`` at the top of ``tree``
    (``contextlib.suppress``, ``from dataclasses import replace``)."""
    if isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name):
        return func.value.id == module
    if isinstance(func, ast.Name) and tree is not None:
        return any(isinstance(n, ast.ImportFrom) and n.module == module and
                   any((a.asname or a.name) == func.id and a.name == name for a in n.names) for n in tree.body)
    return False


def is_number_const(atom: Atom) -> bool:
    """An ``int`` or ``float`` constant (not a ``bool``)."""
    return isinstance(atom, Const) and type(atom.value) in (int, float)


def constant_number(value: Value) -> float | None:
    """The one ``int`` or ``float`` constant ``value`` is, or None."""
    if value.top or len(value.atoms) != 1:
        return None
    atom = next(iter(value.atoms))
    return atom.value if is_number_const(atom) else None  # type: ignore[attr-defined]


#: ``c <op> x`` as ``x <op'> c``
MIRRORED = {operator.lt: operator.gt, operator.le: operator.ge, operator.gt: operator.lt, operator.ge: operator.le,
            operator.eq: operator.eq, operator.ne: operator.ne}
#: ``not (x <op> c)`` as ``x <op'> c``
NEGATED = {operator.lt: operator.ge, operator.le: operator.gt, operator.gt: operator.le, operator.ge: operator.lt,
           operator.eq: operator.ne, operator.ne: operator.eq}
#: how a comparison is written (the name of a choice on it)
OP_TEXT = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
           operator.ne: "!="}


def _compare_bounds(compare: Callable[[Any, Any], Any], a: Atom, b: Atom) -> bool | None:
    """A number of known bounds against a constant: the answer where every number within them gives it."""
    if isinstance(a, NumberAtom):
        number, c = a, b.value  # type: ignore[attr-defined]
    else:
        compare = MIRRORED.get(compare)  # type: ignore[assignment]
        number, c = b, a.value  # type: ignore[assignment,attr-defined]
        if compare is None:
            return None
    assert isinstance(number, NumberAtom)
    low, high = number.low, number.high
    if compare in (operator.eq, operator.ne):
        if low is not None and c < low or high is not None and c > high:
            return compare is operator.ne
        return compare is operator.eq if low == high == c else None
    if compare is operator.gt:
        return True if low is not None and low > c else False if high is not None and high <= c else None
    if compare is operator.ge:
        return True if low is not None and low >= c else False if high is not None and high < c else None
    if compare is operator.lt:
        return True if high is not None and high < c else False if low is not None and low >= c else None
    if compare is operator.le:
        return True if high is not None and high <= c else False if low is not None and low > c else None
    return None


def bounds_where(compare: Callable[[Any, Any], Any], c: float, holds: bool,
                 flipped: bool = False) -> tuple[float | None, float | None, bool] | None:
    """The bounds ``x <op> c`` (``c <op> x`` when ``flipped``) puts on ``x`` where it ``holds`` (or where it does
    not), and whether they are strict; ``None``: none (``!=``, or not a comparison)."""
    if flipped:
        compare = MIRRORED.get(compare)  # type: ignore[assignment]
    if not holds:
        compare = NEGATED.get(compare)  # type: ignore[assignment]
    return {operator.eq: (c, c, False), operator.gt: (c, None, True), operator.ge: (c, None, False),
            operator.lt: (None, c, True), operator.le: (None, c, False)}.get(compare)
