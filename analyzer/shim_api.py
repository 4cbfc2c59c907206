"""The runtime_shim API surface the analyzer models (names and call shapes, not semantics).

Which method is a move, a checked binary op, a unary op or a cast, which
operand kinds it accepts (the runtime raises ``TypeError`` otherwise, which is
not a dispatch failure), what kind its result has, whether the runtime records
a backward function for it (so an autodiff result is a non-leaf), and where the
``device`` argument sits in each constructor. Whether a call *fails*, and the
states of its result, always come from :mod:`runtime_shim.semantics`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FLOAT = ("float",)
NUMERIC = ("float", "int")
ANY_KIND = ("float", "int", "bool")


@dataclass(frozen=True)
class BinarySpec:
    """A two-input op: ``t.op(u)``, an operator, or (with a scalar) its unary form."""

    name: str
    operands: str = "same"  # "same": both float or both int/bool; "mask": rhs must be bool
    result_kind: str = "same"  # "same" (the lhs's kind) or "bool"
    backward: bool = True
    scalar: bool = True  # accepts a Python scalar (then it is a unary op of the tensor)


@dataclass(frozen=True)
class UnarySpec:
    name: str
    kinds: tuple[str, ...] = ANY_KIND
    cast: str = "unary"  # the unary table's ``op`` key: "unary", "to_int", "to_float"
    result_kind: str = "same"  # "same", "int", "bool", "float"
    backward: bool = True


BINARY: dict[str, BinarySpec] = {
    spec.name: spec
    for spec in (
        BinarySpec("add"), BinarySpec("sub"), BinarySpec("mul"), BinarySpec("div"),
        BinarySpec("matmul", scalar=False),
        *(BinarySpec(name, result_kind="bool", backward=False)
          for name in ("equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal")),
    )
}
MASK_FILL = BinarySpec("mask_fill", operands="mask", scalar=False)

UNARY: dict[str, UnarySpec] = {
    spec.name: spec
    for spec in (
        UnarySpec("neg", NUMERIC),
        *(UnarySpec(name, FLOAT) for name in ("exp", "log", "sqrt", "relu", "sigmoid", "tanh", "powf_scalar",
                                                "mean")),
        UnarySpec("sum", NUMERIC), UnarySpec("sum_dim", NUMERIC),
        UnarySpec("reshape"), UnarySpec("swap_dims"), UnarySpec("transpose"),
        UnarySpec("bool_not", ("bool",), backward=False),
        UnarySpec("argmax", cast="to_int", result_kind="int", backward=False),
        UnarySpec("one_hot", ("int",), result_kind="int", backward=False),
        UnarySpec("float", cast="to_float", result_kind="float", backward=False),
        UnarySpec("int", cast="to_int", result_kind="int", backward=False),
    )
}

# --- result kinds (the executors' dtype promotion, by kind: bool < int < float) ---------------

_ORDER = {"bool": 0, "int": 1, "float": 2}
ARITHMETIC = frozenset({"add", "sub", "mul", "div", "matmul"})  # undefined on bool results (TypeError)


def scalar_kind(value: object) -> str:
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"


def promote(*kinds: str) -> str:
    """The kind of an op over arrays of these kinds (the widest)."""
    return max(kinds, key=_ORDER.__getitem__)


def promote_scalar(array_kind: str, scalar: str) -> str:
    """An array with a Python scalar: the array's kind wins unless the scalar's is wider."""
    return array_kind if _ORDER[scalar] <= _ORDER[array_kind] else scalar


def binary_kind(op: str, lhs: str, rhs: str) -> str | None:
    """Result kind of a tensor-tensor op; ``None`` when the executor raises ``TypeError``."""
    if BINARY.get(op) is not None and BINARY[op].result_kind == "bool":
        return "bool"
    kind = promote(lhs, rhs)
    return None if op in ARITHMETIC and kind == "bool" else kind


def scalar_op_kind(op: str, tensor: str, scalar: str) -> str | None:
    """Result kind of a tensor-scalar op (``t * 2.5``, ``t.mask_fill(m, 0.0)``); ``None``: TypeError."""
    if BINARY.get(op) is not None and BINARY[op].result_kind == "bool":
        return "bool"
    kind = promote_scalar(tensor, scalar)
    return None if op in ARITHMETIC and kind == "bool" else kind


#: ``ast`` operators and the tensor method they call.
BINOPS: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul"}

#: Tensor methods of the autodiff API and the ``call`` key of the autodiff table.
AUTODIFF_METHODS: dict[str, str] = {
    "inner": "inner", "no_grad": "no_grad", "detach": "detach", "require_grad": "require_grad",
    "backward": "backward", "grad": "grad", "grad_remove": "grad_remove", "grad_replace": "grad_replace",
    "with_gradient_checkpointing_strategy": "with_strategy",
}

#: Device methods checked by the device table.
DEVICE_CHECKED = ("autodiff", "gradient_checkpointing", "gradient_checkpointing_strategy")


@dataclass(frozen=True)
class CreatorSpec:
    name: str
    kind: str  # "float", "int", "bool", "data" (from the data), "value" (from the fill value)
    device_pos: int  # positional index of ``device``
    data_pos: int = 0


CREATORS: dict[str, CreatorSpec] = {
    spec.name: spec
    for spec in (
        CreatorSpec("from_floats", "float", 1), CreatorSpec("from_ints", "int", 1),
        CreatorSpec("from_bools", "bool", 1), CreatorSpec("from_data", "data", 1),
        CreatorSpec("zeros", "float", 1), CreatorSpec("ones", "float", 1), CreatorSpec("random", "float", 1),
        CreatorSpec("empty", "float", 1), CreatorSpec("empty_bool", "bool", 1),
        CreatorSpec("full", "value", 2, data_pos=1), CreatorSpec("arange", "int", 2),
    )
}


@dataclass(frozen=True)
class DeviceCtor:
    name: str
    backend: str
    sub: str | None = None
    indexed: bool = False  # takes ``index=0``


DEVICE_CTORS: dict[str, DeviceCtor] = {
    spec.name: spec
    for spec in (
        DeviceCtor("cpu", "Cpu"), DeviceCtor("cuda", "Cuda", indexed=True), DeviceCtor("rocm", "Rocm", indexed=True),
        DeviceCtor("wgpu", "Wgpu"), DeviceCtor("vulkan", "Vulkan"), DeviceCtor("metal", "Metal"),
        DeviceCtor("webgpu", "WebGpu"), DeviceCtor("flex", "Flex"), DeviceCtor("ndarray", "NdArray"),
        DeviceCtor("libtorch", "LibTorch", "Cpu"), DeviceCtor("libtorch_cuda", "LibTorch", "Cuda", indexed=True),
        DeviceCtor("libtorch_mps", "LibTorch", "Mps"), DeviceCtor("libtorch_vulkan", "LibTorch", "Vulkan"),
    )
}

#: Every backend name the runtime knows (for ``--backends``).
BACKEND_NAMES = ("Cpu", "Cuda", "Rocm", "Wgpu", "Vulkan", "Metal", "WebGpu", "Flex", "NdArray", "LibTorch", "Capture")

#: Tensor attributes and methods that read without a dispatch decision.
TENSOR_READS = ("shape", "dtype", "id", "to_list", "to_numpy", "to_data", "into_scalar", "state", "role")
