"""Capture devices: record a graph of operations, never execute.

``device.capture_scope(fn)`` opens a scope on a capture device and calls
``fn(scope)``; tensors created on (or moved to) the device inside it are
*initializers* with known values, results of operations are *computed* values
with a shape but no data. ``scope.complete(inputs, outputs)`` closes the graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .texts import CaptureError as CaptureError  # the runtime API's name (runtime_shim.CaptureError)
from .validation import check_tensors

if TYPE_CHECKING:
    from .devices import Device
    from .tensor import Tensor


@dataclass(frozen=True)
class BoundaryError:
    """``complete()``'s boundary was refused: which error, which tensor, at which boundary."""

    error: CaptureError
    tensor: int
    boundary: str | None = None  # "input" or "output" (unknown and duplicate boundaries)

    def __str__(self) -> str:
        return self.error.value.format(boundary=self.boundary, tensor=self.tensor)


@dataclass
class GraphValue:
    """A value of a captured graph: an initializer (with ``value``) or a computed result."""

    id: int
    kind: str  # "initializer" or "computed"
    shape: tuple[int, ...]
    dtype: str
    value: Any = None


@dataclass
class GraphOp:
    name: str
    inputs: tuple[int, ...]
    output: int


@dataclass
class Graph:
    """What a scope captured.

    ``values`` holds the initializers only, as burn-capture's ``CapturedGraph::values`` holds
    the data of initialized tensors; computed values appear as op outputs.
    """

    device: Device
    values: list[GraphValue] = field(default_factory=list)
    operations: list[GraphOp] = field(default_factory=list)
    inputs: tuple[int, ...] = ()
    outputs: tuple[int, ...] = ()


_value_ids = itertools.count(1)


class Scope:
    """An open capture scope; passed to the function given to ``capture_scope``."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.graph = Graph(device)
        self.open = True
        self._completed: Graph | None = None
        self.all_values: dict[int, GraphValue] = {}  # initializers and computed values, by id

    def add_value(self, kind: str, shape: tuple[int, ...], dtype: str, value: Any = None) -> int:
        value_id = next(_value_ids)
        entry = GraphValue(value_id, kind, shape, dtype, value)
        self.all_values[value_id] = entry
        if kind == "initializer":
            self.graph.values.append(entry)
        return value_id

    def add_initializer(self, value: Any) -> int:
        """A tensor initialized from data: its value, and an ``Init`` op in the graph.

        burn-capture records the router's ``OperationIr::Init`` for every tensor registered
        from data (``escaped_tensors_cannot_record_after_their_scope_completes`` asserts it):
        creations on the capture device and host copies moved onto it alike.
        """
        value_id = self.add_value("initializer", tuple(value.shape), str(value.dtype), value)
        self.add_op("Init", (), value_id)
        return value_id

    def add_op(self, name: str, inputs: Sequence[int], output: int) -> None:
        self.graph.operations.append(GraphOp(name, tuple(inputs), output))

    def complete(self, inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> Graph:
        """Close the graph with these inputs and outputs and return it."""
        inputs = check_tensors("Scope.complete", "inputs", inputs, allow_empty=True)
        outputs = check_tensors("Scope.complete", "outputs", outputs, allow_empty=True)
        input_ids = tuple(t._capture_id() for t in inputs)  # all checked before the graph changes
        self.graph.inputs, self.graph.outputs = input_ids, tuple(t._capture_id() for t in outputs)
        self._completed = self.graph
        self.open = False  # burn-capture closes the session here: a later op fails even inside fn
        return self.graph

    def boundary_error(self) -> BoundaryError | None:
        """burn-capture's checks of the declared boundary, in its order (``CaptureScopeGuard::complete``)."""
        graph = self.graph
        produced = {op.output for op in graph.operations}
        known = produced | {i for op in graph.operations for i in op.inputs} | {v.id for v in graph.values}
        for boundary, ids in (("input", graph.inputs), ("output", graph.outputs)):
            seen: set[int] = set()
            for value_id in ids:
                if value_id in seen:
                    return BoundaryError(CaptureError.DUPLICATE_BOUNDARY, value_id, boundary)
                seen.add(value_id)
            for value_id in ids:
                if value_id not in known:
                    return BoundaryError(CaptureError.UNKNOWN_BOUNDARY, value_id, boundary)
        initialized = {v.id for v in graph.values}
        read_only = {i for op in graph.operations for i in op.inputs} - produced  # the graph's inferred inputs
        for value_id in graph.inputs:
            if value_id not in read_only and value_id not in initialized:
                return BoundaryError(CaptureError.INVALID_INPUT, value_id)
        for value_id in sorted(read_only):
            if value_id not in graph.inputs and value_id not in initialized:
                return BoundaryError(CaptureError.UNDECLARED_INPUT, value_id)
        return None


_ACTIVE: dict[tuple, Scope] = {}


def active_scope(device: Device) -> Scope | None:
    """The open scope on ``device`` (a plain capture device), if any (a completed one is closed)."""
    scope = _ACTIVE.get(device._key)
    return scope if scope is not None and scope.open else None


def completed_scope(device: Device) -> Scope | None:
    """A scope whose ``complete()`` ran while its function has not returned yet (its session is closed)."""
    scope = _ACTIVE.get(device._key)
    return scope if scope is not None and not scope.open else None


def run_scope(device: Device, fn: Callable[[Scope], Graph]) -> Graph | CaptureError | BoundaryError:
    if not device.is_capture or device.is_autodiff():
        return CaptureError.INVALID_DEVICE
    if device._key in _ACTIVE:
        return CaptureError.ALREADY_ACTIVE
    scope = Scope(device)
    _ACTIVE[device._key] = scope
    try:
        result = fn(scope)
    finally:
        scope.open = False
        del _ACTIVE[device._key]
    if scope._completed is not None:
        failed = scope.boundary_error()
        if failed is not None:
            return failed
    return result if result is not None else scope.graph
