"""numpy data: the kind ``Tensor.from_data`` makes of it is inferred from dtype expressions, never guessed.

Each expectation is checked against numpy itself (the kind of the dtype numpy really produces), and the
engine snippets carry their expectations as inline markers."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from devicelint.domain import TOP, ArrayAtom, BuiltinRef, Const, NumpyRef, V, const, seq, seq_of
from devicelint.models.numpy_model import array_binop, array_kinds, array_method, dtype_kind, numpy_call, rng_method
from test_engine import HEADER, assert_markers


def _kind_of(array: np.ndarray) -> str:
    return "bool" if array.dtype == np.bool_ else "float" if array.dtype.kind == "f" else "int"


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool_"])
def test_dtype_names_match_numpy(name: str) -> None:
    assert dtype_kind(V(NumpyRef(f"numpy.{name}"))) == _kind_of(np.zeros(1, dtype=getattr(np, name)))
    assert dtype_kind(V(const(name.rstrip("_")))) == _kind_of(np.zeros(1, dtype=name.rstrip("_")))


def test_builtin_dtypes_and_unknown_ones() -> None:
    assert dtype_kind(V(BuiltinRef("float"))) == "float"
    assert dtype_kind(V(BuiltinRef("int"))) == "int"
    assert dtype_kind(V(BuiltinRef("bool"))) == "bool"
    assert dtype_kind(V(NumpyRef("numpy.complex64"))) is None  # not a dtype the executors accept
    assert dtype_kind(TOP) is None
    assert dtype_kind(V(NumpyRef("numpy.float32"), NumpyRef("numpy.int64"))) is None


@pytest.mark.parametrize("data", [[1, 2], [1.0, 2], [True, False], [True, 2], [], [[1], [2.5]]])
def test_python_lists_promote_like_numpy(data: list) -> None:
    def value(x):
        return V(seq("list", [value(i) for i in x])) if isinstance(x, list) else V(const(x))

    assert array_kinds(value(data)) == [_kind_of(np.asarray(data))]


def test_alternatives_stay_apart_and_unknown_stays_unknown() -> None:
    ints, floats = V(seq("list", [V(const(1))])), V(seq("list", [V(const(0.5))]))
    assert array_kinds(ints.join(floats)) == ["float", "int"]
    assert array_kinds(V(seq("list", [TOP]))) is None
    assert array_kinds(V(seq_of("list", V(const(3))))) == ["float", "int"]  # possibly empty: float64


def test_creators_and_samplers() -> None:
    f32 = {"dtype": V(NumpyRef("numpy.float32"))}
    assert numpy_call("numpy.zeros", [TOP], {}) == V(ArrayAtom("float"))
    assert numpy_call("numpy.zeros", [TOP], {"dtype": V(const("int64"))}) == V(ArrayAtom("int"))
    assert numpy_call("numpy.asarray", [TOP], f32) == V(ArrayAtom("float"))
    assert numpy_call("numpy.asarray", [TOP], {}) == TOP
    assert numpy_call("numpy.arange", [V(const(4))], {}) == V(ArrayAtom(_kind_of(np.arange(4))))
    assert numpy_call("numpy.arange", [V(const(0)), V(const(1.0)), V(const(0.5))], {}) == V(ArrayAtom("float"))
    assert numpy_call("numpy.float32", [TOP], {}) == V(ArrayAtom("float", 0))  # a numpy scalar: 0-d
    assert numpy_call("numpy.full", [TOP, V(const(7))], {}) == V(ArrayAtom(_kind_of(np.full(2, 7))))
    assert numpy_call("numpy.random.default_rng", [], {}) != TOP
    assert numpy_call("numpy.linalg.norm", [TOP], {}) == TOP
    assert rng_method("normal", [], {}) == V(ArrayAtom("float"))
    assert rng_method("integers", [V(const(0)), V(const(2))], {}) == V(ArrayAtom("int"))
    assert rng_method("integers", [V(const(0)), V(const(2))], {"dtype": V(BuiltinRef("bool"))}) == V(ArrayAtom("bool"))
    assert rng_method("choice", [TOP], {}) == TOP


def _ndim(value: object) -> int | None:
    found = {a.ndim for a in value.atoms}  # type: ignore[attr-defined]
    return found.pop() if len(found) == 1 else None


def _py(x: object) -> object:
    return V(seq("tuple" if isinstance(x, tuple) else "list", [_py(i) for i in x])) \
        if isinstance(x, (list, tuple)) else V(const(x))


@pytest.mark.parametrize("name, args", [
    ("zeros", [(3, 4)]), ("ones", [5]), ("empty", [(2, 3, 4)]), ("full", [(2,), 1.5]), ("eye", [3]),
    ("linspace", [0.0, 1.0, 5]), ("array", [2.0]), ("array", [[1.0, 2.0]]), ("asarray", [[[1, 2], [3, 4]]]),
    ("float32", [0.5]),
])
def test_number_of_dimensions_as_numpy_gives(name: str, args: list) -> None:
    """The model's ``ndim`` of a creation is numpy's own."""
    assert _ndim(numpy_call(f"numpy.{name}", [_py(a) for a in args], {})) == np.asarray(getattr(np, name)(*args)).ndim


def test_reductions_without_axis_are_0d() -> None:
    array = V(ArrayAtom("float", 2))
    assert _ndim(array_method("mean", array, [], {})) == np.zeros((2, 3)).mean().ndim == 0
    # over one axis: one dimension fewer, as numpy gives; of an array of unknown rank, or keeping dims: not known
    assert _ndim(array_method("mean", array, [], {"axis": V(const(0))})) == np.zeros((2, 3)).mean(axis=0).ndim
    assert _ndim(array_method("mean", V(ArrayAtom("float")), [], {"axis": V(const(0))})) is None
    assert _ndim(array_method("mean", array, [], {"axis": V(const(0)), "keepdims": V(const(True))})) is None
    assert _ndim(numpy_call("numpy.sum", [array], {})) == 0
    assert _ndim(numpy_call("numpy.sum", [array], {"axis": V(const(1))})) == np.zeros((2, 3)).sum(axis=1).ndim
    assert _ndim(numpy_call("numpy.sum", [array], {"axis": TOP})) is None
    assert _ndim(numpy_call("numpy.array", [V(seq("list", [TOP]))], {})) is None  # not known: never guessed


@pytest.mark.parametrize("path, args, kwargs", [
    ("numpy.random.rand", [200, 6], {}), ("numpy.random.randn", [3], {}), ("numpy.random.rand", [], {}),
    ("numpy.random.normal", [0.0, 1.0], {"size": (4, 2)}), ("numpy.random.randint", [0, 5], {"size": 3}),
])
def test_samples_have_the_dimensions_asked_for(path: str, args: list, kwargs: dict) -> None:
    made = getattr(np.random, path.rpartition(".")[2])(*args, **kwargs)
    assert _ndim(numpy_call(path, [_py(a) for a in args], {k: _py(v) for k, v in kwargs.items()})) \
        == np.asarray(made).ndim


def test_integer_index_and_arithmetic_keep_track_of_dimensions() -> None:
    from devicelint.models.numpy_model import array_binop
    vector = V(ArrayAtom("float", 1))
    assert _ndim(array_binop(ast.Sub(), V(const(1.0)), vector)) == 1
    assert _ndim(array_binop(ast.Mult(), vector, V(ArrayAtom("float", 2)))) == 2
    assert _ndim(array_binop(ast.Mult(), vector, V(ArrayAtom("float")))) is None


@pytest.mark.parametrize("op, left, right", [
    (ast.Add(), np.array([1]), 0.5), (ast.Mult(), np.array([1.0], dtype=np.float32), 2),
    (ast.Div(), np.array([1]), np.array([2])), (ast.Add(), np.array([True]), np.array([True])),
    (ast.FloorDiv(), np.array([True]), np.array([True])), (ast.MatMult(), np.array([[1]]), np.array([[0.5]])),
    (ast.Sub(), 1, np.array([True])),
])
def test_array_arithmetic_promotes_like_numpy(op: ast.operator, left, right) -> None:
    def value(x):
        return V(ArrayAtom(_kind_of(x))) if isinstance(x, np.ndarray) else V(const(x))

    fn = {ast.Add: np.add, ast.Mult: np.multiply, ast.Div: np.true_divide, ast.FloorDiv: np.floor_divide,
          ast.MatMult: np.matmul, ast.Sub: np.subtract}[type(op)]
    assert array_binop(op, value(left), value(right)) == V(ArrayAtom(_kind_of(np.asarray(fn(left, right)))))


def test_bool_subtraction_is_unknown_and_plain_scalars_are_not_arrays() -> None:
    assert array_binop(ast.Sub(), V(ArrayAtom("bool")), V(ArrayAtom("bool"))) == TOP  # numpy raises
    assert array_binop(ast.Add(), V(const(1)), V(const(2))) is None
    assert array_binop(ast.Add(), V(ArrayAtom("int")), V(Const("x", "str"))) == TOP


def test_from_data_kind_follows_numpy_dtypes() -> None:
    assert_markers(HEADER + """
    import numpy as np
    rng = np.random.default_rng(0)
    dev = Device.flex().autodiff()
    w = Tensor.from_data(rng.normal(size=(4, 4)).astype(np.float32), dev)
    reveal_device(w)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked
    labels = Tensor.from_data(rng.integers(0, 4, size=8), dev)
    reveal_device(labels)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } int
    mask = Tensor.from_data(np.zeros(8, dtype=bool), Device.flex())
    reveal_device(mask)  # reveal: Flex bool
    steps = Tensor.from_data(np.arange(10), Device.flex())
    reveal_device(steps)  # reveal: Flex int
    scaled = Tensor.from_data(np.asarray([1, 2, 3], dtype=np.float32) / 3, Device.flex())
    reveal_device(scaled)  # reveal: Flex float
    w.inner().to_device(Device.cpu())
    labels.inner()
    """)


def test_unknown_data_stays_unknown() -> None:
    assert_markers(HEADER + """
    import numpy as np
    import pickle
    blob = pickle.loads(open("weights.pkl", "rb").read())
    t = Tensor.from_data(blob["w"], Device.flex().autodiff())
    reveal_device(t)  # reveal: Unknown
    t.inner()
    u = Tensor.from_data(np.load("x.npy"), Device.flex())
    reveal_device(u)  # reveal: Unknown
    """)


def test_to_numpy_round_trip_keeps_the_kind() -> None:
    assert_markers(HEADER + """
    import numpy as np
    ids = Tensor.from_ints([1, 2], Device.flex())
    host = ids.to_numpy()
    back = Tensor.from_data(host[:1], Device.flex().autodiff())
    reveal_device(back)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } int
    back.inner()
    """)


def test_a_size_that_is_an_int_of_unknown_value_makes_one_dimension() -> None:
    """``np.zeros(len(rewards))``: the count is not known, but an int shape is always one dimension."""
    from devicelint.domain import NumberAtom

    count = V(NumberAtom("int"))
    assert _ndim(numpy_call("numpy.zeros", [count], {})) == np.zeros(3).ndim
    assert _ndim(numpy_call("numpy.full", [count.join(V(const(2))), V(const(0.5))], {})) == 1
    assert _ndim(numpy_call("numpy.empty", [V(NumberAtom("float"))], {})) is None  # (numpy refuses a float)
    assert _ndim(numpy_call("numpy.zeros", [TOP], {})) is None
