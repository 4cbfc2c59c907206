"""The torch executor: arrays are ``torch.Tensor`` on one torch device.

Importing this module imports torch; ``runtime_shim.executors`` imports it only
when a torch executor is asked for. Result dtypes follow the shared rules of
``numpy_executor`` so both families agree.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from functools import reduce

import numpy as np
import torch
import torch.nn.functional as F

from runtime_shim import dataplane
from runtime_shim.executors.base import DEFAULT_FLOAT, Executor, Prim, Scalar
from runtime_shim.executors.numpy_executor import (
    ALL_DTYPES,
    BOOL_KIND,
    COMPARE_OPS,
    FLOAT_KIND,
    FLOAT_UNARY_OPS,
    INT_KIND,
    UNARY_OPS,
    as_scalar,
    check_arith_dtype,
    check_int_scalar,
    check_one_hot_range,
    compare_dtype,
    dtype_kind,
    result_dtype,
    sum_to_shape_dims,
)

# The contract's dtype names are also the names of torch's dtypes (torch.bool, torch.float16, ...).
TORCH_DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in ALL_DTYPES}
_NAMES: dict[torch.dtype, str] = {dtype: name for name, dtype in TORCH_DTYPES.items()}

_PLACE = re.compile(r"cpu|cuda:\d+")

_COMPARE_OPERATORS = {
    "equal": operator.eq,
    "not_equal": operator.ne,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "lower": operator.lt,
    "lower_equal": operator.le,
}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a contract dtype name."""
    dtype_kind(name)
    return TORCH_DTYPES[name]


def dtype_name(dtype: torch.dtype) -> str:
    """The contract dtype name of a torch dtype."""
    try:
        return _NAMES[dtype]
    except KeyError:
        raise TypeError(f"torch dtype {dtype} is not one of {ALL_DTYPES}") from None


def _sign(a: torch.Tensor) -> torch.Tensor:
    # torch.sign(nan) is 0; numpy and Rust's signum keep NaN.
    if a.is_floating_point():
        return torch.where(torch.isnan(a), a, torch.sign(a))
    return torch.sign(a)


_UNARY_FUNCS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "neg": torch.neg,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "abs": torch.abs,
    "sign": _sign,
}


class TorchExecutor(Executor):
    """Arrays are ``torch.Tensor`` on ``place`` ("cpu" or "cuda:i")."""

    family = "torch"

    def __init__(self, place: str) -> None:
        if not _PLACE.fullmatch(place):
            raise ValueError(f"torch place must be 'cpu' or 'cuda:<index>', got {place!r}")
        self.place = place
        self.device = torch.device(place)

    # --- creation -----------------------------------------------------------
    def from_numpy(self, array: object) -> torch.Tensor:
        array = np.asarray(array)
        dtype_kind(array.dtype.name)
        if self.place == "cpu":
            return dataplane.numpy_to_torch(dataplane.pin_host(array))
        return dataplane.host_to_device(array, self.place)

    def to_numpy(self, prim: torch.Tensor) -> np.ndarray:
        if self.place == "cpu":
            return prim.detach().numpy().copy()
        return dataplane.device_to_host(prim)

    def zeros(self, shape: Sequence[int], dtype: str) -> torch.Tensor:
        return torch.zeros(tuple(shape), dtype=torch_dtype(dtype), device=self.device)

    def ones(self, shape: Sequence[int], dtype: str) -> torch.Tensor:
        return torch.ones(tuple(shape), dtype=torch_dtype(dtype), device=self.device)

    def full(self, shape: Sequence[int], value: Scalar, dtype: str) -> torch.Tensor:
        value = as_scalar(value)
        check_int_scalar(value, dtype)
        return torch.full(tuple(shape), value, dtype=torch_dtype(dtype), device=self.device)

    def empty(self, shape: Sequence[int], dtype: str) -> torch.Tensor:
        return torch.empty(tuple(shape), dtype=torch_dtype(dtype), device=self.device)

    def random(self, shape: Sequence[int], dtype: str) -> torch.Tensor:
        if dtype_kind(dtype) != FLOAT_KIND:
            raise ValueError(f"random needs a float dtype, got {dtype!r}")
        return torch.rand(tuple(shape), dtype=torch_dtype(dtype), device=self.device)

    def arange(self, start: int, end: int) -> torch.Tensor:
        return torch.arange(start, end, dtype=torch.int64, device=self.device)

    # --- introspection -------------------------------------------------------
    def shape(self, prim: torch.Tensor) -> tuple[int, ...]:
        return tuple(prim.shape)

    def dtype(self, prim: torch.Tensor) -> str:
        return dtype_name(prim.dtype)

    def nbytes(self, prim: torch.Tensor) -> int:
        return prim.numel() * prim.element_size()

    # --- elementwise binary -----------------------------------------------------
    # Two tensors of one non-bool dtype (the common case) need no promotion and pass the
    # arithmetic check: the operator runs directly, without ``_arith``'s calls.
    def add(self, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        if type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype is b.dtype and a.dtype in _FAST_DTYPES:
            return a + b
        return self._arith(operator.add, a, b)

    def sub(self, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        if type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype is b.dtype and a.dtype in _FAST_DTYPES:
            return a - b
        return self._arith(operator.sub, a, b)

    def mul(self, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        if type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype is b.dtype and a.dtype in _FAST_DTYPES:
            return a * b
        return self._arith(operator.mul, a, b)

    def div(self, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        # // is floor division on tensors (torch.floor_divide), as numpy's.
        return a // b if dtype_kind(dtype) == INT_KIND else a / b

    def compare(self, op: str, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        func = _COMPARE_OPERATORS.get(op)
        if func is None:
            raise ValueError(f"unknown comparison {op!r}; expected one of {COMPARE_OPS}")
        a, b, _ = self._promote(a, b, compare_dtype)
        return func(a, b)

    # --- elementwise unary -----------------------------------------------------
    def unary(self, op: str, a: torch.Tensor) -> torch.Tensor:
        if type(a) is torch.Tensor and a.dtype in _FAST_FLOATS:  # a float input: no cast, no refusal
            func = _UNARY_FUNCS.get(op)
            if func is not None:
                return func(a)
        if op not in UNARY_OPS:
            raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
        kind = dtype_kind(self.dtype(a))
        if op == "bool_not":
            return torch.logical_not(a)
        if op in FLOAT_UNARY_OPS:
            if kind != FLOAT_KIND:
                a = a.to(TORCH_DTYPES[DEFAULT_FLOAT])
        elif kind == BOOL_KIND:
            raise TypeError(f"{op} is not defined on bool arrays")
        return _UNARY_FUNCS[op](a)

    def powf_scalar(self, a: torch.Tensor, p: float) -> torch.Tensor:
        if not a.is_floating_point():
            a = a.to(TORCH_DTYPES[DEFAULT_FLOAT])
        return torch.pow(a, as_scalar(p))

    # --- reductions and shapes -----------------------------------------------
    def sum(self, a: torch.Tensor) -> torch.Tensor:
        if type(a) is torch.Tensor and a.dtype in _FAST_DTYPES and a.dtype is not torch.float16:
            # Accumulated in its own dtype (floats' default; ints would widen to int64 unasked): no cast back.
            total = torch.sum(a) if a.dtype in _FAST_FLOATS else torch.sum(a, dtype=a.dtype)
            return total.unsqueeze(0)
        check_arith_dtype(self.dtype(a))
        return _back(torch.sum(a, dtype=_accumulator(a.dtype)), a.dtype).reshape(1)

    def sum_dim(self, a: torch.Tensor, dim: int) -> torch.Tensor:
        return self._sum_dims(a, (dim,))

    def mean(self, a: torch.Tensor) -> torch.Tensor:
        dtype = self.dtype(a)
        check_arith_dtype(dtype)
        if dtype_kind(dtype) == INT_KIND:
            # Burn's int mean: the sum divided by the count, as int_div would (floor).
            total = torch.sum(a, dtype=torch.int64)
            return (total // max(a.numel(), 1)).to(a.dtype).reshape(1)
        return _back(torch.mean(a, dtype=_accumulator(a.dtype)), a.dtype).reshape(1)

    def sum_to_shape(self, a: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
        dims = sum_to_shape_dims(self.shape(a), shape)
        if dims:  # torch.sum over dim=() would reduce every dim
            a = self._sum_dims(a, dims)
        return a.reshape(tuple(shape))

    def broadcast_to(self, a: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
        return torch.broadcast_to(a, tuple(shape))

    def reshape(self, a: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
        return torch.reshape(a, tuple(shape))

    def swap_dims(self, a: torch.Tensor, d0: int, d1: int) -> torch.Tensor:
        return torch.transpose(a, d0, d1)

    def matmul(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype is b.dtype and a.dtype in _FAST_FLOATS:
            return torch.matmul(a, b)  # floats of one dtype: no promotion, a float kernel everywhere
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        if dtype_kind(dtype) == INT_KIND and self.device.type != "cpu":
            return int_matmul(a, b)
        return torch.matmul(a, b)

    def argmax(self, a: torch.Tensor, dim: int) -> torch.Tensor:
        if a.dtype == torch.bool:  # torch has no argmax kernel for bool
            a = a.to(torch.uint8)
        return torch.argmax(a, dim=dim, keepdim=True)

    def one_hot(self, a: torch.Tensor, num_classes: int) -> torch.Tensor:
        if dtype_kind(self.dtype(a)) != INT_KIND:
            raise TypeError(f"one_hot needs an int array, got {self.dtype(a)}")
        if a.numel():
            check_one_hot_range(int(a.min()), int(a.max()), num_classes)
        return F.one_hot(a.to(torch.int64), num_classes)

    def cat(self, prims: Sequence[torch.Tensor], dim: int) -> torch.Tensor:
        dtype = reduce(result_dtype, [self.dtype(p) for p in prims])
        return torch.cat([p.to(TORCH_DTYPES[dtype]) for p in prims], dim=dim)

    def where(self, mask: torch.Tensor, a: Prim | Scalar, b: Prim | Scalar) -> torch.Tensor:
        a, b = _operand(a), _operand(b)
        dtype = result_dtype(self._dtype_or_scalar(a), self._dtype_or_scalar(b))
        return torch.where(mask, self._as_tensor(a, dtype), self._as_tensor(b, dtype))

    def cast(self, a: torch.Tensor, dtype: str) -> torch.Tensor:
        return a.to(torch_dtype(dtype), copy=True)

    def copy(self, a: torch.Tensor) -> torch.Tensor:
        return a.clone()

    # --- helpers -------------------------------------------------------------------
    def _dtype_or_scalar(self, x: Prim | Scalar) -> str | Scalar:
        return self.dtype(x) if isinstance(x, torch.Tensor) else x

    def _as_tensor(self, x: Prim | Scalar, dtype: str) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return x.to(TORCH_DTYPES[dtype])
        check_int_scalar(x, dtype)
        # A fill on the device, not torch.tensor(): no host-to-device copy.
        return torch.full((), x, dtype=TORCH_DTYPES[dtype], device=self.device)

    def _promote(
        self, a: Prim | Scalar, b: Prim | Scalar, rule: Callable[[str | Scalar, str | Scalar], str]
    ) -> tuple[Prim | Scalar, Prim | Scalar, str]:
        # Fast paths for the common cases (same-dtype tensors; a float tensor and a Python float):
        # the result dtype is the tensor's, so no promotion lookup and no casts.
        if type(a) is torch.Tensor:
            if type(b) is torch.Tensor:
                if a.dtype is b.dtype and a.dtype in _FAST_DTYPES:
                    return a, b, _FAST_DTYPES[a.dtype]
            elif type(b) is float and a.dtype in _FAST_FLOATS:
                return a, b, _FAST_FLOATS[a.dtype]
        elif type(a) is float and type(b) is torch.Tensor and b.dtype in _FAST_FLOATS:
            return a, b, _FAST_FLOATS[b.dtype]
        a, b = _operand(a), _operand(b)
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            raise TypeError("at least one operand must be an array")
        dtype = rule(self._dtype_or_scalar(a), self._dtype_or_scalar(b))
        return _cast_operand(a, dtype), _cast_operand(b, dtype), dtype

    def _arith(
        self, op: Callable[[Prim | Scalar, Prim | Scalar], torch.Tensor], a: Prim | Scalar, b: Prim | Scalar
    ) -> torch.Tensor:
        a, b, dtype = self._promote(a, b, result_dtype)
        check_arith_dtype(dtype)
        return op(a, b)

    def _sum_dims(self, a: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
        check_arith_dtype(self.dtype(a))
        return _back(torch.sum(a, dim=dims, keepdim=True, dtype=_accumulator(a.dtype)), a.dtype)


def int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Integer matmul by broadcast multiply and sum: CUDA has no integer matmul kernels.

    Wraps on overflow exactly as numpy's and torch's CPU integer matmul do.
    """
    a_vec, b_vec = a.dim() == 1, b.dim() == 1
    if a_vec:
        a = a.unsqueeze(0)
    if b_vec:
        b = b.unsqueeze(-1)
    out = (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(dim=-2, dtype=a.dtype)
    if a_vec:
        out = out.squeeze(-2)
    if b_vec:
        out = out.squeeze(-1)
    return out


def _operand(x: Prim | Scalar) -> Prim | Scalar:
    return x if isinstance(x, torch.Tensor) else as_scalar(x)


_FAST_FLOATS = {torch.float16: "float16", torch.float32: "float32", torch.float64: "float64"}
_FAST_DTYPES = {**_FAST_FLOATS, torch.int64: "int64", torch.int32: "int32"}


def _cast_operand(x: Prim | Scalar, dtype: str) -> Prim | Scalar:
    if isinstance(x, torch.Tensor):
        return x.to(TORCH_DTYPES[dtype])
    check_int_scalar(x, dtype)
    # torch mishandles bool scalars in some ops (True - tensor fails); the dtype is already decided.
    return int(x) if isinstance(x, bool) and dtype != "bool" else x


def _back(result: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Round an accumulated reduction back to ``dtype``; skip the (costly) no-op cast."""
    return result if result.dtype is dtype else result.to(dtype)


def _accumulator(dtype: torch.dtype) -> torch.dtype:
    # Sum float16 in float32, as the numpy executor does, so both round alike.
    return torch.float32 if dtype == torch.float16 else dtype
