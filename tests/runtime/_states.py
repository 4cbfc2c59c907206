"""Shared pieces of the table-driven runtime tests: real tensors in every dispatch state.

Expected texts (device reprs, reveal_device lines, Burn's messages) are written
out here by hand from ``dispatch-semantics.md`` and ``runtime-shim-api.md``, so
the tests do not check the runtime only against its own renderers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import DEVICES, device_available_here

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, Tensor, reveal_device
from runtime_shim.semantics import (
    AF,
    CC,
    CC_INT,
    CI,
    CI_INT,
    PF,
    PF_STAR,
    PI,
    PI_STAR,
    Role,
    TensorClass,
    device_debug,
)
from runtime_shim.semantics import (
    cell as profile_cell,
)

DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED
STRATEGIES = (DISABLED, BALANCED)
STRATEGY_TEXT = {DISABLED: "Disabled", BALANCED: "Balanced"}
PROFILES = ("burn-2026-08", "burn-0.21")

# Burn's Debug form of each test device (runtime-shim-api.md: `Cuda(0)`, ...).
DEVICE_TEXT = {
    "flex": "Flex",
    "ndarray": "NdArray",
    "cpu": "Cpu",
    "libtorch": "LibTorch(Cpu)",
    "cuda0": "Cuda(0)",
    "cuda1": "Cuda(1)",
    "libtorch_cuda0": "LibTorch(Cuda(0))",
    "wgpu": "Wgpu",
    "rocm": "Rocm(0)",
}
# Burn's backend names (`d.backend`).
BACKEND_NAME = {
    "flex": "Flex", "ndarray": "NdArray", "cpu": "Cpu", "libtorch": "LibTorch", "cuda0": "Cuda",
    "cuda1": "Cuda", "libtorch_cuda0": "LibTorch", "wgpu": "Wgpu", "rocm": "Rocm",
}

# Values with awkward bits (a subnormal-ish float, negative zero is avoided on purpose:
# `x * 1.0` must reproduce the bits).
VALUES = {
    "float": np.array([[1.5, -2.25, 3.0], [0.1, 1e-8, 7.0]], dtype=np.float32),
    "int": np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int64),
    "bool": np.array([[True, False, True], [False, False, True]]),
}

# Burn's messages, copied from dispatch-semantics.md (without Rust's panic prefixes).
MSG = {
    "ad_cross_backend": "Autodiff tensor cannot be moved between backends.",
    "ad_mismatch": "Cannot move between autodiff and non-autodiff instances.",
    "capture_no_scope": "capture tensor operations must run inside CaptureDevice::capture_scope",
    "capture_move": "Cannot move a tensor from a capture device",
    "double_wrap_device": "Autodiff should not wrap an autodiff device.",
    "double_wrap_tensor": "Autodiff should not wrap an autodiff tensor.",
    "capture_autodiff": "Capture tensors do not support autodiff",
    "first_order": "Only first-order autodiff is supported",
    "not_enabled": "Autodiff is not enabled on this device",
    "requires_ad": "Requires autodiff tensor.",
    "non_leaf": "Can't convert a non leaf tensor into a tracked tensor",
    # burn-autodiff src/runtime/server.rs:69-72 (`backward`'s `expect` on the root's step)
    "no_step": "Node should have a step registered, did you forget to call `Tensor::register_grad` on the tensor "
               "where you need gradients?",
    "backend_short": "The provided tensors are not on the same backend.",
    "unreachable": "internal error: entered unreachable code",
}

HEAD = "burn-2026-08"  # the HEAD column of dispatch-semantics.md (2c06be35), spelled out case by case


def head_cell(table: str, **key: object):  # noqa: ANN201 - the table's (row, outcome)
    return profile_cell(table, HEAD, **key)


def head_column():
    """Run under the profile of the HEAD column (a module makes it its autouse fixture); the pinned default's cells
    are checked by test_profile_pinned.py, test_burn_pinned_scenarios.py and test_properties.py (every profile)."""
    with rs.profile(HEAD):
        yield



def capture_no_value(value_id: int) -> str:
    return f"capture tensor {value_id} has no initialized value"


def backend_mismatch(lhs: str, rhs: str) -> str:
    return f"The provided tensors are not on the same backend. Got backends {lhs} and {rhs}."


def strategy_mismatch(lhs: str, rhs: str) -> str:
    return (f"Gradient checkpointing strategy mismatch: {lhs} vs {rhs}. "
            "Tensors in the same operation must share a strategy.")


def device_mismatch(op: str, lhs: str, rhs: str) -> str:
    return ("=== Tensor Operation Error ===\n"
            f"  Operation: '{op}'\n"
            "  Reason:\n"
            "    1. The provided tensors are not on the same device. "
            f"Lhs tensor device Device<{device_debug(lhs)}>, Rhs tensor device Device<{device_debug(rhs)}>. \n")


# rule code -> exception class (rule-codes.md)
ERROR_CLASS = {
    "MV101": rs.AutodiffCrossBackendMove,
    "MV102": rs.AutodiffMismatchMove,
    "MV103": rs.CaptureMove,
    "MV104": rs.CaptureOutsideScope,
    "MV105": rs.DeviceMismatch,
    "MV106": rs.BackendMismatch,
    "MV107": rs.CheckpointingMismatch,
    "MV108": rs.RequiresAutodiff,
    "MV109": rs.DoubleAutodiff,
    "MV110": rs.AutodiffNotEnabled,
    "MV111": rs.NonLeafRequireGrad,
    "MV112": rs.BackendUnavailable,
}


# --- devices -------------------------------------------------------------------------


def device(name: str) -> Device:
    """The named test device, or skip when this mode cannot build it."""
    if not device_available_here(name):
        pytest.skip(f"device {name} is not available in {rs.mode()} mode")
    return DEVICES[name][0]()


def first_available(*names: str) -> str:
    """The first of ``names`` this mode can build (virtual mode: the first)."""
    for name in names:
        if device_available_here(name):
            return name
    pytest.skip(f"none of {names} is available in {rs.mode()} mode")


def ad(dev: Device, strategy: CheckpointingStrategy) -> Device:
    """The autodiff device over ``dev`` with ``strategy``, built through the public API."""
    wrapped = dev.autodiff()
    return wrapped.gradient_checkpointing() if strategy is BALANCED else wrapped


def ad_text(device_text: str, strategy: CheckpointingStrategy) -> str:
    return f"Autodiff {{ device: {device_text}, checkpointing: {STRATEGY_TEXT[strategy]} }}"


def capture_text(cap: Device) -> str:
    return f"Capture({cap.index})"


# --- states --------------------------------------------------------------------------


def expected_reveal(cls: TensorClass, kind: str, device_text: str,
                    strategy: CheckpointingStrategy | None = None, role: Role | None = None) -> str:
    """reveal_device's text for a tensor of class ``cls`` (runtime-shim-api.md, section 2 of the doc)."""
    if cls is AF:
        return f"{ad_text(device_text, strategy)} {kind} {role.value}"
    if cls is PI_STAR:
        return f"{ad_text(device_text, strategy)} {kind}"
    if cls is PF_STAR:
        return f"{device_text} {kind} checkpointing: {STRATEGY_TEXT[strategy]}"
    if cls in (CI, CI_INT):
        return f"{device_text} {kind} initialized"
    if cls in (CC, CC_INT):
        return f"{device_text} {kind} computed"
    return f"{device_text} {kind}"


@dataclass(frozen=True)
class State:
    """A dispatch state to build: class, kind, strategy, autodiff role and how to get there."""

    cls: TensorClass
    kind: str = "float"
    strategy: CheckpointingStrategy | None = None
    role: Role | None = None
    via: str = ""

    def __str__(self) -> str:
        parts = [self.kind]
        if self.strategy is not None:
            parts.append(STRATEGY_TEXT[self.strategy])
        if self.role is not None:
            parts.append(self.role.value)
        if self.via:
            parts.append(f"via-{self.via}")
        return f"{self.cls.value.split('(')[0]}({','.join(parts)})"  # Ci(int) is Ci plus its kind

    def reveal(self, device_text: str) -> str:
        return expected_reveal(self.cls, self.kind, device_text, self.strategy, self.role)


def build(state: State, dev: Device) -> Tensor:
    """A real tensor in ``state`` on the plain device ``dev`` (capture states: see build_capture)."""
    cls, kind, s = state.cls, state.kind, state.strategy
    values = VALUES[kind]
    if cls is PF:
        return Tensor.from_data(values, dev)
    if cls is PF_STAR:
        if state.via == "grad":
            x = Tensor.from_data(values, ad(dev, s)).require_grad()
            return x.grad((x * x).sum().backward())
        return Tensor.from_data(values, dev).with_gradient_checkpointing_strategy(s)
    if cls is AF:
        x = Tensor.from_data(values, ad(dev, s))
        if state.role is Role.UNTRACKED:
            return x
        x = x.require_grad()
        return x if state.role is Role.TRACKED else x * 1.0
    if cls is PI:
        return Tensor.from_data(values, dev)
    if cls is PI_STAR:
        if state.via == "strategy":
            return Tensor.from_data(values, dev).with_gradient_checkpointing_strategy(s)
        if state.via == "compare":
            return Tensor.from_data(VALUES["float"], ad(dev, s)).greater(1.0)
        return Tensor.from_data(values, ad(dev, s))
    raise ValueError(f"build: {state} is a capture state")


def build_capture(state: State, cap: Device, scope: rs.Scope) -> tuple[Tensor, int]:
    """A capture tensor in ``state``, inside the open ``scope`` of ``cap``; and its graph value id."""
    initializer = Tensor.from_data(VALUES[state.kind], cap)
    if state.cls in (CI, CI_INT):
        t = initializer
    elif state.kind == "float":
        t = initializer * 2.0
    elif state.kind == "int":
        t = initializer + initializer
    else:
        t = initializer.bool_not()
    if state.strategy is not None:
        t = t.with_gradient_checkpointing_strategy(state.strategy)
    return t, next(reversed(scope.all_values))  # the computed value (not in graph.values)


def in_scope(cap: Device, body):  # noqa: ANN001, ANN201
    """Run ``body()`` inside a capture scope on ``cap`` and return its result."""
    out = []
    graph = cap.capture_scope(lambda scope: out.append(body()))
    assert isinstance(graph, rs.Graph), graph
    return out[0]


def snapshot(t: Tensor) -> tuple:
    """What must not change when a call on ``t`` fails: its state text and its bits."""
    text = reveal_device(t)
    if t.state in (CC, CC_INT):
        return text, None
    values = t.to_numpy()
    return text, values.dtype.str, values.shape, values.tobytes()


def assert_bits(result: Tensor, expected: np.ndarray) -> None:
    got = result.to_numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), (got, expected)
