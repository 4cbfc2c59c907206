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

from runtime_shim.semantics import (  # noqa: F401 - re-exported for the engine
    ARITHMETIC,
    BINARY_OPS,
    UNARY_OPS,
    BinarySpec,
    UnarySpec,
    binary_kind,
    promote,
    promote_scalar,
    scalar_kind,
    scalar_op_kind,
)

# The op specs and result kinds are the runtime's (runtime_shim.semantics): re-exported here
# under the names the engine uses.
BINARY: dict[str, BinarySpec] = {name: spec for name, spec in BINARY_OPS.items() if name != "mask_fill"}
MASK_FILL = BINARY_OPS["mask_fill"]
UNARY: dict[str, UnarySpec] = UNARY_OPS

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

#: The constructor ``Device.default()`` (and a creation with ``device=None``) amounts to: Burn's
#: default build enables Flex only, so its priority list ends at Flex on every machine. The
#: program's ``BURN_DEVICE`` is its run-time environment, which the analysis does not see.
DEFAULT_DEVICE_CTOR = "flex"

#: Every backend name the runtime knows (for ``--backends``).
BACKEND_NAMES = ("Cpu", "Cuda", "Rocm", "Wgpu", "Vulkan", "Metal", "WebGpu", "Flex", "NdArray", "LibTorch", "Capture")

