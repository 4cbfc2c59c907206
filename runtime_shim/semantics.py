"""The one source of truth: Burn's dispatch semantics as declarative data.

Every decision the runtime makes about whether a move, an operation or an
autodiff call succeeds, and what state the result is in, is a *cell* of the
tables below. The runtime executes the cells; the analyzer imports this module
(pure Python: no numpy, no torch) and evaluates the same cells over sets of
abstract states. A profile is a set of overrides of named rows, never a fork.

Vocabulary (``dispatch-semantics.md`` section 2):

* :class:`TensorClass`: PF, PF_STAR, AF, PI, PI_STAR and the capture classes.
* :class:`Place`: where a move's target lies relative to the tensor.
* :class:`Route`: how an operand enters a two-input dispatch op.
* :class:`Role`: an autodiff float's place on the tape.

Outcomes are :class:`Ok`, :class:`Fail` (a rule code and Burn's message) or
:class:`Redirect` (re-evaluate against the target's inner device).
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from .profiles import DEFAULT_PROFILE, PROFILE_NAMES, check_profile


class CheckpointingStrategy(enum.Enum):
    """Burn's gradient-checkpointing strategy (printed ``Balanced`` / ``Disabled``)."""

    BALANCED = "Balanced"
    DISABLED = "Disabled"

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"CheckpointingStrategy.{self.name}"


class TensorClass(enum.Enum):
    """The dispatch state of a tensor (the *class* column of section 2)."""

    PF = "Pf"  # plain float, no strategy
    PF_STAR = "Pf*"  # plain float carrying a strategy
    AF = "Af"  # autodiff float
    PI = "Pi"  # plain int/bool
    PI_STAR = "Pi*"  # int/bool associated with autodiff (reports an AD device)
    CI = "Ci"  # capture float initializer (known value)
    CC = "Cc"  # capture float computed inside a scope
    CI_INT = "Ci(int)"  # capture int/bool initializer
    CC_INT = "Cc(int)"  # capture int/bool computed inside a scope

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch

    def __str__(self) -> str:
        return self.value


PF, PF_STAR, AF, PI, PI_STAR = (
    TensorClass.PF,
    TensorClass.PF_STAR,
    TensorClass.AF,
    TensorClass.PI,
    TensorClass.PI_STAR,
)
CI, CC, CI_INT, CC_INT = TensorClass.CI, TensorClass.CC, TensorClass.CI_INT, TensorClass.CC_INT

FLOAT_CLASSES = frozenset({PF, PF_STAR, AF, CI, CC})
INT_CLASSES = frozenset({PI, PI_STAR, CI_INT, CC_INT})
CAPTURE_CLASSES = frozenset({CI, CC, CI_INT, CC_INT})
PLAIN_FLOATS = frozenset({PF, PF_STAR})
PLAIN_INTS = frozenset({PI, PI_STAR})
ALL_CLASSES = tuple(TensorClass)


class Place(enum.Enum):
    """Where a move's target (its inner device) lies relative to the tensor's device."""

    SAME_BACKEND = "same backend"  # X -> X' (any index, including the same device)
    OTHER_BACKEND = "other backend"  # X -> Y, or a capture tensor -> any non-capture device
    SAME_CAPTURE = "same capture"  # a capture tensor -> its own capture device
    OTHER_CAPTURE = "other capture"  # -> a capture device that is not the tensor's own

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch

    def __str__(self) -> str:
        return self.value


class Route(enum.Enum):
    """How an operand enters a multi-input dispatch op (section 5.3)."""

    AUTODIFF = "autodiff float"
    FLOAT = "plain float"
    INT = "int/bool"

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch


class Role(enum.Enum):
    """An autodiff float's place on the tape (Burn's ``Requirement``)."""

    UNTRACKED = "untracked"  # Requirement::None: a leaf that does not require grad
    TRACKED = "tracked"  # Requirement::Grad: a leaf that requires grad
    NON_LEAF = "non-leaf"  # Requirement::GradInBackward: computed from tracked tensors

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch


class Transfer(enum.Enum):
    """How a successful move moves the data."""

    NATIVE = "native"  # backend-native device move
    HOST_COPY = "host copy"  # read, then rebuild on the other backend
    AUTODIFF = "autodiff"  # recorded on the tape; gradients flow back
    AUTODIFF_HOST = "autodiff host copy"  # a host copy recorded on the tape; the gradient is copied back
    CAPTURE_INIT = "capture initializer"  # host copy into a capture initializer
    CAPTURE_COPY = "capture copy"  # an initializer's value copied to another capture
    NONE = "no-op"

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow in hot dispatch


# --- outcomes ----------------------------------------------------------------


@dataclass(frozen=True)
class Fail:
    """The call panics: ``code`` is the rule code, ``message`` Burn's text (a template)."""

    code: str
    message: str

    def render(self, **values: object) -> str:
        if self.message == MSG_DEVICE_MISMATCH:  # the devices print as burn-tensor's Device Debug
            values = {k: device_debug(str(v)) if k in ("lhs", "rhs") else v for k, v in values.items()}
        return self.message.format(**values) if values else self.message


class StrategyFrom(enum.StrEnum):
    """Where a successful call's result takes its checkpointing strategy from."""

    KEEP = "keep"  # the tensor's own
    TARGET = "target"  # the target device's
    CLEAR = "clear"  # none
    VALIDATED = "validated"  # the op's validated strategy
    FIRST = "first"  # the first input's
    ARG = "arg"  # the call's argument
    DISABLED_IF_NONE = "disabled-if-none"  # the tensor's own, Disabled where it has none
    LHS = "lhs"  # (the strategy table) the left operand's
    RHS = "rhs"  # the right operand's


@dataclass(frozen=True)
class Ok:
    """The call succeeds.

    ``result`` is the result's class (``None``: the operand's own class);
    ``strategy`` says where the result's strategy comes from (:class:`StrategyFrom`).
    ``role`` is the autodiff role of an Af result (``None``: not an Af, or kept).
    """

    result: TensorClass | None = None
    strategy: StrategyFrom = StrategyFrom.KEEP
    transfer: Transfer = Transfer.NONE
    role: Role | None = None
    note: str = ""


@dataclass(frozen=True)
class Redirect:
    """Evaluate the move again against the target's inner (non-autodiff) device."""

    note: str = ""


Outcome = Ok | Fail | Redirect


# --- Burn's messages (dispatch-semantics.md, without Rust's panic prefixes) ---

MSG_AD_CROSS_BACKEND = "Autodiff tensor cannot be moved between backends."
MSG_AD_MISMATCH = "Cannot move between autodiff and non-autodiff instances."
MSG_CAPTURE_NO_SCOPE = "capture tensor operations must run inside CaptureDevice::capture_scope"
MSG_CAPTURE_COMPLETE = "capture scope is already complete"
MSG_CAPTURE_NO_VALUE = "capture tensor {id} has no initialized value"
MSG_CAPTURE_MOVE = "Cannot move a tensor from a capture device"
MSG_CAPTURE_AUTODIFF = "Capture tensors do not support autodiff"
MSG_DOUBLE_WRAP_DEVICE = "Autodiff should not wrap an autodiff device."
MSG_DOUBLE_WRAP_TENSOR = "Autodiff should not wrap an autodiff tensor."
MSG_FIRST_ORDER = "Only first-order autodiff is supported"
MSG_NOT_ENABLED = "Autodiff is not enabled on this device"
# d16f7ba2ed's burn-tensor API asserts (src/device.rs `Device::gradient_checkpointing`,
# src/tensor/api/autodiff.rs `Tensor::with_gradient_checkpointing_strategy`).
MSG_DEVICE_CHECKPOINTING_NEEDS_AD = "Device::gradient_checkpointing requires autodiff; call Device::autodiff first"
MSG_STRATEGY_NEEDS_AD = ("Tensor::with_gradient_checkpointing_strategy requires autodiff; "
                         "call Tensor::autodiff first")
MSG_REQUIRES_AD = "Requires autodiff tensor."
MSG_NON_LEAF = "Can't convert a non leaf tensor into a tracked tensor"
# burn-autodiff runtime/server.rs (`Option::expect` in `backward`): the root has no step registered.
MSG_NO_STEP = ("Node should have a step registered, did you forget to call "
               "`Tensor::register_grad` on the tensor where you need gradients?")
MSG_DEVICE_MISMATCH = (
    "=== Tensor Operation Error ===\n  Operation: '{op}'\n  Reason:\n"
    "    1. The provided tensors are not on the same device. "
    "Lhs tensor device Device<{lhs}>, Rhs tensor device Device<{rhs}>. \n"  # Device's Debug: Device<{:?}>
)
# The single-device CPU backends' device types print their one device: burn-flex `FlexDevice`'s Debug
# is its Display, `Cpu`; burn-ndarray's `NdArrayDevice::Cpu` derives it.
_UNIT_DEVICE = re.compile(r"\b(Flex|NdArray)\b(?!\()")


def device_debug(text: str) -> str:
    """A device's ``repr`` as ``DispatchDevice``'s Debug prints it inside a message (``Flex(Cpu)``)."""
    return _UNIT_DEVICE.sub(r"\1(Cpu)", text)


MSG_BACKEND_MISMATCH = "The provided tensors are not on the same backend. Got backends {lhs} and {rhs}."
MSG_BACKEND_MISMATCH_SHORT = "The provided tensors are not on the same backend."
MSG_STRATEGY_MISMATCH = (
    "Gradient checkpointing strategy mismatch: {lhs} vs {rhs}. "
    "Tensors in the same operation must share a strategy."
)
MSG_INPUT_WRONG_DEVICE = "Input tensor {name} is on the wrong device"
# d16f7ba2ed's `#[backend_dispatch]` input extraction (burn-backend-extension): `stringify!` of the
# parameter, so a `cat` element (a `Vec` input, extracted as `__tensor`) prints that binding's name.
MSG_INPUT_WRONG_BACKEND = "input tensor `{name}` is on the wrong backend"
MSG_CAT_INPUT_WRONG_BACKEND = "input tensor `__tensor` is on the wrong backend"
MSG_INNER_TWICE = "tensor is already on the inner backend"
MSG_ALREADY_AUTODIFF = "tensor is already associated with autodiff"
MSG_REPLACEMENT_INNER = "replacement gradients must use the inner backend"
MSG_UNREACHABLE = "internal error: entered unreachable code"
MSG_CAT_EXPECTED_AD = "Expected autodiff-wrapped float tensor for backend {backend}."
MSG_CAT_AD_WRONG_BACKEND = "Autodiff float tensor is on the wrong backend (expected {backend})."
MSG_CAT_WRONG_BACKEND = "Tensor is on the wrong backend (expected {backend})."
MSG_BACKEND_UNAVAILABLE = "Backend {backend} is not available on this machine{reason}"
# burn-dispatch device.rs `DispatchDevice::default` (the `_` arm of the BURN_DEVICE match).
MSG_UNKNOWN_BURN_DEVICE = "Unknown BURN_DEVICE override: '{value}'."

# How Rust prints each failure (the prefix that ``panic!``-style macros add).
PANIC_PREFIX = {
    MSG_AD_CROSS_BACKEND: "not implemented: ",
    MSG_FIRST_ORDER: "not implemented: ",
    MSG_DOUBLE_WRAP_DEVICE: "internal error: entered unreachable code: ",
    MSG_STRATEGY_MISMATCH: "assertion `left == right` failed: ",
    MSG_ALREADY_AUTODIFF: "assertion `left == right` failed: ",
    MSG_REPLACEMENT_INNER: "assertion `left == right` failed: ",
}

# --- rows: a pattern of keys and the outcome ----------------------------------


@dataclass(frozen=True)
class Row:
    """One row of a table: the cells it covers (a pattern) and their outcome."""

    id: str
    outcome: Outcome
    pattern: Mapping[str, frozenset] = field(default_factory=dict)
    doc: str = ""

    def matches(self, key: Mapping[str, object]) -> bool:
        return all(key[name] in allowed for name, allowed in self.pattern.items())


def _row(row_id: str, outcome: Outcome, doc: str = "", **pattern: object) -> Row:
    sets = {k: frozenset(v) if isinstance(v, (set, frozenset, tuple, list)) else frozenset({v})
            for k, v in pattern.items()}
    return Row(row_id, outcome, sets, doc)


_ANY_BOOL = (True, False)
NON_CAPTURE_PLACES = (Place.SAME_BACKEND, Place.OTHER_BACKEND)

# Section 3: to_device. Key: cls, ad (target is autodiff), place, scope (an
# active capture scope on the target's inner capture device).
MOVE_ROWS: tuple[Row, ...] = (
    _row("move.1", Ok(transfer=Transfer.NATIVE), "plain float to the same backend",
         cls=PLAIN_FLOATS, ad=False, place=Place.SAME_BACKEND),
    _row("move.2", Ok(transfer=Transfer.HOST_COPY), "plain float to another backend",
         cls=PLAIN_FLOATS, ad=False, place=Place.OTHER_BACKEND),
    _row("move.3", Redirect("moved to the inner device: stays plain and untracked, keeps its own strategy"),
         "plain float to an autodiff device", cls=PLAIN_FLOATS, ad=True),
    _row("move.4", Ok(transfer=Transfer.AUTODIFF, note="on the tape: a tracked or non-leaf input gives a non-leaf"),
         "autodiff float to an autodiff device of the same backend",
         cls=AF, ad=True, place=Place.SAME_BACKEND),
    _row("move.5", Fail("MV101", MSG_AD_CROSS_BACKEND), "autodiff float to an autodiff device of another backend",
         cls=AF, ad=True, place=Place.OTHER_BACKEND),
    _row("move.5c", Fail("MV101", MSG_AD_CROSS_BACKEND), "autodiff float to an autodiff device wrapping a capture",
         cls=AF, ad=True, place=Place.OTHER_CAPTURE),
    _row("move.6", Fail("MV102", MSG_AD_MISMATCH), "autodiff float to a plain device",
         cls=AF, ad=False, place=NON_CAPTURE_PLACES),
    _row("move.7", Fail("MV102", MSG_AD_MISMATCH), "autodiff float to a capture device",
         cls=AF, ad=False, place=Place.OTHER_CAPTURE),
    _row("move.8", Ok(transfer=Transfer.NATIVE), "int/bool to a plain device (strategy kept)",
         cls=PLAIN_INTS, ad=False, place=Place.SAME_BACKEND),
    _row("move.8b", Ok(transfer=Transfer.HOST_COPY), "int/bool to a plain device of another backend",
         cls=PLAIN_INTS, ad=False, place=Place.OTHER_BACKEND),
    _row("move.9", Ok(result=PI_STAR, strategy=StrategyFrom.TARGET, transfer=Transfer.NATIVE),
         "int/bool to an autodiff device: lands on the inner device with the target's strategy",
         cls=PLAIN_INTS, ad=True, place=Place.SAME_BACKEND),
    _row("move.9b", Ok(result=PI_STAR, strategy=StrategyFrom.TARGET, transfer=Transfer.HOST_COPY),
         "int/bool to an autodiff device of another backend",
         cls=PLAIN_INTS, ad=True, place=Place.OTHER_BACKEND),
    _row("move.9c", Fail("MV109", MSG_DOUBLE_WRAP_DEVICE), "int/bool to an autodiff device wrapping a capture",
         cls=(PI, PI_STAR, CI_INT, CC_INT), ad=True),
    _row("move.10", Ok(result=CI, transfer=Transfer.CAPTURE_INIT), "plain float to a capture device in scope",
         cls=PLAIN_FLOATS, ad=False, place=Place.OTHER_CAPTURE, scope=True),
    _row("move.10b", Ok(result=CI_INT, transfer=Transfer.CAPTURE_INIT), "int/bool to a capture device in scope",
         cls=PLAIN_INTS, ad=False, place=Place.OTHER_CAPTURE, scope=True),
    _row("move.11", Fail("MV104", MSG_CAPTURE_NO_SCOPE), "to a capture device with no active scope",
         cls=(PF, PF_STAR, PI, PI_STAR, CI, CI_INT), ad=False, place=Place.OTHER_CAPTURE, scope=False),
    _row("move.12", Ok(transfer=Transfer.NONE), "capture tensor to its own capture device",
         cls=CAPTURE_CLASSES, ad=False, place=Place.SAME_CAPTURE),
    _row("move.13", Ok(transfer=Transfer.CAPTURE_COPY), "capture initializer to another capture device in scope",
         cls=(CI, CI_INT), ad=False, place=Place.OTHER_CAPTURE, scope=True),
    _row("move.14", Fail("MV103", MSG_CAPTURE_NO_VALUE), "computed capture tensor to another capture device",
         cls=(CC, CC_INT), ad=False, place=Place.OTHER_CAPTURE),
    _row("move.15", Fail("MV103", MSG_CAPTURE_MOVE), "capture tensor to a non-capture device",
         cls=CAPTURE_CLASSES, ad=False, place=Place.OTHER_BACKEND),
    _row("move.15b", Redirect("a capture float bound for an autodiff device goes to the inner device"),
         "capture float to an autodiff device", cls=(CI, CC), ad=True),
)

# Section 4: creation. Key: dtype ("float" or "int"), device ("plain",
# "autodiff", "capture", "autodiff-capture"), scope.
CREATE_ROWS: tuple[Row, ...] = (
    _row("create.plain-float", Ok(result=PF, strategy=StrategyFrom.CLEAR), dtype="float", device="plain"),
    _row("create.plain-int", Ok(result=PI, strategy=StrategyFrom.CLEAR), dtype="int", device="plain"),
    _row("create.ad-float", Ok(result=AF, strategy=StrategyFrom.TARGET, role=Role.UNTRACKED),
         dtype="float", device="autodiff"),
    _row("create.ad-int", Ok(result=PI_STAR, strategy=StrategyFrom.TARGET), dtype="int", device="autodiff"),
    _row("create.capture-float", Ok(result=CI, strategy=StrategyFrom.CLEAR),
         dtype="float", device="capture", scope=True),
    _row("create.capture-int", Ok(result=CI_INT, strategy=StrategyFrom.CLEAR),
         dtype="int", device="capture", scope=True),
    _row("create.capture-no-scope", Fail("MV104", MSG_CAPTURE_NO_SCOPE), device="capture", scope=False),
    _row("create.ad-capture", Fail("MV102", MSG_CAPTURE_AUTODIFF), device="autodiff-capture"),
)

# Section 5.1: the device check of the checked binary ops. Key: op, same_device.
CHECKED_OPS: Mapping[str, str] = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "equal": "Equal",
    "not_equal": "NotEqual", "greater": "Greater", "greater_equal": "Greater_equal",
    "lower": "Lower", "lower_equal": "Lower_equal", "matmul": "Matmul", "cross": "Cross",
}
DEVICE_CHECK_ROWS: tuple[Row, ...] = (
    _row("device-check.equal", Ok(), same_device=True),
    _row("device-check.differ", Fail("MV105", MSG_DEVICE_MISMATCH), same_device=False),
)

# Section 5.2: strategy validation. Key: lhs, rhs (None, or a strategy).
_STRATS = (None, CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED)
STRATEGY_ROWS: tuple[Row, ...] = (
    _row("strategy.none", Ok(strategy=StrategyFrom.CLEAR), lhs=None, rhs=None),
    _row("strategy.promote-rhs", Ok(strategy=StrategyFrom.RHS), lhs=None, rhs=_STRATS[1:]),
    _row("strategy.promote-lhs", Ok(strategy=StrategyFrom.LHS), lhs=_STRATS[1:], rhs=None),
    _row("strategy.same", Ok(strategy=StrategyFrom.LHS),
         lhs=CheckpointingStrategy.DISABLED, rhs=CheckpointingStrategy.DISABLED),
    _row("strategy.same-b", Ok(strategy=StrategyFrom.LHS),
         lhs=CheckpointingStrategy.BALANCED, rhs=CheckpointingStrategy.BALANCED),
    _row("strategy.mismatch", Fail("MV107", MSG_STRATEGY_MISMATCH), lhs=_STRATS[1:], rhs=_STRATS[1:]),
)

# Section 5.3: the backend match of two-input ops. Key: lhs, rhs (Route), same_backend.
BACKEND_ROWS: tuple[Row, ...] = (
    _row("backend.plain", Ok(), lhs=(Route.FLOAT, Route.INT), rhs=(Route.FLOAT, Route.INT), same_backend=True),
    _row("backend.autodiff", Ok(), lhs=Route.AUTODIFF, rhs=(Route.AUTODIFF, Route.INT), same_backend=True),
    _row("backend.ad-int-other", Fail("MV106", MSG_BACKEND_MISMATCH_SHORT), lhs=Route.AUTODIFF, rhs=Route.INT,
         same_backend=False),
    # Autodiff and plain floats of one backend (another backend: backend.other, the same panic).
    _row("backend.mixed", Fail("MV106", MSG_BACKEND_MISMATCH), "an autodiff float with a plain float of its backend",
         lhs=Route.AUTODIFF, rhs=Route.FLOAT,
         same_backend=True),
    _row("backend.mixed-rev", Fail("MV106", MSG_BACKEND_MISMATCH),
         "a plain float with an autodiff float of its backend", lhs=Route.FLOAT, rhs=Route.AUTODIFF,
         same_backend=True),
    _row("backend.mixed-rev-int", Fail("MV106", MSG_BACKEND_MISMATCH), lhs=Route.INT, rhs=Route.AUTODIFF),
    _row("backend.other", Fail("MV106", MSG_BACKEND_MISMATCH), same_backend=False),
)

# Section 5.3, ops of three or more inputs routed on the first input. Key:
# family ("input" for mask_where and friends, "cat"), first, other (Route), same_backend.
MULTI_ROWS: tuple[Row, ...] = (
    # cat on the autodiff route takes autodiff floats only: before multi.ad-ok, which lets ints in.
    _row("multi.cat-ad-plain", Fail("MV106", MSG_CAT_EXPECTED_AD), "cat: a plain float after an autodiff one",
         family="cat", first=Route.AUTODIFF, other=Route.FLOAT, same_backend=True),
    _row("multi.cat-ad-expected", Fail("MV106", MSG_CAT_EXPECTED_AD), family="cat", first=Route.AUTODIFF,
         other=(Route.FLOAT, Route.INT)),
    _row("multi.ad-ok", Ok(strategy=StrategyFrom.FIRST), first=Route.AUTODIFF, other=(Route.AUTODIFF, Route.INT),
         same_backend=True),
    _row("multi.plain-ok", Ok(strategy=StrategyFrom.FIRST),
         first=(Route.FLOAT, Route.INT), other=(Route.FLOAT, Route.INT),
         same_backend=True),
    _row("multi.cat-plain-ad", Fail("MV106", MSG_CAT_WRONG_BACKEND), "cat: an autodiff float after a plain one",
         family="cat", first=Route.FLOAT, other=Route.AUTODIFF, same_backend=True),
    _row("multi.cat-ad-backend", Fail("MV106", MSG_CAT_AD_WRONG_BACKEND), family="cat", first=Route.AUTODIFF,
         other=Route.AUTODIFF, same_backend=False),
    _row("multi.cat-plain", Fail("MV106", MSG_CAT_WRONG_BACKEND), family="cat"),
    _row("multi.input-unreachable", Fail("MV106", MSG_UNREACHABLE), "a plain float input after an autodiff one",
         family="input", first=Route.AUTODIFF,
         other=Route.FLOAT, same_backend=True),
    _row("multi.input-plain-ad", Fail("MV106", MSG_INPUT_WRONG_DEVICE), "an autodiff input after a plain float",
         family="input", first=Route.FLOAT, other=Route.AUTODIFF, same_backend=True),
    _row("multi.input-wrong", Fail("MV106", MSG_INPUT_WRONG_DEVICE), family="input"),
)

# Section 5.4: unary ops and casts. Key: op ("unary", "to_int", "to_float"), cls.
UNARY_ROWS: tuple[Row, ...] = (
    _row("unary.keep", Ok(), op="unary", cls=(PF, PF_STAR, AF, PI, PI_STAR)),
    _row("unary.capture", Ok(result=None), op="unary", cls=CAPTURE_CLASSES),
    _row("cast.float-to-int-ad", Ok(result=PI_STAR), op="to_int", cls=(AF, PF_STAR)),
    _row("cast.float-to-int", Ok(result=PI), op="to_int", cls=PF),
    _row("cast.int-to-int", Ok(), op="to_int", cls=(PI, PI_STAR)),
    _row("cast.int-to-float-ad", Ok(result=AF, role=Role.UNTRACKED), op="to_float", cls=PI_STAR),
    _row("cast.int-to-float", Ok(result=PF), op="to_float", cls=PI),
    _row("cast.float-to-float", Ok(), op="to_float", cls=(PF, PF_STAR, AF)),
    _row("cast.capture-to-int", Ok(result=CC_INT), op="to_int", cls=CAPTURE_CLASSES),
    _row("cast.capture-to-float", Ok(result=CC), op="to_float", cls=CAPTURE_CLASSES),
)

# Capture tensors used by an operation need an active scope on their device.
CAPTURE_USE_ROWS: tuple[Row, ...] = (
    _row("capture.in-scope", Ok(), scope=True),
    # Every capture tensor comes from a scope, so outside it means after it: burn-capture's
    # `CaptureState::assert_open` (src/capture.rs:427) in the closed session's client.
    _row("capture.no-scope", Fail("MV104", MSG_CAPTURE_COMPLETE), scope=False),
)

# Section 6: the autodiff API. Key: call, cls, role (Role for Af, None otherwise).
_FLOATS_NOT_AD = (PF, PF_STAR)
_AF_ROLES = tuple(Role)
AUTODIFF_ROWS: tuple[Row, ...] = (
    _row("api.inner-af", Ok(result=PF, strategy=StrategyFrom.CLEAR), call="inner", cls=AF),
    _row("api.inner-int-ad", Ok(), call="inner", cls=PI_STAR),
    _row("api.inner-int", Ok(), "inner() of an int/bool tensor not associated with autodiff", call="inner",
         cls=(PI, CI_INT, CC_INT)),
    _row("api.inner-float", Fail("MV108", MSG_REQUIRES_AD), "inner() of a float tensor not on autodiff", call="inner",
         cls=(PF, PF_STAR, CI, CC)),
    _row("api.from_inner-af", Fail("MV109", MSG_DOUBLE_WRAP_TENSOR), "from_inner() of an autodiff float",
         call="from_inner", cls=AF),
    _row("api.from_inner-float", Ok(result=AF, strategy=StrategyFrom.DISABLED_IF_NONE, role=Role.UNTRACKED),
         call="from_inner", cls=_FLOATS_NOT_AD),
    _row("api.from_inner-int-plain", Ok(), call="from_inner", cls=PI),
    _row("api.from_inner-int", Ok(), "from_inner() of an int/bool tensor associated with autodiff", call="from_inner",
         cls=PI_STAR),
    _row("api.from_inner-capture", Fail("MV102", MSG_CAPTURE_AUTODIFF), call="from_inner", cls=CAPTURE_CLASSES),
    _row("api.no_grad-af", Ok(result=PF, strategy=StrategyFrom.CLEAR), call="no_grad", cls=AF),
    # `no_grad` is `if self.device().is_autodiff() { self.inner() }`: an associated int/bool reports
    # an autodiff device, so it takes `inner()` (the identity at 2c06be35)
    _row("api.no_grad-int-ad", Ok(), call="no_grad", cls=PI_STAR),
    _row("api.no_grad-other", Ok(), call="no_grad"),
    # burn-autodiff ops/tensor.rs float_detach keeps `float_is_require_grad`, which is true for
    # `Requirement::Grad` (a tracked leaf) only: a detached non-leaf is an untracked leaf.
    _row("api.detach-af-tracked", Ok(role=Role.TRACKED), call="detach", cls=AF, role=Role.TRACKED),
    _row("api.detach-af", Ok(role=Role.UNTRACKED), call="detach", cls=AF),
    _row("api.detach-other", Ok(), call="detach"),
    _row("api.require_grad-nonleaf", Fail("MV111", MSG_NON_LEAF), call="require_grad", cls=AF, role=Role.NON_LEAF),
    _row("api.require_grad-leaf", Ok(role=Role.TRACKED), call="require_grad", cls=AF),
    _row("api.require_grad-other", Ok(), call="require_grad"),
    _row("api.unrequire_grad-af", Ok(role=Role.UNTRACKED), call="unrequire_grad", cls=AF),
    _row("api.unrequire_grad-other", Ok(), call="unrequire_grad"),
    _row("api.with_strategy-af", Ok(strategy=StrategyFrom.ARG), call="with_strategy", cls=AF),
    _row("api.with_strategy-float", Ok(result=PF_STAR, strategy=StrategyFrom.ARG),
         "with_gradient_checkpointing_strategy() of a float tensor not on autodiff", call="with_strategy",
         cls=_FLOATS_NOT_AD),
    _row("api.with_strategy-int-ad", Ok(result=PI_STAR, strategy=StrategyFrom.ARG), call="with_strategy", cls=PI_STAR),
    _row("api.with_strategy-int", Ok(result=PI_STAR, strategy=StrategyFrom.ARG),
         "with_gradient_checkpointing_strategy() of an int/bool tensor not associated with autodiff",
         call="with_strategy", cls=PI),
    _row("api.with_strategy-capture", Ok(strategy=StrategyFrom.ARG),
         "with_gradient_checkpointing_strategy() of a capture tensor", call="with_strategy", cls=CAPTURE_CLASSES),
    # An untracked Af has no step on the tape (only `require_grad` and ops on tracked inputs
    # register one), so burn-autodiff's server panics in `backward`.
    _row("api.backward-untracked", Fail("MV108", MSG_NO_STEP), call="backward", cls=AF, role=Role.UNTRACKED),
    _row("api.grads-af", Ok(result=PF_STAR, strategy=StrategyFrom.KEEP), call=("backward", "grad", "grad_remove",
                                                                     "grad_replace"), cls=AF),
    _row("api.grad-other", Fail("MV108", MSG_REQUIRES_AD), "grad() or grad_remove() of a tensor not on autodiff",
         call=("grad", "grad_remove")),
    _row("api.grads-other", Fail("MV108", MSG_REQUIRES_AD), call=("backward", "grad_replace")),
)

# grad_replace's replacement gradient. Key: route, same_backend, arm (burn-dispatch backend.rs
# `grad_replace` has a match arm for the tensor's backend: every backend but LibTorch, whose
# tensors fall through to the `(t, g)` arm and its "not on the same backend" panic, backend.rs:472 at d16f7ba2ed).
GRAD_REPLACE_NO_ARM = frozenset({"LibTorch"})
GRAD_REPLACE_ROWS: tuple[Row, ...] = (
    _row("replace.autodiff", Fail("MV106", MSG_BACKEND_MISMATCH), "an autodiff replacement gradient",
         route=Route.AUTODIFF),
    _row("replace.no-arm", Fail("MV106", MSG_BACKEND_MISMATCH), arm=False),
    _row("replace.plain-same", Ok(), route=Route.FLOAT, same_backend=True),
    _row("replace.other", Fail("MV106", MSG_BACKEND_MISMATCH)),
)

# Section 1: device methods. Key: call, ad (the device is autodiff).
DEVICE_ROWS: tuple[Row, ...] = (
    _row("device.autodiff-plain", Ok(), call="autodiff", ad=False),
    _row("device.autodiff-twice", Fail("MV109", MSG_FIRST_ORDER), "autodiff() of an autodiff device",
         call="autodiff", ad=True),
    _row("device.checkpointing-ad", Ok(), call=("gradient_checkpointing", "gradient_checkpointing_strategy"), ad=True),
    _row("device.checkpointing-plain", Fail("MV110", MSG_NOT_ENABLED), "gradient_checkpointing() of a plain device",
         call="gradient_checkpointing", ad=False),
    _row("device.strategy-plain", Fail("MV110", MSG_NOT_ENABLED), "gradient_checkpointing_strategy() of a plain device",
         call="gradient_checkpointing_strategy", ad=False),
    _row("device.inner", Ok(), call="inner"),
)

# --- the key spaces (every cell of every table) -----------------------------

_PLACES_FOR = {
    True: (Place.SAME_CAPTURE, Place.OTHER_CAPTURE, Place.OTHER_BACKEND),  # capture tensors
    False: (Place.SAME_BACKEND, Place.OTHER_BACKEND, Place.OTHER_CAPTURE),
}


def move_keys() -> Iterator[dict]:
    """Every reachable (cls, ad, place, scope) cell of the move table."""
    for cls in ALL_CLASSES:
        for ad in _ANY_BOOL:
            for place in _PLACES_FOR[cls in CAPTURE_CLASSES]:
                scopes = _ANY_BOOL if place in (Place.OTHER_CAPTURE, Place.SAME_CAPTURE) else (False,)
                for scope in scopes:
                    yield {"cls": cls, "ad": ad, "place": place, "scope": scope}


TABLES: Mapping[str, tuple[tuple[Row, ...], tuple[str, ...]]] = {
    "move": (MOVE_ROWS, ("cls", "ad", "place", "scope")),
    "create": (CREATE_ROWS, ("dtype", "device", "scope")),
    "device_check": (DEVICE_CHECK_ROWS, ("same_device",)),
    "strategy": (STRATEGY_ROWS, ("lhs", "rhs")),
    "backend": (BACKEND_ROWS, ("lhs", "rhs", "same_backend")),
    "multi": (MULTI_ROWS, ("family", "first", "other", "same_backend")),
    "unary": (UNARY_ROWS, ("op", "cls")),
    "capture_use": (CAPTURE_USE_ROWS, ("scope",)),
    "autodiff": (AUTODIFF_ROWS, ("call", "cls", "role")),
    "grad_replace": (GRAD_REPLACE_ROWS, ("route", "same_backend", "arm")),
    "device": (DEVICE_ROWS, ("call", "ad")),
}

AUTODIFF_CALLS = ("inner", "from_inner", "no_grad", "detach", "require_grad", "unrequire_grad",
                  "with_strategy", "backward", "grad", "grad_remove", "grad_replace")


def keys_of(table: str) -> Iterator[dict]:
    """Every cell key of ``table``, for tests and for the analyzer's lifting."""
    if table == "move":
        yield from move_keys()
        return
    domains = {
        "create": {"dtype": ("float", "int"), "device": ("plain", "autodiff", "capture", "autodiff-capture"),
                   "scope": _ANY_BOOL},
        "device_check": {"same_device": _ANY_BOOL},
        "strategy": {"lhs": _STRATS, "rhs": _STRATS},
        "backend": {"lhs": tuple(Route), "rhs": tuple(Route), "same_backend": _ANY_BOOL},
        "multi": {"family": ("input", "cat"), "first": tuple(Route), "other": tuple(Route),
                  "same_backend": _ANY_BOOL},
        "unary": {"op": ("unary", "to_int", "to_float"), "cls": ALL_CLASSES},
        "capture_use": {"scope": _ANY_BOOL},
        "grad_replace": {"route": tuple(Route), "same_backend": _ANY_BOOL, "arm": _ANY_BOOL},
        "device": {"call": ("autodiff", "gradient_checkpointing", "gradient_checkpointing_strategy", "inner"),
                   "ad": _ANY_BOOL},
    }
    if table == "autodiff":
        for call in AUTODIFF_CALLS:
            for cls in ALL_CLASSES:
                for role in (_AF_ROLES if cls is AF else (None,)):
                    yield {"call": call, "cls": cls, "role": role}
        return
    names = list(domains[table])
    for values in itertools.product(*(domains[table][n] for n in names)):
        yield dict(zip(names, values, strict=True))


# --- operations: which operand kinds each op takes, and its result's kind -----------------
#
# Not dispatch decisions (a wrong kind is Python's TypeError, no rule code) but part of
# what a call does: the runtime checks operands against these specs and the analyzer
# derives result kinds from them. Kinds are ordered bool < int < float; an op over
# several kinds gives the widest, a Python scalar only widens ("weak" scalars).

KIND_ORDER = {"bool": 0, "int": 1, "float": 2}
ANY_KIND = ("float", "int", "bool")
NUMERIC = ("float", "int")
FLOAT_ONLY = ("float",)
ARITHMETIC = frozenset({"add", "sub", "mul", "div", "matmul"})  # undefined on bool results (TypeError)


@dataclass(frozen=True)
class BinarySpec:
    """A two-input op: ``t.op(u)``, an operator, or (with a scalar) its unary form."""

    name: str
    operands: str = "same"  # "same": both float or both int/bool; "mask": rhs must be bool
    result_kind: str = "same"  # "same" (promotion) or "bool"
    backward: bool = True  # the runtime records a backward function (an autodiff result is a non-leaf)
    scalar: bool = True  # accepts a Python scalar (then it is a unary op of the tensor)


@dataclass(frozen=True)
class UnarySpec:
    name: str
    kinds: tuple[str, ...] = ANY_KIND  # the operand kinds it is defined for
    cast: str = "unary"  # the unary table's ``op`` key: "unary", "to_int", "to_float"
    result_kind: str = "same"  # "same", "int", "bool", "float"
    backward: bool = True


COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal")
BINARY_OPS: dict[str, BinarySpec] = {
    spec.name: spec
    for spec in (
        BinarySpec("add"), BinarySpec("sub"), BinarySpec("mul"), BinarySpec("div"),
        BinarySpec("matmul", scalar=False),
        *(BinarySpec(name, result_kind="bool", backward=False) for name in COMPARISONS),
        BinarySpec("mask_fill", operands="mask", scalar=False),
    )
}

UNARY_OPS: dict[str, UnarySpec] = {
    spec.name: spec
    for spec in (
        UnarySpec("neg", NUMERIC),
        *(UnarySpec(name, FLOAT_ONLY) for name in ("exp", "log", "sqrt", "relu", "sigmoid", "tanh", "powf_scalar",
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


#: Ops whose backward burn-autodiff prepares `.compute_bound()` (ops/tensor.rs: ToDevice, MaskWhere,
#: MaskFill, Sum, Matmul): under Balanced checkpointing their outputs are checkpoints, kept rather
#: than recomputed; every other op is memory-bound and recomputed from the nearest checkpoint.
COMPUTE_BOUND_OPS = frozenset({"matmul", "mask_fill", "mask_where", "sum", "to_device"})


def input_name(op: str) -> str:
    """The Burn parameter name of a two-input op's second input (a wrong-backend panic prints it)."""
    return "mask" if BINARY_OPS[op].operands == "mask" else "rhs"


def scalar_kind(value: object) -> str:
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"


def promote(*kinds: str) -> str:
    """The kind of an op over arrays of these kinds (the widest)."""
    return max(kinds, key=KIND_ORDER.__getitem__)


def promote_scalar(array_kind: str, scalar: str) -> str:
    """An array with a Python scalar: the array's kind wins unless the scalar's is wider."""
    return array_kind if KIND_ORDER[scalar] <= KIND_ORDER[array_kind] else scalar


def binary_kind(op: str, lhs: str, rhs: str) -> str | None:
    """Result kind of a tensor-tensor op; ``None`` when it raises ``TypeError``."""
    spec = BINARY_OPS.get(op)
    if spec is not None and spec.result_kind == "bool":
        return "bool"
    kind = promote(lhs, rhs)
    return None if op in ARITHMETIC and kind == "bool" else kind


def scalar_op_kind(op: str, tensor: str, scalar: str) -> str | None:
    """Result kind of a tensor-scalar op (``t * 2.5``, ``t.mask_fill(m, 0.0)``); ``None``: TypeError."""
    spec = BINARY_OPS.get(op)
    if spec is not None and spec.result_kind == "bool":
        return "bool"
    kind = promote_scalar(tensor, scalar)
    return None if op in ARITHMETIC and kind == "bool" else kind


def operands_accepted(op: str, lhs: str, rhs: str) -> bool:
    """Whether a two-tensor op takes operands of these kinds (else ``TypeError``)."""
    spec = BINARY_OPS[op]
    if spec.operands == "mask":
        return rhs == "bool"
    return (lhs == "float") == (rhs == "float")


# --- profiles -------------------------------------------------------------------

#: Each profile overrides rows by id; the table as written is Burn main at 2c06be35
#: (``burn-2026-08``). The names (and which is the default) are :mod:`runtime_shim.profiles`'s.
#: Citations ``file:line`` are tracel-ai/burn at d16f7ba2ed (2026-09-05): burn-dispatch
#: ``src/macros.rs`` (to_device), ``src/backend.rs`` (the AutodiffBackend impl and its
#: ``autodiff_context_tests``) and burn-backend-extension's ``#[backend_dispatch]`` routing.
_PINNED_MERGE = Ok(result=AF, strategy=StrategyFrom.VALIDATED,
                   note="the plain float joins as an untracked autodiff leaf (from_inner)")
_PINNED_WRONG_BACKEND = Fail("MV106", MSG_INPUT_WRONG_BACKEND)
PROFILES: Mapping[str, Mapping[str, Outcome]] = {
    "burn-2026-08": {},
    # v0.21.x (before #5036): a plain float bound for an autodiff device hit the (b) arm.
    "burn-0.21": {"move.3": Fail("MV102", MSG_AD_MISMATCH)},
    # d16f7ba2ed, the DispatchAutodiffContext era: every dispatch tensor carries `autodiff: Disabled |
    # Enabled(strategy)`. Its to_device arms decide every move cell as 2c06be35 does: macros.rs:338
    # (b), macros.rs:371 (a), macros.rs:228 (int/bool to an autodiff device wrapping an autodiff
    # one), and ops/tensor.rs `float_to_device`'s early return (move.3's redirect) are unchanged.
    # Ops are generated by `#[backend_dispatch]`: the inputs' contexts merge (Disabled with
    # Enabled(s) is Enabled(s); two Enabled strategies must agree), the first float input picks the
    # backend, and on the autodiff route every plain float input of that backend is lifted with
    # `from_inner`; any other input panics "input tensor `<name>` is on the wrong backend".
    "burn-d16f7ba": {
        # backend.rs:900 test disabled_and_enabled_float_contexts_merge_in_both_orders.
        "backend.mixed": _PINNED_MERGE,
        "backend.mixed-rev": _PINNED_MERGE,
        # #[backend_dispatch] extract_tensor: the non-routing input's `_ => panic!` arm.
        "backend.other": _PINNED_WRONG_BACKEND,
        "backend.ad-int-other": _PINNED_WRONG_BACKEND,
        # backend.rs:919 test disabled_and_enabled_contexts_merge_across_vector_inputs and :930
        # vector_inputs_reject_mismatched_checkpointing_strategies: cat merges and validates.
        "multi.cat-ad-plain": _PINNED_MERGE,
        "multi.cat-plain-ad": _PINNED_MERGE,
        "multi.cat-ad-expected": Fail("MV106", MSG_CAT_INPUT_WRONG_BACKEND),
        "multi.cat-ad-backend": Fail("MV106", MSG_CAT_INPUT_WRONG_BACKEND),
        "multi.cat-plain": Fail("MV106", MSG_CAT_INPUT_WRONG_BACKEND),
        "multi.ad-ok": Ok(strategy=StrategyFrom.VALIDATED),
        "multi.plain-ok": Ok(strategy=StrategyFrom.VALIDATED),
        # backend.rs:819 uniform_contexts_propagate_through_fixed_arity_and_vector_ops: multi-input ops (layer_norm)
        # take the same route; a plain float input is lifted like a binary op's.
        "multi.input-unreachable": _PINNED_MERGE,
        "multi.input-plain-ad": _PINNED_MERGE,
        "multi.input-wrong": _PINNED_WRONG_BACKEND,
        # backend.rs:389 `grad` and :434 `grad_remove` (test gradients_are_inner_backend_tensors, :999):
        # a gradient's context is Disabled, so it carries no strategy.
        "api.grads-af": Ok(result=PF, strategy=StrategyFrom.CLEAR),
        # backend.rs:525 `int_inner` / :596 `int_from_inner` (disable_autodiff_context :297-300,
        # enable_autodiff_context :306-310; test inner_transitions_clear_and_restore_context, :976):
        # inner clears the association, from_inner restores it as Enabled(Disabled); each asserts
        # the other state.
        "api.inner-int-ad": Ok(result=PI, strategy=StrategyFrom.CLEAR),
        # burn-tensor api/autodiff.rs `without_autodiff` (the renamed `no_grad`): `K::inner` of a
        # tensor whose device reports autodiff, so an associated int/bool leaves autodiff as above
        "api.no_grad-int-ad": Ok(result=PI, strategy=StrategyFrom.CLEAR),
        "api.from_inner-int-plain": Ok(result=PI_STAR, strategy=StrategyFrom.DISABLED_IF_NONE),
        # burn-tensor src/tensor/api/autodiff.rs (stored at 0aaa2a9f, the commit of the backend.rs
        # above): `inner` is `self.without_autodiff()` and `from_inner` is `inner.autodiff()`, which
        # test `is_autodiff()` before calling `K::inner` / `K::from_inner`. So the dispatch asserts
        # (MSG_INNER_TWICE, MSG_ALREADY_AUTODIFF, "Requires autodiff tensor.", "Autodiff should not
        # wrap an autodiff tensor.") are unreachable from the tensor API: a tensor already without
        # (with) autodiff is returned unchanged (crates/burn/tests/autodiff_context.rs
        # `tensor_autodiff_conversions_are_idempotent`).
        "api.inner-float": Ok(),
        "api.inner-int": Ok(),
        "api.from_inner-af": Ok(),
        "api.from_inner-int": Ok(),
        # `with_gradient_checkpointing_strategy` asserts `self.is_autodiff()` (test
        # `tensor_checkpointing_strategy_setter_requires_autodiff`).
        "api.with_strategy-float": Fail("MV108", MSG_STRATEGY_NEEDS_AD),
        "api.with_strategy-int": Fail("MV108", MSG_STRATEGY_NEEDS_AD),
        "api.with_strategy-capture": Fail("MV108", MSG_STRATEGY_NEEDS_AD),
        # burn-tensor src/device.rs: `Device::autodiff` returns an autodiff device unchanged (its
        # strategy kept), `gradient_checkpointing_strategy` is an `Option` (`None` without autodiff),
        # `gradient_checkpointing` of a plain device panics with its own message (test
        # `device_autodiff_conversions_are_idempotent`).
        "device.autodiff-twice": Ok(),
        # api/autodiff.rs `grad_impl` / `grad_remove_impl`: a tensor whose context is Disabled has no
        # gradient: `None`, before any dispatch (test `gradient_flows_to_enabled_operand_but_not_disabled_constant`:
        # `constant.grad(&grads).is_none()`). `backward` and `grad_replace` still reach the dispatch panic.
        "api.grad-other": Ok(),
        "device.strategy-plain": Ok(),
        "device.checkpointing-plain": Fail("MV110", MSG_DEVICE_CHECKPOINTING_NEEDS_AD),
        # backend.rs:438 `grad_replace`: assert_eq!(autodiff, Disabled, ...) at :447, before the match.
        "replace.autodiff": Fail("MV106", MSG_REPLACEMENT_INNER),
    },
}

# --- profile burn-next: Burn with graph-preserving cross-backend autodiff transfers ----------------
#
# burn-autodiff's `Autodiff::<Src, C>::to_backend::<Dst, Adapter>` (ops/transfer.rs) and burn-dispatch's
# `HostTransfer` adapter (ops/transfer.rs): an autodiff float moved to an autodiff device of another
# compute backend stays on the tape. The forward is a host copy; the backward copies the incoming
# gradient back to the source device. The result is `Autodiff<Dst, C>`: the tensor's own strategy C
# is preserved (the target device's is not applied, as for every float move); a tracked or non-leaf
# input gives a non-leaf, an untracked one an untracked leaf; the transfer is compute-bound, so
# Balanced checkpointing keeps its output and never replays it. Autodiff transfers to capture devices
# are an explicit error. Everything else is the default profile's, whatever that is.
BURN_NEXT_OVERRIDES: Mapping[str, Outcome] = {
    "move.5": Ok(transfer=Transfer.AUTODIFF_HOST,
                 note="on the tape: the gradient is copied back to the source device; the strategy is kept"),
    "move.5c": Fail("MV102", MSG_CAPTURE_AUTODIFF),
}
PROFILES = {**PROFILES, "burn-next": {**PROFILES[DEFAULT_PROFILE], **BURN_NEXT_OVERRIDES}}

# --- tensor methods that later Burn added or renamed ------------------------------------------------
#
# burn-tensor src/tensor/api/autodiff.rs after 2c06be35 (the DispatchAutodiffContext era, whose
# burn-dispatch backend.rs the default profile cites; it has `Dispatch::is_tracked`): `no_grad` is
# renamed `without_autodiff` ("if the tensor uses autodiff, this moves it to the inner backend ...
# if autodiff is already disabled, the tensor is returned unchanged"), `autodiff` is its inverse
# (`from_inner` unless the tensor already uses autodiff), and `is_autodiff` (the device
# reports autodiff) and `is_tracked` (the tensor "participates in a recorded autodiff graph") are
# added. At 2c06be35 and in v0.21 none of them exists. A renamed method runs its old name's cells;
# a query has no failing cell.

#: New name -> the ``call`` of the autodiff table that it runs.
RENAMED_TENSOR_METHODS: Mapping[str, str] = {"without_autodiff": "no_grad"}
#: ``t.autodiff()``: a tensor that reports autodiff is returned unchanged (no cell: ``if
#: self.is_autodiff() { self }``), any other runs this call's cells (``K::from_inner``).
ENABLING_TENSOR_METHODS: Mapping[str, str] = {"autodiff": "from_inner"}
#: Boolean queries on a tensor that later Burn added.
TENSOR_QUERIES = ("is_autodiff", "is_tracked")
#: ``t.gradient_checkpointing_strategy()``: the tensor's strategy, ``None`` without autodiff.
TENSOR_STRATEGY_QUERY = "gradient_checkpointing_strategy"
_LATER_TENSOR_API = (frozenset(RENAMED_TENSOR_METHODS) | frozenset(ENABLING_TENSOR_METHODS)
                     | frozenset(TENSOR_QUERIES) | {TENSOR_STRATEGY_QUERY})
#: The tensor methods each profile's Burn has beyond the 2c06be35 API.
PROFILE_TENSOR_API: Mapping[str, frozenset[str]] = {
    "burn-d16f7ba": _LATER_TENSOR_API,
    "burn-2026-08": frozenset(),
    "burn-0.21": frozenset(),
    "burn-next": _LATER_TENSOR_API,
}


def has_tensor_method(profile: str, name: str) -> bool:
    """Whether ``name`` (one of the later methods) exists in ``profile``'s Burn."""
    return name in PROFILE_TENSOR_API[profile]


def profiles_with_tensor_method(name: str) -> tuple[str, ...]:
    return tuple(p for p in PROFILE_NAMES if has_tensor_method(p, name))


def is_tracked(cls: TensorClass, role: Role | None) -> bool:
    """Burn's ``is_tracked``: an autodiff float on the recorded graph, a tracked leaf or a non-leaf
    (``tensor.as_autodiff().is_tracked()``; a detached non-leaf is an untracked leaf)."""
    return cls is AF and role in (Role.TRACKED, Role.NON_LEAF)


def query_result(query: str, cls: TensorClass, role: Role | None) -> bool:
    """The answer of one of :data:`TENSOR_QUERIES` for a tensor in this state."""
    if query == "is_tracked":
        return is_tracked(cls, role)
    if query == "is_autodiff":
        return reports_autodiff(cls)
    raise ValueError(f"unknown tensor query {query!r}")


if set(PROFILES) != set(PROFILE_NAMES) or set(PROFILE_TENSOR_API) != set(PROFILE_NAMES):
    raise RuntimeError(f"the profiles' overrides {tuple(PROFILES)} and names {PROFILE_NAMES} differ")


#: Redirects that the analyzer reports as an advisory: a plain float sent to an autodiff device
#: lands on the inner device, untracked (MV150).
REDIRECT_ADVISORIES: Mapping[str, str] = {"move.3": "MV150"}


def firing_profiles(code: str) -> tuple[str, ...] | None:
    """The profiles in which some cell of the tables reports ``code`` (a failure, or a redirect's
    advisory), in :data:`PROFILE_NAMES` order; ``None`` when no cell of any profile does (a code
    that the tables do not decide)."""
    found: list[str] = []
    seen_anywhere = False
    for profile in PROFILE_NAMES:
        if _profile_fires(profile, code):
            found.append(profile)
            seen_anywhere = True
    return tuple(found) if seen_anywhere else None


def profile_dependent_rows(code: str) -> list[tuple[Row, tuple[str, ...]]]:
    """The rows that report ``code`` in some profiles but not in others, each with those profiles."""
    out = []
    for rows, _names in TABLES.values():
        for row in rows:
            firing = tuple(p for p in PROFILE_NAMES if _row_reports(row, PROFILES[p].get(row.id, row.outcome), code))
            if firing and len(firing) < len(PROFILE_NAMES):
                out.append((row, firing))
    return out


def _row_reports(row: Row, outcome: Outcome, code: str) -> bool:
    if isinstance(outcome, Fail):
        return outcome.code == code
    return isinstance(outcome, Redirect) and REDIRECT_ADVISORIES.get(row.id) == code


def _profile_fires(profile: str, code: str) -> bool:
    for table in TABLES:
        for key in keys_of(table):
            row, outcome = cell(table, profile, **key)
            if isinstance(outcome, Fail) and outcome.code == code:
                return True
            if isinstance(outcome, Redirect) and REDIRECT_ADVISORIES.get(row.id) == code:
                return True
    return False


def find_row(table: str, key: Mapping[str, object]) -> Row:
    """The first row of ``table`` that covers ``key`` (tables are first-match, like a match arm)."""
    rows, _names = TABLES[table]
    for row in rows:
        if row.matches(key):
            return row
    raise LookupError(f"no row of table {table!r} covers {dict(key)}")


_CELL_CACHE: dict[tuple, tuple[Row, Outcome]] = {}


def cell(table: str, profile: str = DEFAULT_PROFILE, **key: object) -> tuple[Row, Outcome]:
    """The row covering ``key`` and its outcome under ``profile`` (memoised)."""
    cache_key = (table, profile, *key.items())
    hit = _CELL_CACHE.get(cache_key)
    if hit is None:
        row = find_row(table, key)
        overrides = PROFILES.get(profile)
        if overrides is None:  # an alias (or an unknown name: UnknownProfile)
            overrides = PROFILES[check_profile(profile)]
        hit = (row, overrides.get(row.id, row.outcome))
        _CELL_CACHE[cache_key] = hit
    return hit


def decided_cell(table: str, profile: str = DEFAULT_PROFILE, **key: object) -> tuple[Row, Ok | Fail]:
    """:func:`cell` of a table whose rows decide (every table but ``move``, whose redirects
    :func:`move_path` follows); a redirecting row there is a table bug (LookupError)."""
    row, outcome = cell(table, profile, **key)
    if isinstance(outcome, Redirect):
        raise LookupError(f"row {row.id} of table {table!r} redirects: only a move is evaluated again")
    return row, outcome


def move_path(profile: str, cls: TensorClass, ad: bool, place: Place,
              scope: bool) -> tuple[str | None, str, Ok | Fail]:
    """A move cell followed through a :class:`Redirect` to the inner device.

    Returns the id of the redirecting row (``None`` if there was none: MV150 reads
    it), the id of the deciding row (for diagnostics) and the final outcome.
    """
    row, outcome = cell("move", profile, cls=cls, ad=ad, place=place, scope=scope)
    if not isinstance(outcome, Redirect):
        return None, row.id, outcome
    final, again = cell("move", profile, cls=cls, ad=False, place=place, scope=scope)
    if isinstance(again, Redirect):  # the inner device is plain: no row redirects it again
        raise LookupError(f"move row {final.id} redirects a move to a plain device")
    return row.id, final.id, again


def move_outcome(profile: str, cls: TensorClass, ad: bool, place: Place, scope: bool) -> tuple[str, Ok | Fail]:
    """The final outcome of a move cell and the id of the row that decided it."""
    _redirect, row_id, outcome = move_path(profile, cls, ad, place, scope)
    return row_id, outcome


# --- result states (section 2 as data) -------------------------------------------

def class_of(kind: str, autodiff: bool, has_strategy: bool) -> TensorClass:
    """The class of a non-capture result: kind "float"/"int"/"bool", routed on autodiff or not."""
    if kind == "float":
        if autodiff:
            return AF
        return PF_STAR if has_strategy else PF
    return PI_STAR if has_strategy else PI


def route_of(cls: TensorClass) -> Route:
    if cls is AF:
        return Route.AUTODIFF
    return Route.INT if cls in INT_CLASSES else Route.FLOAT


def is_require_grad(cls: TensorClass, role: Role | None) -> bool:
    """Burn's ``is_require_grad``: a tracked leaf only (``matches!(requirement, Requirement::Grad)``)."""
    return cls is AF and role is Role.TRACKED


def reports_autodiff(cls: TensorClass) -> bool:
    """Whether ``t.device()`` reports an autodiff device (Af, and Pi* since #5340)."""
    return cls is AF or cls is PI_STAR


def strategy_result(lhs: CheckpointingStrategy | None,
                    rhs: CheckpointingStrategy | None) -> CheckpointingStrategy | None:
    """Apply a strategy-table Ok outcome: "lhs", "rhs" or "clear"."""
    return lhs if lhs is not None else rhs
