"""Tensors: dispatch state + data, with every decision taken from the semantics table.

A tensor holds its data (``_prim`` on executor ``_exec``), the plain device the
data lives on (``_dev``), its class (Pf, Af, ...), its checkpointing strategy,
and for autodiff floats its role and tape node. Each public call

1. classifies its operands into a cell key of :mod:`runtime_shim.semantics`,
2. raises the cell's failure (recorded, before any state changes), or
3. runs the op on the executor, builds the result in the cell's state and,
   on the autodiff route, adds a tape node.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from . import autodiff as tape
from . import recorder as recording
from . import semantics as _semantics
from . import validation as check
from .capture import Scope, active_scope, completed_scope
from .dataplane import transfer
from .devices import Device, availability_problem, executor_place
from .errors import BackendUnavailable, error_for
from .executors import Executor, get_executor
from .modes import SETTINGS
from .semantics import (
    AF,
    BINARY_OPS,
    CAPTURE_CLASSES,
    CC,
    CC_INT,
    CHECKED_OPS,
    CI,
    CI_INT,
    COMPUTE_BOUND_OPS,
    GRAD_REPLACE_NO_ARM,
    MSG_BACKEND_UNAVAILABLE,
    MSG_NO_STEP,
    MSG_STRATEGY_MISMATCH,
    PI_STAR,
    UNARY_OPS,
    CheckpointingStrategy,
    Fail,
    Ok,
    Place,
    Role,
    Route,
    StrategyFrom,
    TensorClass,
    Transfer,
    binary_kind,
    cell,
    class_of,
    input_name,
    is_require_grad,
    move_outcome,
    operands_accepted,
    route_of,
    scalar_kind,
    scalar_op_kind,
    strategy_result,
)
from .texts import kind_debug_text

_tensor_ids = itertools.count(1)
Scalar = int | float | bool


@dataclass
class _CaptureRef:
    """Where a capture tensor lives in its scope's graph."""

    scope: Scope
    value_id: int
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class TensorData:
    """A host copy of a tensor's values (``t.to_data()``)."""

    value: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)

    @property
    def dtype(self) -> str:
        return str(self.value.dtype)

    def to_list(self) -> list:
        return self.value.tolist()

    def to_numpy(self) -> np.ndarray:
        return self.value.copy()


# --- small helpers --------------------------------------------------------------

def _fail(call: str, outcome: Fail, **values: object) -> None:
    error = error_for(outcome.code, outcome.render(**values), template=outcome.message)
    if outcome.message == MSG_STRATEGY_MISMATCH:  # assert_eq! prints both sides after the message
        error.panic += f"\n  left: {values['lhs']}\n right: {values['rhs']}"
    recording.record_failure(call, error)
    raise error


def _kind_of_dtype(dtype: str) -> str:
    if dtype == "bool":
        return "bool"
    return "float" if dtype.startswith("float") else "int"


_KIND_OF_DTYPE = {name: _kind_of_dtype(name) for name in
                  ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")}
#: the kind of a prim's dtype object (numpy's or torch's), filled as ops meet them: one lookup per
#: op instead of the executor's dtype name and then its kind
_KIND_OF_PRIM_DTYPE: dict[Any, str] = {}


_EXECUTORS: dict[tuple, Executor] = {}


def executor_for(device: Device) -> Executor:
    """The executor that runs ``device``'s tensors in the current mode."""
    plain = device.inner()
    key = (plain._key, SETTINGS.virtual)
    exec_ = _EXECUTORS.get(key)
    if exec_ is None:
        if not plain.is_capture:
            problem = availability_problem(plain._backend, plain._sub, plain._index, SETTINGS.virtual)
            if problem is not None:
                error = BackendUnavailable(MSG_BACKEND_UNAVAILABLE.format(backend=repr(plain), reason=problem))
                recording.record_failure("execute", error)
                raise error
        family, place = executor_place(plain, SETTINGS.virtual) if not plain.is_capture else ("numpy", "host")
        exec_ = _EXECUTORS[key] = get_executor(family, place)
    return exec_


def _kind_debug(t: Tensor) -> str:
    """Debug form of a tensor's dispatch kind, as Burn's backend-mismatch panic prints it."""
    return kind_debug_text(repr(t._dev), t._cls is AF)


@dataclass(frozen=True, slots=True)
class _UnaryPlan:
    """What a one-tensor op's dispatch decides from its operand's class and kind: the op spec's
    kind check (a ``TypeError`` first) and the unary table's outcome for the spec's cast."""

    kind_refusal: str | None
    forced_cls: TensorClass | None = None
    role: Role | None = None
    compute_bound: bool = False


_UNARY_PLANS: dict[tuple, _UnaryPlan] = {}


def _plan_unary(op: str, tcls: TensorClass, kind: str, profile: str) -> _UnaryPlan:
    # operand kinds and the unary table's key come from the op's spec (scalar forms of binary
    # ops have none: _binary passes the kind error, raised after dispatch like the kernel would)
    name = op.removeprefix("Tensor.")
    spec = UNARY_OPS.get(name)
    cast = "unary"
    if spec is not None:
        if kind not in spec.kinds:
            return _UnaryPlan(f"{op} is not defined for {kind} tensors")
        cast = spec.cast
    outcome = cell("unary", profile, op=cast, cls=tcls)[1]
    return _UnaryPlan(None, None if tcls in CAPTURE_CLASSES else outcome.result or None, outcome.role,
                      name in COMPUTE_BOUND_OPS)


#: Result classes of non-capture ops by (kind, routed on autodiff, has a strategy): class_of, tabulated.
_CLASS_OF = {(kind, ad, has): class_of(kind, ad, has)
             for kind in ("float", "int", "bool") for ad in (False, True) for has in (False, True)}
#: The move table's final outcome per (profile, class, target is autodiff, place, scope), memoised.
_MOVE_OUTCOMES: dict[tuple, Ok | Fail] = {}
_TO_DEVICE_COMPUTE_BOUND = "to_device" in COMPUTE_BOUND_OPS
_COMPUTE_BOUND_CALLS = frozenset(f"Tensor.{op}" for op in COMPUTE_BOUND_OPS)
# Table call names that differ from the API method's name.
_PUBLIC_NAMES = {"unrequire_grad": "set_require_grad", "with_strategy": "with_gradient_checkpointing_strategy"}

def _decide_binary(op: str, lcls: TensorClass, rcls: TensorClass, lstrat: CheckpointingStrategy | None,
                   rstrat: CheckpointingStrategy | None, same_device: bool, same_backend: bool,
                   profile: str) -> tuple[tuple[str, Fail] | None, CheckpointingStrategy | None, bool]:
    """The table's verdict on a two-input op, in Burn's order: device check, strategy, backend.

    Returns the first failing stage and its outcome (or None), the validated strategy and
    whether the op runs on the autodiff route (the lhs is autodiff, or the backend cell merges
    a plain float into autodiff); part of a memoised :class:`_BinaryPlan`, since the verdict
    depends on nothing else.
    """
    if op in CHECKED_OPS:
        _row, outcome = cell("device_check", profile, same_device=same_device)
        if isinstance(outcome, Fail):
            return ("device_check", outcome), None, False
    _row, outcome = cell("strategy", profile, lhs=lstrat, rhs=rstrat)
    if isinstance(outcome, Fail):
        return ("strategy", outcome), None, False
    _row, outcome = cell("backend", profile, lhs=route_of(lcls), rhs=route_of(rcls), same_backend=same_backend)
    if isinstance(outcome, Fail):
        return ("backend", outcome), None, False
    autodiff_route = lcls is AF or outcome.result is AF
    return None, lstrat if lstrat is not None else rstrat, autodiff_route


@dataclass(frozen=True, slots=True)
class _BinaryPlan:
    """Everything a two-tensor op's dispatch decides from its operands' dispatch state, in Burn's
    order: the operand kinds (a ``TypeError`` before anything else), the table's verdict
    (:func:`_decide_binary`), then the kernel's refusal of the kinds (a ``TypeError`` after
    dispatch). Derived from the semantics tables once per key: none of it depends on the data."""

    full_op: str
    kind_refusal: str | None
    failed_check: tuple[str, Fail] | None = None
    strategy: CheckpointingStrategy | None = None
    autodiff_route: bool = False
    kernel_refusal: str | None = None
    matmul: bool = False


_BINARY_PLANS: dict[tuple, _BinaryPlan] = {}


def _plan_binary(op: str, lcls: TensorClass, rcls: TensorClass, lkind: str, rkind: str,
                 lstrat: CheckpointingStrategy | None, rstrat: CheckpointingStrategy | None,
                 same_device: bool, same_backend: bool, profile: str) -> _BinaryPlan:
    full_op = f"Tensor.{op}"
    if not operands_accepted(op, lkind, rkind):
        expected = "a bool mask" if BINARY_OPS[op].operands == "mask" else "both float or both int/bool tensors"
        return _BinaryPlan(full_op, f"Tensor.{op} is not defined for {lkind} and {rkind} tensors ({expected})")
    failed_check, strategy, autodiff_route = _decide_binary(op, lcls, rcls, lstrat, rstrat, same_device,
                                                            same_backend, profile)
    kernel_refusal = None if binary_kind(op, lkind, rkind) is not None else (
        f"{full_op} is not defined for {lkind} tensors; cast them first")
    return _BinaryPlan(full_op, None, failed_check, strategy, autodiff_route, kernel_refusal, op == "matmul")


def _capture_scope_open(t: Tensor) -> bool:
    return t._cap is not None and t._cap.scope.open and active_scope(t._dev) is t._cap.scope


def _check_capture_use(op: str, tensors: Iterable[Tensor]) -> None:
    for t in tensors:
        if t._cls in CAPTURE_CLASSES:
            _row, outcome = cell("capture_use", SETTINGS.profile, scope=_capture_scope_open(t))
            if isinstance(outcome, Fail):
                _fail(op, outcome)


def _later_method(name: str) -> None:
    """A method of later Burn: an ``AttributeError`` in a profile whose Burn does not have it (a
    Rust program calling it would not compile)."""
    profile = SETTINGS.profile
    if not _semantics.has_tensor_method(profile, name):
        having = ", ".join(_semantics.profiles_with_tensor_method(name))
        raise AttributeError(f"Tensor.{name} does not exist in profile {profile}'s Burn (it exists in: {having})")


def _numpy_exec() -> Executor:
    return get_executor("numpy", "host")


class Tensor:
    """A Burn-style dispatch tensor. Create with the class methods (``Tensor.zeros``)."""

    __slots__ = ("_prim", "_exec", "_dev", "_cls", "_strategy", "_role", "_node", "_kind", "_cap", "id",
                 "__weakref__")
    _prim: Any
    _exec: Executor
    _dev: Device
    _cls: TensorClass
    _strategy: CheckpointingStrategy | None
    _role: Role | None
    _node: tape.Node | None
    _kind: str
    _cap: _CaptureRef | None
    id: int
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators
    __array_ufunc__ = None  # numpy arrays defer too: `t + array` is a TypeError, never an object array of tensors

    def __init__(self) -> None:  # pragma: no cover - use the constructors
        raise TypeError("create tensors with Tensor.from_floats, Tensor.zeros, ... (see runtime_shim docs)")

    # --- construction --------------------------------------------------------------
    @classmethod
    def _make(cls, prim: Any, exec_: Executor, dev: Device, tcls: TensorClass,
              strategy: CheckpointingStrategy | None, kind: str, role: Role | None = None,
              node: tape.Node | None = None, cap: _CaptureRef | None = None) -> Tensor:
        t = object.__new__(cls)
        t._prim, t._exec, t._dev, t._cls, t._strategy = prim, exec_, dev, tcls, strategy
        t._role, t._node, t._kind, t._cap = role, node, kind, cap
        t.id = next(_tensor_ids)
        return t

    @classmethod
    def _create(cls, op: str, array: np.ndarray | None, device: Device | None,
                make: Callable[[Executor], Any] | None = None, dtype: str | None = None,
                shape: tuple[int, ...] | None = None) -> Tensor:
        check.check_device(op, "device", device, optional=True)
        device = Device.default() if device is None else device
        plain = device.inner()
        if plain.is_capture:
            where = "autodiff-capture" if device.is_autodiff() else "capture"
        else:
            where = "autodiff" if device.is_autodiff() else "plain"
        dtype = dtype if array is None else array.dtype.name  # "float16" also for ">f2" (str gives ">f2")
        kind = _kind_of_dtype(dtype)
        scope = active_scope(plain) if plain.is_capture else None
        if scope is None and plain.is_capture and completed_scope(plain) is not None:
            _row, closed = cell("capture_use", SETTINGS.profile, scope=False)  # burn-capture's assert_open
            if isinstance(closed, Fail):
                _fail(op, closed)
        _row, outcome = cell("create", SETTINGS.profile, dtype="float" if kind == "float" else "int",
                             device=where, scope=scope is not None)
        if isinstance(outcome, Fail):
            _fail(op, outcome)
        exec_ = executor_for(plain)
        strategy = device._strategy if outcome.strategy is StrategyFrom.TARGET else None
        if scope is not None:
            value = array if array is not None else exec_.to_numpy(make(exec_))
            value_id = scope.add_initializer(value)
            ref = _CaptureRef(scope, value_id, tuple(value.shape), str(value.dtype))
            t = cls._make(value, exec_, plain, outcome.result, strategy, kind, cap=ref)
        else:
            prim = exec_.from_numpy(array) if array is not None else make(exec_)
            t = cls._make(prim, exec_, plain, outcome.result, strategy, kind, role=outcome.role)
        if recording.ACTIVE:
            recording.record_ok(op)
        return t

    @classmethod
    def from_floats(cls, data: Any, device: Device | None = None) -> Tensor:
        op = "Tensor.from_floats"
        return cls._create(op, check.creation_array(op, data, "float").astype(np.float32, copy=False), device)

    @classmethod
    def from_ints(cls, data: Any, device: Device | None = None) -> Tensor:
        op = "Tensor.from_ints"
        return cls._create(op, check.creation_array(op, data, "int").astype(np.int64, copy=False), device)

    @classmethod
    def from_bools(cls, data: Any, device: Device | None = None) -> Tensor:
        op = "Tensor.from_bools"
        return cls._create(op, check.creation_array(op, data, "bool"), device)

    @classmethod
    def from_data(cls, data: Any, device: Device | None = None) -> Tensor:
        """Kind and dtype from the data: a numpy array keeps its dtype bit-exactly."""
        if isinstance(data, TensorData):
            data = data.value
        array = check.creation_array("Tensor.from_data", data, None)
        if array.dtype == np.float64 and not isinstance(data, np.ndarray):
            array = array.astype(np.float32)  # Python floats: Burn's default float element
        return cls._create("Tensor.from_data", array, device)

    @classmethod
    def zeros(cls, shape: Sequence[int], device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.zeros", shape, 4)
        return cls._create("Tensor.zeros", None, device, lambda e: e.zeros(shape, "float32"), "float32", shape)

    @classmethod
    def ones(cls, shape: Sequence[int], device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.ones", shape, 4)
        return cls._create("Tensor.ones", None, device, lambda e: e.ones(shape, "float32"), "float32", shape)

    @classmethod
    def full(cls, shape: Sequence[int], value: Scalar, device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.full", shape, 8)
        value = check.check_value("Tensor.full", "value", value)
        dtype = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float32"
        return cls._create("Tensor.full", None, device, lambda e: e.full(shape, value, dtype), dtype, shape)

    @classmethod
    def random(cls, shape: Sequence[int], device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.random", shape, 4)
        return cls._create("Tensor.random", None, device, lambda e: e.random(shape, "float32"), "float32", shape)

    @classmethod
    def empty(cls, shape: Sequence[int], device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.empty", shape, 4)
        return cls._create("Tensor.empty", None, device, lambda e: e.empty(shape, "float32"), "float32", shape)

    @classmethod
    def empty_bool(cls, shape: Sequence[int], device: Device | None = None) -> Tensor:
        shape = check.check_creation_shape("Tensor.empty_bool", shape, 1)
        return cls._create("Tensor.empty_bool", None, device, lambda e: e.zeros(shape, "bool"), "bool", shape)

    @classmethod
    def arange(cls, start: int, end: int, device: Device | None = None) -> Tensor:
        """start..end-1; an empty tensor when end <= start (an empty range)."""
        op = "Tensor.arange"
        start, end = check.check_int(op, "start", start), check.check_int(op, "end", end)
        end = max(start, end)
        check.check_creation_shape(op, (end - start,), 8)
        return cls._create(op, None, device, lambda e: e.arange(start, end), "int64", (end - start,))

    # --- reading -------------------------------------------------------------------
    def device(self) -> Device:
        """The device Burn reports: autodiff for Af and for ints carrying a strategy."""
        if self._cls is AF or self._cls is PI_STAR:
            return self._dev._wrapped(self._strategy)
        return self._dev

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def shape(self) -> tuple[int, ...]:
        if self._cap is not None:
            return self._cap.shape
        return self._exec.shape(self._prim)

    @property
    def dtype(self) -> str:
        return self._cap.dtype if self._cap is not None else self._exec.dtype(self._prim)

    @property
    def state(self) -> TensorClass:
        """The dispatch class (Pf, Pf*, Af, Pi, Pi*, Ci, Cc)."""
        return self._cls

    @property
    def role(self) -> Role | None:
        return self._role

    def _host(self, op: str) -> np.ndarray:
        if self._cls in CAPTURE_CLASSES:
            if self._prim is None:
                _fail(op, Fail("MV103", "capture tensor {id} has no initialized value"), id=self._cap.value_id)
            return np.array(self._prim, copy=True)
        return self._exec.to_numpy(self._prim)

    def to_numpy(self) -> np.ndarray:
        """A numpy copy of the values (same dtype)."""
        return self._host("Tensor.to_numpy")

    def to_list(self) -> list:
        return self._host("Tensor.to_list").tolist()

    def to_data(self) -> TensorData:
        return TensorData(self._host("Tensor.to_data"))

    def into_scalar(self) -> Scalar:
        values = self._host("Tensor.into_scalar")
        if values.size != 1:
            raise ValueError(f"into_scalar needs exactly one element, the tensor has shape {values.shape}")
        return values.reshape(()).item()

    def _capture_id(self) -> int:
        if self._cap is None:
            raise TypeError("only capture tensors belong to a captured graph")
        return self._cap.value_id

    def __repr__(self) -> str:
        from .reveal import reveal_text

        return f"Tensor[{reveal_text(self)}, shape={self.shape}, dtype={self.dtype}]"

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    __hash__ = object.__hash__

    # --- moves -------------------------------------------------------------------------
    def to_device(self, device: Device) -> Tensor:
        """Move to ``device`` as Burn's dispatch does; see the move table."""
        op = "Tensor.to_device"
        if type(device) is not Device:
            check.check_device(op, "device", device)
        ad = device._ad
        plain = device.inner()
        capture = plain.is_capture
        if self._cls in CAPTURE_CLASSES:
            if capture:
                place = Place.SAME_CAPTURE if plain == self._dev else Place.OTHER_CAPTURE
            else:
                place = Place.OTHER_BACKEND
        elif capture:
            place = Place.OTHER_CAPTURE
        else:
            place = Place.SAME_BACKEND if plain._backend == self._dev._backend else Place.OTHER_BACKEND
        scope = active_scope(plain) if capture else None
        key = (SETTINGS.profile, self._cls, ad, place, scope is not None)
        outcome = _MOVE_OUTCOMES.get(key)
        if outcome is None:
            outcome = _MOVE_OUTCOMES[key] = move_outcome(*key)[1]
        if isinstance(outcome, Fail):
            _fail(op, outcome, id=self._cap.value_id if self._cap else self.id)
        result = self._moved(outcome, device, plain, scope)
        if recording.ACTIVE:
            recording.record_ok(op)
        return result

    def _moved(self, outcome: Any, device: Device, plain: Device, scope: Scope | None) -> Tensor:
        kind = outcome.transfer
        if kind is Transfer.NONE:
            return self
        tcls = outcome.result or self._cls
        strategy = device._strategy if outcome.strategy is StrategyFrom.TARGET else self._strategy
        if kind is Transfer.CAPTURE_INIT or kind is Transfer.CAPTURE_COPY:
            value = self._host("Tensor.to_device")
            if kind is Transfer.CAPTURE_INIT:  # `B2::float_from_data` on the capture device
                value_id = scope.add_initializer(value)
            else:
                value_id = scope.add_value("initializer", tuple(value.shape), str(value.dtype), value)
            ref = _CaptureRef(scope, value_id, tuple(value.shape), str(value.dtype))
            return Tensor._make(value, executor_for(plain), plain, tcls, strategy, self._kind, cap=ref)
        dst = executor_for(plain)
        prim = transfer(self._prim, self._exec, dst)
        if kind is Transfer.AUTODIFF and self._role is not Role.UNTRACKED:
            node = tape.record("to_device", dst, (self._node,), prim,
                               forward=partial(transfer, src=self._exec, dst=dst), backward=_bw_identity,
                               needs_inputs=False, needs_output=False, compute_bound=_TO_DEVICE_COMPUTE_BOUND,
                               strategy=self._strategy)
            return Tensor._make(prim, dst, plain, tcls, strategy, self._kind, Role.NON_LEAF, node)
        if kind is Transfer.AUTODIFF_HOST and self._role is not Role.UNTRACKED:
            return Tensor._make(prim, dst, plain, tcls, strategy, self._kind, Role.NON_LEAF,
                                self._record_host_transfer(dst, prim))
        return Tensor._make(prim, dst, plain, tcls, strategy, self._kind, self._role if tcls is AF else None)

    def _record_host_transfer(self, dst: Executor, prim: Any) -> tape.Node:
        """The tape node of a cross-backend autodiff move (burn-autodiff's recorded transfer).

        Compute-bound, as burn-autodiff's `to_backend` prepares it: Balanced checkpointing keeps its
        output, so recomputation on the target side starts here and the copy is never replayed. Its
        backward hands the gradient back in the source's dtype; the tape copies it to the source device.
        """
        src, dtype = self._exec, self._exec.dtype(self._prim)
        tape.link_parents((self._node,), (self._prim,), self._strategy, needs_inputs=False)

        def backward(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
            return (g if e.dtype(g) == dtype else e.cast(g, dtype),)

        return tape.record("to_device", dst, (self._node,), prim, forward=lambda v: transfer(v, src, dst),
                               backward=backward, needs_inputs=False, needs_output=False,
                               compute_bound="to_device" in COMPUTE_BOUND_OPS,
                               strategy=self._strategy)

    # --- the op engine ---------------------------------------------------------------------
    def _apply(self, op: str, operands: tuple[Tensor, ...], tcls_route_ad: bool,
               strategy: CheckpointingStrategy | None, fwd: Callable[..., Any],
               bwd: tape.Backward | None, needs_inputs: bool = False, needs_output: bool = False,
               compute_bound: bool = False, forced_cls: TensorClass | None = None,
               role: Role | None = None) -> Tensor:
        """Run ``fwd`` on the operands' data and build the result (and its tape node)."""
        exec_ = self._exec
        if len(operands) == 2:  # the common shapes of the call, without a loop or a list
            lhs, rhs = operands
            if lhs._cap is not None or rhs._cap is not None:
                return self._capture_apply(op, operands, fwd, strategy)
            prims = [lhs._prim, rhs._prim]
            out = fwd(exec_, lhs._prim, rhs._prim)
        elif len(operands) == 1:
            (only,) = operands
            if only._cap is not None:
                return self._capture_apply(op, operands, fwd, strategy)
            prims = [only._prim]
            out = fwd(exec_, only._prim)
        else:
            for t in operands:
                if t._cap is not None:
                    return self._capture_apply(op, operands, fwd, strategy)
            prims = [t._prim for t in operands]
            out = fwd(exec_, *prims)
        kind = _KIND_OF_PRIM_DTYPE.get(out.dtype)
        if kind is None:
            kind = _KIND_OF_PRIM_DTYPE[out.dtype] = _KIND_OF_DTYPE[exec_.dtype(out)]
        tcls = forced_cls or _CLASS_OF[kind, tcls_route_ad and kind == "float", strategy is not None]
        if tcls is not AF:
            return Tensor._make(out, exec_, self._dev, tcls, strategy, kind)
        tracked = all_float = False
        if bwd is not None:
            all_float = True
            for t in operands:
                tracked = tracked or t._node is not None
                all_float = all_float and t._kind == "float"
        if not tracked:  # no tape node
            return Tensor._make(out, exec_, self._dev, tcls, strategy, kind, role or Role.UNTRACKED)
        if not all_float:
            floats = [t for t in operands if t._kind == "float"]
            prims = [t._prim for t in floats]
        else:
            floats = operands
        parents = tuple([t._node if t._node is not None else tape.constant(exec_, t._prim) for t in floats])
        tape.link_parents(parents, prims, strategy, needs_inputs)
        if all_float:  # recomputation gets every operand's value
            forward = partial(fwd, exec_)
        else:
            # Recomputation gets the float parents' values; int/bool operands (masks) are kept as they
            # are. Only those are captured: keeping the float inputs here would defeat Balanced checkpointing.
            fixed = [None if t._kind == "float" else t._prim for t in operands]

            def forward(*values: Any) -> Any:
                args, floats_in = list(fixed), iter(values)
                for i, value in enumerate(args):
                    if value is None:
                        args[i] = next(floats_in)
                return fwd(exec_, *args)

        compute_bound = compute_bound or op in _COMPUTE_BOUND_CALLS
        node = tape.record(op, exec_, parents, out, forward, bwd, needs_inputs, needs_output, compute_bound, strategy)
        return Tensor._make(out, exec_, self._dev, tcls, strategy, kind, Role.NON_LEAF, node)

    def _capture_apply(self, op: str, operands: tuple[Tensor, ...], fwd: Callable[..., Any],
                       strategy: CheckpointingStrategy | None) -> Tensor:
        """Record the op in the scope's graph; infer the shape on zero-filled proxies."""
        numpy_exec = _numpy_exec()
        proxies = [np.zeros(t.shape, dtype=t.dtype) for t in operands]
        out = np.asarray(fwd(numpy_exec, *proxies))
        kind = _kind_of_dtype(str(out.dtype))
        scope = self._cap.scope if self._cap is not None else next(t._cap.scope for t in operands if t._cap)
        value_id = scope.add_value("computed", tuple(out.shape), str(out.dtype))
        scope.add_op(op, [t._cap.value_id for t in operands if t._cap is not None], value_id)
        ref = _CaptureRef(scope, value_id, tuple(out.shape), str(out.dtype))
        tcls = CC if kind == "float" else CC_INT
        return Tensor._make(None, self._exec, self._dev, tcls, strategy, kind, cap=ref)

    def _unary(self, op: str, fwd: Callable[..., Any], bwd: tape.Backward | None, *,
               needs_inputs: bool = False, needs_output: bool = False, kind_error: str | None = None) -> Tensor:
        key = (op, self._cls, self._kind, SETTINGS.profile)
        plan = _UNARY_PLANS.get(key)
        if plan is None:
            plan = _UNARY_PLANS[key] = _plan_unary(*key)
        if plan.kind_refusal is not None:
            raise TypeError(plan.kind_refusal)
        if self._cap is not None:
            _check_capture_use(op, (self,))
        if kind_error is not None:  # after dispatch, where the kernel would refuse the scalar's kind
            raise TypeError(kind_error)
        result = self._apply(op, (self,), self._cls is AF, self._strategy, fwd, bwd, needs_inputs, needs_output,
                             plan.compute_bound, plan.forced_cls, plan.role)
        if recording.ACTIVE:
            recording.record_ok(op)
        return result

    def _binary(self, op: str, other: Tensor | Scalar, fwd: Callable[..., Any], bwd: tape.Backward | None,
                *, needs_inputs: bool = False, compute_bound: bool = False,
                scalar_fwd: Callable[..., Any] | None = None,
                scalar_bwd: tape.Backward | None = None, operand_name: str = "other") -> Tensor:
        if not isinstance(other, Tensor):  # operators return NotImplemented before reaching here
            if scalar_fwd is None:
                raise TypeError(f"Tensor.{op}: {operand_name} must be a Tensor, got {check.type_name(other)}")
            value = check.check_scalar(f"Tensor.{op}", operand_name, other)
            kind_error = None if scalar_op_kind(op, self._kind, scalar_kind(value)) is not None else (
                f"Tensor.{op} is not defined for {self._kind} tensors with a {scalar_kind(value)} scalar")
            return self._unary(f"Tensor.{op}", lambda e, a: scalar_fwd(e, a, value),
                               None if scalar_bwd is None else lambda e, g, ins, out: scalar_bwd(e, g, ins, out, value),
                               needs_inputs=scalar_bwd is _sbw_rdiv, kind_error=kind_error)
        lhs, rhs = self, other
        ldev, rdev = lhs._dev, rhs._dev
        key = (op, lhs._cls, rhs._cls, lhs._kind, rhs._kind, lhs._strategy, rhs._strategy,
               ldev._key == rdev._key, ldev._backend == rdev._backend, SETTINGS.profile)
        plan = _BINARY_PLANS.get(key)
        if plan is None:
            plan = _BINARY_PLANS[key] = _plan_binary(*key)
        if plan.kind_refusal is not None:
            raise TypeError(plan.kind_refusal)
        full_op = plan.full_op
        if lhs._cap is not None or rhs._cap is not None:
            _check_capture_use(full_op, (lhs, rhs))
        if plan.failed_check is not None:
            stage, outcome = plan.failed_check
            if stage == "device_check":
                _fail(full_op, outcome, op=CHECKED_OPS[op], lhs=repr(lhs.device()), rhs=repr(rhs.device()))
            elif stage == "strategy":
                _fail(full_op, outcome, lhs=lhs._strategy, rhs=rhs._strategy)
            _fail(full_op, outcome, lhs=_kind_debug(lhs), rhs=_kind_debug(rhs), name=input_name(op))
        if plan.kernel_refusal is not None:  # after dispatch, where the kernel would refuse it
            raise TypeError(plan.kernel_refusal)
        # shapes after dispatch, before the executor; a prim's own shape (a tuple, or torch's tuple
        # subclass) compares as the executor's would, and is made a plain tuple where it is reported
        lshape = lhs._cap.shape if lhs._cap is not None else lhs._prim.shape
        rshape = rhs._cap.shape if rhs._cap is not None else rhs._prim.shape
        if plan.matmul:
            check.check_matmul(full_op, tuple(lshape), tuple(rshape))
        elif lshape != rshape:
            check.broadcast_shape(full_op, tuple(lshape), tuple(rshape))
        result = lhs._apply(full_op, (lhs, rhs), plan.autodiff_route, plan.strategy, fwd, bwd, needs_inputs,
                            compute_bound=compute_bound)
        if recording.ACTIVE:
            recording.record_ok(full_op)
        return result

    def _multi(self, op: str, family: str,
               others: Sequence[tuple[str, Tensor]]) -> tuple[CheckpointingStrategy | None, bool]:
        """Check a multi-input op routed on ``self``; returns its strategy and whether it runs on autodiff.

        The strategy is the first input's, or (a cell that validates) the inputs' merged strategy;
        a cell whose result is Af merges a plain float into the autodiff route.
        """
        full_op = f"Tensor.{op}"
        profile = SETTINGS.profile
        _check_capture_use(full_op, (self, *(t for _n, t in others)))
        first = route_of(self._cls)
        strategy, autodiff_route = self._strategy, self._cls is AF
        for name, other in others:
            _row, outcome = cell("multi", profile, family=family, first=first,
                                 other=route_of(other._cls), same_backend=self._dev._backend == other._dev._backend)
            if isinstance(outcome, Fail):
                _fail(full_op, outcome, name=name, backend=self._dev._backend)  # stringify!($Backend): the variant name
            if outcome.strategy is StrategyFrom.VALIDATED:
                _row, merged = cell("strategy", profile, lhs=strategy, rhs=other._strategy)
                if isinstance(merged, Fail):
                    _fail(full_op, merged, lhs=strategy, rhs=other._strategy)
                strategy = strategy_result(strategy, other._strategy)
            autodiff_route = autodiff_route or outcome.result is AF
        return strategy, autodiff_route

    # --- arithmetic ------------------------------------------------------------------------
    def add(self, other: Tensor | Scalar) -> Tensor:
        return self._binary("add", other, _f_add, _bw_add, scalar_fwd=_s_add, scalar_bwd=_sbw_same)

    def sub(self, other: Tensor | Scalar) -> Tensor:
        return self._binary("sub", other, _f_sub, _bw_sub, scalar_fwd=_s_sub, scalar_bwd=_sbw_same)

    def mul(self, other: Tensor | Scalar) -> Tensor:
        return self._binary("mul", other, _f_mul, _bw_mul, needs_inputs=True, scalar_fwd=_s_mul,
                            scalar_bwd=_sbw_mul)

    def div(self, other: Tensor | Scalar) -> Tensor:
        return self._binary("div", other, _f_div, _bw_div, needs_inputs=True, scalar_fwd=_s_div,
                            scalar_bwd=_sbw_div)

    def matmul(self, other: Tensor) -> Tensor:
        return self._binary("matmul", other, _f_matmul, _bw_matmul, needs_inputs=True, compute_bound=True)

    # Operators return NotImplemented for an operand they do not take, so Python raises its own
    # TypeError (or asks the other operand); the named methods raise TypeError naming the argument.
    def __add__(self, other: Tensor | Scalar) -> Tensor:
        return self.add(other) if _operand(other, "+") else NotImplemented

    def __sub__(self, other: Tensor | Scalar) -> Tensor:
        return self.sub(other) if _operand(other, "-") else NotImplemented

    def __mul__(self, other: Tensor | Scalar) -> Tensor:
        return self.mul(other) if _operand(other, "*") else NotImplemented

    def __truediv__(self, other: Tensor | Scalar) -> Tensor:
        return self.div(other) if _operand(other, "/") else NotImplemented

    def __matmul__(self, other: Tensor) -> Tensor:
        return self.matmul(other) if _operand(other, "@", scalars=False) else NotImplemented

    def __radd__(self, other: Scalar) -> Tensor:
        if not _operand(other, "+", reflected=True):
            return NotImplemented
        return self._binary("add", other, _f_add, _bw_add, scalar_fwd=_s_add, scalar_bwd=_sbw_same)

    def __rsub__(self, other: Scalar) -> Tensor:
        if not _operand(other, "-", reflected=True):
            return NotImplemented
        return self._binary("sub", other, _f_sub, _bw_sub, scalar_fwd=_s_rsub, scalar_bwd=_sbw_neg)

    def __rmul__(self, other: Scalar) -> Tensor:
        if not _operand(other, "*", reflected=True):
            return NotImplemented
        return self._binary("mul", other, _f_mul, _bw_mul, needs_inputs=True, scalar_fwd=_s_mul,
                            scalar_bwd=_sbw_mul)

    def __rtruediv__(self, other: Scalar) -> Tensor:
        if not _operand(other, "/", reflected=True):
            return NotImplemented
        return self._binary("div", other, _f_div, _bw_div, needs_inputs=True, scalar_fwd=_s_rdiv,
                            scalar_bwd=_sbw_rdiv)

    def neg(self) -> Tensor:
        return self._unary("Tensor.neg", _u("neg"), _bw_neg)

    __neg__ = neg

    def exp(self) -> Tensor:
        return self._unary("Tensor.exp", _u("exp"), _bw_exp, needs_output=True)

    def log(self) -> Tensor:
        return self._unary("Tensor.log", _u("log"), _bw_log, needs_inputs=True)

    def sqrt(self) -> Tensor:
        return self._unary("Tensor.sqrt", _u("sqrt"), _bw_sqrt, needs_output=True)

    def relu(self) -> Tensor:
        return self._unary("Tensor.relu", _u("relu"), _bw_relu, needs_inputs=True)

    def sigmoid(self) -> Tensor:
        return self._unary("Tensor.sigmoid", _u("sigmoid"), _bw_sigmoid, needs_output=True)

    def tanh(self) -> Tensor:
        return self._unary("Tensor.tanh", _u("tanh"), _bw_tanh, needs_output=True)

    def powf_scalar(self, p: float) -> Tensor:
        p = check.check_number("Tensor.powf_scalar", "p", p)
        return self._unary("Tensor.powf_scalar", lambda e, a: e.powf_scalar(a, p),
                           lambda e, g, ins, out: (e.mul(g, e.mul(e.powf_scalar(ins[0], p - 1), p)),),
                           needs_inputs=True)

    def sum(self) -> Tensor:
        shape = self.shape
        return self._unary("Tensor.sum", _f_sum,
                           lambda e, g, ins, out: (e.broadcast_to(e.reshape(g, (1,) * len(shape)), shape),))

    def mean(self) -> Tensor:
        shape = self.shape
        n = math.prod(shape)
        return self._unary("Tensor.mean", lambda e, a: e.mean(a),
                           lambda e, g, ins, out: (e.div(e.broadcast_to(e.reshape(g, (1,) * len(shape)), shape), n),))

    def sum_dim(self, dim: int) -> Tensor:
        shape = self.shape
        dim = check.check_dim("Tensor.sum_dim", "dim", dim, len(shape))
        return self._unary("Tensor.sum_dim", lambda e, a: e.sum_dim(a, dim),
                           lambda e, g, ins, out: (e.broadcast_to(g, shape),))

    def reshape(self, shape: Sequence[int]) -> Tensor:
        old = self.shape
        new = check.check_reshape("Tensor.reshape", shape, old)
        return self._unary("Tensor.reshape", lambda e, a: e.reshape(a, new),
                           lambda e, g, ins, out: (e.reshape(g, old),))

    def swap_dims(self, dim0: int, dim1: int) -> Tensor:
        rank = len(self.shape)
        dim0 = check.check_dim("Tensor.swap_dims", "dim0", dim0, rank)
        dim1 = check.check_dim("Tensor.swap_dims", "dim1", dim1, rank)
        return self._unary("Tensor.swap_dims", lambda e, a: e.swap_dims(a, dim0, dim1),
                           lambda e, g, ins, out: (e.swap_dims(g, dim0, dim1),))

    def transpose(self) -> Tensor:
        check.check_rank("Tensor.transpose", self.shape, 2)
        return self._unary("Tensor.transpose", lambda e, a: e.swap_dims(a, -2, -1),
                           lambda e, g, ins, out: (e.swap_dims(g, -2, -1),))

    # --- comparisons and masks --------------------------------------------------------------
    def _compare(self, op: str, other: Tensor | Scalar) -> Tensor:
        return self._binary(op, other, lambda e, a, b: e.compare(op, a, b), None,
                            scalar_fwd=lambda e, a, s: e.compare(op, a, s))

    def equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("equal", other)

    def not_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("not_equal", other)

    def greater(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("greater", other)

    def greater_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("greater_equal", other)

    def lower(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("lower", other)

    def lower_equal(self, other: Tensor | Scalar) -> Tensor:
        return self._compare("lower_equal", other)

    def bool_not(self) -> Tensor:
        return self._unary("Tensor.bool_not", _u("bool_not"), None)

    def mask_fill(self, mask: Tensor, value: Scalar) -> Tensor:
        """Where ``mask`` is true, ``value``; elsewhere this tensor's values."""
        check.check_tensor("Tensor.mask_fill", "mask", mask, "a bool Tensor")
        value = check.check_value("Tensor.mask_fill", "value", value)
        return self._binary("mask_fill", mask, lambda e, a, m: e.where(m, value, a),
                            lambda e, g, ins, out: (e.where(mask._prim, 0, g),), operand_name="mask")

    def mask_where(self, mask: Tensor, value: Tensor) -> Tensor:
        """Where ``mask`` is true, ``value``'s values; elsewhere this tensor's (routed on this tensor)."""
        check.check_tensor("Tensor.mask_where", "mask", mask, "a bool Tensor")
        check.check_tensor("Tensor.mask_where", "value", value)
        if mask._kind != "bool" or (value._kind == "float") != (self._kind == "float"):
            raise TypeError("mask_where(mask, value): a bool mask and a value of this tensor's kind")
        strategy, autodiff_route = self._multi("mask_where", "input", (("mask", mask), ("value", value)))
        check.broadcast_shape("Tensor.mask_where", self.shape, mask.shape, value.shape)
        m = mask._prim

        def fwd(e: Executor, a: Any, mk: Any, v: Any) -> Any:
            return e.where(mk, v, a)

        def bwd(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
            return e.where(m, 0, g), e.where(m, g, 0)

        result = self._apply("Tensor.mask_where", (self, mask, value), autodiff_route, strategy, fwd, bwd)
        if recording.ACTIVE:
            recording.record_ok("Tensor.mask_where")
        return result

    def argmax(self, dim: int) -> Tensor:
        dim = check.check_dim("Tensor.argmax", "dim", dim, len(self.shape))
        return self._unary("Tensor.argmax", lambda e, a: e.argmax(a, dim), None)

    def one_hot(self, num_classes: int) -> Tensor:
        num_classes = check.check_int("Tensor.one_hot", "num_classes", num_classes, minimum=1)
        return self._unary("Tensor.one_hot", lambda e, a: e.one_hot(a, num_classes), None)

    def float(self) -> Tensor:
        """As floats; an int carrying a strategy becomes an autodiff float (an untracked leaf)."""
        if self._kind == "float":
            self._unary("Tensor.float", lambda e, a: a, None)  # checks and records
            return self
        return self._unary("Tensor.float", lambda e, a: e.cast(a, "float32"), None)

    def int(self) -> Tensor:
        return self._unary("Tensor.int", lambda e, a: e.cast(a, "int64"), None)

    @staticmethod
    def cat(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Concatenate along ``dim``: routed on the first tensor, which gives the strategy."""
        tensors = check.check_tensors("Tensor.cat", "tensors", tensors)
        first = tensors[0]
        dim = check.check_dim("Tensor.cat", "dim", dim, len(first.shape))
        if any(t._kind != first._kind for t in tensors):  # Burn's cat takes tensors of one kind
            raise TypeError(f"Tensor.cat: all tensors must be {first._kind} tensors, "
                            f"got {', '.join(t._kind for t in tensors)}")
        others = [(f"tensors[{i}]", t) for i, t in enumerate(tensors[1:], 1)]
        strategy, autodiff_route = first._multi("cat", "cat", others)
        check.check_cat("Tensor.cat", [t.shape for t in tensors], dim)
        sizes = [t.shape[dim] for t in tensors]

        def fwd(e: Executor, *prims: Any) -> Any:
            return e.cat(prims, dim)

        def bwd(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
            starts = itertools.accumulate([0, *sizes[:-1]])
            return tuple(_narrow(g, dim, start, size) for start, size in zip(starts, sizes, strict=True))

        result = first._apply("Tensor.cat", tuple(tensors), autodiff_route, strategy, fwd, bwd)
        if recording.ACTIVE:
            recording.record_ok("Tensor.cat")
        return result

    # --- the autodiff API -------------------------------------------------------------------------
    def _api(self, call: str, record: bool = True, public: str | None = None) -> Any:
        _row, outcome = cell("autodiff", SETTINGS.profile, call=call, cls=self._cls,
                             role=self._role if self._cls is AF else None)
        name = f"Tensor.{public or _PUBLIC_NAMES.get(call, call)}"  # records name the method the user called
        if isinstance(outcome, Fail):
            _fail(name, outcome)
        if record and recording.ACTIVE:
            recording.record_ok(name)
        return outcome

    def _with(self, tcls: TensorClass, strategy: CheckpointingStrategy | None, role: Role | None = None,
              node: tape.Node | None = None) -> Tensor:
        return Tensor._make(self._prim, self._exec, self._dev, tcls, strategy, self._kind, role, node, self._cap)

    def inner(self) -> Tensor:
        """Leave autodiff: the same data as a plain float, off the tape."""
        outcome = self._api("inner")
        if outcome.result is None:
            return self
        return self._with(outcome.result, None)

    @staticmethod
    def from_inner(tensor: Tensor) -> Tensor:
        """Wrap a plain float as an autodiff float (an untracked leaf)."""
        check.check_tensor("Tensor.from_inner", "tensor", tensor)
        return tensor._enabled(tensor._api("from_inner"))

    def _enabled(self, outcome: Any) -> Tensor:
        """The result of a ``from_inner`` cell that succeeded."""
        if outcome.result is None:
            return self
        role = Role.UNTRACKED if outcome.result is AF else None
        return self._with(outcome.result, self._strategy or CheckpointingStrategy.DISABLED, role)

    def no_grad(self) -> Tensor:
        outcome = self._api("no_grad")
        return self if outcome.result is None else self._with(outcome.result, None)

    def without_autodiff(self) -> Tensor:
        """Burn's later name of :meth:`no_grad` (the same cells), in the profiles whose Burn has it."""
        _later_method("without_autodiff")
        outcome = self._api(_semantics.RENAMED_TENSOR_METHODS["without_autodiff"], public="without_autodiff")
        return self if outcome.result is None else self._with(outcome.result, None)

    def autodiff(self) -> Tensor:
        """Burn's later ``Tensor::autodiff``: a tensor that reports autodiff is returned unchanged, any
        other runs ``Tensor.from_inner``'s cells; in the profiles whose Burn has it."""
        _later_method("autodiff")
        if _semantics.reports_autodiff(self._cls):  # no dispatch: `if self.is_autodiff() { self }`
            if recording.ACTIVE:
                recording.record_ok("Tensor.autodiff")
            return self
        outcome = self._api(_semantics.ENABLING_TENSOR_METHODS["autodiff"], public="autodiff")
        return self._enabled(outcome)

    def is_autodiff(self) -> bool:
        """Whether autodiff is enabled for this tensor (its device reports autodiff), in the profiles
        whose Burn has it."""
        _later_method("is_autodiff")
        return _semantics.query_result("is_autodiff", self._cls, self._role)

    def gradient_checkpointing_strategy(self) -> CheckpointingStrategy | None:
        """The strategy of a tensor that reports autodiff, else ``None``, in the profiles whose Burn
        has it (burn-tensor api/autodiff.rs: the context's ``Enabled(strategy)``)."""
        _later_method(_semantics.TENSOR_STRATEGY_QUERY)
        return self._strategy if _semantics.reports_autodiff(self._cls) else None

    def is_tracked(self) -> bool:
        """Whether this tensor is on a recorded autodiff graph (a tracked leaf or a non-leaf), in the
        profiles whose Burn has it."""
        _later_method("is_tracked")
        return _semantics.query_result("is_tracked", self._cls, self._role)

    def detach(self) -> Tensor:
        outcome = self._api("detach")
        if self._cls is not AF:
            return self
        return self._new_leaf(outcome.role)

    def _new_leaf(self, role: Role) -> Tensor:
        node = tape.leaf(self._exec, self._prim) if role is Role.TRACKED else None
        return self._with(AF, self._strategy, role, node)

    def require_grad(self) -> Tensor:
        """Mark an autodiff leaf as tracked; a non-leaf fails (MV111); other tensors: no-op."""
        outcome = self._api("require_grad")
        if self._cls is not AF or self._role is Role.TRACKED:
            return self
        return self._new_leaf(outcome.role)

    def set_require_grad(self, flag: bool) -> Tensor:
        flag = check.check_bool("Tensor.set_require_grad", "flag", flag)
        if flag:
            return self.require_grad()
        self._api("unrequire_grad")
        return self._new_leaf(Role.UNTRACKED) if self._cls is AF else self

    def is_require_grad(self) -> bool:
        """True for a tracked leaf only: a non-leaf is not ``require_grad`` in Burn."""
        return is_require_grad(self._cls, self._role)

    def with_gradient_checkpointing_strategy(self, strategy: CheckpointingStrategy) -> Tensor:
        if not isinstance(strategy, CheckpointingStrategy):
            raise TypeError("Tensor.with_gradient_checkpointing_strategy: strategy must be a "
                            f"CheckpointingStrategy, got {check.type_name(strategy)}")
        outcome = self._api("with_strategy")
        return self._with(outcome.result or self._cls, strategy, self._role, self._node)

    def backward(self) -> tape.Gradients:
        """Gradients of this tensor for every tracked leaf it depends on."""
        self._api("backward")
        if self._node is None:
            return tape.Gradients({})
        if tape.unavailable(self._node):  # an earlier backward consumed this graph
            _fail("Tensor.backward", Fail("MV108", MSG_NO_STEP))
        seed = self._exec.ones(self.shape, self.dtype)
        return tape.backward(self._node, seed)

    def _grad_tensor(self, outcome: Ok, entry: tuple[Any, Executor] | None) -> Tensor | None:
        """A gradient on the inner backend: a plain float carrying this tensor's strategy or none."""
        if entry is None:
            return None
        prim, exec_ = entry
        strategy = None if outcome.strategy is StrategyFrom.CLEAR else self._strategy
        return Tensor._make(prim, exec_, self._dev, class_of("float", False, strategy is not None), strategy, "float")

    def grad(self, grads: tape.Gradients) -> Tensor | None:
        """This tensor's gradient on the inner backend, carrying its strategy (Pf*), or None."""
        check.check_gradients("Tensor.grad", grads)
        outcome = self._api("grad")
        return self._grad_tensor(outcome, grads.get(self._node.id) if self._node is not None else None)

    def grad_remove(self, grads: tape.Gradients) -> Tensor | None:
        check.check_gradients("Tensor.grad_remove", grads)
        outcome = self._api("grad_remove")
        return self._grad_tensor(outcome, grads.pop(self._node.id) if self._node is not None else None)

    def grad_replace(self, grads: tape.Gradients, gradient: Tensor) -> None:
        """Replace this tensor's gradient with ``gradient`` (a plain float of the same backend)."""
        check.check_gradients("Tensor.grad_replace", grads)
        check.check_tensor("Tensor.grad_replace", "gradient", gradient)
        self._api("grad_replace", record=False)  # one line per call: recorded once both checks pass
        _row, outcome = cell("grad_replace", SETTINGS.profile, route=route_of(gradient._cls),
                             same_backend=gradient._dev._backend == self._dev._backend,
                             arm=self._dev._backend not in GRAD_REPLACE_NO_ARM)
        if isinstance(outcome, Fail):
            _fail("Tensor.grad_replace", outcome, lhs=_kind_debug(self), rhs=_kind_debug(gradient))
        if recording.ACTIVE:
            recording.record_ok("Tensor.grad_replace")
        if self._node is not None:
            grads.put(self._node.id, transfer(gradient._prim, gradient._exec, self._node.exec), self._node.exec)


def _operand(other: object, symbol: str, *, reflected: bool = False, scalars: bool = True) -> bool:
    """Whether an operator takes ``other`` (else it returns NotImplemented); arrays get a clear TypeError."""
    if isinstance(other, Tensor) or (scalars and check.is_scalar(other)):
        return True
    if check.is_array(other):  # numpy defers to us (__array_ufunc__ = None): say what to do instead
        pair = f"'{check.type_name(other)}' and 'Tensor'" if reflected else f"'Tensor' and '{check.type_name(other)}'"
        raise TypeError(f"unsupported operand type(s) for {symbol}: {pair}; wrap arrays with Tensor.from_data")
    return False


# --- forward and backward functions over the executor API ----------------------------

def _u(name: str) -> Callable[[Executor, Any], Any]:
    return lambda e, a: e.unary(name, a)


def _f_sum(e: Executor, a: Any) -> Any:
    return e.sum(a)


def _f_add(e: Executor, a: Any, b: Any) -> Any:
    return e.add(a, b)


def _f_sub(e: Executor, a: Any, b: Any) -> Any:
    return e.sub(a, b)


def _f_mul(e: Executor, a: Any, b: Any) -> Any:
    return e.mul(a, b)


def _f_div(e: Executor, a: Any, b: Any) -> Any:
    return e.div(a, b)


def _f_matmul(e: Executor, a: Any, b: Any) -> Any:
    return e.matmul(a, b)


def _s_add(e: Executor, a: Any, s: Scalar) -> Any:
    return e.add(a, s)


def _s_sub(e: Executor, a: Any, s: Scalar) -> Any:
    return e.sub(a, s)


def _s_rsub(e: Executor, a: Any, s: Scalar) -> Any:
    return e.sub(s, a)


def _s_mul(e: Executor, a: Any, s: Scalar) -> Any:
    return e.mul(a, s)


def _s_div(e: Executor, a: Any, s: Scalar) -> Any:
    return e.div(a, s)


def _s_rdiv(e: Executor, a: Any, s: Scalar) -> Any:
    return e.div(s, a)


def _bw_add(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return g, g  # the tape reduces broadcast gradients to each parent's shape


def _bw_sub(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return g, e.unary("neg", g)


def _bw_mul(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    a, b = ins
    return e.mul(g, b), e.mul(g, a)


def _bw_div(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    a, b = ins
    return e.div(g, b), e.unary("neg", e.div(e.mul(g, a), e.mul(b, b)))


def _bw_matmul(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    a, b = ins
    return e.matmul(g, e.swap_dims(b, -2, -1)), e.matmul(e.swap_dims(a, -2, -1), g)


def _bw_identity(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (g,)


def _bw_neg(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.unary("neg", g),)


def _bw_exp(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.mul(g, out),)


def _bw_log(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.div(g, ins[0]),)


def _bw_sqrt(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.div(e.mul(g, 0.5), out),)


def _bw_relu(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.where(e.compare("greater", ins[0], 0), g, 0),)


def _bw_sigmoid(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.mul(g, e.mul(out, e.sub(1, out))),)


def _bw_tanh(e: Executor, g: Any, ins: Any, out: Any) -> tuple:
    return (e.mul(g, e.sub(1, e.mul(out, out))),)


def _sbw_same(e: Executor, g: Any, ins: Any, out: Any, s: Scalar) -> tuple:
    return (g,)


def _sbw_neg(e: Executor, g: Any, ins: Any, out: Any, s: Scalar) -> tuple:
    return (e.unary("neg", g),)


def _sbw_mul(e: Executor, g: Any, ins: Any, out: Any, s: Scalar) -> tuple:
    return (e.mul(g, s),)


def _sbw_div(e: Executor, g: Any, ins: Any, out: Any, s: Scalar) -> tuple:
    return (e.div(g, s),)


def _sbw_rdiv(e: Executor, g: Any, ins: Any, out: Any, s: Scalar) -> tuple:
    a = ins[0]
    return (e.unary("neg", e.div(e.mul(g, s), e.mul(a, a))),)


def _narrow(prim: Any, dim: int, start: int, length: int) -> Any:
    """A slice along ``dim`` (numpy arrays and torch tensors index alike)."""
    index = [slice(None)] * len(prim.shape)
    index[dim] = slice(start, start + length)
    return prim[tuple(index)]


__all__ = ["Tensor", "TensorData", "CI", "CI_INT", "Route"]
