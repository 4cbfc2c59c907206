"""Dispatch decisions are memoised per operand key: a repeated call, a call after a profile switch and
a call whose operands differ only in kind, strategy or device must each get the outcome the tables
give for their own key, with the same error type and text every time."""

from __future__ import annotations

import numpy as np
import pytest

import runtime_shim as rs

X = np.arange(4, dtype=np.float32).reshape(2, 2)
INTS = np.arange(4, dtype=np.int64).reshape(2, 2)


def _outcome(call) -> tuple[str, str]:
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the error type and text are what is compared
        return type(error).__name__, str(error)
    return "ok", f"{result.state} {result.device()!r} {result.to_list()}"


def test_a_repeated_failure_raises_the_same_error_each_time() -> None:
    flex, cpu = rs.Tensor.from_data(X, rs.Device.flex()), rs.Tensor.from_data(X, rs.Device.cpu())
    ints, bools = rs.Tensor.from_data(INTS, rs.Device.cpu()), rs.Tensor.from_data(INTS > 1, rs.Device.cpu())
    calls = [lambda: flex.add(cpu), lambda: ints.add(cpu), lambda: bools.mul(bools), lambda: bools.exp(),
             lambda: cpu.matmul(rs.Tensor.from_data(np.ones((3, 3), np.float32), rs.Device.cpu()))]
    for call in calls:
        first = _outcome(call)
        assert first[0] != "ok"
        assert [_outcome(call) for _ in range(3)] == [first] * 3


def test_each_profile_keeps_its_own_verdict_for_the_same_operands() -> None:
    # Burn at d16f7ba merges a plain float into autodiff; at 2026-08 it is a backend mismatch.
    outcomes = []
    for name in ("burn-2026-08", "burn-d16f7ba", "burn-2026-08", "burn-d16f7ba"):
        with rs.profile(name):
            tracked = rs.Tensor.from_data(X, rs.Device.cpu().autodiff()).require_grad()
            plain = rs.Tensor.from_data(X, rs.Device.cpu())
            outcomes.append((_outcome(lambda t=tracked, p=plain: t.add(p))[0],
                             _outcome(lambda t=tracked, p=plain: p.mul(t))[0]))
    assert outcomes[0] == outcomes[2] == ("BackendMismatch", "BackendMismatch")
    assert outcomes[1] == outcomes[3] == ("ok", "ok")


@pytest.mark.parametrize("strategy", [rs.CheckpointingStrategy.DISABLED, rs.CheckpointingStrategy.BALANCED])
def test_results_take_their_own_operands_strategy(strategy: rs.CheckpointingStrategy) -> None:
    device = rs.Device.flex().autodiff()
    if strategy is rs.CheckpointingStrategy.BALANCED:
        device = device.gradient_checkpointing()
    a = rs.Tensor.from_data(X, device).require_grad()
    for result in (a.add(a), a.exp(), a.sum(), a.to_device(device)):
        assert result.device() == device
        assert result.device().gradient_checkpointing_strategy() is strategy
    loss = a.mul(a).exp().sum()
    grads = loss.backward()
    expected = 2 * X * np.exp(X * X)
    np.testing.assert_allclose(a.grad(grads).to_numpy(), expected, rtol=1e-5)


def test_ops_on_partly_int_operands_replay_with_the_int_values_kept() -> None:
    a = rs.Tensor.from_data(X, rs.Device.cpu().autodiff()).require_grad()
    mask = rs.Tensor.from_data(INTS > 1, rs.Device.cpu().autodiff())
    out = a.mul(a).mask_fill(mask, 0.0).sum()
    grads = out.backward()
    np.testing.assert_allclose(a.grad(grads).to_numpy(), np.where(INTS > 1, 0.0, 2 * X))
