"""Profile ``burn-d16f7ba``: Burn at d16f7ba2ed, the commit the seeds quote.

Every dispatch tensor of that era carries an autodiff context (``autodiff: Disabled |
Enabled(strategy)``). The cells that differ from ``burn-2026-08`` are the ones the tests in
burn-dispatch ``src/backend.rs`` of that era assert (cited by test name below); its
``to_device`` arms (burn-dispatch ``src/macros.rs``, panics at :338 and :371) decide every move
as ``burn-2026-08`` does.
"""

from __future__ import annotations

import numpy as np
import pytest

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, Tensor, reveal_device

PINNED = "burn-d16f7ba"
STRATEGIES = (CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED)


@pytest.fixture(autouse=True)
def _pinned():
    with rs.profile(PINNED):
        yield


def _ad(strategy: CheckpointingStrategy) -> Device:
    device = Device.flex().autodiff()
    return device.gradient_checkpointing() if strategy is CheckpointingStrategy.BALANCED else device


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_autodiff_and_plain_floats_merge_in_both_orders(strategy: CheckpointingStrategy) -> None:
    """disabled_and_enabled_float_contexts_merge_in_both_orders: Disabled + Enabled(s) is Enabled(s)."""
    x = Tensor.from_floats([1.0, 2.0], _ad(strategy)).require_grad()
    plain = Tensor.from_floats([3.0, 4.0], Device.flex())
    for out in (x * plain, plain * x):
        assert reveal_device(out) == f"Autodiff {{ device: Flex, checkpointing: {strategy} }} float non-leaf"
        grads = out.sum().backward()
        assert x.grad(grads).to_list() == [3.0, 4.0]  # the plain float joined as a constant
    untracked = Tensor.from_floats([1.0, 2.0], _ad(strategy)) + plain
    assert reveal_device(untracked) == f"Autodiff {{ device: Flex, checkpointing: {strategy} }} float untracked"


def test_merging_still_needs_one_device_and_one_strategy() -> None:
    """fixed_arity_inputs_reject_mismatched_checkpointing_strategies; another device keeps its panic."""
    x = Tensor.from_floats([1.0, 2.0], Device.flex().autodiff())
    with pytest.raises(rs.DeviceMismatch):
        x + Tensor.from_floats([1.0, 2.0], Device.ndarray())
    balanced = Tensor.from_floats([1.0, 2.0], _ad(CheckpointingStrategy.BALANCED))
    with pytest.raises(rs.CheckpointingMismatch):
        x + balanced


def test_gradients_are_inner_backend_tensors_without_a_strategy() -> None:
    """gradients_are_inner_backend_tensors: a gradient's context is Disabled (burn-2026-08: Pf*)."""
    x = Tensor.from_floats([2.0, 3.0], _ad(CheckpointingStrategy.BALANCED)).require_grad()
    g = (x * x).sum().backward()
    grad = x.grad(g)
    assert reveal_device(grad) == "Flex float"
    np.testing.assert_array_equal(grad.to_numpy(), np.float32([4.0, 6.0]))
    with rs.profile("burn-2026-08"):
        assert reveal_device(x.grad(g)) == "Flex float checkpointing: Balanced"


def test_int_inner_clears_and_from_inner_restores_the_association() -> None:
    """inner_transitions_clear_and_restore_context: int_inner gives Disabled, int_from_inner
    Enabled(Disabled)."""
    ints = Tensor.from_ints([1, 2], _ad(CheckpointingStrategy.BALANCED))
    inner = ints.inner()
    assert reveal_device(inner) == "Flex int"
    restored = Tensor.from_inner(inner)
    assert reveal_device(restored) == "Autodiff { device: Flex, checkpointing: Disabled } int"
    with rs.profile("burn-2026-08"):
        assert reveal_device(ints.inner()) == reveal_device(ints)  # the identity there


def test_the_quoted_move_panics_are_unchanged() -> None:
    """burn-dispatch src/macros.rs:338 (b) and :371 (a) at d16f7ba2ed, same text and cells as 2c06be35."""
    x = Tensor.from_floats([1.0], Device.flex().autodiff()).require_grad()
    with pytest.raises(rs.AutodiffMismatchMove) as info:
        x.to_device(Device.flex())
    assert str(info.value) == "Cannot move between autodiff and non-autodiff instances."
    with pytest.raises(rs.AutodiffCrossBackendMove) as info:
        x.to_device(Device.ndarray().autodiff())
    assert str(info.value) == "Autodiff tensor cannot be moved between backends."
    assert info.value.panic == "not implemented: Autodiff tensor cannot be moved between backends."


def test_later_api_names_run_the_old_cells() -> None:
    """burn-tensor api/autodiff.rs of that era: ``without_autodiff`` is the renamed ``no_grad``
    (``K::inner`` when the device reports autodiff, else the tensor unchanged); ``is_autodiff`` and
    ``is_tracked`` (autodiff_and_tracking_states_follow_graph_transitions) answer per state."""
    device = Device.flex().autodiff()
    untracked = Tensor.from_floats([1.0, 2.0], device)
    leaf = untracked.require_grad()
    derived = leaf * 2.0
    plain = Tensor.from_floats([1.0], Device.flex())
    labels = Tensor.from_ints([0, 1], device)
    for t in (untracked, leaf, derived, plain, labels, Tensor.from_ints([0], Device.flex())):
        assert reveal_device(t.without_autodiff()) == reveal_device(t.no_grad())
        assert t.is_autodiff() == t.device().is_autodiff()
    assert reveal_device(labels.without_autodiff()) == "Flex int"  # int_inner clears the association
    assert [t.is_tracked() for t in (untracked, leaf, derived, derived.detach(), leaf.detach(), plain)] == [
        False, True, True, False, True, False]
    assert leaf.autodiff() is leaf and labels.autodiff() is labels  # already autodiff: unchanged
    assert reveal_device(plain.autodiff()) == reveal_device(Tensor.from_inner(plain))
    assert reveal_device(plain.autodiff()) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    assert reveal_device(labels.without_autodiff().autodiff()) == reveal_device(labels)
    off = derived.without_autodiff()
    assert not off.is_autodiff() and not off.is_tracked() and not off.is_require_grad()
    assert np.allclose(off.to_numpy(), [2.0, 4.0])
    with pytest.raises(rs.RequiresAutodiff):
        off.backward()


@pytest.mark.parametrize("profile", ["burn-2026-08", "burn-0.21"])
@pytest.mark.parametrize("name", ["without_autodiff", "autodiff", "is_autodiff", "is_tracked"])
def test_later_api_names_do_not_exist_in_earlier_profiles(profile: str, name: str) -> None:
    t = Tensor.from_floats([1.0], Device.flex().autodiff())
    with rs.profile(profile), pytest.raises(AttributeError, match=f"Tensor.{name} does not exist in profile {profile}"):
        getattr(t, name)()
    with rs.profile("burn-next"):
        getattr(t, name)()
