"""The executor contract: primitive array operations one backend family runs.

An executor knows nothing of Burn's dispatch rules, autodiff or devices in the
Burn sense; it runs array math on one physical place (numpy on the host, torch
on the CPU, torch on ``cuda:i``). The dispatch layer decides *whether* an
operation may run (the semantics table) and the autodiff tape decides *what*
to record; executors only compute. Every method returns a new array and never
mutates its inputs, so arrays may be shared between tensors safely.

"prim" below is the executor's native array type (``numpy.ndarray`` or
``torch.Tensor``). Dtype names are numpy's spelling: ``float16``, ``float32``,
``float64``, ``int8``, ``int16``, ``int32``, ``int64``, ``uint8``, ``bool``.
Shapes are tuples of ints. Broadcasting follows numpy's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Prim = Any
Scalar = int | float | bool

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
BOOL_DTYPES = ("bool",)
DEFAULT_FLOAT = "float32"
DEFAULT_INT = "int64"


class Executor:
    """Abstract base; see module docstring. Subclasses implement every method."""

    #: "numpy" or "torch"
    family: str = ""
    #: where the arrays live: "host" for numpy, or a torch device string ("cpu", "cuda:0")
    place: str = ""

    # --- creation -----------------------------------------------------------
    def from_numpy(self, array: Any) -> Prim:
        """Array on this executor from a numpy array (zero-copy where possible)."""
        raise NotImplementedError

    def to_numpy(self, prim: Prim) -> Any:
        """A numpy array holding a *copy* of ``prim``'s values (same dtype)."""
        raise NotImplementedError

    def zeros(self, shape: Sequence[int], dtype: str) -> Prim:
        raise NotImplementedError

    def ones(self, shape: Sequence[int], dtype: str) -> Prim:
        raise NotImplementedError

    def full(self, shape: Sequence[int], value: Scalar, dtype: str) -> Prim:
        raise NotImplementedError

    def empty(self, shape: Sequence[int], dtype: str) -> Prim:
        raise NotImplementedError

    def random(self, shape: Sequence[int], dtype: str) -> Prim:
        """Uniform values in [0, 1)."""
        raise NotImplementedError

    def arange(self, start: int, end: int) -> Prim:
        """int64 values start..end-1."""
        raise NotImplementedError

    # --- introspection -------------------------------------------------------
    def shape(self, prim: Prim) -> tuple[int, ...]:
        raise NotImplementedError

    def dtype(self, prim: Prim) -> str:
        raise NotImplementedError

    def nbytes(self, prim: Prim) -> int:
        raise NotImplementedError

    # --- elementwise binary (tensor or Python scalar on either side) ----------
    def add(self, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        raise NotImplementedError

    def sub(self, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        raise NotImplementedError

    def mul(self, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        raise NotImplementedError

    def div(self, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        """True division for floats; for two int arrays, floor division (Burn's int_div)."""
        raise NotImplementedError

    def compare(self, op: str, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        """op in equal, not_equal, greater, greater_equal, lower, lower_equal -> bool array."""
        raise NotImplementedError

    # --- elementwise unary -----------------------------------------------------
    def unary(self, op: str, a: Prim) -> Prim:
        """op in neg, exp, log, sqrt, relu, sigmoid, tanh, bool_not, abs, sign."""
        raise NotImplementedError

    def powf_scalar(self, a: Prim, p: float) -> Prim:
        raise NotImplementedError

    # --- reductions and shapes -----------------------------------------------
    def sum(self, a: Prim) -> Prim:
        """Sum of all elements as a shape-(1,) array (Burn's sum keeps rank 1)."""
        raise NotImplementedError

    def sum_dim(self, a: Prim, dim: int) -> Prim:
        """Sum along dim, keeping it with size 1 (Burn's sum_dim)."""
        raise NotImplementedError

    def mean(self, a: Prim) -> Prim:
        """Mean of all elements as a shape-(1,) array."""
        raise NotImplementedError

    def sum_to_shape(self, a: Prim, shape: Sequence[int]) -> Prim:
        """Reduce a broadcast result back to ``shape`` (for gradients of broadcast ops)."""
        raise NotImplementedError

    def broadcast_to(self, a: Prim, shape: Sequence[int]) -> Prim:
        raise NotImplementedError

    def reshape(self, a: Prim, shape: Sequence[int]) -> Prim:
        raise NotImplementedError

    def swap_dims(self, a: Prim, d0: int, d1: int) -> Prim:
        raise NotImplementedError

    def matmul(self, a: Prim, b: Prim) -> Prim:
        raise NotImplementedError

    def argmax(self, a: Prim, dim: int) -> Prim:
        """int64 indices along dim, keeping it with size 1."""
        raise NotImplementedError

    def one_hot(self, a: Prim, num_classes: int) -> Prim:
        """int64 one-hot of an int array: shape + (num_classes,)."""
        raise NotImplementedError

    def cat(self, prims: Sequence[Prim], dim: int) -> Prim:
        raise NotImplementedError

    def where(self, mask: Prim, a: Prim | Scalar, b: Prim | Scalar) -> Prim:
        """Elementwise ``a if mask else b`` (numpy.where)."""
        raise NotImplementedError

    def cast(self, a: Prim, dtype: str) -> Prim:
        raise NotImplementedError

    def copy(self, a: Prim) -> Prim:
        raise NotImplementedError
