"""Profile burn-next: autodiff moves between backends keep the graph, and gradients through them are right.

Gradients of a three-stage program whose stages run on three backends (and back) must equal, per
tracked tensor and within float tolerance: torch autograd of the same program, the same program
on one backend, and (float64) central finite differences; each on the tensor's own device and in
its dtype, under every mix of checkpointing strategies. Then Burn's recorded-transfer semantics one
by one: accumulation over round trips, untracked constants, no replay under Balanced, the
strategy a move keeps, and the failures that remain.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import DEVICES, device_available_here

pytest.importorskip("torch")

import runtime_shim as rs  # noqa: E402
import runtime_shim.tensor as shim_tensor  # noqa: E402
from bench.burn_next_gradcheck import (  # noqa: E402
    SHAPES,
    STAGE_OF,
    autodiff_device,
    close,
    input_arrays,
    numeric_gradients,
    shim_gradients,
    torch_gradients,
)
from runtime_shim import CheckpointingStrategy, Device, DispatchError, Tensor  # noqa: E402
from runtime_shim import semantics as S  # noqa: E402

PROFILE = "burn-next"
DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED
# Stage devices (conftest names): out over three backends; the program comes back to the first.
CHAINS = (
    ("flex", "cuda0", "libtorch_cuda0"),
    ("libtorch_cuda0", "cuda0", "flex"),
    ("ndarray", "cpu", "flex"),
    ("libtorch", "ndarray", "cuda0"),
)
MIXES = tuple(itertools.product((DISABLED, BALANCED), repeat=3))


@pytest.fixture(autouse=True)
def _burn_next():
    with rs.profile(PROFILE):
        yield


def plain(name: str) -> Device:
    if not device_available_here(name):
        pytest.skip(f"device {name} is not available here")
    return DEVICES[name][0]()


def torch_place(device: Device) -> str:
    """Where torch runs a stage in this mode: virtual CUDA devices run on the CPU."""
    if device.backend in ("Cuda", "LibTorch") and "Cuda" in repr(device) and not rs.is_virtual():
        return f"cuda:{device.index}"
    return "cpu"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mix", MIXES, ids=lambda m: "".join(s.value[0] for s in m))
@pytest.mark.parametrize("chain", CHAINS, ids="-".join)
def test_gradients_through_moves_match_torch_one_backend_and_finite_differences(
        chain: tuple[str, str, str], mix: tuple, dtype: str) -> None:
    devices = [plain(name) for name in chain]
    arrays = input_arrays(dtype, seed=len(chain[0]))
    got = shim_gradients([autodiff_device(d, s) for d, s in zip(devices, mix, strict=True)], arrays)
    for name in SHAPES:
        assert got.devices[name] == repr(devices[STAGE_OF[name]]), name
        assert got.dtypes[name] == dtype, name
    assert close(got.values, torch_gradients([torch_place(d) for d in devices], arrays), dtype)
    source = devices[0]
    one_backend = shim_gradients([autodiff_device(source, s) for s in mix], arrays)
    assert close(got.values, one_backend.values, dtype)
    if dtype == "float64":
        assert close(got.values, numeric_gradients(devices, arrays), dtype)


@pytest.mark.parametrize("chain", CHAINS[:2], ids="-".join)
def test_balanced_gives_the_disabled_gradients_bit_for_bit(chain: tuple[str, str, str]) -> None:
    devices = [plain(name) for name in chain]
    arrays = input_arrays("float32")
    disabled = shim_gradients([autodiff_device(d, DISABLED) for d in devices], arrays)
    balanced = shim_gradients([autodiff_device(d, BALANCED) for d in devices], arrays)
    assert balanced.recomputed > 0 and disabled.recomputed == 0
    for name in SHAPES:
        np.testing.assert_array_equal(balanced.values[name], disabled.values[name])


# --- Burn's recorded transfer, case by case ------------------------------------------------------

def test_gradient_returns_to_the_source_device() -> None:
    source, target = plain("flex").autodiff(), plain("cuda0").autodiff()
    x = Tensor.from_floats([2.0, 3.0], source).require_grad()
    moved = x.to_device(target)
    assert rs.reveal_device(moved) == "Autodiff { device: Cuda(0), checkpointing: Disabled } float non-leaf"
    grads = (moved * moved).sum().backward()
    grad = x.grad(grads)
    assert grad is not None and grad.device() == Device.flex() and grad.to_list() == [4.0, 6.0]
    assert moved.grad(grads) is None  # a non-leaf keeps no gradient of its own


def test_round_trip_and_direct_path_accumulate() -> None:
    flex, cuda = plain("flex").autodiff(), plain("cuda0").autodiff()
    x = Tensor.from_floats([2.0, 3.0], flex).require_grad()
    y = Tensor.from_floats([4.0, 5.0], flex).require_grad()
    returned = x.to_device(cuda).to_device(flex)
    grads = (returned + y + x * 2.0).sum().backward()
    assert x.grad(grads).to_list() == [3.0, 3.0]
    assert y.grad(grads).to_list() == [1.0, 1.0]


def test_untracked_constants_move_untracked_and_take_no_gradient() -> None:
    flex, cuda = plain("flex").autodiff(), plain("cuda0").autodiff()
    constant = Tensor.from_floats([4.0, 5.0], cuda).to_device(flex)
    assert rs.reveal_device(constant) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    x = Tensor.from_floats([2.0, 3.0], flex).require_grad()
    grads = (x.to_device(flex) * constant).sum().backward()
    assert x.grad(grads).to_list() == [4.0, 5.0]
    assert constant.grad(grads) is None
    with pytest.raises(DispatchError) as info:
        (constant * 2.0).sum().backward()
    assert info.value.code == "MV108"


def test_a_moved_tensor_is_a_non_leaf_until_detached() -> None:
    flex, nd = plain("flex").autodiff(), plain("ndarray").autodiff()
    x = Tensor.from_floats([1.0, -2.0], flex).require_grad()
    moved = (x * 3.0).to_device(nd)
    with pytest.raises(DispatchError) as info:
        moved.require_grad()
    assert info.value.code == "MV111"
    leaf = moved.detach().require_grad()
    grads = (leaf * leaf).sum().backward()
    assert leaf.grad(grads).to_list() == [6.0, -12.0]
    assert x.grad(grads) is None  # the detached leaf severed the source connection


def test_balanced_never_replays_the_transfer(monkeypatch: pytest.MonkeyPatch) -> None:
    flex, cuda = plain("flex").autodiff().gradient_checkpointing(), plain("cuda0").autodiff().gradient_checkpointing()
    x = Tensor.from_floats([[0.5, -1.0], [2.0, 0.25]], flex).require_grad()
    out = (x.to_device(cuda).exp() * 2.0).tanh().sum()  # memory-bound ops right after the move
    replays = []
    real_transfer = shim_tensor.transfer
    monkeypatch.setattr(shim_tensor, "transfer", lambda *args: replays.append(args) or real_transfer(*args))
    grads = out.backward()
    assert grads.recomputed > 0 and replays == []
    values = x.to_numpy().astype(np.float64)
    expected = (1 - np.tanh(2 * np.exp(values)) ** 2) * 2 * np.exp(values)
    np.testing.assert_allclose(x.grad(grads).to_numpy(), expected, rtol=1e-4, atol=1e-6)


def test_the_move_keeps_the_tensors_strategy_and_the_gradient_its_dtype() -> None:
    source = plain("ndarray").autodiff().gradient_checkpointing()
    target = plain("libtorch").autodiff()
    x = Tensor.from_data(np.array([1.5, -0.5]), source).require_grad()  # float64
    moved = x.to_device(target)
    assert moved.device().gradient_checkpointing_strategy() is BALANCED
    weights = Tensor.from_floats([2.0, 2.0], target).require_grad()  # float32, Disabled
    with pytest.raises(DispatchError) as info:
        moved * weights
    assert info.value.code == "MV107"
    retagged = moved.with_gradient_checkpointing_strategy(DISABLED)
    grads = (retagged * weights).sum().backward()
    grad = x.grad(grads)
    assert grad.dtype == "float64" and grad.device() == Device.ndarray() and grad.to_list() == [2.0, 2.0]
    # A float32 source meeting float64 values on the target: its gradient comes back in float32.
    narrow = Tensor.from_floats([1.0, 3.0], source).require_grad()
    wide = Tensor.from_data(np.array([0.5, 0.25]), target.gradient_checkpointing())
    grads = (narrow.to_device(target) * wide).sum().backward()
    assert narrow.grad(grads).dtype == "float32" and narrow.grad(grads).to_list() == [0.5, 0.25]


def test_remaining_failures_raise_before_any_state_changes() -> None:
    flex = plain("flex").autodiff()
    x = Tensor.from_floats([1.0, 2.0], flex).require_grad()
    capture = Device.capture()
    for target, code, message in (
        (capture.autodiff(), "MV102", S.MSG_CAPTURE_AUTODIFF),
        (capture, "MV102", S.MSG_AD_MISMATCH),
        (plain("ndarray"), "MV102", S.MSG_AD_MISMATCH),
    ):
        with pytest.raises(DispatchError) as info:
            x.to_device(target)
        assert (info.value.code, str(info.value)) == (code, message)
    grads = (x * x).sum().backward()
    assert x.grad(grads).to_list() == [2.0, 4.0]


def test_the_other_profiles_still_panic() -> None:
    x = Tensor.from_floats([1.0], plain("flex").autodiff()).require_grad()
    for profile in sorted(set(S.PROFILES) - {PROFILE}):
        with rs.profile(profile), pytest.raises(DispatchError) as info:
            x.to_device(plain("ndarray").autodiff())
        assert info.value.code == "MV101"


def test_burn_next_is_the_default_profile_plus_its_own_overrides() -> None:
    assert dict(S.PROFILES[PROFILE]) == {**S.PROFILES[S.DEFAULT_PROFILE], **S.BURN_NEXT_OVERRIDES}
    codes = {outcome.code for key in S.keys_of("move")
             if isinstance(outcome := S.move_outcome(PROFILE, **key)[1], S.Fail)}
    assert "MV101" not in codes
