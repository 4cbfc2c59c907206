"""Property-based tests of the runtime against the semantics table.

1. Values survive any move bit-exactly: every dtype ``Tensor.from_data`` takes,
   NaN payloads, -0.0, infinities and subnormals included, through every pair
   of backends and through chains of 2-4 moves.
2. Random programs: a small interpreter draws creations, moves, binary and
   unary operations and autodiff calls. For each step it predicts the outcome
   on its own, from an abstract state per tensor (class, device, strategy,
   role) and the cells of ``runtime_shim.semantics``, then runs the step and
   checks: a failure exactly where the table says (same code, same message),
   operands unchanged after a failure, and the result's ``reveal_device`` text
   and values as predicted.

Everything runs under every profile. Devices this machine cannot build in the
session's mode (``--real``) are left out of the draws.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from conftest import DEVICES, device_available_here
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, DispatchError, Tensor
from runtime_shim import semantics as sem
from runtime_shim.semantics import AF, CHECKED_OPS, PF, PF_STAR, PI, PI_STAR, Fail, Ok, Place, Role, Route

PROFILES = tuple(sem.PROFILES)
DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]

# --- devices: the model's own description of each ---------------------------------------------

# name -> (factory, Burn backend, Debug text of the plain device)
DEVICE_INFO = {
    "flex": (Device.flex, "Flex", "Flex"),
    "ndarray": (Device.ndarray, "NdArray", "NdArray"),
    "cpu": (Device.cpu, "Cpu", "Cpu"),
    "libtorch": (Device.libtorch, "LibTorch", "LibTorch(Cpu)"),
    "cuda0": (lambda: Device.cuda(0), "Cuda", "Cuda(0)"),
    "cuda1": (lambda: Device.cuda(1), "Cuda", "Cuda(1)"),
    "wgpu": (Device.wgpu, "Wgpu", "Wgpu"),
    "rocm": (lambda: Device.rocm(0), "Rocm", "Rocm(0)"),
}
assert set(DEVICE_INFO) <= set(DEVICES)
MODES = {"plain": None, "ad": DISABLED, "ckpt": BALANCED}  # plain, .autodiff(), .autodiff().gradient_checkpointing()


def available_devices() -> list[str]:
    return [name for name in DEVICE_INFO if device_available_here(name)]


def build_device(name: str, mode: str) -> Device:
    device = DEVICE_INFO[name][0]()
    if mode == "plain":
        return device
    device = device.autodiff()
    return device.gradient_checkpointing() if mode == "ckpt" else device


def ad_text(name: str, strategy: CheckpointingStrategy) -> str:
    return f"Autodiff {{ device: {DEVICE_INFO[name][2]}, checkpointing: {strategy.value} }}"


# --- the abstract state ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Abstract:
    """What the model knows of a tensor: no reference to the runtime's own fields."""

    kind: str  # "float", "int" or "bool"
    cls: sem.TensorClass
    dev: str  # a DEVICE_INFO name: the plain device the data lives on
    strategy: CheckpointingStrategy | None
    role: Role | None  # for AF only

    @property
    def backend(self) -> str:
        return DEVICE_INFO[self.dev][1]

    @property
    def plain_text(self) -> str:
        return DEVICE_INFO[self.dev][2]

    def reported_device(self) -> str:
        # Af reports its autodiff device; so do ints carrying a strategy (#5340). Floats never do otherwise.
        if self.cls in (AF, PI_STAR):
            return ad_text(self.dev, self.strategy)
        return self.plain_text

    def reveal(self) -> str:
        detail = ""
        if self.cls is AF:
            detail = self.role.value
        elif self.cls is PF_STAR:
            detail = f"checkpointing: {self.strategy.value}"
        text = f"{self.reported_device()} {self.kind}"
        return f"{text} {detail}" if detail else text

    def kind_debug(self) -> str:
        return f"Autodiff({self.plain_text})" if self.cls is AF else self.plain_text

    def route(self) -> Route:
        if self.cls is AF:
            return Route.AUTODIFF
        return Route.FLOAT if self.kind == "float" else Route.INT

    def tracked(self) -> bool:
        return self.cls is AF and self.role is not Role.UNTRACKED


def result_state(kind: str, autodiff_route: bool, strategy: CheckpointingStrategy | None, dev: str,
                 role: Role | None) -> Abstract:
    """Section 2: a float routed on autodiff is Af; otherwise plain, starred when it carries a strategy."""
    if kind == "float" and autodiff_route:
        return Abstract(kind, AF, dev, strategy, role)
    if kind == "float":
        return Abstract(kind, PF_STAR if strategy is not None else PF, dev, strategy, None)
    return Abstract(kind, PI_STAR if strategy is not None else PI, dev, strategy, None)


def derived_role(*operands: Abstract) -> Role:
    """An op result on the tape is a non-leaf when any autodiff operand is tracked."""
    return Role.NON_LEAF if any(o.tracked() for o in operands) else Role.UNTRACKED


class Expect:
    """A predicted outcome: ``fail`` (a Fail and its message) or ``state`` (the result)."""

    def __init__(self, fail: Fail | None = None, message: str = "", state: Abstract | None = None,
                 same: bool = False) -> None:
        self.fail, self.message, self.state, self.same = fail, message, state, same


def failing(outcome: Fail, **values: object) -> Expect:
    return Expect(fail=outcome, message=outcome.render(**values) if values else outcome.message)


# --- the model: each step's outcome from the table ---------------------------------------------

def expect_create(profile: str, kind: str, dev: str, mode: str) -> Expect:
    target = MODES[mode]
    _row, outcome = sem.cell("create", profile, dtype="float" if kind == "float" else "int",
                             device="plain" if target is None else "autodiff", scope=False)
    if isinstance(outcome, Fail):
        return failing(outcome)
    strategy = target if outcome.strategy == "target" else None
    return Expect(state=Abstract(kind, outcome.result, dev, strategy, outcome.role))


def expect_move(profile: str, src: Abstract, dev: str, mode: str) -> Expect:
    target = MODES[mode]
    same_backend = DEVICE_INFO[dev][1] == src.backend
    _row_id, outcome = sem.move_outcome(profile, src.cls, target is not None,
                                        Place.SAME_BACKEND if same_backend else Place.OTHER_BACKEND, False)
    if isinstance(outcome, Fail):
        return failing(outcome)
    assert isinstance(outcome, Ok)
    cls = outcome.result or src.cls
    strategy = target if outcome.strategy == "target" else src.strategy
    role = None
    if cls is AF:
        # A recorded autodiff move of a tensor on the tape is a non-leaf; an untracked leaf stays one.
        recorded = outcome.transfer in (sem.Transfer.AUTODIFF, sem.Transfer.AUTODIFF_HOST)
        tracked_move = recorded and src.tracked()
        role = Role.NON_LEAF if tracked_move else outcome.role or src.role
    return Expect(state=Abstract(src.kind, cls, dev, strategy, role))


ARITH = ("add", "sub", "mul", "div")
COMPARE = ("equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal")


def expect_binary(profile: str, op: str, lhs: Abstract, rhs: Abstract) -> Expect:
    """Two-input ops: device check (checked ops only), strategy validation, backend match."""
    if op in CHECKED_OPS:
        _row, outcome = sem.cell("device_check", profile, same_device=lhs.dev == rhs.dev)
        if isinstance(outcome, Fail):
            return failing(outcome, op=CHECKED_OPS[op], lhs=lhs.reported_device(), rhs=rhs.reported_device())
    _row, outcome = sem.cell("strategy", profile, lhs=lhs.strategy, rhs=rhs.strategy)
    if isinstance(outcome, Fail):
        return failing(outcome, lhs=lhs.strategy, rhs=rhs.strategy)
    strategy = {"clear": None, "lhs": lhs.strategy, "rhs": rhs.strategy}[outcome.strategy]
    _row, outcome = sem.cell("backend", profile, lhs=lhs.route(), rhs=rhs.route(),
                             same_backend=lhs.backend == rhs.backend)
    if isinstance(outcome, Fail):
        return failing(outcome, lhs=lhs.kind_debug(), rhs=rhs.kind_debug(), name=sem.input_name(op))
    if op in COMPARE:
        kind = "bool"
    elif op in ARITH:
        kind = lhs.kind
    elif op == "matmul":
        kind = "float"
    else:  # mask_fill keeps the tensor's kind
        kind = lhs.kind
    ad = lhs.cls is AF or outcome.result is AF  # a backend cell may merge a plain float into autodiff
    return Expect(state=result_state(kind, ad, strategy, lhs.dev, derived_role(lhs, rhs) if ad else None))


def expect_multi(profile: str, family: str, first: Abstract, others: list[tuple[str, Abstract]]) -> Expect:
    """mask_where and cat: routed on the first input, which gives the strategy (no strategy check),
    unless the cell validates: then the inputs' strategies merge, and a plain float may join autodiff."""
    strategy, ad = first.strategy, first.cls is AF
    for name, other in others:
        _row, outcome = sem.cell("multi", profile, family=family, first=first.route(), other=other.route(),
                                 same_backend=first.backend == other.backend)
        if isinstance(outcome, Fail):
            return failing(outcome, name=name, backend=first.backend)  # stringify!($Backend)
        if outcome.strategy == "validated":
            _row, merged = sem.cell("strategy", profile, lhs=strategy, rhs=other.strategy)
            if isinstance(merged, Fail):
                return failing(merged, lhs=strategy, rhs=other.strategy)
            strategy = strategy if strategy is not None else other.strategy
        ad = ad or outcome.result is AF
    role = derived_role(first, *(o for _n, o in others)) if ad else None
    return Expect(state=result_state(first.kind, ad, strategy, first.dev, role))


def expect_unary(profile: str, op: str, src: Abstract, new_kind: str) -> Expect:
    _row, outcome = sem.cell("unary", profile, op=op, cls=src.cls)
    assert isinstance(outcome, Ok)
    if op == "to_float" and src.kind == "float":
        return Expect(state=src, same=True)  # float() of a float is the tensor itself
    cls = outcome.result or src.cls
    if cls is AF:
        role = outcome.role or derived_role(src)
        return Expect(state=Abstract(new_kind, AF, src.dev, src.strategy, role))
    return Expect(state=result_state(new_kind, False, src.strategy, src.dev, None) if outcome.result is None
                  else Abstract(new_kind, cls, src.dev, src.strategy, None))


def expect_api(profile: str, call: str, src: Abstract, arg: CheckpointingStrategy | None = None) -> Expect:
    _row, outcome = sem.cell("autodiff", profile, call=call, cls=src.cls, role=src.role if src.cls is AF else None)
    if isinstance(outcome, Fail):
        return failing(outcome)
    cls = outcome.result or src.cls
    strategy = {"keep": src.strategy, "clear": None, "arg": arg,
                "disabled-if-none": src.strategy or DISABLED}[outcome.strategy]
    role = None
    if cls is AF:
        role = outcome.role or src.role
    return Expect(state=Abstract(src.kind, cls, src.dev, strategy, role))


# --- checking a step against its prediction ---------------------------------------------------------

def snapshot(t: Tensor) -> tuple[str, str, tuple, bytes]:
    values = t.to_numpy()
    return rs.reveal_device(t), values.dtype.str, values.shape, values.tobytes()


def run_expecting(expect: Expect, action, operands: list[Tensor]) -> Tensor | None:
    """Run ``action``; check it fails exactly as predicted (operands untouched) or succeeds."""
    before = [snapshot(t) for t in operands]
    if currently_in_test_context():  # outcome statistics for --hypothesis-show-statistics
        event(f"fails {expect.fail.code}" if expect.fail is not None else f"ok {expect.state.cls} {expect.state.role}")
    if expect.fail is not None:
        with pytest.raises(DispatchError) as info:
            action()
        assert info.value.code == expect.fail.code, (info.value.code, expect.fail, str(info.value))
        assert str(info.value) == expect.message
        result = None
    else:
        result = action()
        assert isinstance(result, Tensor)
        assert rs.reveal_device(result) == expect.state.reveal()
        assert result.kind == expect.state.kind
        # burn-autodiff src/ops/tensor.rs:2066-2067: `Requirement::Grad` only, a tracked leaf
        assert result.is_require_grad() == (expect.state.cls is AF and expect.state.role is Role.TRACKED)
        if expect.same:
            assert result is operands[0]
    assert [snapshot(t) for t in operands] == before, "operands changed"
    return result


def assert_close(actual: np.ndarray, reference: np.ndarray, scale: np.ndarray | float) -> None:
    """Float results agree where the reference is finite and moderate; ints and bools exactly."""
    reference = np.asarray(reference)
    assert actual.shape == reference.shape, (actual.shape, reference.shape)
    assert actual.dtype == reference.dtype, (actual.dtype, reference.dtype)
    if actual.dtype.kind != "f":
        np.testing.assert_array_equal(actual, reference)
        return
    ref = reference.astype(np.float64)
    act = actual.astype(np.float64)
    ok = np.isfinite(ref) & (np.abs(ref) < 1e30)
    np.testing.assert_array_equal(np.isnan(act[~ok]) | ~np.isfinite(act[~ok]) | (np.abs(act[~ok]) >= 1e29),
                                  True)
    scale = np.nan_to_num(np.broadcast_to(scale, ref.shape), nan=0.0, posinf=np.inf)
    tol = 1e-4 * (np.abs(ref) + scale + 1e-6)
    assert np.all(np.abs(act[ok] - ref[ok]) <= tol[ok]), (act, ref)


def same_bits(t: Tensor, expected: np.ndarray) -> None:
    values = t.to_numpy()
    assert values.dtype == expected.dtype.newbyteorder("=") and values.dtype.isnative
    assert values.shape == expected.shape
    assert values.tobytes() == np.ascontiguousarray(expected, dtype=values.dtype).tobytes()


# --- 1. bit-exact moves ---------------------------------------------------------------------------

FLOAT_BITS = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}
SPECIAL_BITS = {
    "float16": [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D55, 0xFFFF, 0x0001, 0x8001,
                0x03FF, 0x0400, 0x7BFF, 0x3C00],
    "float32": [0x0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA5A5A5,
                0xFFFFFFFF, 0x7FC00001, 0x1, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF],
    "float64": [0x0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
                0xFFF8000000000000, 0x7FF0000000000001, 0x7FF4DEADBEEF0001, 0xFFFFFFFFFFFFFFFF, 0x1,
                0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF],
}
ALL_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def any_array(draw: st.DrawFn, dtypes: tuple[str, ...] = ALL_DTYPES) -> np.ndarray:
    """An array of any supported dtype; floats from raw bit patterns (every payload), in odd layouts."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(SHAPES)
    if dtype in FLOAT_BITS:
        bits = FLOAT_BITS[dtype]
        width = np.dtype(bits).itemsize * 8
        elements = st.one_of(st.sampled_from(SPECIAL_BITS[dtype]), st.integers(0, 2**width - 1))
        array = draw(hnp.arrays(bits, shape, elements=elements)).view(dtype)
    else:
        array = draw(hnp.arrays(np.dtype(dtype), shape))
    layout = draw(st.sampled_from(["c", "reversed", "transposed", "readonly", "swapped"]))
    if layout == "reversed" and array.ndim:
        array = array[::-1]
    elif layout == "transposed":
        array = array.T
    elif layout == "readonly":
        array.flags.writeable = False
    elif layout == "swapped" and array.dtype.itemsize > 1:
        array = array.astype(array.dtype.newbyteorder("S"))  # non-native byte order, same values
    return array


def kind_of(array: np.ndarray) -> str:
    return "bool" if array.dtype == np.bool_ else "float" if array.dtype.kind == "f" else "int"


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=60, deadline=None, suppress_health_check=HEALTH)
@given(array=any_array())
def test_round_trip_every_pair_bit_exact(profile: str, array: np.ndarray) -> None:
    """Every ordered pair (a, b) of plain devices: a -> b -> a keeps every bit, dtype and shape."""
    with rs.profile(profile):
        names = available_devices()
        expected = np.array(array, copy=True)
        sources = {name: Tensor.from_data(array, device=build_device(name, "plain")) for name in names}
        for a, b in itertools.product(names, names):
            t = sources[a]
            same_bits(t, expected)
            there = t.to_device(build_device(b, "plain"))
            assert rs.reveal_device(there) == f"{DEVICE_INFO[b][2]} {kind_of(array)}"
            same_bits(there, expected)
            back = there.to_device(build_device(a, "plain"))
            assert rs.reveal_device(back) == f"{DEVICE_INFO[a][2]} {kind_of(array)}"
            same_bits(back, expected)
            same_bits(t, expected)


def test_round_trip_special_values_every_pair() -> None:
    """A fixed array of every special float pattern, every float dtype, every pair (no draw needed)."""
    names = available_devices()
    for dtype, bits in FLOAT_BITS.items():
        array = np.array(SPECIAL_BITS[dtype], dtype=bits).view(dtype)
        for a, b in itertools.product(names, names):
            t = Tensor.from_data(array, device=build_device(a, "plain"))
            back = t.to_device(build_device(b, "plain")).to_device(build_device(a, "plain"))
            same_bits(back, array)


# Drawn lazily: which devices exist depends on the session's mode (set when pytest configures).
VARIANTS = st.deferred(lambda: st.tuples(st.sampled_from(available_devices()), st.sampled_from(list(MODES))))


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=150, deadline=None, suppress_health_check=HEALTH)
@given(array=any_array(), start=VARIANTS, chain=st.lists(VARIANTS, min_size=2, max_size=4))
def test_move_chains_bit_exact_and_as_the_table_says(profile: str, array: np.ndarray, start: tuple[str, str],
                                                      chain: list[tuple[str, str]]) -> None:
    """2-4 moves to any device variant: each fails or succeeds as the table says, never changing a bit."""
    with rs.profile(profile):
        expected = np.array(array, copy=True)
        kind = kind_of(array)
        expect = expect_create(profile, kind, *start)
        t = run_expecting(expect, lambda: Tensor.from_data(array, device=build_device(*start)), [])
        state = expect.state
        if kind == "float" and state.cls is AF and start[1] != "plain":
            t, state = t.require_grad(), replace(state, role=Role.TRACKED)
        for dev, mode in chain:
            expect = expect_move(profile, state, dev, mode)
            moved = run_expecting(expect, lambda t=t, d=dev, m=mode: t.to_device(build_device(d, m)), [t])
            if moved is not None:
                t, state = moved, expect.state
            same_bits(t, expected)


# --- 2. random programs -------------------------------------------------------------------------

SHAPE = (2, 3)


@dataclass
class Live:
    tensor: Tensor
    state: Abstract


class Interpreter:
    """Draws steps, predicts each from the table, runs it and checks the prediction."""

    def __init__(self, profile: str, data: st.DataObject, devices: list[str]) -> None:
        self.profile, self.data, self.devices = profile, data, devices
        self.pool: list[Live] = []
        self.steps: list[str] = []

    def draw(self, strategy: st.SearchStrategy, label: str = ""):
        return self.data.draw(strategy, label=label or None)

    def pick(self, predicate=lambda live: True, label: str = "operand") -> Live | None:
        candidates = [live for live in reversed(self.pool) if predicate(live)]  # newest first
        if not candidates:
            return None
        return candidates[self.draw(st.integers(0, len(candidates) - 1), label)]

    def add(self, tensor: Tensor | None, state: Abstract) -> None:
        if tensor is not None:
            self.pool.append(Live(tensor, state))
            if len(self.pool) > 12:
                self.pool.pop(0)

    # --- steps ---------------------------------------------------------------------------------
    def create(self) -> None:
        dev = self.draw(st.sampled_from(self.devices), "device")
        mode = self.draw(st.sampled_from(list(MODES)), "mode")
        dtype = self.draw(st.sampled_from(["float32", "float32", "float64", "int64", "int32", "bool"]), "dtype")
        seed = self.draw(st.integers(0, 2**16), "seed")
        rng = np.random.default_rng(seed)
        if dtype.startswith("float"):
            values = rng.uniform(-3, 3, SHAPE).astype(dtype)
            values.reshape(-1)[0] = -0.0
        elif dtype == "bool":
            values = rng.random(SHAPE) < 0.5
        else:
            values = rng.integers(-5, 6, SHAPE).astype(dtype)
        kind = kind_of(values)
        self.steps.append(f"create {dtype} on {dev}/{mode}")
        expect = expect_create(self.profile, kind, dev, mode)
        t = run_expecting(expect, lambda: Tensor.from_data(values, device=build_device(dev, mode)), [])
        same_bits(t, values)
        self.add(t, expect.state)
        # Often follow up at once, so tracked leaves, non-leaves and starred tensors are common.
        follow = self.draw(st.sampled_from([None, "require_grad", "with_strategy"]), "follow-up")
        if follow is not None:
            self.api(self.pool[-1], follow)

    def move(self) -> None:
        src = self.pick()
        dev = self.draw(st.sampled_from(self.devices), "target")
        mode = self.draw(st.sampled_from(list(MODES)), "target mode")
        self.steps.append(f"move {src.state.reveal()} to {dev}/{mode}")
        expect = expect_move(self.profile, src.state, dev, mode)
        result = run_expecting(expect, lambda: src.tensor.to_device(build_device(dev, mode)), [src.tensor])
        if result is not None:
            same_bits(result, src.tensor.to_numpy())
            self.add(result, expect.state)

    def binary(self) -> None:
        op = self.draw(st.sampled_from(ARITH + ("matmul", "mask_fill") + COMPARE), "op")
        if op in ARITH:
            # floats with floats, ints with ints (int division only by a non-zero tensor)
            lhs = self.pick(lambda x: x.state.kind != "bool", "lhs")
        elif op == "matmul":
            lhs = self.pick(lambda x: x.state.kind == "float" and len(x.tensor.shape) == 2, "lhs")
        else:
            lhs = self.pick(label="lhs")
        if lhs is None:
            return
        shape = lhs.tensor.shape
        if op == "mask_fill":
            rhs = self.pick(lambda x: x.state.kind == "bool" and x.tensor.shape == shape, "mask")
        elif op in ARITH:
            rhs = self.pick(lambda x: x.state.kind == lhs.state.kind and x.tensor.shape == shape, "rhs")
            if rhs is not None and op == "div" and lhs.state.kind == "int" and np.any(rhs.tensor.to_numpy() == 0):
                rhs = None
        elif op == "matmul":
            rhs = self.pick(lambda x: x.state.kind == "float" and x.tensor.shape == shape, "rhs")
        else:
            rhs = self.pick(lambda x: (x.state.kind == "float") == (lhs.state.kind == "float")
                            and x.tensor.shape == shape, "rhs")
        if rhs is None:
            return
        a, b = lhs.tensor, rhs.tensor
        if op == "matmul":
            # b.transpose() is a unary op of its own: it keeps b's state and cannot fail.
            bt = b.transpose()
            assert rs.reveal_device(bt) == expect_unary(self.profile, "unary", rhs.state, rhs.state.kind).state.reveal()
            rhs, b = Live(bt, rhs.state if rhs.state.cls is not AF else replace(
                rhs.state, role=derived_role(rhs.state))), bt
        self.steps.append(f"{op}({lhs.state.reveal()}, {rhs.state.reveal()})")
        expect = expect_binary(self.profile, op, lhs.state, rhs.state)
        av, bv = a.to_numpy(), b.to_numpy()
        fill = {"float": 2.5, "int": 7, "bool": True}[lhs.state.kind]
        actions = {
            "add": lambda: a + b, "sub": lambda: a.sub(b), "mul": lambda: a * b, "div": lambda: a / b,
            "matmul": lambda: a @ b, "mask_fill": lambda: a.mask_fill(b, fill),
            **{name: (lambda name=name: getattr(a, name)(b)) for name in COMPARE},
        }
        result = run_expecting(expect, actions[op], [a, b])
        if result is None:
            return
        if op == "matmul":
            with np.errstate(all="ignore"):
                scale = np.abs(av.astype(np.float64)) @ np.abs(bv.astype(np.float64))
                assert_close(result.to_numpy(), av @ bv, scale)
        elif op == "mask_fill":
            assert_close(result.to_numpy(), np.where(bv, np.array(fill, dtype=av.dtype), av), 0.0)
        elif op in COMPARE:
            ufunc = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
                     "greater_equal": np.greater_equal, "lower": np.less, "lower_equal": np.less_equal}[op]
            assert_close(result.to_numpy(), ufunc(av, bv), 0.0)
        else:
            ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                     "div": np.floor_divide if lhs.state.kind == "int" else np.true_divide}[op]
            with np.errstate(all="ignore"):
                assert_close(result.to_numpy(), ufunc(av, bv), 0.0)
        self.add(result, expect.state)

    def scalar(self) -> None:
        """A tensor and a Python scalar, either side: a unary op in dispatch terms (no checks, kind kept)."""
        src = self.pick(lambda x: x.state.kind != "bool", "src")
        if src is None:
            return
        op = self.draw(st.sampled_from(["add", "sub", "mul", "div"] if src.state.kind == "float" else
                                       ["add", "sub", "mul"]), "scalar op")
        reflected = self.draw(st.booleans(), "reflected")
        value = 1.5 if src.state.kind == "float" else 3
        t = src.tensor
        a = t.to_numpy()
        if reflected and op == "div" and np.any(a == 0):
            return
        self.steps.append(f"{op}({src.state.reveal()}, {value}, reflected={reflected})")
        ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}[op]
        pyop = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
                "div": lambda x, y: x / y}[op]
        expect = expect_unary(self.profile, "unary", src.state, src.state.kind)
        result = run_expecting(expect, (lambda: pyop(value, t)) if reflected else (lambda: pyop(t, value)), [t])
        with np.errstate(all="ignore"):
            reference = ufunc(value, a) if reflected else ufunc(a, value)
        assert_close(result.to_numpy(), reference, 0.0)
        self.add(result, expect.state)

    def mask_where(self) -> None:
        first = self.pick(label="tensor")
        if first is None:
            return
        shape = first.tensor.shape
        mask = self.pick(lambda x: x.state.kind == "bool" and x.tensor.shape == shape, "mask")
        value = self.pick(lambda x: x.state.kind == first.state.kind and x.tensor.shape == shape, "value")
        if mask is None or value is None:
            return
        self.steps.append(f"mask_where({first.state.reveal()}, {mask.state.reveal()}, {value.state.reveal()})")
        expect = expect_multi(self.profile, "input", first.state, [("mask", mask.state), ("value", value.state)])
        operands = [first.tensor, mask.tensor, value.tensor]
        result = run_expecting(expect, lambda: first.tensor.mask_where(mask.tensor, value.tensor), operands)
        if result is not None:
            av, mv, vv = (t.to_numpy() for t in operands)
            assert_close(result.to_numpy(), np.where(mv, vv, av), 0.0)
            self.add(result, expect.state)

    def cat(self) -> None:
        first = self.pick(label="first")
        if first is None:
            return
        count = self.draw(st.integers(1, 2), "others")
        others = []
        for _ in range(count):
            other = self.pick(lambda x: x.state.kind == first.state.kind
                              and x.tensor.shape[1:] == first.tensor.shape[1:]
                              and len(x.tensor.shape) == len(first.tensor.shape), "other")
            others.append(other)
        if not first.tensor.shape:
            return
        tensors = [first.tensor] + [o.tensor for o in others]
        self.steps.append(f"cat({', '.join(rs.reveal_device(t) for t in tensors)})")
        expect = expect_multi(self.profile, "cat", first.state,
                              [(f"tensors[{i}]", o.state) for i, o in enumerate(others, 1)])
        result = run_expecting(expect, lambda: Tensor.cat(tensors, 0), tensors)
        if result is not None:
            assert_close(result.to_numpy(), np.concatenate([t.to_numpy() for t in tensors], 0), 0.0)
            self.add(result, expect.state)

    UNARY = {
        # name: (kinds, table op, new kind, run, numpy reference)
        "neg": (("float", "int"), "unary", None, lambda t: -t, np.negative),
        "exp": (("float",), "unary", None, lambda t: t.exp(), np.exp),
        "tanh": (("float",), "unary", None, lambda t: t.tanh(), np.tanh),
        "sigmoid": (("float",), "unary", None, lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
        "relu": (("float",), "unary", None, lambda t: t.relu(), lambda a: np.maximum(a, 0).astype(a.dtype)),
        "powf": (("float",), "unary", None, lambda t: t.powf_scalar(2.0), np.square),
        "sum": (("float", "int"), "unary", None, lambda t: t.sum(),
                lambda a: np.sum(a, dtype=a.dtype).reshape(1)),
        "sum_dim": (("float", "int"), "unary", None, lambda t: t.sum_dim(0),
                    lambda a: np.sum(a, axis=0, keepdims=True, dtype=a.dtype)),
        "mean": (("float",), "unary", None, lambda t: t.mean(), lambda a: np.mean(a, dtype=a.dtype).reshape(1)),
        "transpose": (("float", "int", "bool"), "unary", None, lambda t: t.transpose(), lambda a: a.T),
        "reshape": (("float", "int", "bool"), "unary", None, lambda t: t.reshape(t.shape[::-1]),
                    lambda a: a.reshape(a.shape[::-1])),
        "bool_not": (("bool",), "unary", None, lambda t: t.bool_not(), np.logical_not),
        "int": (("float", "int", "bool"), "to_int", "int", lambda t: t.int(), lambda a: a.astype(np.int64)),
        "float": (("float", "int", "bool"), "to_float", "float", lambda t: t.float(),
                  lambda a: a if a.dtype.kind == "f" else a.astype(np.float32)),
        "argmax": (("float", "int", "bool"), "to_int", "int", lambda t: t.argmax(0),
                   lambda a: np.argmax(a, axis=0, keepdims=True)),
    }

    def unary(self) -> None:
        name = self.draw(st.sampled_from(sorted(self.UNARY)), "unary")
        kinds, table_op, new_kind, run, reference = self.UNARY[name]
        src = self.pick(lambda x: x.state.kind in kinds and len(x.tensor.shape) >= 1, "src")
        if src is None:
            return
        if name in ("transpose",) and len(src.tensor.shape) < 2:
            return
        self.steps.append(f"{name}({src.state.reveal()})")
        expect = expect_unary(self.profile, table_op, src.state, new_kind or src.state.kind)
        result = run_expecting(expect, lambda: run(src.tensor), [src.tensor])
        values = src.tensor.to_numpy()
        with np.errstate(all="ignore"):
            ref = np.asarray(reference(values))
        if name == "int" and values.dtype.kind == "f":
            finite = np.isfinite(values) & (np.abs(values) < 2**62)
            assert_close(result.to_numpy()[finite], ref[finite], 0.0)
        else:
            assert_close(result.to_numpy(), ref, np.abs(values.astype(np.float64)).sum() if name in (
                "sum", "sum_dim", "mean") else 0.0)
        self.add(result, expect.state)

    API = ("inner", "from_inner", "no_grad", "detach", "require_grad", "require_grad", "unrequire_grad",
           "with_strategy")

    def api(self, src: Live | None = None, call: str | None = None) -> None:
        call = call or self.draw(st.sampled_from(self.API), "call")
        src = src or self.pick(label="src")
        arg = self.draw(st.sampled_from([DISABLED, BALANCED]), "strategy") if call == "with_strategy" else None
        self.steps.append(f"{call}({src.state.reveal()})")
        expect = expect_api(self.profile, call, src.state, arg)
        t = src.tensor
        action = {
            "inner": t.inner, "from_inner": lambda: Tensor.from_inner(t), "no_grad": t.no_grad,
            "detach": t.detach, "require_grad": t.require_grad, "unrequire_grad": lambda: t.set_require_grad(False),
            "with_strategy": lambda: t.with_gradient_checkpointing_strategy(arg),
        }[call]
        result = run_expecting(expect, action, [t])
        if result is not None:
            same_bits(result, t.to_numpy())
            self.add(result, expect.state)

    def backward(self) -> None:
        src = self.pick(lambda x: x.state.kind == "float", "src")
        if src is None:
            return
        self.steps.append(f"backward({src.state.reveal()})")
        _row, outcome = sem.cell("autodiff", self.profile, call="backward", cls=src.state.cls,
                                 role=src.state.role if src.state.cls is AF else None)
        t = src.tensor
        before = snapshot(t)
        if isinstance(outcome, Fail):
            with pytest.raises(DispatchError) as info:
                t.backward()
            assert info.value.code == outcome.code and str(info.value) == outcome.message
            assert snapshot(t) == before
            return
        grads = t.backward()
        _row, outcome = sem.cell("autodiff", self.profile, call="grad", cls=AF, role=src.state.role)
        assert isinstance(outcome, Ok) and outcome.result in (PF_STAR, PF)
        g = t.grad(grads)
        if src.state.role is not Role.TRACKED:
            assert g is None  # only tracked leaves keep a gradient
        else:
            strategy = None if outcome.strategy == "clear" else src.state.strategy
            expected = Abstract("float", PF_STAR if strategy else PF, src.state.dev, strategy, None)
            assert rs.reveal_device(g) == expected.reveal()
            np.testing.assert_array_equal(g.to_numpy(), np.ones(t.shape, dtype=t.to_numpy().dtype))
        assert snapshot(t) == before
        # the pass consumed the graph it walked (burn-autodiff server.rs): a later backward from any of
        # its nodes fails, which test_burn_pinned_autodiff.py checks; keep the tape's tensors out of the pool
        self.pool = [live for live in self.pool
                     if not (live.state.cls is AF and live.state.role in (Role.NON_LEAF, Role.TRACKED))]

    def run(self, steps: int) -> None:
        self.create()
        self.create()
        weights = {"create": 3, "move": 5, "binary": 6, "scalar": 1, "mask_where": 2, "cat": 1, "unary": 4,
                   "api": 4, "backward": 1}
        choices = [name for name, w in weights.items() for _ in range(w)]
        for _ in range(steps):
            step = self.draw(st.sampled_from(choices), "step")
            getattr(self, step)()


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=200, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data(), steps=st.integers(4, 30))
def test_random_programs_follow_the_table(profile: str, data: st.DataObject, steps: int) -> None:
    with rs.profile(profile):
        interpreter = Interpreter(profile, data, available_devices())
        try:
            interpreter.run(steps)
        except BaseException:
            print("program:\n  " + "\n  ".join(interpreter.steps))
            raise


# --- targeted: every move cell between available devices, deterministic --------------------------

def _tags_plain(profile: str, cls: sem.TensorClass) -> bool:
    """Whether ``with_gradient_checkpointing_strategy`` works on a plain tensor of ``cls`` in ``profile``."""
    return isinstance(sem.cell("autodiff", profile, call="with_strategy", cls=cls, role=None)[1], Ok)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_move_cell_between_available_devices(profile: str) -> None:
    """Every (class, source device, target device, target mode) move, as the table says."""
    names = available_devices()
    with rs.profile(profile):
        for src_dev, src_mode, kind in itertools.product(names, MODES, ("float", "int", "bool")):
            array = {"float": np.array([1.5, -0.0]), "int": np.array([3, -4], dtype=np.int16),
                     "bool": np.array([True, False])}[kind]
            expect = expect_create(profile, kind, src_dev, src_mode)
            device = build_device(src_dev, src_mode)
            base = run_expecting(expect, lambda a=array, d=device: Tensor.from_data(a, device=d), [])
            sources = [(base, expect.state)]
            if expect.state.cls is AF:
                sources.append((base.require_grad(), replace(expect.state, role=Role.TRACKED)))
                sources.append(((base.require_grad() * 2.0), replace(expect.state, role=Role.NON_LEAF)))
            elif expect.state.cls is PF and _tags_plain(profile, PF):  # Pf* exists where plain floats take a tag
                starred = base.with_gradient_checkpointing_strategy(BALANCED)
                sources.append((starred, replace(expect.state, cls=PF_STAR, strategy=BALANCED)))
            elif expect.state.cls is PI:
                starred = (base.with_gradient_checkpointing_strategy(DISABLED) if _tags_plain(profile, PI)
                           else Tensor.from_inner(base))  # d16f7ba2ed: an int needs autodiff for a strategy
                sources.append((starred, replace(expect.state, cls=PI_STAR, strategy=DISABLED)))
            for (t, state), dst_dev, dst_mode in itertools.product(sources, names, MODES):
                expect = expect_move(profile, state, dst_dev, dst_mode)
                moved = run_expecting(expect, lambda t=t, d=dst_dev, m=dst_mode: t.to_device(build_device(d, m)),
                                      [t])
                if moved is not None:
                    same_bits(moved, t.to_numpy())
