"""The autodiff API (section 6) and the device API (section 1), cell by cell.

Every (call x class x role) key of the autodiff table is run on a real tensor
in that state: the failure (class, code, message, source untouched) or the
result's reveal_device text and bits, as the cell says. Then the gradient
rules spelled out in the document.
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
    STRATEGIES,
    STRATEGY_TEXT,
    VALUES,
    State,
    ad,
    assert_bits,
    backend_mismatch,
    build,
    build_capture,
    capture_text,
    device,
    expected_reveal,
    first_available,
    head_column,
    snapshot,
)
from _states import head_cell as cell  # the HEAD column's (row, outcome)

import runtime_shim as rs
from runtime_shim import Device, Tensor, reveal_device
from runtime_shim.semantics import (
    AF,
    CAPTURE_CLASSES,
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
    Role,
    Route,
    keys_of,
)

_head_column = pytest.fixture(autouse=True)(head_column)

# One state per class (Af: one per role). Strategies vary so "keep" and "clear" are visible.
STATE_FOR = {
    (PF, None): State(PF),
    (PF_STAR, None): State(PF_STAR, strategy=BALANCED),
    (AF, Role.UNTRACKED): State(AF, strategy=BALANCED, role=Role.UNTRACKED),
    (AF, Role.TRACKED): State(AF, strategy=DISABLED, role=Role.TRACKED),
    (AF, Role.NON_LEAF): State(AF, strategy=BALANCED, role=Role.NON_LEAF),
    (PI, None): State(PI, kind="int"),
    (PI_STAR, None): State(PI_STAR, kind="bool", strategy=BALANCED),
    (CI, None): State(CI),
    (CC, None): State(CC),
    (CI_INT, None): State(CI_INT, kind="int"),
    (CC_INT, None): State(CC_INT, kind="bool"),
}
CALLS = {
    "inner": lambda t, ctx: t.inner(),
    "from_inner": lambda t, ctx: Tensor.from_inner(t),
    "no_grad": lambda t, ctx: t.no_grad(),
    "detach": lambda t, ctx: t.detach(),
    "require_grad": lambda t, ctx: t.require_grad(),
    "set_require_grad(True)": lambda t, ctx: t.set_require_grad(True),
    "set_require_grad(False)": lambda t, ctx: t.set_require_grad(False),
    "with_strategy(Balanced)": lambda t, ctx: t.with_gradient_checkpointing_strategy(BALANCED),
    "with_strategy(Disabled)": lambda t, ctx: t.with_gradient_checkpointing_strategy(DISABLED),
    "backward": lambda t, ctx: t.backward(),
    "grad": lambda t, ctx: t.grad(ctx["grads"]),
    "grad_remove": lambda t, ctx: t.grad_remove(ctx["grads"]),
    "grad_replace": lambda t, ctx: t.grad_replace(ctx["grads"], ctx["replacement"]),
}
TABLE_CALL = {  # API call -> the table's call name
    "set_require_grad(True)": "require_grad", "set_require_grad(False)": "unrequire_grad",
    "with_strategy(Balanced)": "with_strategy", "with_strategy(Disabled)": "with_strategy",
}
ARG_STRATEGY = {"with_strategy(Balanced)": BALANCED, "with_strategy(Disabled)": DISABLED}


@dataclass(frozen=True)
class ApiCase:
    call: str
    state: State

    def __str__(self) -> str:
        return f"{self.call}:{self.state}"

    @property
    def key(self) -> dict:
        return {"call": TABLE_CALL.get(self.call, self.call), "cls": self.state.cls, "role": self.state.role}


API_CASES = [ApiCase(call, state) for call in CALLS for state in STATE_FOR.values()]


def test_api_cases_cover_every_autodiff_key() -> None:
    covered = {tuple(c.key.items()) for c in API_CASES}
    assert covered == {tuple(k.items()) for k in keys_of("autodiff")}


def _context(dev: Device) -> dict:
    """Gradients of an unrelated graph, and a replacement gradient of the tensor's shape."""
    leaf = Tensor.from_data(VALUES["float"], dev.autodiff()).require_grad()
    return {"grads": (leaf * 2.0).sum().backward(),
            "replacement": Tensor.from_data(np.full((2, 3), 0.5, dtype=np.float32), dev)}


def _expected_text(case: ApiCase, outcome: Ok, device_text: str) -> str:
    state = case.state
    cls = outcome.result or state.cls
    strategy = {
        "keep": state.strategy,
        "clear": None,
        "arg": ARG_STRATEGY.get(case.call),
        "disabled-if-none": state.strategy or DISABLED,
    }[outcome.strategy]
    role = None
    if cls is AF:
        role = outcome.role or state.role
        if state.cls is not AF:
            role = Role.UNTRACKED  # from_inner: an untracked leaf
    return expected_reveal(cls, state.kind, device_text, strategy, role)


def _run_api_case(case: ApiCase, tensor: Tensor, ctx: dict, device_text: str) -> None:
    row, outcome = cell("autodiff", **case.key)
    call = CALLS[case.call]
    before = snapshot(tensor)
    if isinstance(outcome, Fail):
        with pytest.raises(rs.DispatchError) as info:
            call(tensor, ctx)
        assert type(info.value) is ERROR_CLASS[outcome.code]
        assert info.value.code == outcome.code
        untracked_backward = case.call == "backward" and case.state.role is Role.UNTRACKED
        assert untracked_backward is (row.id == "api.backward-untracked")
        assert str(info.value) == MSG["no_step"] if untracked_backward else str(info.value) == {
            "MV108": MSG["requires_ad"], "MV109": MSG["double_wrap_tensor"], "MV102": MSG["capture_autodiff"],
            "MV111": MSG["non_leaf"]}[outcome.code]
        assert snapshot(tensor) == before
        return
    result = call(tensor, ctx)
    assert snapshot(tensor) == before  # the API never changes its receiver
    if case.call == "backward":
        assert isinstance(result, rs.Gradients)
        assert len(result) == 1  # an untracked tensor has no graph: it panics above
        return
    if case.call in ("grad", "grad_remove", "grad_replace"):
        assert result is None  # the tensor is not part of ctx's graph
        return
    assert isinstance(result, Tensor)
    assert reveal_device(result) == _expected_text(case, outcome, device_text)
    if result.state not in (CC, CC_INT):
        _text, dtype, shape, data = before
        assert_bits(result, np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape))
    # burn-autodiff src/ops/tensor.rs:2066-2067: `matches!(requirement, Requirement::Grad)`, a tracked leaf only
    assert result.is_require_grad() is (result.state is AF and result.role is Role.TRACKED)


@pytest.mark.parametrize("case", API_CASES, ids=str)
def test_autodiff_api_cell(case: ApiCase) -> None:
    if case.state.cls in CAPTURE_CLASSES:
        cap = Device.capture()
        ctx = _context(device(first_available("cuda1", "cpu")))

        def body(scope: rs.Scope) -> None:
            tensor, _value_id = build_capture(case.state, cap, scope)
            _run_api_case(case, tensor, ctx, capture_text(cap))

        assert isinstance(cap.capture_scope(body), rs.Graph)
        return
    name = first_available("cuda1", "cpu")  # a second GPU where there is one
    _run_api_case(case, build(case.state, device(name)), _context(device(name)), DEVICE_TEXT[name])


# --- what the calls do beyond the state text ---------------------------------------------------


def _tracked(strategy=DISABLED, values=(1.0, 2.0, 3.0)) -> Tensor:  # noqa: ANN001
    return Tensor.from_floats(list(values), ad(device("flex"), strategy)).require_grad()


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_grad_is_a_plain_float_on_the_inner_backend_carrying_the_strategy(strategy) -> None:  # noqa: ANN001
    x = _tracked(strategy)
    grads = (x * x).sum().backward()
    g = x.grad(grads)
    assert reveal_device(g) == f"Flex float checkpointing: {STRATEGY_TEXT[strategy]}"
    assert g.device() == device("flex") and not g.device().is_autodiff()
    assert_bits(g, np.float32([2.0, 4.0, 6.0]))
    # x.grad(g) * x panics (Pf* vs Af); x.grad(g) * x.inner() works (promotion)
    with pytest.raises(rs.BackendMismatch) as info:
        g * x
    assert str(info.value) == backend_mismatch("Flex", "Autodiff(Flex)")
    product = g * x.inner()
    assert reveal_device(product) == f"Flex float checkpointing: {STRATEGY_TEXT[strategy]}"
    assert_bits(product, np.float32([2.0, 8.0, 18.0]))


def test_grad_of_untracked_or_outside_the_graph_is_none() -> None:
    x = _tracked()
    u = Tensor.from_floats([1.0], device("flex").autodiff())
    other = _tracked()
    grads = (x * 2.0).sum().backward()
    assert u.grad(grads) is None
    assert other.grad(grads) is None
    assert (x * 2.0).grad(grads) is None  # a non-leaf keeps no gradient


def test_grad_remove_and_grad_replace() -> None:
    x = _tracked(BALANCED)
    grads = (x * 3.0).sum().backward()
    removed = x.grad_remove(grads)
    assert reveal_device(removed) == "Flex float checkpointing: Balanced"
    assert_bits(removed, np.float32([3.0, 3.0, 3.0]))
    assert x.grad(grads) is None
    assert x.grad_remove(grads) is None
    # the replacement's strategy is ignored
    replacement = Tensor.from_floats([7.0, 8.0, 9.0], device("flex")).with_gradient_checkpointing_strategy(DISABLED)
    assert x.grad_replace(grads, replacement) is None
    g = x.grad(grads)
    assert reveal_device(g) == "Flex float checkpointing: Balanced"
    assert_bits(g, np.float32([7.0, 8.0, 9.0]))


# (the tensor's backend has a grad_replace arm) -> (the tensor's device, the same backend, another backend)
REPLACEMENT_DEVICES = {True: ("flex", "flex", "ndarray"), False: ("libtorch", "libtorch", "flex")}


@pytest.mark.parametrize("key", list(keys_of("grad_replace")),
                         ids=lambda k: f"{k['route'].name}-{'same' if k['same_backend'] else 'other'}-backend"
                                       f"{'' if k['arm'] else '-libtorch'}")
def test_grad_replace_replacement_cell(key: dict) -> None:
    source, same, other = REPLACEMENT_DEVICES[key["arm"]]
    x = Tensor.from_floats([1.0, 2.0, 3.0], device(source).autodiff()).require_grad()
    grads = (x * 3.0).sum().backward()
    name = same if key["same_backend"] else other
    dev = device(name)
    replacement = {
        Route.FLOAT: lambda: Tensor.from_floats([4.0, 5.0, 6.0], dev),
        Route.AUTODIFF: lambda: Tensor.from_floats([4.0, 5.0, 6.0], dev.autodiff()),
        Route.INT: lambda: Tensor.from_ints([4, 5, 6], dev),
    }[key["route"]]()
    _row, outcome = cell("grad_replace", **key)
    if isinstance(outcome, Fail):
        rhs = f"Autodiff({DEVICE_TEXT[name]})" if key["route"] is Route.AUTODIFF else DEVICE_TEXT[name]
        with pytest.raises(rs.BackendMismatch) as info:
            x.grad_replace(grads, replacement)
        assert info.value.code == "MV106"
        assert str(info.value) == backend_mismatch(f"Autodiff({DEVICE_TEXT[source]})", rhs)
        assert_bits(x.grad(grads), np.float32([3.0, 3.0, 3.0]))  # untouched
    else:
        x.grad_replace(grads, replacement)
        assert_bits(x.grad(grads), np.float32([4.0, 5.0, 6.0]))


def test_grad_replace_on_libtorch_panics() -> None:
    """burn-dispatch src/backend.rs:492-539 (2c06be35): `grad_replace` matches Cpu, Cuda, Metal, Rocm,
    Vulkan, Wgpu, WebGpu, Flex, NdArray and Remote; a LibTorch tensor falls to the `(t, g)` arm."""
    x = Tensor.from_floats([1.0, 2.0], device("libtorch").autodiff()).require_grad()
    grads = (x * 2.0).sum().backward()
    with pytest.raises(rs.BackendMismatch) as info:
        x.grad_replace(grads, Tensor.from_floats([5.0, 6.0], device("libtorch")))
    assert str(info.value) == backend_mismatch("Autodiff(LibTorch(Cpu))", "LibTorch(Cpu)")
    assert_bits(x.grad(grads), np.float32([2.0, 2.0]))


def test_gradient_of_a_moved_tensor_returns_to_the_source_device() -> None:
    x = Tensor.from_floats([1.0, 2.0], device("cuda0").autodiff().gradient_checkpointing()).require_grad()
    y = x.to_device(device("cuda1").autodiff())
    assert reveal_device(y) == "Autodiff { device: Cuda(1), checkpointing: Balanced } float non-leaf"
    grads = (y * y).exp().sum().backward()
    g = x.grad(grads)
    assert reveal_device(g) == "Cuda(0) float checkpointing: Balanced"
    assert g.device() == device("cuda0")
    expected = 2 * np.float32([1.0, 2.0]) * np.exp(np.float32([1.0, 4.0]))
    np.testing.assert_allclose(g.to_numpy(), expected, rtol=1e-6)
    # the gradient lives with the source: it combines with the source's own data (real GPUs: cuda:0)
    np.testing.assert_allclose((g * x.inner()).to_numpy(), expected * np.float32([1.0, 2.0]), rtol=1e-6)
    assert y.grad(grads) is None


def test_detach_cuts_the_history_and_keeps_the_flag_of_a_tracked_leaf() -> None:
    """burn-autodiff src/ops/tensor.rs:2040-2055 (2c06be35): `float_detach` builds a new leaf and calls
    `require_grad` on it iff `float_is_require_grad` (:2066-2067) held, i.e. for a tracked leaf only."""
    x = _tracked()
    d = x.detach()
    assert reveal_device(d) == "Autodiff { device: Flex, checkpointing: Disabled } float tracked"
    assert d.is_require_grad()
    grads = (d * 3.0).sum().backward()
    assert x.grad(grads) is None  # the history is cut: x is another leaf
    assert_bits(d.grad(grads), np.float32([3.0, 3.0, 3.0]))
    u = Tensor.from_floats([1.0], device("flex").autodiff()).detach()
    assert not u.is_require_grad()


def test_detach_of_a_non_leaf_is_an_untracked_leaf() -> None:
    """Truncated backprop (`h = h.detach()`): in Burn a non-leaf's `Requirement` is `GradInBackward`, so
    `float_is_require_grad` is false (burn-autodiff src/ops/tensor.rs:2066-2067) and the detached tensor is
    an untracked leaf (:2040-2051): no gradient ever reaches it, and `backward` from it panics
    (burn-autodiff src/runtime/server.rs:69-72)."""
    x = _tracked()
    y = x * 2.0
    assert not y.is_require_grad()  # a non-leaf
    d = y.detach()
    assert reveal_device(d) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    assert not d.is_require_grad()
    with pytest.raises(rs.RequiresAutodiff) as info:
        (d * 3.0).sum().backward()
    assert str(info.value) == MSG["no_step"]
    grads = (d * x).sum().backward()  # x is still tracked: d is a constant of its graph
    assert d.grad(grads) is None
    assert_bits(x.grad(grads), np.float32([2.0, 4.0, 6.0]))


def test_backward_of_an_untracked_tensor_panics() -> None:
    """burn-autodiff src/runtime/server.rs:69-72: the root node has no step registered."""
    u = Tensor.from_floats([1.0, 2.0], device("flex").autodiff())
    for root in (u, (u * 2.0).sum()):
        with pytest.raises(rs.RequiresAutodiff) as info:
            root.backward()
        assert info.value.code == "MV108"
        assert str(info.value) == MSG["no_step"]


def test_require_grad_rules() -> None:
    x = Tensor.from_floats([1.0, 2.0], device("flex").autodiff())
    assert not x.is_require_grad()
    t = x.require_grad()
    assert t.is_require_grad()
    assert reveal_device(t) == "Autodiff { device: Flex, checkpointing: Disabled } float tracked"
    y = t * t
    assert not y.is_require_grad()  # burn-autodiff src/ops/tensor.rs:2066-2067: Requirement::Grad only
    with pytest.raises(rs.NonLeafRequireGrad) as info:
        y.require_grad()
    assert info.value.code == "MV111"
    assert str(info.value) == "Can't convert a non leaf tensor into a tracked tensor"
    with pytest.raises(rs.NonLeafRequireGrad):
        y.set_require_grad(True)
    z = y.set_require_grad(False)  # a new untracked leaf
    assert reveal_device(z) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    with pytest.raises(rs.RequiresAutodiff, match="Node should have a step registered"):
        z.backward()  # burn-autodiff src/runtime/server.rs:69-72
    p = Tensor.from_floats([1.0], device("flex"))
    assert not p.require_grad().is_require_grad()  # no-op on a plain float
    assert not Tensor.from_ints([1], device("flex").autodiff()).is_require_grad()


def test_with_gradient_checkpointing_strategy_changes_later_ops() -> None:
    x = _tracked(DISABLED).with_gradient_checkpointing_strategy(BALANCED)
    assert reveal_device(x) == "Autodiff { device: Flex, checkpointing: Balanced } float tracked"
    assert reveal_device(x * 2.0) == "Autodiff { device: Flex, checkpointing: Balanced } float non-leaf"
    other = _tracked(DISABLED)
    with pytest.raises(rs.CheckpointingMismatch):
        x + other
    p = Tensor.from_floats([1.0], device("cpu")).with_gradient_checkpointing_strategy(DISABLED)
    assert reveal_device(p) == "Cpu float checkpointing: Disabled"
    assert p.device() == device("cpu") and not p.device().is_autodiff()
    i = Tensor.from_ints([1], device("cpu")).with_gradient_checkpointing_strategy(BALANCED)
    assert reveal_device(i) == "Autodiff { device: Cpu, checkpointing: Balanced } int"
    with pytest.raises(TypeError):
        p.with_gradient_checkpointing_strategy("Balanced")


def test_inner_and_from_inner_round_trip() -> None:
    x = _tracked(BALANCED)
    p = x.inner()
    assert reveal_device(p) == "Flex float"  # strategy cleared, off the tape
    back = Tensor.from_inner(p)
    assert reveal_device(back) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    star = Tensor.from_inner(p.with_gradient_checkpointing_strategy(BALANCED))
    assert reveal_device(star) == "Autodiff { device: Flex, checkpointing: Balanced } float untracked"
    with pytest.raises(rs.DoubleAutodiff) as info:
        Tensor.from_inner(x)
    assert str(info.value) == "Autodiff should not wrap an autodiff tensor."
    with pytest.raises(rs.RequiresAutodiff) as info:
        p.inner()
    assert info.value.code == "MV108" and str(info.value) == "Requires autodiff tensor."
    i = Tensor.from_ints([1], device("flex").autodiff())
    assert reveal_device(i.inner()) == "Autodiff { device: Flex, checkpointing: Disabled } int"
    assert reveal_device(i.no_grad()) == "Autodiff { device: Flex, checkpointing: Disabled } int"


def test_backward_and_grad_on_plain_floats_fail() -> None:
    p = Tensor.from_floats([1.0], device("flex"))
    grads = _tracked().sum().backward()
    for call in (p.backward, lambda: p.grad(grads), lambda: p.grad_remove(grads),
                 lambda: p.grad_replace(grads, p)):
        with pytest.raises(rs.RequiresAutodiff, match=r"^Requires autodiff tensor\.$"):
            call()


# --- the device API (section 1) -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["flex", "cuda1", "libtorch_cuda0", "cpu"])
def test_device_api(name: str) -> None:
    d = device(name)
    text = DEVICE_TEXT[name]
    assert not d.is_autodiff()
    assert d.inner() == d and repr(d.inner()) == text
    a = d.autodiff()
    assert a.is_autodiff()
    assert repr(a) == f"Autodiff {{ device: {text}, checkpointing: Disabled }}"
    assert a.gradient_checkpointing_strategy() is DISABLED
    g = a.gradient_checkpointing()
    assert repr(g) == f"Autodiff {{ device: {text}, checkpointing: Balanced }}"
    assert g.gradient_checkpointing_strategy() is BALANCED
    assert repr(g.gradient_checkpointing()) == repr(g)
    assert repr(a.inner()) == text and not a.inner().is_autodiff()
    assert a.backend == d.backend and a.index == d.index
    for twice in (a, g):
        with pytest.raises(rs.DoubleAutodiff) as info:
            twice.autodiff()
        assert info.value.code == "MV109"
        assert str(info.value) == "Only first-order autodiff is supported"
        assert info.value.panic == "not implemented: Only first-order autodiff is supported"
    for call in (d.gradient_checkpointing, d.gradient_checkpointing_strategy):
        with pytest.raises(rs.AutodiffNotEnabled) as info:
            call()
        assert info.value.code == "MV110"
        assert str(info.value) == "Autodiff is not enabled on this device"


@pytest.mark.parametrize("key", list(keys_of("device")), ids=lambda k: f"{k['call']}-{'ad' if k['ad'] else 'plain'}")
def test_device_cell(key: dict) -> None:
    plain = device("ndarray")
    d = plain.autodiff() if key["ad"] else plain
    _row, outcome = cell("device", **key)
    call = getattr(d, key["call"])
    if isinstance(outcome, Fail):
        with pytest.raises(ERROR_CLASS[outcome.code]) as info:
            call()
        assert str(info.value) == {"MV109": MSG["first_order"], "MV110": MSG["not_enabled"]}[outcome.code]
    else:
        result = call()
        expected = {"autodiff": "Autodiff { device: NdArray, checkpointing: Disabled }",
                    "gradient_checkpointing": "Autodiff { device: NdArray, checkpointing: Balanced }",
                    "gradient_checkpointing_strategy": DISABLED,
                    "inner": "NdArray"}[key["call"]]
        assert (result if key["call"] == "gradient_checkpointing_strategy" else repr(result)) == expected
