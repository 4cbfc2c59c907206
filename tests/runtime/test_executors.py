"""Unit tests of the array executors against numpy reference values.

Every test taking the ``ex`` fixture runs on the numpy executor, the torch CPU
executor (skipped without torch) and the torch CUDA executor (marked ``gpu``,
skipped without a CUDA device).
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys

import numpy as np
import pytest

from runtime_shim.executors import (
    BOOL_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    Executor,
    get_executor,
    torch_available,
)
from runtime_shim.executors.numpy_executor import (
    NumpyExecutor,
    compare_dtype,
    result_dtype,
    sum_to_shape_dims,
)

HAS_TORCH = importlib.util.find_spec("torch") is not None
if HAS_TORCH:
    import torch

    HAS_CUDA = torch.cuda.is_available()
else:
    HAS_CUDA = False

ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + BOOL_DTYPES
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES
# Relative tolerances where numpy and torch may round differently (transcendental functions).
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}

gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")]


@pytest.fixture(
    params=[
        pytest.param(("numpy", "host"), id="numpy"),
        pytest.param(("torch", "cpu"), id="torch-cpu"),
        pytest.param(("torch", "cuda:0"), id="torch-cuda", marks=gpu),
    ]
)
def ex(request: pytest.FixtureRequest) -> Executor:
    family, place = request.param
    if family == "torch":
        pytest.importorskip("torch")
    return get_executor(family, place)


# --- helpers --------------------------------------------------------------------


def sample(dtype: str, shape: tuple[int, ...] = (3, 4), seed: int = 0, nonzero: bool = False) -> np.ndarray:
    """Small values of ``dtype``; integer-valued floats unless a test wants fractions."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    low = 0 if dtype == "uint8" else -9
    values = rng.integers(low, 10, size=shape)
    if nonzero:
        values[values == 0] = 1
    return values.astype(dtype)


def fractions(dtype: str, shape: tuple[int, ...] = (3, 4), seed: int = 0, low: float = -3.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, 3.0, size=shape).astype(dtype)


def check(ex: Executor, prim: object, expected: np.ndarray, rtol: float | None = None) -> None:
    """``prim`` has ``expected``'s dtype, shape and values (exactly, or within ``rtol``)."""
    expected = np.asarray(expected)
    got = ex.to_numpy(prim)
    assert ex.dtype(prim) == expected.dtype.name
    assert got.dtype == expected.dtype
    assert ex.shape(prim) == expected.shape
    assert got.shape == expected.shape
    if rtol is None:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol, equal_nan=True
        )


def float_rtol(ex: Executor, dtype: str) -> float | None:
    """Exact for the numpy executor (its own reference), RTOL for torch."""
    return None if ex.family == "numpy" else RTOL[dtype]


# --- package and registry ----------------------------------------------------------


def test_get_executor_caches_one_instance_per_family_and_place() -> None:
    numpy_ex = get_executor("numpy", "host")
    assert numpy_ex is get_executor("numpy", "host")
    assert isinstance(numpy_ex, NumpyExecutor)
    assert (numpy_ex.family, numpy_ex.place) == ("numpy", "host")


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_get_executor_torch() -> None:
    from runtime_shim.executors.torch_executor import TorchExecutor

    cpu = get_executor("torch", "cpu")
    assert isinstance(cpu, TorchExecutor)
    assert cpu is get_executor("torch", "cpu")
    assert (cpu.family, cpu.place) == ("torch", "cpu")
    assert get_executor("torch", "cuda:1") is not get_executor("torch", "cuda:0")
    with pytest.raises(ValueError):
        TorchExecutor("cuda")
    with pytest.raises(ValueError):
        TorchExecutor("gpu:0")


@pytest.mark.parametrize(("family", "place"), [("numpy", "cpu"), ("jax", "host"), ("torch", "cuda")])
def test_get_executor_rejects_unknown(family: str, place: str) -> None:
    if family == "torch":
        pytest.importorskip("torch")
    with pytest.raises(ValueError):
        get_executor(family, place)


def test_torch_available_matches_find_spec() -> None:
    assert torch_available() is HAS_TORCH


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_package_import_does_not_import_torch() -> None:
    result = _run_python(
        "import sys, runtime_shim.executors as e, runtime_shim.dataplane\n"
        "e.get_executor('numpy', 'host')\n"
        "e.torch_available()\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    assert result.returncode == 0, result.stderr


def test_missing_torch_raises_module_not_found() -> None:
    # None in sys.modules makes `import torch` fail as if torch were not installed.
    result = _run_python(
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "from runtime_shim.executors import get_executor\n"
        "try:\n"
        "    get_executor('torch', 'cpu')\n"
        "except ModuleNotFoundError as error:\n"
        "    assert error.name == 'torch', error.name\n"
        "else:\n"
        "    raise AssertionError('no error')\n"
    )
    assert result.returncode == 0, result.stderr


def test_executors_implement_every_contract_method() -> None:
    classes = [NumpyExecutor]
    if HAS_TORCH:
        from runtime_shim.executors.torch_executor import TorchExecutor

        classes.append(TorchExecutor)
    contract = {
        name: inspect.signature(member)
        for name, member in vars(Executor).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }
    for cls in classes:
        for name, signature in contract.items():
            method = getattr(cls, name)
            assert method is not getattr(Executor, name), f"{cls.__name__}.{name} not implemented"
            assert list(inspect.signature(method).parameters) == list(signature.parameters), name


# --- shared dtype rules ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("float32", "float32", "float32"),
        ("float16", "float32", "float32"),
        ("float32", "int64", "float32"),
        ("int16", "float16", "float16"),
        ("int8", "uint8", "int16"),
        ("uint8", "int64", "int64"),
        ("bool", "int32", "int32"),
        ("bool", "bool", "bool"),
        ("float32", 1.5, "float32"),
        ("float16", 2, "float16"),
        (1e30, "float16", "float16"),
        ("int8", 3, "int8"),
        ("int32", 0.5, "float32"),
        ("int64", 0.5, "float32"),
        ("bool", 1, "int64"),
        ("bool", 1.0, "float32"),
        ("bool", True, "bool"),
        ("uint8", True, "uint8"),
        (1.0, "int64", "float32"),
        (1, 2, "int64"),
        (1, 2.0, "float32"),
        (True, False, "bool"),
    ],
)
def test_result_dtype(a: object, b: object, expected: str) -> None:
    assert result_dtype(a, b) == expected


def test_compare_dtype_widens_for_out_of_range_int_scalars() -> None:
    assert compare_dtype("int8", 3) == "int8"
    assert compare_dtype("int8", 1000) == "int64"
    assert compare_dtype(-1, "uint8") == "int64"
    assert compare_dtype("float16", 1e30) == "float16"


def test_result_dtype_rejects_unknown_dtype() -> None:
    with pytest.raises(TypeError):
        result_dtype("complex64", 1)


def test_sum_to_shape_dims() -> None:
    assert sum_to_shape_dims((2, 3, 4), (3, 1)) == (0, 2)
    assert sum_to_shape_dims((2, 3), (2, 3)) == ()
    assert sum_to_shape_dims((2, 3), ()) == (0, 1)
    with pytest.raises(ValueError):
        sum_to_shape_dims((2, 3), (2, 2))
    with pytest.raises(ValueError):
        sum_to_shape_dims((3,), (1, 3))


# --- creation and introspection ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zeros_ones_full_empty(ex: Executor, dtype: str) -> None:
    check(ex, ex.zeros((2, 3), dtype), np.zeros((2, 3), dtype))
    check(ex, ex.ones([4], dtype), np.ones(4, dtype))
    value = True if dtype == "bool" else 7
    check(ex, ex.full((3, 1), value, dtype), np.full((3, 1), value, dtype))
    empty = ex.empty((2, 0, 3), dtype)
    assert (ex.shape(empty), ex.dtype(empty)) == ((2, 0, 3), dtype)
    empty = ex.empty((5,), dtype)
    assert (ex.shape(empty), ex.dtype(empty)) == ((5,), dtype)
    check(ex, ex.zeros((), dtype), np.zeros((), dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_full_float_value(ex: Executor, dtype: str) -> None:
    check(ex, ex.full((2,), -2.5, dtype), np.full(2, -2.5, dtype))
    check(ex, ex.full((2,), np.float32(0.25), dtype), np.full(2, 0.25, dtype))


def test_full_rejects_out_of_range_int(ex: Executor) -> None:
    with pytest.raises(OverflowError):
        ex.full((2,), 1000, "int8")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_random(ex: Executor, dtype: str) -> None:
    prim = ex.random((100, 100), dtype)
    values = ex.to_numpy(prim)
    assert ex.dtype(prim) == dtype and values.shape == (100, 100)
    assert values.min() >= 0 and values.max() < 1
    assert 0.4 < values.astype(np.float64).mean() < 0.6
    assert len(np.unique(values)) > 100
    assert not np.array_equal(values, ex.to_numpy(ex.random((100, 100), dtype)))


@pytest.mark.parametrize("dtype", INT_DTYPES + BOOL_DTYPES)
def test_random_rejects_non_float(ex: Executor, dtype: str) -> None:
    with pytest.raises(ValueError):
        ex.random((2,), dtype)


def test_arange(ex: Executor) -> None:
    check(ex, ex.arange(-2, 5), np.arange(-2, 5, dtype=np.int64))
    check(ex, ex.arange(3, 3), np.zeros(0, np.int64))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_introspection_and_numpy_round_trip(ex: Executor, dtype: str) -> None:
    array = sample(dtype, (2, 3, 4))
    prim = ex.from_numpy(array)
    assert ex.shape(prim) == (2, 3, 4)
    assert ex.dtype(prim) == dtype
    assert ex.nbytes(prim) == array.nbytes
    out = ex.to_numpy(prim)
    np.testing.assert_array_equal(out, array)
    assert out.dtype == array.dtype
    # to_numpy is a copy: writing it changes neither the prim nor the source array.
    assert not np.shares_memory(out, array)
    out.reshape(-1)[0] = out.reshape(-1)[1] if dtype == "bool" else 1
    out[...] = out[::-1]
    np.testing.assert_array_equal(ex.to_numpy(prim), array)


def test_from_numpy_of_non_contiguous_and_read_only(ex: Executor) -> None:
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for array in (base[:, ::2], base[::-1], base.T, np.broadcast_to(base[0], (3, 6))):
        check(ex, ex.from_numpy(array), array)
    read_only = base.copy()
    read_only.flags.writeable = False
    check(ex, ex.from_numpy(read_only), base)
    check(ex, ex.from_numpy(base.astype(">f4")), base)


# --- elementwise binary ------------------------------------------------------------------------

ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _div_reference(a: np.ndarray | float, b: np.ndarray | float, dtype: str) -> np.ndarray:
    op = np.floor_divide if dtype in INT_DTYPES else np.true_divide
    return np.asarray(op(a, b)).astype(dtype)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_arrays_same_dtype(ex: Executor, op: str, dtype: str) -> None:
    a = sample(dtype, (2, 3, 4), seed=1)
    b = sample(dtype, (3, 1), seed=2, nonzero=True)  # broadcasts
    if dtype in FLOAT_DTYPES:
        a = fractions(dtype, (2, 3, 4), seed=1)
    expected = _div_reference(a, b, dtype) if op == "div" else ARITH[op](a, b)
    rtol = float_rtol(ex, dtype) if dtype in FLOAT_DTYPES else None
    check(ex, getattr(ex, op)(ex.from_numpy(a), ex.from_numpy(b)), expected, rtol)


def test_int_div_is_floor_division(ex: Executor) -> None:
    a = ex.from_numpy(np.array([7, -7, 7, -7, 6], np.int64))
    b = ex.from_numpy(np.array([2, 2, -2, -2, 3], np.int64))
    check(ex, ex.div(a, b), np.array([3, -4, -4, 3, 2], np.int64))
    check(ex, ex.div(a, 2), np.array([3, -4, 3, -4, 3], np.int64))
    check(ex, ex.div(-7, b), np.array([-4, -4, 3, 3, -3], np.int64))
    check(ex, ex.div(ex.from_numpy(np.array([7, -7], np.int32)), 2.0), np.array([3.5, -3.5], np.float32))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("scalar", [3, 2.5, True])
def test_binary_with_scalar_keeps_dtype(ex: Executor, op: str, dtype: str, scalar: object) -> None:
    a = sample(dtype, (2, 3), seed=3, nonzero=True)
    expected_dtype = result_dtype(dtype, scalar)
    assert expected_dtype == ("float32" if isinstance(scalar, float) and dtype in INT_DTYPES else dtype)
    ref_a = a.astype(expected_dtype)
    for left, right, ref_left, ref_right in ((a, scalar, ref_a, scalar), (scalar, a, scalar, ref_a)):
        prim_left = ex.from_numpy(left) if isinstance(left, np.ndarray) else left
        prim_right = ex.from_numpy(right) if isinstance(right, np.ndarray) else right
        if op == "div":
            expected = _div_reference(ref_left, ref_right, expected_dtype)
        else:
            expected = ARITH[op](ref_left, ref_right)
        rtol = float_rtol(ex, expected_dtype) if expected_dtype in FLOAT_DTYPES else None
        check(ex, getattr(ex, op)(prim_left, prim_right), expected, rtol)


def test_numpy_scalars_act_as_python_scalars(ex: Executor) -> None:
    a = ex.from_numpy(np.array([1.0, 2.0], np.float32))
    check(ex, ex.mul(a, np.float64(0.5)), np.array([0.5, 1.0], np.float32))
    check(ex, ex.add(np.int64(1), a), np.array([2.0, 3.0], np.float32))


@pytest.mark.parametrize(
    ("a_dtype", "b_dtype", "expected"),
    [
        ("float32", "int64", "float32"),
        ("int8", "uint8", "int16"),
        ("float16", "float64", "float64"),
        ("bool", "int32", "int32"),
        ("int16", "float16", "float16"),
        ("uint8", "int64", "int64"),
    ],
)
def test_binary_mixed_dtypes_follow_shared_rule(ex: Executor, a_dtype: str, b_dtype: str, expected: str) -> None:
    a, b = sample(a_dtype, seed=4), sample(b_dtype, seed=5)
    check(ex, ex.add(ex.from_numpy(a), ex.from_numpy(b)), a.astype(expected) + b.astype(expected))
    check(ex, ex.mul(ex.from_numpy(b), ex.from_numpy(a)), b.astype(expected) * a.astype(expected))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_on_bool_raises(ex: Executor, op: str) -> None:
    mask = ex.from_numpy(np.array([True, False]))
    with pytest.raises(TypeError):
        getattr(ex, op)(mask, mask)
    with pytest.raises(TypeError):
        getattr(ex, op)(mask, True)


def test_binary_rejects_two_scalars_and_out_of_range_ints(ex: Executor) -> None:
    with pytest.raises(TypeError):
        ex.add(1, 2)
    with pytest.raises(OverflowError):
        ex.add(ex.from_numpy(np.array([1, 2], np.int8)), 1000)
    with pytest.raises(TypeError):
        ex.add(ex.from_numpy(np.array([1.0])), "1")


COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "lower": np.less,
    "lower_equal": np.less_equal,
}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(COMPARE))
def test_compare(ex: Executor, op: str, dtype: str) -> None:
    a, b = sample(dtype, (4, 5), seed=6), sample(dtype, (4, 5), seed=7)
    ufunc = COMPARE[op]
    check(ex, ex.compare(op, ex.from_numpy(a), ex.from_numpy(b)), ufunc(a, b))
    scalar = True if dtype == "bool" else 2
    check(ex, ex.compare(op, ex.from_numpy(a), scalar), ufunc(a, scalar))
    check(ex, ex.compare(op, scalar, ex.from_numpy(a)), ufunc(scalar, a))


def test_compare_int_with_float_scalar_and_out_of_range(ex: Executor) -> None:
    a = ex.from_numpy(np.array([1, 2, 3], np.int8))
    check(ex, ex.compare("greater", a, 1.5), np.array([False, True, True]))
    check(ex, ex.compare("greater", a, 1000), np.array([False, False, False]))
    check(ex, ex.compare("lower", a, 1000), np.array([True, True, True]))
    check(ex, ex.compare("greater", ex.from_numpy(np.array([0, 255], np.uint8)), -1), np.array([True, True]))
    nan = ex.from_numpy(np.array([np.nan, 1.0], np.float32))
    check(ex, ex.compare("equal", nan, nan), np.array([False, True]))
    check(ex, ex.compare("not_equal", nan, nan), np.array([True, False]))


def test_compare_rejects_unknown_op(ex: Executor) -> None:
    with pytest.raises(ValueError):
        ex.compare("less", ex.from_numpy(np.ones(2)), 1)


# --- elementwise unary -----------------------------------------------------------------------


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


UNARY_REFERENCE = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "abs": np.abs,
    "sign": np.sign,
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", list(UNARY_REFERENCE))
def test_unary_float(ex: Executor, op: str, dtype: str) -> None:
    positive = op in ("log", "sqrt")
    a = fractions(dtype, (3, 5), seed=8, low=0.1 if positive else -3.0)
    expected = UNARY_REFERENCE[op](a.astype(np.float64)).astype(dtype)
    check(ex, ex.unary(op, ex.from_numpy(a)), expected, RTOL[dtype])


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", list(UNARY_REFERENCE))
def test_unary_int(ex: Executor, op: str, dtype: str) -> None:
    a = sample(dtype, (3, 5), seed=9)
    if op in ("log", "sqrt"):
        a = np.abs(a) + 1
    if op in ("exp", "log", "sqrt", "sigmoid", "tanh"):
        # Float-only ops compute in the default float dtype.
        expected = UNARY_REFERENCE[op](a.astype(np.float64)).astype(np.float32)
        check(ex, ex.unary(op, ex.from_numpy(a)), expected, RTOL["float32"])
    else:
        check(ex, ex.unary(op, ex.from_numpy(a)), UNARY_REFERENCE[op](a))


def test_unary_bool(ex: Executor) -> None:
    mask = np.array([[True, False], [False, True]])
    check(ex, ex.unary("bool_not", ex.from_numpy(mask)), ~mask)
    check(ex, ex.unary("sigmoid", ex.from_numpy(mask)), _sigmoid(mask.astype(np.float32)), RTOL["float32"])
    for op in ("neg", "abs", "sign", "relu"):
        with pytest.raises(TypeError):
            ex.unary(op, ex.from_numpy(mask))
    with pytest.raises(ValueError):
        ex.unary("cos", ex.from_numpy(mask))


def test_unary_special_values(ex: Executor) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 1e30, -1e30], np.float32)
    prim = ex.from_numpy(x)
    check(ex, ex.unary("sign", prim), np.sign(x))
    check(ex, ex.unary("relu", prim), np.maximum(x, 0))
    with np.errstate(all="ignore"):
        check(ex, ex.unary("log", prim), np.log(x))
        check(ex, ex.unary("sqrt", prim), np.sqrt(x))
    check(ex, ex.unary("sigmoid", prim), np.array([np.nan, 1, 0, 0.5, 0.26894143, 1, 0], np.float32), 1e-6)
    check(ex, ex.unary("tanh", prim), np.tanh(x), 1e-6)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_powf_scalar(ex: Executor, dtype: str) -> None:
    a = np.abs(sample(dtype, (2, 3), seed=10)) + 1
    expected_dtype = dtype if dtype in FLOAT_DTYPES else "float32"
    for p in (2.0, 0.5, -1.0):
        expected = np.power(a.astype(np.float64), p).astype(expected_dtype)
        check(ex, ex.powf_scalar(ex.from_numpy(a), p), expected, RTOL[expected_dtype])


# --- reductions and shapes ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_sum_and_mean(ex: Executor, dtype: str) -> None:
    a = sample(dtype, (3, 4), seed=11)
    prim = ex.from_numpy(a)
    check(ex, ex.sum(prim), np.array([a.sum(dtype=np.int64 if dtype in INT_DTYPES else np.float64)], dtype))
    if dtype in INT_DTYPES:
        expected = np.array([a.astype(np.int64).sum() // a.size], dtype)  # floor, as int_div
        check(ex, ex.mean(prim), expected)
    else:
        check(ex, ex.mean(prim), np.array([a.astype(np.float64).mean()], dtype), RTOL[dtype])
    check(ex, ex.sum_dim(prim, 0), a.sum(axis=0, keepdims=True, dtype=dtype))
    check(ex, ex.sum_dim(prim, -1), a.sum(axis=1, keepdims=True, dtype=dtype))


def test_int_sum_wraps_in_its_dtype_and_mean_floors(ex: Executor) -> None:
    a = np.full(4, 100, np.int8)
    check(ex, ex.sum(ex.from_numpy(a)), np.array([-112], np.int8))  # 400 mod 256
    check(ex, ex.mean(ex.from_numpy(np.array([-1, -2], np.int32))), np.array([-2], np.int32))


def test_float16_sum_accumulates_in_float32(ex: Executor) -> None:
    a = np.full(4096, 1.0, np.float16)  # float16 accumulation would stall at 2048
    check(ex, ex.sum(ex.from_numpy(a)), np.array([4096], np.float16))
    check(ex, ex.mean(ex.from_numpy(a)), np.array([1], np.float16))


def test_reductions_on_bool_raise(ex: Executor) -> None:
    mask = ex.from_numpy(np.array([True, False]))
    for reduce in (ex.sum, ex.mean):
        with pytest.raises(TypeError):
            reduce(mask)
    with pytest.raises(TypeError):
        ex.sum_dim(mask, 0)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@pytest.mark.parametrize("target", [(3, 1), (1, 4), (4,), (3, 4), (), (2, 3, 4)])
def test_sum_to_shape(ex: Executor, dtype: str, target: tuple[int, ...]) -> None:
    a = sample(dtype, (2, 3, 4), seed=12)
    dims = sum_to_shape_dims(a.shape, target)
    expected = a.sum(axis=dims, keepdims=True, dtype=dtype).reshape(target) if dims else a.reshape(target)
    check(ex, ex.sum_to_shape(ex.from_numpy(a), target), expected)


def test_sum_to_shape_rejects_non_broadcast(ex: Executor) -> None:
    with pytest.raises(ValueError):
        ex.sum_to_shape(ex.from_numpy(np.ones((2, 3))), (2, 2))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_shape_ops(ex: Executor, dtype: str) -> None:
    a = sample(dtype, (2, 3, 4), seed=13)
    prim = ex.from_numpy(a)
    check(ex, ex.reshape(prim, (6, 4)), a.reshape(6, 4))
    check(ex, ex.reshape(prim, [4, -1]), a.reshape(4, -1))
    check(ex, ex.swap_dims(prim, 0, 2), np.swapaxes(a, 0, 2))
    check(ex, ex.swap_dims(prim, -1, 1), np.swapaxes(a, -1, 1))
    check(ex, ex.broadcast_to(ex.from_numpy(a[:, :1]), (5, 2, 3, 4)), np.broadcast_to(a[:, :1], (5, 2, 3, 4)))
    check(ex, ex.copy(prim), a)
    check(ex, ex.cat([prim, ex.reshape(prim, (2, 3, 4))], 1), np.concatenate([a, a], axis=1))
    check(ex, ex.cat([prim], -1), a)


def test_cat_promotes_mixed_dtypes(ex: Executor) -> None:
    a, b = sample("int64", (2, 2)), fractions("float32", (1, 2))
    check(ex, ex.cat([ex.from_numpy(a), ex.from_numpy(b)], 0), np.concatenate([a.astype(np.float32), b]))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,))]
)
def test_matmul(ex: Executor, dtype: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = sample(dtype, a_shape, seed=14), sample(dtype, b_shape, seed=15)
    check(ex, ex.matmul(ex.from_numpy(a), ex.from_numpy(b)), np.matmul(a, b))


def test_int_matmul_wraps_like_numpy(ex: Executor) -> None:
    rng = np.random.default_rng(16)
    a = rng.integers(-128, 128, (3, 5, 7)).astype(np.int8)
    b = rng.integers(-128, 128, (7, 2)).astype(np.int8)
    check(ex, ex.matmul(ex.from_numpy(a), ex.from_numpy(b)), np.matmul(a, b))


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_int_matmul_fallback_matches_torch() -> None:
    # The fallback CUDA uses for integers, checked here on the CPU against torch's kernel.
    from runtime_shim.executors.torch_executor import int_matmul

    generator = torch.Generator().manual_seed(0)
    for a_shape, b_shape in [((4, 3, 5), (5, 2)), ((5,), (5, 2)), ((3, 5), (5,)), ((2, 1, 3, 5), (4, 5, 6))]:
        a = torch.randint(-128, 128, a_shape, dtype=torch.int8, generator=generator)
        b = torch.randint(-128, 128, b_shape, dtype=torch.int8, generator=generator)
        assert torch.equal(int_matmul(a, b), torch.matmul(a, b))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_argmax(ex: Executor, dtype: str) -> None:
    a = sample(dtype, (3, 4, 5), seed=17)
    for dim in (0, 1, -1):
        check(ex, ex.argmax(ex.from_numpy(a), dim), np.argmax(a, axis=dim, keepdims=True).astype(np.int64))


def test_argmax_ties_and_nan(ex: Executor) -> None:
    check(ex, ex.argmax(ex.from_numpy(np.array([[1, 3, 3], [2, 2, 2]], np.int32)), 1), np.array([[1], [0]]))
    check(ex, ex.argmax(ex.from_numpy(np.array([1.0, np.nan, 3.0], np.float32)), 0), np.array([1]))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_one_hot(ex: Executor, dtype: str) -> None:
    a = np.array([[0, 2], [3, 1]], dtype)
    expected = np.eye(4, dtype=np.int64)[a.astype(np.int64)]
    check(ex, ex.one_hot(ex.from_numpy(a), 4), expected)
    check(ex, ex.one_hot(ex.from_numpy(np.zeros(0, dtype)), 3), np.zeros((0, 3), np.int64))


def test_one_hot_rejects_bad_input(ex: Executor) -> None:
    with pytest.raises(ValueError):
        ex.one_hot(ex.from_numpy(np.array([0, 4])), 4)
    with pytest.raises(ValueError):
        ex.one_hot(ex.from_numpy(np.array([-1, 0])), 4)
    with pytest.raises(TypeError):
        ex.one_hot(ex.from_numpy(np.array([0.0, 1.0])), 4)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where(ex: Executor, dtype: str) -> None:
    mask = sample("bool", (3, 4), seed=18)
    a, b = sample(dtype, (3, 4), seed=19), sample(dtype, (1, 4), seed=20)
    m = ex.from_numpy(mask)
    check(ex, ex.where(m, ex.from_numpy(a), ex.from_numpy(b)), np.where(mask, a, b))
    scalar = False if dtype == "bool" else 1
    check(ex, ex.where(m, ex.from_numpy(a), scalar), np.where(mask, a, np.asarray(scalar, dtype)))
    check(ex, ex.where(m, scalar, ex.from_numpy(b)), np.where(mask, np.asarray(scalar, dtype), b))


def test_where_scalar_promotion(ex: Executor) -> None:
    mask = np.array([True, False])
    m = ex.from_numpy(mask)
    check(ex, ex.where(m, 1.5, 0.0), np.array([1.5, 0.0], np.float32))
    check(ex, ex.where(m, 1, 0), np.array([1, 0], np.int64))
    check(ex, ex.where(m, ex.from_numpy(np.array([1, 2], np.int32)), 0.5), np.array([1, 0.5], np.float32))
    check(ex, ex.where(m, ex.from_numpy(np.array([1, 2], np.float16)), 7), np.array([1, 7], np.float16))
    with pytest.raises(OverflowError):
        ex.where(m, ex.from_numpy(np.array([1, 2], np.int8)), 1000)


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_cast(ex: Executor, src: str, dst: str) -> None:
    # Values every cast defines alike: no negatives into uint8, no NaN into ints.
    values = np.array([0, 1, 3, 100], dtype=src) if src != "bool" else np.array([True, False, True, True])
    if src in FLOAT_DTYPES:
        values = np.array([0.0, 1.75, 3.25, 100.5], dtype=src)
    prim = ex.from_numpy(values)
    out = ex.cast(prim, dst)
    check(ex, out, values.astype(dst))
    assert out is not prim


def test_cast_special_floats(ex: Executor) -> None:
    x = np.array([np.nan, -np.inf, -0.0, 65504.0, 1e-8, 70000.0], np.float32)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    check(ex, ex.cast(ex.from_numpy(x), "float16"), expected)
    check(ex, ex.cast(ex.from_numpy(x), "bool"), x.astype(bool))


def test_copy_is_a_new_array(ex: Executor) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    prim = ex.from_numpy(a)
    copied = ex.copy(prim)
    check(ex, copied, a)
    if ex.family == "numpy":
        assert not np.shares_memory(copied, prim)
    else:
        assert copied.data_ptr() != prim.data_ptr()


# --- immutability of inputs ----------------------------------------------------------------------


def _frozen_inputs(ex: Executor) -> dict[str, object]:
    arrays = {
        "a": fractions("float32", (2, 3), seed=21),
        "b": fractions("float32", (2, 3), seed=22, low=0.5),
        "i": np.array([[1, 2, 2], [2, 1, 1]], np.int64),  # no zeros: torch raises on int division by 0
        "mask": np.array([[True, False, True], [False, False, True]]),
    }
    for array in arrays.values():
        array.flags.writeable = False  # the numpy executor would raise on any in-place write
    return {name: ex.from_numpy(array) for name, array in arrays.items()}


def _run_every_method(ex: Executor, p: dict[str, object]) -> None:
    a, b, i, mask = p["a"], p["b"], p["i"], p["mask"]
    for op in ("add", "sub", "mul", "div"):
        getattr(ex, op)(a, b)
        getattr(ex, op)(a, 2.0)
        getattr(ex, op)(3, i)
        getattr(ex, op)(i, i)
    for op in COMPARE:
        ex.compare(op, a, b)
        ex.compare(op, i, 1)
    for op in UNARY_REFERENCE:
        ex.unary(op, a)
        ex.unary(op, i)
    ex.unary("bool_not", mask)
    ex.powf_scalar(a, 2.0)
    ex.powf_scalar(i, 0.5)
    for x in (a, i):
        ex.sum(x)
        ex.mean(x)
        ex.sum_dim(x, 1)
        ex.sum_to_shape(x, (1, 3))
        ex.broadcast_to(x, (4, 2, 3))
        ex.reshape(x, (3, 2))
        ex.swap_dims(x, 0, 1)
        ex.argmax(x, 1)
        ex.cat([x, x], 0)
        ex.cast(x, "float16")
        ex.copy(x)
        ex.to_numpy(x)
    ex.matmul(a, ex.swap_dims(b, 0, 1))
    ex.matmul(i, ex.swap_dims(i, 0, 1))
    ex.one_hot(i, 3)
    ex.where(mask, a, b)
    ex.where(mask, i, 0)
    ex.argmax(mask, 0)


def test_no_method_mutates_its_inputs(ex: Executor) -> None:
    inputs = _frozen_inputs(ex)
    before = {name: ex.to_numpy(prim) for name, prim in inputs.items()}
    versions = {name: getattr(prim, "_version", None) for name, prim in inputs.items()}
    _run_every_method(ex, inputs)
    for name, prim in inputs.items():
        np.testing.assert_array_equal(ex.to_numpy(prim), before[name])
        # torch counts in-place writes in _version, also ones that restore the values.
        assert getattr(prim, "_version", None) == versions[name], name
