"""numpy arrays and their dtypes: the kind (float, int, bool) ``Tensor.from_data`` makes of them.

Only what decides a tensor's kind is modelled: creation functions with and
without ``dtype=``, ``astype``, the ``numpy.random`` generators (``normal``,
``uniform`` ... give float64, ``integers`` int64), dtype constructors
(``np.float32(x)``), indexing and reshaping (the dtype is kept), reductions
(``mean`` gives a float), and arithmetic promotion at the level of kinds
(NEP 50: a Python scalar never widens an array beyond its own kind; ``/`` is
always float). Anything else numpy returns is unknown: the analysis never
guesses a kind, so a tensor made from it has an unknown state.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domain import (
    BOTTOM,
    TOP,
    ArrayAtom,
    Atom,
    BoundShim,
    BuiltinRef,
    Const,
    NumberAtom,
    NumpyRef,
    RngAtom,
    SeqAtom,
    V,
    Value,
    broadcast_ndim,
)
from ..shim_api import BINOPS, promote, promote_scalar, scalar_kind
from .base import UNHANDLED, LibraryModel, Unhandled
from .signatures import argument

if TYPE_CHECKING:
    from ..engine.flow_state import Frame, State

#: numpy dtypes (as attribute names of the ``numpy`` module or as strings) and their tensor kind. Only the
#: dtypes the runtime's executors accept are listed; any other dtype is unknown.
_DTYPE_KINDS = {
    **dict.fromkeys(("float16", "float32", "float64", "half", "single", "double", "float_", "f2", "f4", "f8",
                     "float"), "float"),
    **dict.fromkeys(("int8", "int16", "int32", "int64", "uint8", "intp", "int_", "i1", "i2", "i4", "i8", "u1",
                     "int", "long", "longlong"), "int"),
    **dict.fromkeys(("bool", "bool_", "?"), "bool"),
}
_BUILTIN_DTYPES = {"float": "float", "int": "int", "bool": "bool"}

#: ``numpy.<name>(shape, dtype=float64)``: float unless ``dtype`` says otherwise.
_FLOAT_CREATORS = frozenset({"zeros", "ones", "empty", "eye", "identity", "linspace", "logspace"})
#: ``numpy.<name>(a, dtype=None)``: the kind of ``a`` unless ``dtype`` says otherwise.
_LIKE_CREATORS = frozenset({"zeros_like", "ones_like", "empty_like", "asarray", "array", "ascontiguousarray",
                            "asanyarray", "copy"})
#: float results whatever the (numeric) input: transcendental ufuncs and averages.
_FLOAT_FUNCTIONS = frozenset({"sqrt", "exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "mean", "std", "var",
                              "average"})
#: ``numpy.random`` legacy functions and ``Generator`` methods that sample floats (float64 by default).
_FLOAT_SAMPLERS = frozenset({
    "normal", "uniform", "random", "standard_normal", "rand", "randn", "random_sample", "exponential", "gamma",
    "beta", "lognormal", "laplace", "logistic", "standard_exponential", "standard_gamma", "standard_cauchy",
    "standard_t", "chisquare", "triangular", "vonmises", "weibull", "rayleigh", "pareto", "power", "gumbel", "wald",
})
#: samplers of integers (int64 by default).
_INT_SAMPLERS = frozenset({"integers", "randint", "binomial", "poisson", "geometric", "hypergeometric",
                           "negative_binomial", "zipf", "multinomial"})
#: array methods and attributes that keep the dtype.
_SAME_KIND = frozenset({"reshape", "ravel", "flatten", "copy", "squeeze", "transpose", "swapaxes", "repeat", "take",
                        "clip", "round", "max", "min"})
#: of those, the ones whose result has the array's number of dimensions
_SAME_RANK = frozenset({"copy", "clip", "round", "transpose", "swapaxes"})
_ARRAY_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.FloorDiv, ast.Mod, ast.Pow)


def dtype_kind(value: Value | None) -> str | None:
    """The kind a ``dtype=`` value names (``np.float32``, ``"int64"``, ``float``); ``None``: unknown."""
    if value is None or value.top or len(value.atoms) != 1:
        return None
    atom = next(iter(value.atoms))
    if isinstance(atom, NumpyRef) and atom.path.startswith("numpy."):
        return _DTYPE_KINDS.get(atom.path.removeprefix("numpy."))
    if isinstance(atom, BuiltinRef):
        return _BUILTIN_DTYPES.get(atom.name)
    if isinstance(atom, Const) and isinstance(atom.value, str):
        return _DTYPE_KINDS.get(atom.value)
    return None


def array_kinds(value: Value) -> list[str] | None:
    """The kinds ``np.asarray(value)`` may have, one per possibility: arrays keep theirs, a Python list of
    scalars is promoted (floats are float64, ints int64, bools bool; an empty list is float64). ``None``: some
    possibility is unknown."""
    kinds = _possible_kinds(value, 0)
    return sorted(kinds) if kinds else None


def _possible_kinds(value: Value, depth: int) -> set[str] | None:
    if value.top or value.is_bottom or depth > 8:
        return None
    out: set[str] = set()
    for atom in value.atoms:
        if isinstance(atom, ArrayAtom):
            out.add(atom.kind)
        elif isinstance(atom, Const) and isinstance(atom.value, (bool, int, float)):
            out.add(scalar_kind(atom.value))
        elif isinstance(atom, SeqAtom):
            kinds = _sequence_kinds(atom, depth)
            if kinds is None:
                return None
            out |= kinds
        else:
            return None
    return out


def _sequence_kinds(atom: SeqAtom, depth: int) -> set[str] | None:
    if atom.items is not None:
        if not atom.items:
            return {"float"}
        acc: set[str] | None = None
        for item in atom.items:
            kinds = _possible_kinds(item, depth + 1)
            if kinds is None:
                return None
            acc = set(kinds) if acc is None else {promote(a, k) for a in acc for k in kinds}
        return acc
    kinds = _possible_kinds(atom.elem, depth + 1) if not atom.elem.is_bottom else set()
    if kinds is None:
        return None
    closed = set(kinds) | {promote(a, b) for a in kinds for b in kinds}
    return closed | {"float"}  # the list may be empty: float64


def _one_array_kind(value: Value) -> str | None:
    kinds = array_kinds(value)
    return kinds[0] if kinds and len(kinds) == 1 else None


def _arrays(*kinds: str | None, ndim: int | None = None) -> Value:
    if any(kind is None for kind in kinds):
        return TOP
    return Value(frozenset(ArrayAtom(kind, ndim) for kind in kinds))  # type: ignore[arg-type]


def _shape_ndim(shape: Value | None) -> int | None:
    """The number of dimensions a shape argument gives: ``3`` or ``len(x)`` (an int whose value is not known)
    -> 1, ``(3, 4)`` -> 2; ``None``: not known."""
    if shape is None or shape.top or not shape.atoms:
        return None
    if all((isinstance(a, Const) and type(a.value) is int) or (isinstance(a, NumberAtom) and a.tname == "int")
           for a in shape.atoms):
        return 1
    if len(shape.atoms) != 1:
        return None
    atom = next(iter(shape.atoms))
    return len(atom.items) if isinstance(atom, SeqAtom) and atom.items is not None else None


def data_ndim(value: Value | None, depth: int = 0) -> int | None:
    """The number of dimensions ``np.asarray(value)`` has: an array's own, 0 for a number, one more than its
    elements' for a list of known items all alike; ``None``: not known."""
    if value is None or value.top or not value.atoms or depth > 8:
        return None
    found: set[int | None] = set()
    for atom in value.atoms:
        if isinstance(atom, ArrayAtom):
            found.add(atom.ndim)
        elif isinstance(atom, Const) and isinstance(atom.value, (bool, int, float)) or isinstance(atom, NumberAtom):
            found.add(0)
        elif isinstance(atom, SeqAtom) and atom.items:
            inner = {data_ndim(item, depth + 1) for item in atom.items}
            found.add(inner.pop() + 1 if len(inner) == 1 and None not in inner else None)  # type: ignore[operator]
        elif isinstance(atom, SeqAtom) and atom.items is None and not atom.elem.is_bottom:
            # a list of unknown length (a comprehension, appends): its elements' rank plus one (when it is
            # empty it has no rows, and is not 0-d either)
            elem = data_ndim(atom.elem, depth + 1)
            found.add(None if elem is None else elem + 1)
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _reduced_ndim(path: str, args: list[Value], kwargs: dict[str, Value], ndim: int | None = None) -> int | None:
    """A reduction over every axis (no ``axis``) is a numpy scalar, 0-d; over one integer axis of an array of
    ``ndim`` dimensions it has one fewer (as many with ``keepdims=True``); else not known."""
    axis = _arg(path, args, kwargs, "axis")
    if axis is None:
        return 0 if "keepdims" not in kwargs else None
    consts = axis.consts()
    if ndim is None or not consts or not all(type(c) is int for c in consts) or "keepdims" in kwargs:
        return None
    return ndim - 1


def _arg(path: str, args: list[Value], kwargs: dict[str, Value], name: str) -> Value | None:
    """The argument of parameter ``name`` of a call of ``path`` (its declared signature); None: not given."""
    return argument(path, args, kwargs, name, None)


@dataclass(frozen=True, slots=True)
class TypeInfoAtom(Atom):
    """``np.finfo(dtype)`` or ``np.iinfo(dtype)``: the limits of a numeric type (``kind``: "float" or "int")."""

    kind: str


#: The limits ``finfo``/``iinfo`` give, each a numpy scalar of the type.
TYPE_LIMITS = frozenset({"eps", "epsneg", "tiny", "smallest_normal", "max", "min", "resolution"})


def numpy_call(path: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """The value of calling ``numpy.<path>`` (only the kind of an array result is modelled)."""
    name = path.rpartition(".")[2]
    dtype = kwargs.get("dtype")
    if path in ("numpy.random.default_rng", "numpy.random.Generator"):
        return V(RngAtom())
    if path in ("numpy.finfo", "numpy.iinfo"):
        return V(TypeInfoAtom("float" if name == "finfo" else "int"))
    if path.startswith("numpy.random."):
        return _sample(name, dtype, args, kwargs)
    if name in _DTYPE_KINDS and path == f"numpy.{name}" and name not in ("float", "int", "bool", "long"):
        return _arrays(_DTYPE_KINDS[name], ndim=0)  # a numpy scalar of that dtype: np.float32(0.5)
    ndim = _creation_ndim(name, args, kwargs)
    if dtype is not None:
        if name in _FLOAT_CREATORS | _LIKE_CREATORS | {"full", "arange", "full_like"}:
            return _arrays(dtype_kind(dtype), ndim=ndim)
        return TOP
    if name in _FLOAT_CREATORS:
        return _arrays("float", ndim=ndim)
    if name in _LIKE_CREATORS:
        data = _arg(f"numpy.{name}", args, kwargs, "object" if name == "array" else "a")
        return _arrays(_one_array_kind(data), ndim=ndim) if data is not None else TOP
    if name == "full":
        fill = _arg(f"numpy.{name}", args, kwargs, "fill_value")
        return _arrays(_one_array_kind(fill), ndim=ndim) if fill is not None else TOP
    if name == "full_like":
        fill = _arg(f"numpy.{name}", args, kwargs, "fill_value")
        return _arrays(_one_array_kind(fill), ndim=ndim) if fill is not None else TOP
    if name == "arange":
        bounds = [*args, *(v for k, v in kwargs.items() if k in ("start", "stop", "step"))]
        consts = [v.consts() for v in bounds]
        if not bounds or any(c is None for c in consts):
            return TOP
        kinds = {scalar_kind(c) for group in consts for c in group}  # type: ignore[union-attr]
        return _arrays("float" if "float" in kinds else "int")
    if name in ("concatenate", "stack", "vstack", "hstack"):
        data = _arg(f"numpy.{name}", args, kwargs, "tup" if name in ("vstack", "hstack") else "arrays")
        return _arrays(_one_array_kind(data)) if data is not None else TOP
    if name in ("sum", "cumsum", "prod", "cumprod", "max", "min", "abs", "clip", "round", "transpose", "reshape",
                "squeeze", "flip", "sort", "ravel", "diff"):
        data = _arg(f"numpy.{name}", args, kwargs, "x" if name == "abs" else "a")
        kind = _one_array_kind(data) if data is not None and data.only(ArrayAtom) else None
        widened = "int" if kind == "bool" and name in ("sum", "cumsum", "prod", "cumprod", "diff") else kind
        return _arrays(widened, ndim=_reduced_ndim(f"numpy.{name}", args, kwargs, data_ndim(data))
                       if name in _REDUCTIONS else None)
    if name in _FLOAT_FUNCTIONS:
        data = _arg(f"numpy.{name}", args, kwargs, "a" if name in ("mean", "std", "var", "average") else "x")
        reduced = _reduced_ndim(f"numpy.{name}", args, kwargs, data_ndim(data)) if name in _REDUCTIONS \
            else data_ndim(data)
        return _arrays("float", ndim=reduced) if data is not None and _one_array_kind(data) is not None else TOP
    return TOP


#: Reductions: 0-d without an ``axis``.
_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "mean", "std", "var", "average", "any", "all"})


def _creation_ndim(name: str, args: list[Value], kwargs: dict[str, Value]) -> int | None:
    """How many dimensions an array creation gives (``None``: not known)."""
    if name in ("zeros", "ones", "empty", "full"):
        return _shape_ndim(_arg(f"numpy.{name}", args, kwargs, "shape"))
    if name in ("eye", "identity"):
        return 2
    if name in ("linspace", "logspace", "arange"):
        return 1
    if name in _LIKE_CREATORS:
        return data_ndim(_arg(f"numpy.{name}", args, kwargs, "object" if name == "array" else "a")) \
            if "ndmin" not in kwargs else None
    if name == "full_like":
        return data_ndim(_arg(f"numpy.{name}", args, kwargs, "a"))
    return None


def _sample(name: str, dtype: Value | None, args: list[Value] | None = None,
            kwargs: dict[str, Value] | None = None) -> Value:
    ndim = _sampled_ndim(name, args or [], kwargs or {})
    if name in _FLOAT_SAMPLERS:
        return _arrays(dtype_kind(dtype), ndim=ndim) if dtype is not None else _arrays("float", ndim=ndim)
    if name in _INT_SAMPLERS:
        return _arrays(dtype_kind(dtype), ndim=ndim) if dtype is not None else _arrays("int", ndim=ndim)
    return TOP


def _sampled_ndim(name: str, args: list[Value], kwargs: dict[str, Value]) -> int | None:
    """``np.random.rand(200, 6)``: as many dimensions as sizes given; ``size=``: its length; else not known."""
    if name in ("rand", "randn") and not kwargs:
        return len(args) if all(v.consts() and all(type(c) is int for c in v.consts() or []) for v in args) \
            else None
    return _shape_ndim(kwargs["size"]) if "size" in kwargs else None


def rng_method(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """``rng.<name>(...)`` on a ``numpy.random.Generator``."""
    if name == "permutation":
        data = _arg("numpy.random.Generator.permutation", args, kwargs, "x")
        consts = data.consts() if data is not None else None
        if consts is not None and all(isinstance(c, int) and not isinstance(c, bool) for c in consts):
            return _arrays("int")
        return _arrays(_one_array_kind(data)) if data is not None and data.only(ArrayAtom) else TOP
    return _sample(name, kwargs.get("dtype"))


def array_method(name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """``a.<name>(...)`` on numpy arrays."""
    out: Value | None = None
    for atom in receiver.atoms:
        assert isinstance(atom, ArrayAtom)
        if name == "astype":
            result = _arrays(dtype_kind(_arg("numpy.ndarray.astype", args, kwargs, "dtype")), ndim=atom.ndim)
        elif name in _SAME_KIND:
            result = _arrays(atom.kind, ndim=atom.ndim if name in _SAME_RANK else None)
        elif name in ("mean", "std", "var"):
            result = _arrays(dtype_kind(kwargs["dtype"]) if "dtype" in kwargs else "float",
                             ndim=_reduced_ndim(f"numpy.ndarray.{name}", args, kwargs, atom.ndim))
        elif name in ("sum", "cumsum", "prod", "cumprod"):
            reduced = _reduced_ndim(f"numpy.ndarray.{name}", args, kwargs, atom.ndim) \
                if name in _REDUCTIONS else None
            result = _arrays("int" if atom.kind == "bool" else atom.kind, ndim=reduced) \
                if "dtype" not in kwargs else TOP
        elif name in ("argmax", "argmin", "argsort", "nonzero"):
            result = _arrays("int") if name != "nonzero" else TOP
        elif name in ("any", "all"):
            result = _arrays("bool")
        elif name in ("item", "tolist") and atom.ndim == 0:
            # a 0-d array's element: a Python number (``np.finfo(np.float32).eps.item()``)
            result = V(NumberAtom("int" if atom.kind in ("int", "bool") else "float"))
        else:
            result = TOP
        out = result if out is None else out.join(result)
    out = out if out is not None else TOP
    return out.join(TOP) if receiver.top else out


def array_attribute(atom: ArrayAtom, attr: str) -> Value:
    """``a.T`` keeps the dtype; methods become bound calls; other attributes are unknown."""
    if attr == "T":
        return V(atom)
    return TOP


def array_binop(op: ast.operator, left: Value, right: Value) -> Value | None:
    """``left <op> right`` where a side is a numpy array; ``None`` when neither side is one."""
    if not (left.of_type(ArrayAtom) or right.of_type(ArrayAtom)):
        return None
    if not isinstance(op, _ARRAY_BINOPS) or left.top or right.top:
        return TOP
    out = None
    for a in left.atoms:
        for b in right.atoms:
            kind = _pair_kind(op, a, b)
            if kind is None:
                return TOP
            # broadcasting: the larger number of dimensions (a Python scalar has none)
            ndim = broadcast_ndim(0 if isinstance(x, Const) else x.ndim for x in (a, b))  # type: ignore[attr-defined]
            out = V(ArrayAtom(kind, ndim)) if out is None else out.join(V(ArrayAtom(kind, ndim)))
    return out if out is not None else TOP


def _operand_kind(atom: object) -> tuple[str, bool] | None:
    """(kind, is a Python scalar) of one operand of array arithmetic."""
    if isinstance(atom, ArrayAtom):
        return atom.kind, False
    if isinstance(atom, Const) and isinstance(atom.value, (bool, int, float)):
        return scalar_kind(atom.value), True
    return None


def _pair_kind(op: ast.operator, a: object, b: object) -> str | None:
    left, right = _operand_kind(a), _operand_kind(b)
    if left is None or right is None:
        return None
    if isinstance(op, ast.Div):
        return "float"
    if left[1] and right[1]:
        return None  # two Python scalars: not an array operation
    if left[1]:
        kind = promote_scalar(right[0], left[0])
    elif right[1]:
        kind = promote_scalar(left[0], right[0])
    else:
        kind = promote(left[0], right[0])
    if kind == "bool":
        if isinstance(op, ast.Sub):
            return None  # numpy refuses to subtract booleans
        if isinstance(op, (ast.FloorDiv, ast.Mod, ast.Pow)):
            return "int"
    return kind


def array_compare(left: Value, right: Value) -> Value | None:
    """A comparison where a side is a numpy array: an array of bools (``None`` when neither side is one)."""
    if not (left.of_type(ArrayAtom) or right.of_type(ArrayAtom)):
        return None
    if left.top or right.top or not all(_operand_kind(a) is not None for a in (*left.atoms, *right.atoms)):
        return TOP
    return V(ArrayAtom("bool"))


def store_converts_array(key: ast.expr, ndims: frozenset[int | None] = frozenset()) -> bool:
    """``arr[key] = value`` converts ``value`` with ``__array__`` (``Tensor.numpy()``: refused for a GPU tensor
    or one that requires grad) when ``key`` selects more than one element: a slice or an Ellipsis, alone or in
    a tuple, or fewer indices than the array (``ndims``: its possible numbers of dimensions, all known) has
    dimensions (``buffer[i] = state`` on a 2-d array: a row). One element (``arr[i] = t`` on a 1-d array) is
    converted with ``float()`` instead, which a one-element tensor on any device accepts; an array whose rank is
    not known stays silent."""
    parts = key.elts if isinstance(key, ast.Tuple) else [key]
    if any(isinstance(part, ast.Slice) or (isinstance(part, ast.Constant) and part.value is Ellipsis)
           for part in parts):
        return True
    # (``None`` adds an axis of length one: it selects nothing)
    indices = sum(1 for part in parts if not (isinstance(part, ast.Constant) and part.value is None))
    known = [n for n in ndims if n is not None]
    return bool(known) and len(known) == len(ndims) and indices < min(known)


class NumpyModel(LibraryModel):
    """numpy through the engine's hooks: its names, arrays and generators."""

    name = "numpy"

    def import_ref(self, path: str) -> Value | None:
        return V(NumpyRef(path)) if path == "numpy" or path.startswith("numpy.") else None

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
             fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, NumpyRef):
            return UNHANDLED
        return TOP if star_unknown else numpy_call(atom.path, args, kwargs)

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
               node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind == "ArrayAtom":
            return array_method(name, receiver, args, kwargs)
        if kind == "RngAtom":
            return rng_method(name, args, kwargs)
        return UNHANDLED

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                  fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, NumpyRef):
            return V(NumpyRef(f"{atom.path}.{attr}"))
        if isinstance(atom, ArrayAtom):
            return array_attribute(atom, attr) if attr == "T" or attr.startswith("_") else V(BoundShim(atom, attr))
        if isinstance(atom, RngAtom):
            return V(BoundShim(atom, attr))
        if isinstance(atom, TypeInfoAtom):
            # ``np.finfo(np.float32).eps``: a numpy scalar of the type; ``bits``: an int
            return V(NumberAtom("int")) if attr == "bits" else V(ArrayAtom(atom.kind, 0)) if attr in TYPE_LIMITS \
                else None
        return UNHANDLED

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if not isinstance(atom, ArrayAtom):
            return None
        # an index tensor with a dimension is read through ``Tensor.__array__`` (a 0-dim one through
        # ``__index__``, which works anywhere): a CUDA one cannot be converted (``alphas_cumprod[t]``)
        torch = self.model_named("torch")
        indexes = [V(a) for a in key.atoms if getattr(a, "zero_dim", None) is False]
        if torch is not None and indexes:
            converted = torch.numpy_conversion("numpy.ndarray.__getitem__", indexes, node, st, fr)
            if converted is not None and st.dead:
                return BOTTOM
        # an element, a slice or a selection: the dtype; an integer index takes one dimension away
        consts = key.consts() or ([] if key.top or not key.only(NumberAtom) else None)
        integer = consts is not None and all(type(c) is int for c in consts) \
            and all(a.tname == "int" for a in key.atoms if isinstance(a, NumberAtom))
        if integer and atom.ndim:
            return V(ArrayAtom(atom.kind, atom.ndim - 1))
        return V(ArrayAtom(atom.kind)) if atom.ndim is not None else V(atom)

    def element(self, atom: Atom, how: str) -> Value | None:
        return V(atom) if how == "slice" and isinstance(atom, ArrayAtom) else None

    def binary(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
              compare: bool) -> Value | None:
        if compare:
            return array_compare(left, right)
        if BINOPS.get(type(op)) is not None and (left.tensors() or right.tensors()):
            return None  # runtime_shim's tensor operators (the engine's)
        return array_binop(op, left, right)  # type: ignore[arg-type]

    def unary(self, op: ast.unaryop, operand: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if isinstance(op, (ast.USub, ast.UAdd)) and operand.only(ArrayAtom):
            booleans = any(a.kind == "bool" for a in operand.atoms)  # type: ignore[attr-defined]
            return TOP if booleans else operand  # numpy refuses to negate booleans
        return None
