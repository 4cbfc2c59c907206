"""The numpy executor, plus the dtype rules every executor shares.

Type promotion is decided here once, on dtype names, so that numpy and torch
give the same result dtype for the same operands even where the libraries'
own rules differ (numpy promotes ``int32 * 0.5`` to float64, torch to
float32; numpy promotes ``float32 + int64`` arrays to float64, torch keeps
float32). The rules follow torch's, with Python scalars "weak":

* two arrays of one kind (bool, int, float): numpy's promotion within the kind;
* two arrays of different kinds: the dtype of the higher-kind array;
* array and scalar: the array's dtype, unless the scalar is of a higher kind,
  then the default dtype of the scalar's kind (int64, float32).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import numpy as np

from runtime_shim.executors.base import (
    BOOL_DTYPES,
    DEFAULT_FLOAT,
    DEFAULT_INT,
    FLOAT_DTYPES,
    INT_DTYPES,
    Executor,
    Prim,
    Scalar,
)

ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + BOOL_DTYPES


# numpy's ``dtype.name`` is a slow Python property (~2 us); dispatch asks for it on every op.
_DTYPE_NAMES: dict[np.dtype, str] = {}


def _name(dtype: np.dtype) -> str:
    """``dtype.name``, memoised per dtype object."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name

BOOL_KIND, INT_KIND, FLOAT_KIND = 0, 1, 2
_KIND = {
    "bool": BOOL_KIND,
    **dict.fromkeys(INT_DTYPES, INT_KIND),
    **dict.fromkeys(FLOAT_DTYPES, FLOAT_KIND),
}
_DEFAULT_OF_KIND = ("bool", DEFAULT_INT, DEFAULT_FLOAT)

COMPARE_OPS = ("equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal")
UNARY_OPS = ("neg", "exp", "log", "sqrt", "relu", "sigmoid", "tanh", "bool_not", "abs", "sign")
# Ops that only make sense on floats: int and bool inputs are cast to DEFAULT_FLOAT first.
FLOAT_UNARY_OPS = ("exp", "log", "sqrt", "sigmoid", "tanh")

_RNG = np.random.default_rng()


def dtype_kind(dtype: str) -> int:
    """0 for bool, 1 for int, 2 for float dtype names of the contract."""
    try:
        return _KIND[dtype]
    except KeyError:
        raise TypeError(f"dtype {dtype!r} is not one of {ALL_DTYPES}") from None


def as_scalar(value: object) -> Scalar:
    """A Python scalar from a Python or numpy scalar (numpy scalars would act as strong types)."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"expected an array or a Python scalar, got {type(value).__name__}")
    return value


def scalar_kind(value: Scalar) -> int:
    if isinstance(value, bool):
        return BOOL_KIND
    return INT_KIND if isinstance(value, int) else FLOAT_KIND


def result_dtype(a: str | Scalar, b: str | Scalar) -> str:
    """Result dtype of a binary op; each operand is an array's dtype name or a Python scalar."""
    a_is_array, b_is_array = isinstance(a, str), isinstance(b, str)
    if a_is_array and b_is_array:
        ka, kb = dtype_kind(a), dtype_kind(b)
        if ka == kb:
            return np.result_type(a, b).name
        return a if ka > kb else b
    if a_is_array or b_is_array:
        name, scalar = (a, b) if a_is_array else (b, a)
        ks = scalar_kind(scalar)
        return name if ks <= dtype_kind(name) else _DEFAULT_OF_KIND[ks]
    return _DEFAULT_OF_KIND[max(scalar_kind(a), scalar_kind(b))]


def int_scalar_fits(value: Scalar, dtype: str) -> bool:
    """Whether a Python int scalar is representable in an int dtype (floats and bools always "fit")."""
    if isinstance(value, bool) or not isinstance(value, int) or dtype_kind(dtype) != INT_KIND:
        return True
    info = np.iinfo(dtype)
    return int(info.min) <= value <= int(info.max)


def check_int_scalar(value: Scalar, dtype: str) -> None:
    """Raise numpy's OverflowError for an int scalar outside ``dtype`` (torch would wrap silently)."""
    if not int_scalar_fits(value, dtype):
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")


def compare_dtype(a: str | Scalar, b: str | Scalar) -> str:
    """Dtype both operands of a comparison are brought to.

    Like ``result_dtype``, except that an int scalar outside an int array's range
    widens the comparison to int64, so ``int8_array > 1000`` is False, not wrapped.
    """
    dtype = result_dtype(a, b)
    if all(int_scalar_fits(x, dtype) for x in (a, b) if not isinstance(x, str)):
        return dtype
    return "int64"


def sum_to_shape_dims(shape: tuple[int, ...], target: Sequence[int]) -> tuple[int, ...]:
    """Axes of an array of ``shape`` to sum (keeping them) to reduce it to ``target``.

    ``shape`` must be ``target`` broadcast: leading extra axes, and axes where the
    target has size 1.
    """
    target = tuple(target)
    lead = len(shape) - len(target)
    if lead < 0:
        raise ValueError(f"cannot reduce shape {shape} to the larger rank shape {target}")
    dims = list(range(lead))
    for i, (have, want) in enumerate(zip(shape[lead:], target, strict=True)):
        if have == want:
            continue
        if want != 1:
            raise ValueError(f"shape {shape} is not a broadcast of {target}")
        dims.append(lead + i)
    return tuple(dims)


def check_one_hot_range(low: int, high: int, num_classes: int) -> None:
    if low < 0 or high >= num_classes:
        raise ValueError(f"one_hot values must lie in [0, {num_classes}), got [{low}, {high}]")


def check_arith_dtype(dtype: str) -> None:
    """Raise TypeError for arithmetic on bool (Burn has none; numpy and torch disagree on it)."""
    if dtype_kind(dtype) == BOOL_KIND:
        raise TypeError("arithmetic is not defined on bool arrays; cast them first")


class NumpyExecutor(Executor):
    """Arrays are ``numpy.ndarray`` on the host."""

    family = "numpy"
    place = "host"

    # --- creation -----------------------------------------------------------
    def from_numpy(self, array: object) -> np.ndarray:
        array = np.asarray(array)
        dtype_kind(_name(array.dtype))
        if not array.dtype.isnative:
            return array.astype(array.dtype.newbyteorder("="))
        # Arrays are never mutated, so the caller's array can be shared as it is (or a pinned copy
        # of it, when a GPU is usable, so that moving it to the GPU is one DMA).
        from runtime_shim import dataplane

        return dataplane.pin_host(array)

    def to_numpy(self, prim: np.ndarray) -> np.ndarray:
        return np.array(prim, copy=True)

    def zeros(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.zeros(tuple(shape), dtype=_np_dtype(dtype))

    def ones(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.ones(tuple(shape), dtype=_np_dtype(dtype))

    def full(self, shape: Sequence[int], value: Scalar, dtype: str) -> np.ndarray:
        return np.full(tuple(shape), as_scalar(value), dtype=_np_dtype(dtype))

    def empty(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.empty(tuple(shape), dtype=_np_dtype(dtype))

    def random(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        shape = tuple(shape)
        if dtype_kind(dtype) != FLOAT_KIND:
            raise ValueError(f"random needs a float dtype, got {dtype!r}")
        if dtype == "float16":
            # Generator.random has no float16, and rounding a float32 draw to
            # float16 can give 1.0; k / 2**11 is exact in float16 and below 1.
            return (_RNG.integers(0, 2**11, size=shape) * 2.0**-11).astype(np.float16)
        return _RNG.random(shape, dtype=_np_dtype(dtype))

    def arange(self, start: int, end: int) -> np.ndarray:
        return np.arange(start, end, dtype=np.int64)

    # --- introspection -------------------------------------------------------
    def shape(self, prim: np.ndarray) -> tuple[int, ...]:
        return prim.shape  # already a tuple of Python ints

    def dtype(self, prim: np.ndarray) -> str:
        return _name(prim.dtype)

    def nbytes(self, prim: np.ndarray) -> int:
        return int(prim.nbytes)

    # --- elementwise binary -----------------------------------------------------
    def add(self, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        return self._arith(np.add, a, b)

    def sub(self, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        return self._arith(np.subtract, a, b)

    def mul(self, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        return self._arith(np.multiply, a, b)

    def div(self, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        op = np.floor_divide if dtype_kind(dtype) == INT_KIND else np.true_divide
        with np.errstate(all="ignore"):
            return np.asarray(op(a, b))

    def compare(self, op: str, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        ufunc = _COMPARE_UFUNCS.get(op)
        if ufunc is None:
            raise ValueError(f"unknown comparison {op!r}; expected one of {COMPARE_OPS}")
        a, b, _ = self._promote(a, b, compare_dtype)
        return np.asarray(ufunc(a, b))

    # --- elementwise unary -----------------------------------------------------
    def unary(self, op: str, a: np.ndarray) -> np.ndarray:
        if op not in UNARY_OPS:
            raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
        kind = dtype_kind(_name(a.dtype))
        if op == "bool_not":
            return np.logical_not(a)
        if op in FLOAT_UNARY_OPS:
            if kind != FLOAT_KIND:
                a = a.astype(DEFAULT_FLOAT)
        elif kind == BOOL_KIND:
            raise TypeError(f"{op} is not defined on bool arrays")
        return _quiet(_UNARY_FUNCS[op], a)

    def powf_scalar(self, a: np.ndarray, p: float) -> np.ndarray:
        if dtype_kind(_name(a.dtype)) != FLOAT_KIND:
            a = a.astype(DEFAULT_FLOAT)
        with np.errstate(all="ignore"):
            return np.power(a, as_scalar(p))

    # --- reductions and shapes -----------------------------------------------
    def sum(self, a: np.ndarray) -> np.ndarray:
        return _sum(a, None).reshape(1)

    def sum_dim(self, a: np.ndarray, dim: int) -> np.ndarray:
        return _sum(a, dim)

    def mean(self, a: np.ndarray) -> np.ndarray:
        dtype = _name(a.dtype)
        check_arith_dtype(dtype)
        if dtype_kind(dtype) == INT_KIND:
            # Burn's int mean: the sum divided by the count, as int_div would (floor).
            total = np.sum(a, dtype=np.int64)
            return np.asarray(total // max(a.size, 1), dtype=a.dtype).reshape(1)
        with np.errstate(all="ignore"):
            return np.asarray(np.mean(a, dtype=_accumulator(a.dtype)), dtype=a.dtype).reshape(1)

    def sum_to_shape(self, a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        dims = sum_to_shape_dims(self.shape(a), shape)
        if dims:
            a = _sum(a, dims)
        return a.reshape(tuple(shape))

    def broadcast_to(self, a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        # A read-only view: arrays are immutable by contract.
        return np.broadcast_to(a, tuple(shape))

    def reshape(self, a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        return np.reshape(a, tuple(shape))

    def swap_dims(self, a: np.ndarray, d0: int, d1: int) -> np.ndarray:
        return np.swapaxes(a, d0, d1)

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        return np.matmul(a, b)

    def argmax(self, a: np.ndarray, dim: int) -> np.ndarray:
        return np.argmax(a, axis=dim, keepdims=True).astype(np.int64, copy=False)

    def one_hot(self, a: np.ndarray, num_classes: int) -> np.ndarray:
        if dtype_kind(_name(a.dtype)) != INT_KIND:
            raise TypeError(f"one_hot needs an int array, got {_name(a.dtype)}")
        if a.size:
            check_one_hot_range(int(a.min()), int(a.max()), num_classes)
        classes = np.arange(num_classes, dtype=np.int64)
        return (a[..., None].astype(np.int64) == classes).astype(np.int64)

    def cat(self, prims: Sequence[np.ndarray], dim: int) -> np.ndarray:
        dtype = reduce(result_dtype, [_name(p.dtype) for p in prims])
        return np.concatenate([p.astype(dtype, copy=False) for p in prims], axis=dim)

    def where(self, mask: np.ndarray, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        a, b = _operand(a), _operand(b)
        dtype = result_dtype(_dtype_or_scalar(a), _dtype_or_scalar(b))
        # Scalars become arrays of the result dtype; otherwise two scalars would give float64.
        return np.where(mask, np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype))

    def cast(self, a: np.ndarray, dtype: str) -> np.ndarray:
        with np.errstate(all="ignore"):
            return a.astype(_np_dtype(dtype))

    def copy(self, a: np.ndarray) -> np.ndarray:
        return a.copy()

    # --- helpers -------------------------------------------------------------------
    def _promote(
        self, a: Prim | Scalar, b: Prim | Scalar, rule: Callable[[str | Scalar, str | Scalar], str]
    ) -> tuple[Prim | Scalar, Prim | Scalar, str]:
        # Fast paths (same-dtype arrays; a float array and a Python float): the array's dtype wins.
        if type(a) is np.ndarray:
            if type(b) is np.ndarray:
                if a.dtype is b.dtype and a.dtype.kind in "fi":
                    return a, b, _name(a.dtype)
            elif type(b) is float and a.dtype.kind == "f":
                return a, b, _name(a.dtype)
        elif type(a) is float and type(b) is np.ndarray and b.dtype.kind == "f":
            return a, b, _name(b.dtype)
        a, b = _operand(a), _operand(b)
        if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
            raise TypeError("at least one operand must be an array")
        dtype = rule(_dtype_or_scalar(a), _dtype_or_scalar(b))
        return _cast_array(a, dtype), _cast_array(b, dtype), dtype

    def _arith(self, ufunc: np.ufunc, a: Prim | Scalar, b: Prim | Scalar) -> np.ndarray:
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        return _quiet(ufunc, a, b)


def _np_dtype(name: str) -> np.dtype:
    dtype_kind(name)
    return np.dtype(name)


def _operand(x: Prim | Scalar) -> Prim | Scalar:
    return x if isinstance(x, np.ndarray) else as_scalar(x)


def _dtype_or_scalar(x: Prim | Scalar) -> str | Scalar:
    return _name(x.dtype) if isinstance(x, np.ndarray) else x


def _cast_array(x: Prim | Scalar, dtype: str) -> Prim | Scalar:
    if isinstance(x, np.ndarray):
        return x.astype(dtype, copy=False)
    check_int_scalar(x, dtype)
    return x


def _accumulator(dtype: np.dtype) -> np.dtype:
    # float16 sums lose too much in float16; torch accumulates them in float32 too.
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _sum(a: np.ndarray, axis: int | tuple[int, ...] | None) -> np.ndarray:
    check_arith_dtype(_name(a.dtype))
    total = _quiet_sum(a, axis=axis, dtype=_accumulator(a.dtype), keepdims=axis is not None)
    return np.asarray(total).astype(a.dtype, copy=False)


# Floating-point errors are ignored, as Burn's kernels do. The decorator form of errstate costs
# half of the context manager's (no errstate object per call) and keeps its per-thread state.
@np.errstate(all="ignore")
def _quiet(fn: Callable[..., Any], *args: Any) -> np.ndarray:
    return np.asarray(fn(*args))


@np.errstate(all="ignore")
def _quiet_sum(a: np.ndarray, axis: int | tuple[int, ...] | None, dtype: np.dtype, keepdims: bool) -> Any:
    return np.add.reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)  # np.sum's own call for arrays


def _sigmoid(a: np.ndarray) -> np.ndarray:
    # exp(-|a|) never overflows, unlike 1 / (1 + exp(-a)) for large negative a.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)


_COMPARE_UFUNCS = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "lower": np.less,
    "lower_equal": np.less_equal,
}

_UNARY_FUNCS = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "relu": lambda a: np.maximum(a, 0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "abs": np.abs,
    "sign": np.sign,
}
