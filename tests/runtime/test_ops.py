"""Operations, cell by cell: device check (5.1), strategy validation (5.2), backend match (5.3),
multi-input ops (mask_where, cat) and unary ops / casts (5.4).

The outcome of every case is taken from the semantics table (device check,
then strategy, then backend, as the document orders them); messages and
reveal_device texts are written out by hand; result values are compared with
numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from _states import (
    BACKEND_NAME,
    BALANCED,
    DEVICE_TEXT,
    DISABLED,
    ERROR_CLASS,
    MSG,
    STRATEGY_TEXT,
    VALUES,
    State,
    ad,
    ad_text,
    assert_bits,
    backend_mismatch,
    capture_text,
    device,
    device_mismatch,
    expected_reveal,
    first_available,
    head_column,
    snapshot,
    strategy_mismatch,
)
from _states import head_cell as cell  # the HEAD column's (row, outcome)

import runtime_shim as rs
from runtime_shim import Device, Tensor, reveal_device
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
    Fail,
    Role,
    Route,
    keys_of,
    strategy_result,
)

_head_column = pytest.fixture(autouse=True)(head_column)

# Burn's operation names for the device check (dispatch-semantics.md 5.1); `cross` has no
# counterpart in the runtime_shim API.
BURN_OP_NAME = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "equal": "Equal", "not_equal": "NotEqual",
    "greater": "Greater", "greater_equal": "Greater_equal", "lower": "Lower", "lower_equal": "Lower_equal",
    "matmul": "Matmul",
}
NUMPY_OP = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "equal": np.equal,
    "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal, "lower": np.less,
    "lower_equal": np.less_equal, "matmul": np.matmul,
}

LHS = {"float": np.array([[1.5, -2.0], [0.25, 4.0]], dtype=np.float32),
       "int": np.array([[7, 2], [5, 9]], dtype=np.int64),
       "bool": np.array([[True, False], [False, True]])}
RHS = {"float": np.array([[0.5, -2.0], [-1.0, 2.5]], dtype=np.float32),
       "int": np.array([[2, 4], [5, 1]], dtype=np.int64),
       "bool": np.array([[False, False], [True, True]])}


def make(state: State, name: str, values: np.ndarray) -> Tensor:
    """A tensor in ``state`` on the test device ``name`` holding ``values``."""
    dev = device(name)
    s = state.strategy
    if state.cls is AF:
        t = Tensor.from_data(values, ad(dev, s))
        return t.require_grad() if state.role is Role.TRACKED else t
    if state.cls is PI_STAR:
        return Tensor.from_data(values, ad(dev, s))
    t = Tensor.from_data(values, dev)
    return t.with_gradient_checkpointing_strategy(s) if state.cls is PF_STAR else t


def reported(state: State, name: str) -> str:
    """The text of t.device() (section 2: Af and Pi* report an autodiff device)."""
    if state.cls in (AF, PI_STAR):
        return ad_text(DEVICE_TEXT[name], state.strategy)
    return DEVICE_TEXT[name]


def kind_debug(state: State, name: str) -> str:
    """Debug of the dispatch kind, as the backend-mismatch panic prints it."""
    return f"Autodiff({DEVICE_TEXT[name]})" if state.cls is AF else DEVICE_TEXT[name]


def route(state: State) -> Route:
    if state.cls is AF:
        return Route.AUTODIFF
    return Route.FLOAT if state.kind == "float" else Route.INT


def result_state(kind: str, first: State, strategy, operands: tuple[State, ...],  # noqa: ANN001
                 differentiable: bool = True) -> tuple:
    """(class, strategy, role) of an op result routed on ``first`` (sections 2, 5.3, 5.4)."""
    if kind == "float":
        if first.cls is AF:
            tracked = differentiable and any(o.cls is AF and o.role is not Role.UNTRACKED for o in operands)
            return AF, strategy, Role.NON_LEAF if tracked else Role.UNTRACKED
        return (PF_STAR if strategy is not None else PF), strategy, None
    return (PI_STAR if strategy is not None else PI), strategy, None


def expect_failure(call, outcome: Fail, message: str, *operands: Tensor) -> None:  # noqa: ANN001
    before = [snapshot(t) for t in operands]
    with pytest.raises(rs.DispatchError) as info:
        call()
    error = info.value
    assert type(error) is ERROR_CLASS[outcome.code]
    assert error.code == outcome.code
    assert str(error) == message
    assert [snapshot(t) for t in operands] == before  # nothing changed


# --- two-input ops: device check, strategy, backend ------------------------------------------

FLOAT_STATES = (State(PF), State(PF_STAR, strategy=DISABLED), State(PF_STAR, strategy=BALANCED),
                State(AF, strategy=DISABLED, role=Role.TRACKED), State(AF, strategy=BALANCED, role=Role.UNTRACKED))
INT_STATES = (State(PI, kind="int"), State(PI_STAR, kind="int", strategy=DISABLED),
              State(PI_STAR, kind="int", strategy=BALANCED))
BOOL_STATES = (State(PI, kind="bool"), State(PI_STAR, kind="bool", strategy=DISABLED),
               State(PI_STAR, kind="bool", strategy=BALANCED))
# same device; same backend, other index; other backend; the same GPU under another backend
PAIRS = (("flex", "flex"), ("cuda0", "cuda1"), ("flex", "ndarray"), ("cuda0", "libtorch_cuda0"))


@dataclass(frozen=True)
class BinaryCase:
    op: str
    lhs: State
    rhs: State
    pair: tuple[str, str]

    def __str__(self) -> str:
        return f"{self.op}:{self.lhs}@{self.pair[0]},{self.rhs}@{self.pair[1]}"


def _binary_cases() -> list[BinaryCase]:
    cases = []
    for pair in PAIRS:
        for op in ("add", "greater", "matmul"):
            for states in (FLOAT_STATES, INT_STATES):
                cases += [BinaryCase(op, lhs, rhs, pair) for lhs in states for rhs in states]
        cases += [BinaryCase("mask_fill", lhs, rhs, pair) for lhs in FLOAT_STATES + INT_STATES for rhs in BOOL_STATES]
    return cases


BINARY_CASES = _binary_cases()


@pytest.mark.parametrize("case", BINARY_CASES, ids=str)
def test_binary_op(case: BinaryCase) -> None:
    lname, rname = case.pair
    lhs = make(case.lhs, lname, LHS[case.lhs.kind])
    rhs = make(case.rhs, rname, RHS[case.rhs.kind])
    def call() -> Tensor:
        return lhs.mask_fill(rhs, 9) if case.op == "mask_fill" else getattr(lhs, case.op)(rhs)

    # 5.1: only the checked ops compare devices (hardware identity), and first.
    if case.op in BURN_OP_NAME:
        _row, outcome = cell("device_check", same_device=lname == rname)
        if isinstance(outcome, Fail):
            message = device_mismatch(BURN_OP_NAME[case.op], reported(case.lhs, lname), reported(case.rhs, rname))
            expect_failure(call, outcome, message, lhs, rhs)
            return
    # 5.2: strategy validation, before the backend match.
    ls, rs_ = case.lhs.strategy, case.rhs.strategy
    _row, outcome = cell("strategy", lhs=ls, rhs=rs_)
    if isinstance(outcome, Fail):
        expect_failure(call, outcome, strategy_mismatch(STRATEGY_TEXT[ls], STRATEGY_TEXT[rs_]), lhs, rhs)
        return
    # 5.3: backend match.
    same_backend = BACKEND_NAME[lname] == BACKEND_NAME[rname]
    _row, outcome = cell("backend", lhs=route(case.lhs), rhs=route(case.rhs), same_backend=same_backend)
    if isinstance(outcome, Fail):
        if outcome.message == MSG["backend_short"]:
            message = MSG["backend_short"]
        else:
            message = backend_mismatch(kind_debug(case.lhs, lname), kind_debug(case.rhs, rname))
        expect_failure(call, outcome, message, lhs, rhs)
        return

    result = call()
    strategy = strategy_result(ls, rs_)
    kind = "bool" if case.op == "greater" else case.lhs.kind
    cls, strategy, role = result_state(kind, case.lhs, strategy, (case.lhs, case.rhs))
    assert reveal_device(result) == expected_reveal(cls, kind, DEVICE_TEXT[lname], strategy, role)
    a, b = LHS[case.lhs.kind], RHS[case.rhs.kind]
    if case.op == "mask_fill":
        assert_bits(result, np.where(b, np.array(9, dtype=a.dtype), a))
    elif case.op == "matmul":
        got = result.to_numpy()
        assert got.dtype == a.dtype
        np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-6)
    else:
        assert_bits(result, NUMPY_OP[case.op](a, b))


@pytest.mark.parametrize("op", sorted(BURN_OP_NAME))
@pytest.mark.parametrize("pair", PAIRS + (("cpu", "libtorch"), ("cuda1", "cuda1")), ids="->".join)
@pytest.mark.parametrize("states", [(State(PF), State(PF)),
                                    (State(AF, strategy=BALANCED, role=Role.UNTRACKED),) * 2,
                                    (State(PI, kind="int"), State(PI_STAR, kind="int", strategy=DISABLED))],
                         ids=lambda s: f"{s[0]},{s[1]}")
def test_checked_ops_compare_devices(op: str, pair: tuple[str, str], states: tuple[State, State]) -> None:
    """5.1 for all the checked ops of the API: unequal devices (index or backend) fail first."""
    (lname, rname), (ls, rs_) = pair, states
    data = {"float": (LHS["float"], RHS["float"]), "int": (LHS["int"], RHS["int"])}[ls.kind]
    lhs, rhs = make(ls, lname, data[0]), make(rs_, rname, data[1])
    call = lambda: getattr(lhs, op)(rhs)  # noqa: E731
    if lname != rname:
        outcome = cell("device_check", same_device=False)[1]
        expect_failure(call, outcome, device_mismatch(BURN_OP_NAME[op], reported(ls, lname), reported(rs_, rname)),
                       lhs, rhs)
        return
    result = call()
    expected = np.floor_divide(*data) if op == "div" and ls.kind == "int" else NUMPY_OP[op](*data)
    if op == "matmul" and ls.kind == "float":
        np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-6)
    else:
        assert_bits(result, expected)
    kind = {"f": "float", "b": "bool"}.get(expected.dtype.kind, "int")
    cls, strategy, role = result_state(kind, ls, strategy_result(ls.strategy, rs_.strategy), (ls, rs_))
    assert reveal_device(result) == expected_reveal(cls, kind, DEVICE_TEXT[lname], strategy, role)


def test_operator_forms_are_checked_like_the_methods() -> None:
    a = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], device("cuda0"))
    b = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], device("cuda1"))
    for form, name in ((lambda: a + b, "Add"), (lambda: a - b, "Sub"), (lambda: a * b, "Mul"),
                       (lambda: a / b, "Div"), (lambda: a @ b, "Matmul")):
        with pytest.raises(rs.DeviceMismatch) as info:
            form()
        assert str(info.value) == device_mismatch(name, "Cuda(0)", "Cuda(1)")
        assert info.value.code == "MV105"


def test_device_mismatch_message_spelled_out() -> None:
    a = Tensor.from_floats([1.0], device("flex").autodiff())
    b = Tensor.from_floats([1.0], device("ndarray").autodiff().gradient_checkpointing())
    with pytest.raises(rs.DeviceMismatch) as info:
        a.greater_equal(b)
    assert str(info.value) == (
        "=== Tensor Operation Error ===\n  Operation: 'Greater_equal'\n  Reason:\n"
        "    1. The provided tensors are not on the same device. "
        "Lhs tensor device Device<Autodiff { device: Flex(Cpu), checkpointing: Disabled }>, "
        "Rhs tensor device Device<Autodiff { device: NdArray(Cpu), checkpointing: Balanced }>. \n")


def test_autodiff_and_plain_float_on_the_same_hardware_pass_the_device_check() -> None:
    """Equality ignores autodiff, so Af(Flex) + Pf(Flex) fails later, in the backend match."""
    a = Tensor.from_floats([1.0], device("flex").autodiff())
    p = Tensor.from_floats([1.0], device("flex"))
    with pytest.raises(rs.BackendMismatch) as info:
        a + p
    assert str(info.value) == "The provided tensors are not on the same backend. Got backends Autodiff(Flex) and Flex."
    with pytest.raises(rs.BackendMismatch) as info:
        p * a
    assert str(info.value) == "The provided tensors are not on the same backend. Got backends Flex and Autodiff(Flex)."


def test_unchecked_op_skips_the_device_check() -> None:
    """mask_fill between cuda(0) and cuda(1): no device check, same backend: ok."""
    x = Tensor.from_floats([1.0, 2.0], device("cuda0"))
    m = Tensor.from_bools([True, False], device("cuda1"))
    y = x.mask_fill(m, -1.0)
    assert reveal_device(y) == "Cuda(0) float"
    assert y.to_list() == [-1.0, 2.0]
    other = Tensor.from_bools([True, False], device("ndarray"))
    with pytest.raises(rs.BackendMismatch) as info:
        x.mask_fill(other, -1.0)
    assert str(info.value) == "The provided tensors are not on the same backend. Got backends Cuda(0) and NdArray."
    ax = Tensor.from_floats([1.0, 2.0], device("cuda0").autodiff())
    with pytest.raises(rs.BackendMismatch) as info:
        ax.mask_fill(other, -1.0)
    assert str(info.value) == "The provided tensors are not on the same backend."


def test_strategy_mismatch_panic_and_order() -> None:
    a = Tensor.from_floats([1.0], device("flex")).with_gradient_checkpointing_strategy(BALANCED)
    b = Tensor.from_floats([1.0], device("flex")).with_gradient_checkpointing_strategy(DISABLED)
    with pytest.raises(rs.CheckpointingMismatch) as info:
        a + b
    assert info.value.code == "MV107"
    assert str(info.value) == ("Gradient checkpointing strategy mismatch: Balanced vs Disabled. "
                               "Tensors in the same operation must share a strategy.")
    assert info.value.panic.startswith("assertion `left == right` failed: Gradient checkpointing strategy mismatch")
    # device check first
    c = Tensor.from_floats([1.0], device("cuda1")).with_gradient_checkpointing_strategy(DISABLED)
    with pytest.raises(rs.DeviceMismatch):
        a + c
    # strategy before backend: Pf*(Balanced) + Af(Disabled) on the same hardware
    af = Tensor.from_floats([1.0], device("flex").autodiff())
    with pytest.raises(rs.CheckpointingMismatch):
        a + af
    with pytest.raises(rs.BackendMismatch):
        b + af
    # an unchecked op across backends: the strategy is validated before the backend match
    mask = Tensor.from_bools([True], device("ndarray").autodiff())
    with pytest.raises(rs.CheckpointingMismatch):
        a.mask_fill(mask, 0.0)
    # int/bool Pi*(t) mixed with Af(s) (section 7, rule 5)
    ab = Tensor.from_floats([1.0], device("flex").autodiff().gradient_checkpointing())
    with pytest.raises(rs.CheckpointingMismatch):
        ab.mask_fill(Tensor.from_bools([True], device("flex").autodiff()), 0.0)


def test_promotion_gives_a_plain_float_carrying_the_strategy() -> None:
    x = Tensor.from_floats([1.0, 2.0], device("cpu")).with_gradient_checkpointing_strategy(BALANCED)
    p = Tensor.from_floats([3.0, 4.0], device("cpu"))
    for result in (x + p, p + x, x * p):
        assert reveal_device(result) == "Cpu float checkpointing: Balanced"
    assert (x + p).to_list() == [4.0, 6.0]
    assert reveal_device(x.greater(p)) == "Autodiff { device: Cpu, checkpointing: Balanced } bool"


def test_int_and_float_operands_do_not_mix_in_two_input_ops() -> None:
    """(int, float) route pairs are unreachable: the API rejects them before dispatch."""
    f = Tensor.from_floats([1.0], device("flex"))
    i = Tensor.from_ints([1], device("flex"))
    for call in (lambda: i + f, lambda: f + i, lambda: i.greater(f), lambda: f.mask_fill(i, 0.0)):
        with pytest.raises(TypeError):
            call()


def test_backend_table_keys_are_all_exercised_or_unreachable() -> None:
    """Every backend-table key is reached by test_binary_op, or is one the API cannot reach."""
    reached = set()
    for case in BINARY_CASES:
        l_, r_ = case.pair
        if case.op in BURN_OP_NAME and l_ != r_:
            continue  # decided by the device check
        if isinstance(cell("strategy", lhs=case.lhs.strategy, rhs=case.rhs.strategy)[1], Fail):
            continue
        reached.add((route(case.lhs), route(case.rhs), BACKEND_NAME[l_] == BACKEND_NAME[r_]))
    all_keys = {(k["lhs"], k["rhs"], k["same_backend"]) for k in keys_of("backend")}
    A, F, INT = Route.AUTODIFF, Route.FLOAT, Route.INT
    # No API op takes an int lhs with a float rhs; the checked ops (the only float-float ops of the API)
    # compare devices first, so two floats on different backends never reach the backend match.
    unreachable = {(INT, F, True), (INT, F, False), (INT, A, True), (INT, A, False),
                   (F, F, False), (A, A, False), (A, F, False), (F, A, False)}
    assert reached == all_keys - unreachable


# --- multi-input ops: mask_where and cat -------------------------------------------------------

FIRST_STATE = {Route.AUTODIFF: State(AF, strategy=BALANCED, role=Role.TRACKED),
               Route.FLOAT: State(PF_STAR, strategy=DISABLED),
               Route.INT: State(PI, kind="int")}
OTHER_STATE = {Route.AUTODIFF: State(AF, strategy=DISABLED, role=Role.UNTRACKED),  # no mismatch check
               Route.FLOAT: State(PF),
               Route.INT: State(PI, kind="int")}
MULTI_PAIRS = {True: (("flex", "flex"), ("cuda0", "cuda1")), False: (("flex", "ndarray"), ("cpu", "libtorch"))}


@dataclass(frozen=True)
class MultiCase:
    family: str
    first: Route
    other: Route
    same: bool
    pair: tuple[str, str]
    varied: str  # mask_where: which input is on the varied device: "mask" or "value"

    def __str__(self) -> str:
        where = "same" if self.same else "other"
        target = f"{self.varied}:" if self.family == "input" else ""
        return (f"{'mask_where' if self.family == 'input' else 'cat'}:{self.first.name}+{target}{self.other.name}"
                f"-{where}-backend@{'->'.join(self.pair)}")


def _multi_cases() -> list[MultiCase]:
    cases = []
    for key in keys_of("multi"):
        for pair in MULTI_PAIRS[key["same_backend"]]:
            if key["family"] == "cat":
                cases.append(MultiCase("cat", key["first"], key["other"], key["same_backend"], pair, ""))
            elif key["other"] is Route.INT:
                cases.append(MultiCase("input", key["first"], key["other"], key["same_backend"], pair, "mask"))
                if key["first"] is Route.INT:
                    cases.append(MultiCase("input", key["first"], key["other"], key["same_backend"], pair, "value"))
            else:
                cases.append(MultiCase("input", key["first"], key["other"], key["same_backend"], pair, "value"))
    return cases


MULTI_CASES = _multi_cases()
MASK = np.array([[True, False], [False, True]])


@pytest.mark.parametrize("case", MULTI_CASES, ids=str)
def test_multi_input_op(case: MultiCase) -> None:
    fname, oname = case.pair
    first_state = FIRST_STATE[case.first]
    first = make(first_state, fname, LHS[first_state.kind])
    if case.family == "cat":
        other_state = OTHER_STATE[case.other]
        other = make(other_state, oname, RHS[other_state.kind])
        call = lambda: Tensor.cat([first, other], 0)  # noqa: E731
        operands, name = (first, other), "tensors[1]"
        kinds_ok = first_state.kind == other_state.kind
    else:
        if case.varied == "mask":
            mask = Tensor.from_data(MASK, device(oname))
            value_state = OTHER_STATE[Route.AUTODIFF] if case.first is Route.AUTODIFF else OTHER_STATE[case.first]
            value = make(value_state, fname, RHS[value_state.kind])
        else:
            mask = Tensor.from_data(MASK, device(fname))
            value_state = OTHER_STATE[case.other]
            value = make(value_state, oname, RHS[value_state.kind])
        call = lambda: first.mask_where(mask, value)  # noqa: E731
        operands, name = (first, mask, value), case.varied
        kinds_ok = (value_state.kind == "float") == (first_state.kind == "float")
    if not kinds_ok:
        # Burn's types keep int and float apart in one op: the API rejects the mix up front.
        with pytest.raises(TypeError):
            call()
        return
    _row, outcome = cell("multi", family=case.family, first=case.first, other=case.other, same_backend=case.same)
    if isinstance(outcome, Fail):
        # burn-dispatch src/macros.rs `unwrap_vec!`: `stringify!($Backend)`, the variant name (`Cuda`, not `Cuda(0)`)
        backend = BACKEND_NAME[fname]
        message = {
            "Input tensor {name} is on the wrong device": f"Input tensor {name} is on the wrong device",
            "internal error: entered unreachable code": "internal error: entered unreachable code",
            "Expected autodiff-wrapped float tensor for backend {backend}.":
                f"Expected autodiff-wrapped float tensor for backend {backend}.",
            "Autodiff float tensor is on the wrong backend (expected {backend}).":
                f"Autodiff float tensor is on the wrong backend (expected {backend}).",
            "Tensor is on the wrong backend (expected {backend}).":
                f"Tensor is on the wrong backend (expected {backend}).",
        }[outcome.message]
        expect_failure(call, outcome, message, *operands)
        return
    result = call()
    # routed on the first input, which gives the strategy (no mismatch check)
    states = (first_state, OTHER_STATE[case.other])
    cls, strategy, role = result_state(first_state.kind, first_state, first_state.strategy, states)
    assert reveal_device(result) == expected_reveal(cls, first_state.kind, DEVICE_TEXT[fname], strategy, role)
    a = LHS[first_state.kind]
    if case.family == "cat":
        assert_bits(result, np.concatenate([a, RHS[first_state.kind]], axis=0))
    else:
        assert_bits(result, np.where(MASK, RHS[first_state.kind], a))


def test_multi_messages_spelled_out() -> None:
    af = Tensor.from_floats([1.0], device("flex").autodiff())
    with pytest.raises(rs.BackendMismatch, match=r"^Expected autodiff-wrapped float tensor for backend Flex\.$"):
        Tensor.cat([af, Tensor.from_floats([2.0], device("flex"))], 0)
    with pytest.raises(rs.BackendMismatch,
                       match=r"^Autodiff float tensor is on the wrong backend \(expected Flex\)\.$"):
        Tensor.cat([af, Tensor.from_floats([2.0], device("cpu").autodiff())], 0)
    with pytest.raises(rs.BackendMismatch, match=r"^Tensor is on the wrong backend \(expected NdArray\)\.$"):
        Tensor.cat([Tensor.from_floats([2.0], device("ndarray")), af], 0)
    mask = Tensor.from_bools([True], device("flex"))
    with pytest.raises(rs.BackendMismatch, match=r"^internal error: entered unreachable code$"):
        af.mask_where(mask, Tensor.from_floats([2.0], device("flex")))
    with pytest.raises(rs.BackendMismatch, match=r"^Input tensor value is on the wrong device$"):
        Tensor.from_floats([2.0], device("flex")).mask_where(mask, af)
    with pytest.raises(rs.BackendMismatch, match=r"^Input tensor mask is on the wrong device$"):
        af.mask_where(Tensor.from_bools([True], device("ndarray")), af)


def test_cat_takes_the_first_strategy_without_validation() -> None:
    a = Tensor.from_floats([1.0], device("flex")).with_gradient_checkpointing_strategy(BALANCED)
    b = Tensor.from_floats([2.0], device("flex")).with_gradient_checkpointing_strategy(DISABLED)
    assert reveal_device(Tensor.cat([a, b], 0)) == "Flex float checkpointing: Balanced"
    assert reveal_device(Tensor.cat([b, a], 0)) == "Flex float checkpointing: Disabled"
    assert Tensor.cat([b, a, b], 0).to_list() == [2.0, 1.0, 2.0]


@pytest.mark.parametrize("strategy", [DISABLED, BALANCED], ids=str)
def test_mask_ops_backpropagate_under_both_strategies(strategy) -> None:  # noqa: ANN001
    dev = ad(device("flex"), strategy)
    x = Tensor.from_floats([1.0, 2.0, 3.0], dev).require_grad()
    v = Tensor.from_floats([5.0, 6.0, 7.0], dev).require_grad()
    m = Tensor.from_bools([True, False, False], dev)
    loss = x.mask_fill(m, 0.0).exp().sum() + x.mask_where(m, v).exp().sum() + Tensor.cat([x, v], 0).exp().sum()
    grads = loss.backward()
    ex, ev = np.exp(np.float32([1.0, 2.0, 3.0])), np.exp(np.float32([5.0, 6.0, 7.0]))
    np.testing.assert_allclose(x.grad(grads).to_numpy(), [ex[0], 3 * ex[1], 3 * ex[2]], rtol=1e-6)
    np.testing.assert_allclose(v.grad(grads).to_numpy(), [2 * ev[0], ev[1], ev[2]], rtol=1e-6)


# --- unary ops and casts -----------------------------------------------------------------------

UNARY_STATES = (
    State(PF), State(PF_STAR, strategy=BALANCED),
    State(AF, strategy=DISABLED, role=Role.UNTRACKED), State(AF, strategy=BALANCED, role=Role.TRACKED),
    State(PI, kind="int"), State(PI, kind="bool"),
    State(PI_STAR, kind="int", strategy=BALANCED), State(PI_STAR, kind="bool", strategy=DISABLED),
)
UNARY_CALLS = {  # (name, cast, kinds it applies to, the call, numpy reference)
    "exp": ("unary", ("float",), lambda t: t.exp(), np.exp),
    "neg": ("unary", ("float", "int"), lambda t: -t, np.negative),
    "sum_dim": ("unary", ("float", "int"), lambda t: t.sum_dim(1), lambda a: a.sum(axis=1, keepdims=True)),
    "bool_not": ("unary", ("bool",), lambda t: t.bool_not(), np.logical_not),
    "int": ("to_int", ("float", "int", "bool"), lambda t: t.int(), lambda a: a.astype(np.int64)),
    "argmax": ("to_int", ("float",), lambda t: t.argmax(1), lambda a: a.argmax(axis=1, keepdims=True)),
    "float": ("to_float", ("float", "int", "bool"), lambda t: t.float(), lambda a: a.astype(np.float32)),
}


def _defined(states: tuple[State, ...], calls: list[str]) -> list:
    """(state, call) pairs where the call is defined on the state's kind."""
    return [pytest.param(s, c, id=f"{s}-{c}") for s in states for c in calls if s.kind in UNARY_CALLS[c][1]]


@pytest.mark.parametrize(("state", "call"), _defined(UNARY_STATES, sorted(UNARY_CALLS)))
def test_unary_and_cast(state: State, call: str) -> None:
    cast, _kinds, fn, reference = UNARY_CALLS[call]
    name = first_available("cuda1", "cpu")
    t = make(state, name, VALUES[state.kind])
    _row, outcome = cell("unary", op=cast, cls=state.cls)
    result = fn(t)
    expected_values = reference(VALUES[state.kind])
    kind = {"f": "float", "b": "bool"}.get(expected_values.dtype.kind, "int")
    cls = outcome.result or state.cls
    if cls is AF:
        if outcome.role is not None:
            role = outcome.role
        elif cast == "to_float":  # float() of a float: the tensor itself
            role = state.role
        else:
            role = Role.NON_LEAF if state.role is Role.TRACKED else Role.UNTRACKED
    else:
        role = None
    assert reveal_device(result) == expected_reveal(cls, kind, DEVICE_TEXT[name], state.strategy, role)
    if call == "exp":
        np.testing.assert_allclose(result.to_numpy(), expected_values, rtol=1e-6)
        assert result.to_numpy().dtype == np.float32
    else:
        assert_bits(result, expected_values)


def test_unary_doc_examples() -> None:
    """5.4: one_hot(n).float() on an autodiff device is autodiff; Pi becomes Pf; Af(s).int() is Pi*(s)."""
    labels = Tensor.from_ints([0, 2], device("flex").autodiff().gradient_checkpointing())
    one_hot = labels.one_hot(3).float()
    assert reveal_device(one_hot) == "Autodiff { device: Flex, checkpointing: Balanced } float untracked"
    assert one_hot.to_list() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert reveal_device(Tensor.from_ints([1], device("flex")).float()) == "Flex float"
    x = Tensor.from_floats([1.5], device("flex").autodiff().gradient_checkpointing()).require_grad()
    assert reveal_device(x.int()) == "Autodiff { device: Flex, checkpointing: Balanced } int"
    assert reveal_device(x.exp()) == "Autodiff { device: Flex, checkpointing: Balanced } float non-leaf"
    assert reveal_device(x.greater(1.0)) == "Autodiff { device: Flex, checkpointing: Balanced } bool"


CAPTURE_UNARY_STATES = (State(CI), State(CC), State(CI_INT, kind="int"), State(CC_INT, kind="int"),
                        State(CI_INT, kind="bool"), State(CC_INT, kind="bool"))


@pytest.mark.parametrize(("state", "call"),
                         _defined(CAPTURE_UNARY_STATES, ["neg", "exp", "bool_not", "int", "float", "argmax"]))
def test_unary_and_cast_on_capture_tensors(state: State, call: str) -> None:
    cast, _kinds, fn, reference = UNARY_CALLS[call]
    cap = Device.capture()

    def body(scope: rs.Scope) -> None:
        t = Tensor.from_data(VALUES[state.kind], cap)
        if state.cls in (CC, CC_INT):
            t = -t if state.kind != "bool" else t.bool_not()
        _row, outcome = cell("unary", op=cast, cls=state.cls)
        ops_before = len(scope.graph.operations)
        result = fn(t)
        expected = reference(VALUES[state.kind])
        kind = {"f": "float", "b": "bool"}.get(expected.dtype.kind, "int")
        if outcome.result is not None:
            assert outcome.result is (CC if kind == "float" else CC_INT)
        if cast == "to_float" and state.kind == "float":
            assert result is t  # float() of a float is the tensor itself
            return
        assert reveal_device(result) == f"{capture_text(cap)} {kind} computed"
        assert result.shape == expected.shape
        assert len(scope.graph.operations) == ops_before + 1
        with pytest.raises(rs.CaptureMove):
            result.to_numpy()  # a computed capture value has no data

    assert isinstance(cap.capture_scope(body), rs.Graph)


def test_capture_tensors_keep_their_strategy_through_ops() -> None:
    """Section 2: Ci / Cc keep their strategy, so the strategy validation applies inside a scope."""
    cap = Device.capture()

    def body(scope: rs.Scope) -> None:
        balanced = Tensor.from_floats([1.0, 2.0], cap).with_gradient_checkpointing_strategy(BALANCED)
        disabled = Tensor.from_floats([3.0, 4.0], cap).with_gradient_checkpointing_strategy(DISABLED)
        computed = (balanced * 2.0).exp()
        assert reveal_device(computed) == f"{capture_text(cap)} float computed"
        with pytest.raises(rs.CheckpointingMismatch) as info:
            computed + disabled
        assert str(info.value) == strategy_mismatch("Balanced", "Disabled")
        plain = Tensor.from_floats([5.0, 6.0], cap)
        promoted = plain + computed  # promotion: the result carries Balanced
        with pytest.raises(rs.CheckpointingMismatch):
            disabled.mask_fill(promoted.greater(0.0), 1.0)

    assert isinstance(cap.capture_scope(body), rs.Graph)


def test_cat_names_the_backend_not_the_device() -> None:
    """burn-dispatch src/macros.rs `unwrap_vec!` (d16f7ba2ed and 2c06be35): `stringify!($Backend)`."""
    with rs.virtual_devices():
        first = Tensor.ones([2], Device.cuda(1))
        with pytest.raises(rs.BackendMismatch) as info:
            Tensor.cat([first, Tensor.ones([2], Device.flex())], 0)
        assert str(info.value) == "Tensor is on the wrong backend (expected Cuda)."
        tracked = Tensor.ones([2], Device.cuda(1).autodiff()).require_grad()
        with pytest.raises(rs.BackendMismatch) as info:
            Tensor.cat([tracked, Tensor.ones([2], Device.flex().autodiff())], 0)
        assert str(info.value) == "Autodiff float tensor is on the wrong backend (expected Cuda)."
