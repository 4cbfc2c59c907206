"""Gradient checks of every differentiable op against central finite differences.

Each case builds its op from float64 inputs (``Tensor.from_data`` of float64
numpy arrays) and reduces the output to a scalar loss with fixed random
weights, so every output element matters. The analytic gradients come from the
runtime's tape on an autodiff device; the numerical ones from central
differences of the same forward pass on the plain inner device. Every case runs
on numpy-executor backends (Flex, NdArray) and torch-executor backends (Cpu,
LibTorch), under both checkpointing strategies; ``Balanced`` must give gradients
bit-identical to ``Disabled``.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import DEVICES, device_available_here

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, Tensor
from runtime_shim import semantics as sem


def gradient_text(device: Device, strategy: CheckpointingStrategy) -> str:
    """What a gradient reveals under the current profile: a plain float of the inner backend, with the
    tensor's strategy (``Pf*``, 2c06be35) or none (``Pf``, d16f7ba2ed's Disabled context)."""
    _row, outcome = sem.cell("autodiff", rs.current_profile(), call="grad", cls=sem.AF, role=sem.Role.TRACKED)
    return f"{device!r} float" if outcome.result is sem.PF else f"{device!r} float checkpointing: {strategy}"

EPS = 1e-6
RTOL = 1e-6
ATOL = 1e-7

DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED
STRATEGIES = {"disabled": DISABLED, "balanced": BALANCED}
# numpy executor: Flex, NdArray; torch executor: Cpu, LibTorch.
BASES = ("flex", "ndarray", "cpu", "libtorch")


def ad_device(plain: Device, strategy: CheckpointingStrategy) -> Device:
    device = plain.autodiff()
    return device.gradient_checkpointing() if strategy is BALANCED else device


def weighted_loss(out: Tensor, seed: int = 1234) -> Tensor:
    """``(out * W).sum()`` with fixed random float64 weights W on ``out``'s own device."""
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, size=out.shape)
    weights *= np.where(np.random.default_rng(seed + 1).random(size=out.shape) < 0.5, -1.0, 1.0)
    return (out * Tensor.from_data(weights, device=out.device())).sum()


# --- input generators (float64, deterministic per case) ------------------------------------------

def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.standard_normal(shape)


def positive(*shape: int, low: float = 0.5, high: float = 2.0) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(low, high, size=shape)


def away_from_zero(*shape: int, low: float = 0.3, high: float = 2.0) -> Callable[[np.random.Generator], np.ndarray]:
    def make(rng: np.random.Generator) -> np.ndarray:
        signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        return signs * rng.uniform(low, high, size=shape)

    return make


def _mask(device: Device, *shape: int, seed: int = 7) -> Tensor:
    values = np.random.default_rng(seed).random(shape) < 0.5
    values.reshape(-1)[0], values.reshape(-1)[-1] = True, False  # both branches occur
    return Tensor.from_data(values, device=device)


@dataclass(frozen=True)
class Case:
    """``fn(device, *inputs) -> output``; ``device`` is where constants (masks) are created."""

    name: str
    fn: Callable[..., Tensor]
    inputs: tuple[Callable[[np.random.Generator], np.ndarray], ...]
    tags: frozenset = field(default_factory=frozenset)


def case(name: str, fn: Callable[..., Tensor], *inputs: Callable[[np.random.Generator], np.ndarray]) -> Case:
    return Case(name, fn, inputs)


CASES: tuple[Case, ...] = (
    # tensor-tensor arithmetic, same shapes and broadcasting
    case("add", lambda d, a, b: a + b, normal(2, 3), normal(2, 3)),
    case("add-bcast-row", lambda d, a, b: a.add(b), normal(2, 3), normal(3)),
    case("add-bcast-outer", lambda d, a, b: a + b, normal(2, 1), normal(1, 3)),
    case("add-bcast-rank", lambda d, a, b: a + b, normal(4, 1, 3), normal(2, 3)),
    case("sub", lambda d, a, b: a - b, normal(2, 3), normal(2, 3)),
    case("sub-bcast", lambda d, a, b: a.sub(b), normal(3), normal(2, 3)),
    case("sub-bcast-outer", lambda d, a, b: a - b, normal(3, 1), normal(1, 4)),
    case("mul", lambda d, a, b: a * b, normal(2, 3), normal(2, 3)),
    case("mul-bcast", lambda d, a, b: a.mul(b), normal(2, 3), normal(2, 1)),
    case("mul-bcast-rank", lambda d, a, b: a * b, normal(3), normal(2, 2, 3)),
    case("div", lambda d, a, b: a / b, normal(2, 3), away_from_zero(2, 3)),
    case("div-bcast", lambda d, a, b: a.div(b), normal(2, 3), away_from_zero(3)),
    case("div-bcast-lhs", lambda d, a, b: a / b, normal(1, 3), away_from_zero(2, 1)),
    # tensor-scalar, both sides
    case("add-scalar", lambda d, a: a + 1.75, normal(2, 3)),
    case("radd-scalar", lambda d, a: -0.5 + a, normal(2, 3)),
    case("sub-scalar", lambda d, a: a - 2.5, normal(2, 3)),
    case("rsub-scalar", lambda d, a: 3.0 - a, normal(2, 3)),
    case("mul-scalar", lambda d, a: a * -1.5, normal(2, 3)),
    case("rmul-scalar", lambda d, a: 2.25 * a, normal(2, 3)),
    case("div-scalar", lambda d, a: a / 0.75, normal(2, 3)),
    case("rdiv-scalar", lambda d, a: 1.5 / a, away_from_zero(2, 3)),
    case("method-scalars", lambda d, a: a.add(1.0).sub(0.5).mul(3.0).div(-2.0), normal(2, 3)),
    # matmul
    case("matmul", lambda d, a, b: a @ b, normal(2, 3), normal(3, 4)),
    case("matmul-method", lambda d, a, b: a.matmul(b), normal(4, 4), normal(4, 2)),
    case("matmul-batched", lambda d, a, b: a @ b, normal(2, 3, 4), normal(2, 4, 2)),
    case("matmul-bcast-rhs", lambda d, a, b: a @ b, normal(2, 3, 4), normal(4, 2)),
    case("matmul-bcast-lhs", lambda d, a, b: a @ b, normal(3, 4), normal(2, 4, 2)),
    case("matmul-bcast-both", lambda d, a, b: a @ b, normal(1, 2, 3), normal(3, 1, 3, 2)),
    case("matmul-bcast-batch1", lambda d, a, b: a @ b, normal(2, 1, 2, 3), normal(1, 3, 3, 2)),
    # unary
    case("neg", lambda d, a: -a, normal(2, 3)),
    case("neg-method", lambda d, a: a.neg(), normal(3)),
    case("exp", lambda d, a: a.exp(), normal(2, 3)),
    case("log", lambda d, a: a.log(), positive(2, 3)),
    case("sqrt", lambda d, a: a.sqrt(), positive(2, 3)),
    case("relu", lambda d, a: a.relu(), away_from_zero(3, 4, low=0.05)),
    case("sigmoid", lambda d, a: a.sigmoid(), normal(2, 3)),
    case("tanh", lambda d, a: a.tanh(), normal(2, 3)),
    case("powf-2.5", lambda d, a: a.powf_scalar(2.5), positive(2, 3)),
    case("powf-neg", lambda d, a: a.powf_scalar(-1.5), positive(2, 3)),
    case("powf-3", lambda d, a: a.powf_scalar(3.0), normal(2, 3)),
    case("powf-half", lambda d, a: a.powf_scalar(0.5), positive(4)),
    # reductions
    case("sum", lambda d, a: a.sum(), normal(2, 3)),
    case("sum-3d", lambda d, a: a.sum(), normal(2, 3, 2)),
    case("sum_dim-0", lambda d, a: a.sum_dim(0), normal(2, 3)),
    case("sum_dim-1", lambda d, a: a.sum_dim(1), normal(2, 3)),
    case("sum_dim-last", lambda d, a: a.sum_dim(-1), normal(2, 3, 4)),
    case("mean", lambda d, a: a.mean(), normal(2, 3)),
    case("mean-3d", lambda d, a: a.mean(), normal(2, 2, 3)),
    # shapes
    case("reshape", lambda d, a: a.reshape((3, 2)), normal(2, 3)),
    case("reshape-flat", lambda d, a: a.reshape((6,)), normal(2, 3)),
    case("reshape-3d", lambda d, a: a.reshape((2, 1, 6)), normal(3, 4)),
    case("transpose", lambda d, a: a.transpose(), normal(2, 3)),
    case("transpose-3d", lambda d, a: a.transpose(), normal(2, 3, 4)),
    case("swap_dims", lambda d, a: a.swap_dims(0, 2), normal(2, 3, 4)),
    case("swap_dims-neg", lambda d, a: a.swap_dims(-1, 0), normal(3, 2)),
    # masks
    case("mask_fill", lambda d, a: a.mask_fill(_mask(d, 2, 3), -4.0), normal(2, 3)),
    case("mask_fill-int-value", lambda d, a: a.mask_fill(_mask(d, 3, 2, seed=3), 2), normal(3, 2)),
    case("mask_where", lambda d, a, b: a.mask_where(_mask(d, 2, 3), b), normal(2, 3), normal(2, 3)),
    case("mask_where-bcast-value", lambda d, a, b: a.mask_where(_mask(d, 2, 3, seed=5), b), normal(2, 3),
         normal(3)),
    # cat: every input
    case("cat-dim0", lambda d, a, b, c: Tensor.cat([a, b, c], 0), normal(2, 3), normal(1, 3), normal(3, 3)),
    case("cat-dim1", lambda d, a, b, c: Tensor.cat([a, b, c], 1), normal(2, 3), normal(2, 1), normal(2, 2)),
    case("cat-same-twice", lambda d, a, b: Tensor.cat([a, b, a], 0), normal(2, 3), normal(1, 3)),
    # compositions
    case("mlp", lambda d, x, w, b: (x @ w + b).sigmoid().mean(), normal(4, 3), normal(3, 2), normal(2)),
    case("fan-out", lambda d, a: a * a + a.exp() - a.tanh() * 2.0, normal(2, 3)),
    case("chain-memory-bound", lambda d, a: ((a.exp() + 1.0).log() * a).tanh().sigmoid(), normal(2, 3)),
    case("softmax-like", lambda d, a: a.exp() / a.exp().sum_dim(1), normal(3, 4)),
    case("mse", lambda d, p, y: (p - y).powf_scalar(2.0).mean(), normal(5), normal(5)),
    case("mask-then-cat", lambda d, a, b: Tensor.cat([a.mask_fill(_mask(d, 2, 3), 0.0).exp(), b.sqrt() * a], 1),
         normal(2, 3), positive(2, 3)),
    case("mask_where-chain", lambda d, a, b: (a.exp().mask_where(_mask(d, 2, 3), b.tanh()) * a).sigmoid(),
         normal(2, 3), normal(2, 3)),
    case("reshape-matmul-transpose",
         lambda d, a, b: (a.reshape((3, 2)).transpose() @ b.swap_dims(0, 1)).relu().sum_dim(0),
         normal(2, 3), away_from_zero(2, 3, low=0.5)),
    case("diamond", lambda d, a: (a.sigmoid() * a.sigmoid().sqrt() + a.sigmoid()) / (a * a + 1.0), normal(2, 3)),
    case("div-chain", lambda d, a, b: (a / b / b).neg() / (1.0 + b * b), normal(2, 3), away_from_zero(2, 3)),
)


# --- the check -----------------------------------------------------------------------------------

def plain_device(name: str) -> Device:
    if not device_available_here(name):
        pytest.skip(f"device {name} is not available here")
    return DEVICES[name][0]()


def inputs_of(c: Case) -> list[np.ndarray]:
    rng = _rng(c.name)
    return [make(rng) for make in c.inputs]


def loss_value(c: Case, device: Device, arrays: list[np.ndarray]) -> float:
    tensors = [Tensor.from_data(a, device=device) for a in arrays]
    return float(weighted_loss(c.fn(device, *tensors)).into_scalar())


def numeric_grads(c: Case, device: Device, arrays: list[np.ndarray]) -> list[np.ndarray]:
    grads = []
    for i, array in enumerate(arrays):
        grad = np.zeros_like(array)
        for j in range(array.size):
            shifted = [a.copy() for a in arrays]
            shifted[i].reshape(-1)[j] = array.reshape(-1)[j] + EPS
            up = loss_value(c, device, shifted)
            shifted[i].reshape(-1)[j] = array.reshape(-1)[j] - EPS
            down = loss_value(c, device, shifted)
            grad.reshape(-1)[j] = (up - down) / (2 * EPS)
        grads.append(grad)
    return grads


def analytic_grads(c: Case, device: Device, arrays: list[np.ndarray]) -> tuple[list[np.ndarray], rs.Gradients]:
    leaves = [Tensor.from_data(a, device=device).require_grad() for a in arrays]
    out = c.fn(device, *leaves)
    assert rs.reveal_device(out).startswith(repr(device)), "an op on autodiff floats gives an autodiff float"
    grads = weighted_loss(out).backward()
    result = []
    for leaf, array in zip(leaves, arrays, strict=True):
        g = leaf.grad(grads)
        assert g is not None, f"no gradient for an input of {c.name}"
        assert g.device() == device.inner() and not g.device().is_autodiff()
        strategy = device.gradient_checkpointing_strategy()
        assert rs.reveal_device(g) == gradient_text(device.inner(), strategy)
        value = g.to_numpy()
        assert value.dtype == np.float64 and value.shape == array.shape
        result.append(value)
    return result, grads


@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=list(STRATEGIES))
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_central_differences(c: Case, base: str, strategy: str) -> None:
    plain = plain_device(base)
    device = ad_device(plain, STRATEGIES[strategy])
    arrays = inputs_of(c)
    analytic, _ = analytic_grads(c, device, arrays)
    numeric = numeric_grads(c, plain, arrays)
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        np.testing.assert_allclose(a, n, rtol=RTOL, atol=ATOL, err_msg=f"{c.name}: input {i} on {device!r}")
    if STRATEGIES[strategy] is BALANCED:
        disabled, _ = analytic_grads(c, ad_device(plain, DISABLED), arrays)
        for i, (a, d) in enumerate(zip(analytic, disabled, strict=True)):
            assert a.tobytes() == d.tobytes(), f"{c.name}: Balanced and Disabled gradients differ for input {i}"


@pytest.mark.parametrize("base", BASES)
def test_numpy_and_torch_backends_agree(base: str) -> None:
    """The same case on every backend gives the same gradients (to rounding)."""
    plain = plain_device(base)
    reference = plain_device("flex")
    for c in CASES:
        arrays = inputs_of(c)
        got, _ = analytic_grads(c, plain.autodiff(), arrays)
        want, _ = analytic_grads(c, reference.autodiff(), arrays)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=c.name)


# --- to_device under autodiff: gradients return to the source device ---------------------------

MOVES = (
    ("cuda0", "cuda1"),  # two devices of one torch backend (virtual mode, or 2 GPUs)
    ("cuda0", "cuda0"),
    ("cpu", "cpu"),
    ("libtorch", "libtorch_cuda0"),  # LibTorch CPU -> LibTorch CUDA: another executor in real mode
    ("libtorch_cuda0", "libtorch"),
    ("flex", "flex"),
    ("ndarray", "ndarray"),
    ("rocm", "rocm1"),  # two devices of one numpy backend (virtual mode only)
)


def _named_device(name: str) -> Device:
    if name == "rocm1":
        if not device_available_here("rocm"):
            pytest.skip("Rocm is not available here")
        return Device.rocm(1)
    return plain_device(name)


MOVE_CASES = (
    case("to_device", lambda d, a: a, normal(2, 3)),
    case("to_device-exp-mul", lambda d, a: a.exp() * a, normal(2, 3)),
    case("to_device-matmul", lambda d, a, b: (a @ b).tanh(), normal(2, 3), normal(3, 2)),
)


@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=list(STRATEGIES))
@pytest.mark.parametrize(("src_name", "dst_name"), MOVES, ids=[f"{a}-{b}" for a, b in MOVES])
def test_to_device_gradient_returns_to_source(src_name: str, dst_name: str, strategy: str) -> None:
    src, dst = _named_device(src_name), _named_device(dst_name)
    s = STRATEGIES[strategy]
    src_ad, dst_ad = ad_device(src, s), dst.autodiff()  # the moved tensor keeps its own strategy s
    for c in MOVE_CASES:
        arrays = inputs_of(c)

        def moved(d: Device, *xs: Tensor, c: Case = c) -> Tensor:
            target = dst_ad if d.is_autodiff() else dst
            ys = [x.to_device(target) for x in xs]
            for y in ys:
                assert y.device() == dst
                if d.is_autodiff():
                    assert rs.reveal_device(y) == f"Autodiff {{ device: {dst!r}, checkpointing: {s} }} float non-leaf"
            return c.fn(target, *ys)

        mc = Case(c.name, moved, c.inputs)
        leaves = [Tensor.from_data(a, device=src_ad).require_grad() for a in arrays]
        grads = weighted_loss(mc.fn(src_ad, *leaves)).backward()
        numeric = numeric_grads(mc, src, arrays)
        for leaf, n in zip(leaves, numeric, strict=True):
            g = leaf.grad(grads)
            assert g is not None
            assert g.device() == src and repr(g.device()) == repr(src), "the gradient returns to the source device"
            assert rs.reveal_device(g) == gradient_text(src, s)
            np.testing.assert_allclose(g.to_numpy(), n, rtol=RTOL, atol=ATOL, err_msg=f"{c.name} {src!r}->{dst!r}")


def _moved_gradients(c: Case, src: Device, dst: Device, s: CheckpointingStrategy) -> list[Tensor]:
    """The gradients of ``c``'s inputs (leaves on ``src``) when ``c`` computes on ``dst``."""
    src_ad, dst_ad = ad_device(src, s), dst.autodiff()
    leaves = [Tensor.from_data(a, device=src_ad).require_grad() for a in inputs_of(c)]
    grads = weighted_loss(c.fn(dst_ad, *(leaf.to_device(dst_ad) for leaf in leaves))).backward()
    return [leaf.grad(grads) for leaf in leaves]


@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=list(STRATEGIES))
def test_cross_gpu_gradients_match_one_gpu(strategy: str) -> None:
    """cuda(0) -> cuda(1) and back gives the gradients of the same computation kept on cuda(0): on a real
    two-GPU machine, else with virtual devices."""
    cuda0, cuda1 = plain_device("cuda0"), plain_device("cuda1")
    s = STRATEGIES[strategy]
    for c in MOVE_CASES:
        across = _moved_gradients(c, cuda0, cuda1, s)
        within = _moved_gradients(c, cuda0, cuda0, s)
        for a, b in zip(across, within, strict=True):
            assert a is not None and b is not None
            assert a.device() == cuda0 and b.device() == cuda0, "both gradients return to cuda(0)"
            np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-12, atol=1e-12, err_msg=c.name)


def test_to_device_cuda0_to_cuda1_virtual() -> None:
    """The brief's example, explicitly in virtual mode: cuda(0) -> cuda(1), gradient back on cuda(0)."""
    pytest.importorskip("torch")
    with rs.virtual_devices():
        x = Tensor.from_data(np.array([[1.0, -2.0], [0.5, 3.0]]), device=Device.cuda(0).autodiff()).require_grad()
        y = x.to_device(Device.cuda(1).autodiff())
        g = (y * y).sum().backward()
        grad = x.grad(g)
        assert grad.device() == Device.cuda(0)
        assert repr(grad.device()) == "Cuda(0)"
        np.testing.assert_array_equal(grad.to_numpy(), 2 * np.array([[1.0, -2.0], [0.5, 3.0]]))


# --- Balanced really recomputes ------------------------------------------------------------------

@pytest.mark.parametrize("base", BASES)
def test_balanced_recomputes_memory_bound_values(base: str) -> None:
    plain = plain_device(base)
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    results = {}
    for s in (DISABLED, BALANCED):
        x = Tensor.from_data(x0, device=ad_device(plain, s)).require_grad()
        y = (x.exp() * x).tanh().sigmoid().sqrt() * x  # memory-bound ops whose backward needs values
        grads = weighted_loss(y).backward()
        results[s] = (grads.recomputed, x.grad(grads).to_numpy())
    assert results[DISABLED][0] == 0
    assert results[BALANCED][0] > 0
    assert results[DISABLED][1].tobytes() == results[BALANCED][1].tobytes()


@pytest.mark.parametrize("base", BASES)
def test_balanced_checkpoints_compute_bound_values(base: str) -> None:
    """A matmul result is stored under Balanced, so nothing above it is recomputed."""
    plain = plain_device(base)
    device = ad_device(plain, BALANCED)
    a = Tensor.from_data(np.random.default_rng(1).standard_normal((3, 3)), device=device).require_grad()
    b = Tensor.from_data(np.random.default_rng(2).standard_normal((3, 3)), device=device).require_grad()
    grads = (a @ b).exp().sum().backward()  # exp's backward needs exp's own output: one recomputed value
    assert grads.recomputed == 1
    np.testing.assert_allclose(a.grad(grads).to_numpy(), np.exp(a.to_numpy() @ b.to_numpy()) @ b.to_numpy().T,
                               rtol=1e-12)


# --- the tape around the autodiff API ------------------------------------------------------------

@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=list(STRATEGIES))
@pytest.mark.parametrize("base", BASES)
def test_detach_cuts_the_history(base: str, strategy: str) -> None:
    """``x.detach() * x``: x gets only the detached factor; the detached leaf (still tracked) gets x."""
    device = ad_device(plain_device(base), STRATEGIES[strategy])
    x0 = np.array([[0.3, -1.2, 2.0], [1.5, 0.25, -0.75]])
    x = Tensor.from_data(x0, device=device).require_grad()
    xd = x.detach()
    assert xd.is_require_grad()
    grads = (xd * x).exp().sum().backward()
    np.testing.assert_allclose(x.grad(grads).to_numpy(), x0 * np.exp(x0 * x0), rtol=1e-12)
    np.testing.assert_allclose(xd.grad(grads).to_numpy(), x0 * np.exp(x0 * x0), rtol=1e-12)


@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=list(STRATEGIES))
@pytest.mark.parametrize("base", BASES)
def test_untracked_and_non_leaf_tensors_keep_no_gradient(base: str, strategy: str) -> None:
    device = ad_device(plain_device(base), STRATEGIES[strategy])
    x = Tensor.from_data(np.array([1.0, 2.0, 3.0]), device=device).require_grad()
    c = Tensor.from_data(np.array([4.0, 5.0, 6.0]), device=device)  # an untracked leaf
    hidden = x * c
    grads = (hidden.sigmoid() * c).sum().backward()
    assert c.grad(grads) is None and hidden.grad(grads) is None
    s = 1 / (1 + np.exp(-np.array([4.0, 10.0, 18.0])))
    np.testing.assert_allclose(x.grad(grads).to_numpy(), s * (1 - s) * np.array([16.0, 25.0, 36.0]), rtol=1e-12)
    assert x.set_require_grad(False).grad(grads) is None  # a new, untracked leaf


@pytest.mark.parametrize("base", BASES)
def test_strategy_switch_mid_graph_gives_the_same_gradients(base: str) -> None:
    """Nodes recorded under either strategy, in one graph: the gradients are those of Disabled, bit for bit."""
    plain = plain_device(base)
    x0 = np.random.default_rng(3).standard_normal((2, 3))
    results = []
    for first, then in itertools.product((DISABLED, BALANCED), (None, DISABLED, BALANCED)):
        x = Tensor.from_data(x0, device=ad_device(plain, first)).require_grad()
        y = x.exp() * 0.5
        if then is not None:
            y = y.with_gradient_checkpointing_strategy(then)
        grads = weighted_loss((y.tanh() * y).sigmoid().sqrt()).backward()
        results.append(x.grad(grads).to_numpy().tobytes())
    assert len(set(results)) == 1
