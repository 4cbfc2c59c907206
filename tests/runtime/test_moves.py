"""to_device, cell by cell: real tensors in every state moved for real, under both profiles.

Each case builds a tensor in a dispatch state (Pf, Pf*, Af with each role, Pi,
Pi*, Ci, Cc; every strategy; float, int and bool), moves it to a target in a
known relation (same backend, other backend, capture; plain or autodiff with
each strategy; with and without an active scope), and checks the outcome that
the move table gives for the case's key: the exception (class, code, message)
with the source untouched, or the result's reveal_device text and its bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from _states import (
    BALANCED,
    DEVICE_TEXT,
    DISABLED,
    ERROR_CLASS,
    MSG,
    PROFILES,
    STRATEGIES,
    STRATEGY_TEXT,
    State,
    ad,
    assert_bits,
    build,
    build_capture,
    capture_no_value,
    capture_text,
    device,
    expected_reveal,
    in_scope,
    snapshot,
)

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
    Ok,
    Place,
    Role,
    Transfer,
    move_outcome,
)

# The messages a failed move may carry, by code (dispatch-semantics.md section 3).
MOVE_MESSAGES = {
    "MV101": MSG["ad_cross_backend"],
    "MV102": MSG["ad_mismatch"],
    "MV104": MSG["capture_no_scope"],
    "MV109": MSG["double_wrap_device"],
}

NON_CAPTURE_STATES = (
    State(PF),
    *(State(PF_STAR, strategy=s, via=v) for s in STRATEGIES for v in ("strategy", "grad")),
    *(State(AF, strategy=s, role=r) for s in STRATEGIES for r in Role),
    State(PI, kind="int"),
    State(PI, kind="bool"),
    *(State(PI_STAR, kind=k, strategy=s, via="create") for s in STRATEGIES for k in ("int", "bool")),
    *(State(PI_STAR, kind="int", strategy=s, via="strategy") for s in STRATEGIES),
    State(PI_STAR, kind="bool", strategy=BALANCED, via="compare"),
)
CAPTURE_STATES = (
    State(CI),
    State(CI, strategy=BALANCED, via="strategy"),
    State(CI_INT, kind="int"),
    State(CI_INT, kind="bool"),
    State(CC),
    State(CC, strategy=DISABLED, via="strategy"),
    State(CC_INT, kind="int"),
    State(CC_INT, kind="bool"),
)

# (source, destination) device pairs: same backend (another index, another LibTorch device, the
# same device) and another backend (numpy <-> torch executors, the same GPU under two backends).
SAME_PAIRS = (("cuda0", "cuda1"), ("libtorch", "libtorch_cuda0"), ("flex", "flex"), ("rocm", "rocm"))
OTHER_PAIRS = (("flex", "ndarray"), ("flex", "cpu"), ("cpu", "libtorch"), ("ndarray", "cuda1"),
               ("cuda0", "libtorch_cuda0"), ("libtorch_cuda0", "ndarray"), ("wgpu", "flex"))


@dataclass(frozen=True)
class Case:
    state: State
    src: str  # a DEVICES name, or "cap" for a capture source
    dst: str  # a DEVICES name, "cap" (the source's own capture device) or "cap2" (another one)
    target_strategy: object  # None: a plain target; else the target is AD(dst, strategy)
    scope: bool  # an active capture scope on the target's capture device
    place: Place

    @property
    def ad(self) -> bool:
        return self.target_strategy is not None

    def __str__(self) -> str:
        target = self.dst if not self.ad else f"AD({self.dst},{STRATEGY_TEXT[self.target_strategy]})"
        scope = "" if self.place in (Place.SAME_BACKEND, Place.OTHER_BACKEND) else (
            "+scope" if self.scope else "-scope")
        return f"{self.state}@{self.src}->{target}{scope}"


def _targets() -> tuple:
    return (None, DISABLED, BALANCED)


def _non_capture_cases() -> list[Case]:
    cases = []
    for state in NON_CAPTURE_STATES:
        for pairs, place in ((SAME_PAIRS, Place.SAME_BACKEND), (OTHER_PAIRS, Place.OTHER_BACKEND)):
            for src, dst in pairs:
                for t in _targets():
                    cases.append(Case(state, src, dst, t, False, place))
        for t in _targets():
            for scope in (True, False):
                cases.append(Case(state, "flex", "cap2", t, scope, Place.OTHER_CAPTURE))
    return cases


def _capture_cases() -> list[Case]:
    cases = []
    for state in CAPTURE_STATES:
        for t in _targets():
            for scope in (True, False):
                cases.append(Case(state, "cap", "cap", t, scope, Place.SAME_CAPTURE))
                cases.append(Case(state, "cap", "cap2", t, scope, Place.OTHER_CAPTURE))
            for dst in ("flex", "cpu", "cuda1"):
                cases.append(Case(state, "cap", dst, t, False, Place.OTHER_BACKEND))
    return cases


NON_CAPTURE_CASES = _non_capture_cases()
CAPTURE_CASES = _capture_cases()


def _check_failure(tensor: Tensor, target: Device, outcome: Fail, value_id: int | None) -> None:
    before = snapshot(tensor)
    with pytest.raises(rs.DispatchError) as info:
        tensor.to_device(target)
    error = info.value
    assert type(error) is ERROR_CLASS[outcome.code]
    assert isinstance(error, RuntimeError)
    assert error.code == outcome.code
    assert str(error) == outcome.render(id=value_id)
    if outcome.code == "MV103":
        assert str(error) in (MSG["capture_move"], capture_no_value(value_id))
    else:
        assert str(error) == MOVE_MESSAGES[outcome.code]
    # Failures raise before any state changes: the source is intact and still usable.
    assert snapshot(tensor) == before


def _check_success(tensor: Tensor, target: Device, outcome: Ok, case: Case, result_device_text: str,
                   source_text: str) -> Tensor:
    before = snapshot(tensor)
    result = tensor.to_device(target)
    assert isinstance(result, Tensor)
    if outcome.transfer is Transfer.NONE:
        assert result is tensor  # row 12: a no-op
    cls = outcome.result or case.state.cls
    strategy = case.target_strategy if outcome.strategy == "target" else case.state.strategy
    role = None
    if cls is AF:  # row 4: a recorded move: computed from the source unless the source is untracked
        role = Role.UNTRACKED if case.state.role is Role.UNTRACKED else Role.NON_LEAF
    assert reveal_device(result) == expected_reveal(cls, case.state.kind, result_device_text, strategy, role)
    assert result.kind == case.state.kind
    assert result.shape == tensor.shape
    if cls not in (CC, CC_INT):
        _text, dtype, shape, data = before
        assert_bits(result, np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape))
    assert snapshot(tensor) == before
    assert reveal_device(tensor) == source_text
    return result


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("case", NON_CAPTURE_CASES, ids=str)
def test_move_non_capture_tensor(profile: str, case: Case) -> None:
    rs.set_profile(profile)
    src = device(case.src)
    tensor = build(case.state, src)
    source_text = case.state.reveal(DEVICE_TEXT[case.src])
    assert reveal_device(tensor) == source_text  # the builder reached the intended state
    _row_id, outcome = move_outcome(profile, case.state.cls, case.ad, case.place, case.scope)

    if case.place is Place.OTHER_CAPTURE:
        plain = Device.capture()
        result_text = capture_text(plain)
    else:
        plain = device(case.dst)
        result_text = DEVICE_TEXT[case.dst]
    target = ad(plain, case.target_strategy) if case.ad else plain

    def run() -> Tensor | None:
        if isinstance(outcome, Fail):
            _check_failure(tensor, target, outcome, None)
            return None
        return _check_success(tensor, target, outcome, case, result_text, source_text)

    result = in_scope(plain, run) if case.scope else run()

    if result is not None and case.state.cls is AF and case.state.role is Role.TRACKED:
        # Row 4: gradients flow back to the source device, as a Pf* carrying the source's strategy.
        grads = (result * 3.0).sum().backward()
        grad = tensor.grad(grads)
        assert reveal_device(grad) == expected_reveal(PF_STAR, "float", DEVICE_TEXT[case.src], case.state.strategy)
        assert_bits(grad, np.full(tensor.shape, 3.0, dtype=np.float32))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("case", CAPTURE_CASES, ids=str)
def test_move_capture_tensor(profile: str, case: Case) -> None:
    rs.set_profile(profile)
    cap = Device.capture()
    _row_id, outcome = move_outcome(profile, case.state.cls, case.ad, case.place, case.scope)
    source_text = case.state.reveal(capture_text(cap))  # reveal shows no strategy for capture tensors

    def move(tensor: Tensor, value_id: int) -> None:
        if case.place is Place.OTHER_BACKEND:
            plain, result_text = device(case.dst), DEVICE_TEXT[case.dst]
        elif case.place is Place.SAME_CAPTURE:
            plain, result_text = cap, capture_text(cap)
        else:
            plain = Device.capture()
            result_text = capture_text(plain)
        target = ad(plain, case.target_strategy) if case.ad else plain

        def run() -> None:
            if isinstance(outcome, Fail):
                _check_failure(tensor, target, outcome, value_id)
            else:
                _check_success(tensor, target, outcome, case, result_text, source_text)

        if case.scope and case.place is Place.OTHER_CAPTURE:
            in_scope(plain, run)
        else:
            run()

    built = {}

    def body(scope: rs.Scope) -> None:
        tensor, value_id = build_capture(case.state, cap, scope)
        built.update(tensor=tensor, value_id=value_id)
        assert reveal_device(tensor) == source_text
        # The source's own scope is open here: that is "scope" for a move to its own device.
        if case.place is not Place.SAME_CAPTURE or case.scope:
            move(tensor, value_id)

    graph = cap.capture_scope(body)
    assert isinstance(graph, rs.Graph)
    if case.place is Place.SAME_CAPTURE and not case.scope:
        move(built["tensor"], built["value_id"])  # after its scope completed


# --- a few cells spelled out, independently of the table ------------------------------------


def test_plain_float_to_autodiff_device_stays_plain_and_keeps_its_own_strategy() -> None:
    """Row 3 (HEAD): handled as a move to the inner device; t is not applied. (A plain float carrying a
    strategy exists at HEAD only: at d16f7ba2ed `with_gradient_checkpointing_strategy` needs autodiff.)"""
    with rs.profile("burn-2026-08"):
        x = Tensor.from_floats([1.0, 2.0], device("flex")).with_gradient_checkpointing_strategy(BALANCED)
    y = x.to_device(device("ndarray").autodiff())
    assert reveal_device(y) == "NdArray float checkpointing: Balanced"
    assert not y.is_require_grad()
    z = Tensor.from_floats([1.0, 2.0], device("flex")).to_device(device("flex").autodiff().gradient_checkpointing())
    assert reveal_device(z) == "Flex float"


def test_plain_float_to_autodiff_device_under_burn_021() -> None:
    x = Tensor.from_floats([1.0, 2.0], device("flex"))
    with rs.profile("burn-0.21"), pytest.raises(rs.AutodiffMismatchMove) as info:
        x.to_device(device("flex").autodiff())
    assert info.value.code == "MV102"
    assert str(info.value) == "Cannot move between autodiff and non-autodiff instances."
    assert reveal_device(x) == "Flex float"
    assert reveal_device(x.to_device(device("flex").autodiff())) == "Flex float"  # back on the default


def test_autodiff_move_keeps_the_source_strategy_not_the_target_one() -> None:
    """Row 4: the result keeps s, not t."""
    x = Tensor.from_floats([1.0], device("cuda0").autodiff().gradient_checkpointing())
    y = x.to_device(device("cuda1").autodiff())
    assert reveal_device(y) == "Autodiff { device: Cuda(1), checkpointing: Balanced } float untracked"


def test_int_to_autodiff_device_takes_the_target_strategy() -> None:
    """Row 9: Pi*(s) lands as Pi*(t); row 8: the strategy is kept on a plain target."""
    i = Tensor.from_ints([1, 2], device("flex").autodiff())
    j = i.to_device(device("cpu").autodiff().gradient_checkpointing())
    assert reveal_device(j) == "Autodiff { device: Cpu, checkpointing: Balanced } int"
    k = j.to_device(device("flex"))
    assert reveal_device(k) == "Autodiff { device: Flex, checkpointing: Balanced } int"
    assert k.to_list() == [1, 2]


def test_autodiff_moves_that_fail() -> None:
    x = Tensor.from_floats([1.0], device("flex").autodiff())
    with pytest.raises(rs.AutodiffCrossBackendMove, match=r"^Autodiff tensor cannot be moved between backends\.$"):
        x.to_device(device("ndarray").autodiff())
    with pytest.raises(rs.AutodiffMismatchMove, match=r"^Cannot move between autodiff and non-autodiff"):
        x.to_device(device("flex"))
    assert reveal_device(x) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"


def test_panic_text_carries_rusts_prefix() -> None:
    x = Tensor.from_floats([1.0], device("flex").autodiff())
    with pytest.raises(rs.AutodiffCrossBackendMove) as info:
        x.to_device(device("cpu").autodiff())
    assert info.value.panic == "not implemented: Autodiff tensor cannot be moved between backends."
    i = Tensor.from_ints([1], device("flex"))
    with pytest.raises(rs.DoubleAutodiff) as info:
        i.to_device(Device.capture().autodiff())
    assert str(info.value) == "Autodiff should not wrap an autodiff device."
    assert info.value.panic == "internal error: entered unreachable code: Autodiff should not wrap an autodiff device."


def test_computed_capture_tensor_never_leaves_its_device() -> None:
    cap, other = Device.capture(), Device.capture()

    def body(scope: rs.Scope) -> None:
        x = Tensor.from_floats([1.0, 2.0], cap)
        y = x * 2.0
        value_id = next(reversed(scope.all_values))
        assert scope.all_values[value_id].kind == "computed"
        assert all(v.kind == "initializer" for v in scope.graph.values)

        def inner() -> None:
            with pytest.raises(rs.CaptureMove) as info:
                y.to_device(other)
            assert str(info.value) == f"capture tensor {value_id} has no initialized value"
            copied = x.to_device(other)
            assert reveal_device(copied) == f"Capture({other.index}) float initialized"
            assert copied.to_list() == [1.0, 2.0]

        in_scope(other, inner)
        with pytest.raises(rs.CaptureMove, match=r"^Cannot move a tensor from a capture device$"):
            x.to_device(device("flex"))

    assert isinstance(cap.capture_scope(body), rs.Graph)


def test_capture_moves_keep_the_strategy() -> None:
    """Rows 10 and 13 keep the tensor's strategy: visible through the strategy validation (HEAD, where a
    plain tensor can carry a strategy)."""
    with rs.profile("burn-2026-08"):
        _capture_moves_keep_the_strategy()


def _capture_moves_keep_the_strategy() -> None:
    cap, other = Device.capture(), Device.capture()
    plain = Tensor.from_floats([1.0, 2.0], device("cpu")).with_gradient_checkpointing_strategy(BALANCED)

    def body(scope: rs.Scope) -> None:
        initializer = plain.to_device(cap)
        assert reveal_device(initializer) == f"Capture({cap.index}) float initialized"
        disabled = Tensor.from_floats([1.0, 2.0], cap).with_gradient_checkpointing_strategy(DISABLED)
        with pytest.raises(rs.CheckpointingMismatch):
            initializer + disabled

        def inner() -> None:
            copied = initializer.to_device(other)
            with pytest.raises(rs.CheckpointingMismatch):
                copied * Tensor.from_floats([1.0, 2.0], other).with_gradient_checkpointing_strategy(DISABLED)
            assert reveal_device(copied * 2.0) == f"Capture({other.index}) float computed"

        in_scope(other, inner)

    assert isinstance(cap.capture_scope(body), rs.Graph)


def test_cases_cover_every_move_key() -> None:
    """The concrete cases above reach every key of the move table."""
    keys = {(c.state.cls, c.ad, c.place, c.scope) for c in NON_CAPTURE_CASES + CAPTURE_CASES}
    from runtime_shim.semantics import keys_of

    table_keys = {(k["cls"], k["ad"], k["place"], k["scope"]) for k in keys_of("move")}
    assert keys == table_keys
