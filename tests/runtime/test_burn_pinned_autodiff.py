"""Burn's autodiff tests of the pinned era, translated to runtime_shim and run under the default profile.

Sources (tracel-ai/burn):

* burn-backend-tests ``tests/autodiff/*.rs`` as of 2c06be35 (2026-08-21; the suite the DispatchAutodiffContext
  commits build on). ``common/autodiff.rs`` includes the suite twice, with ``Autodiff<B>`` and with
  ``Autodiff<B, BalancedCheckpointing>``: every test here runs on both (``ad`` fixture).
* ``crates/burn/tests/autodiff_context.rs`` at 0aaa2a9f, the commit of the burn-dispatch ``backend.rs`` that
  the default profile cites (``Dispatch::is_tracked``, ``autodiff_context_tests``); it also changed
  burn-tensor ``src/tensor/api/autodiff.rs`` and ``src/device.rs``.
* burn-autodiff ``src/runtime/server.rs`` and ``src/runtime/memory_management.rs`` (a backward pass consumes
  the graph it walks), checked by ``tests/autodiff/memory_management.rs``.

``NOT_EXPRESSIBLE`` lists the tests of those files that the shim's API cannot state, and why.
"""

from __future__ import annotations

import numpy as np
import pytest

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, Tensor, reveal_device
from runtime_shim.semantics import MSG_NO_STEP

DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED

NOT_EXPRESSIBLE = {
    "aggregation.rs should_diff_prod*, should_diff_mean_dim": "no prod, prod_dim or mean_dim",
    "cat.rs should_diff_cat": "slices its inputs (no slice)",
    "broadcast.rs *_broadcast": "slices the weight (no slice)",
    "pow.rs should_diff_powf*": "powf with a tensor exponent (only powf_scalar)",
    "trig.rs (all but should_diff_tanh)": "no cos, sin, tan, cosh, sinh, asin, ..., atan2",
    "bridge.rs test_full_precision, cast.rs cast_keeps_gradient_flow": "no cast between float dtypes",
    "backward.rs test_embedding_backward": "no embedding",
    "multithread.rs should_behave_the_same_with_multithread": "ignored in Burn (flaky); threads move Rust handles",
    "abs, ceil, floor, round, sign, erf, gelu, log1p, log_sigmoid, softmax, recip, remainder, select, slice, "
    "slice_assign, gather_scatter*, mask_select, maxmin, sort, cummax/cummin/cumprod/cumsum, expand, flip, "
    "permute, repeat_dim, unfold, nonzero, conv*, pool*, interpolate, cross*, ctc, complex, rfft, linear, "
    "hypot, quantization, all_reduce": "ops the shim's API does not have",
    "autodiff_context.rs quantized_tensors_never_retain_gradients": "no quantization",
    "burn-tensor device.rs capture_device_reports_recordable_dtype_support": "no supports_dtype",
    "burn-dispatch device.rs capture_device_id_round_trips_through_dispatch": "DeviceId encoding",
    "burn-tensor check.rs slice/movedim/unsqueeze checks, extension.rs bridge round trips": "no such API",
}


@pytest.fixture(params=[DISABLED, BALANCED], ids=str)
def ad(request: pytest.FixtureRequest) -> Device:
    """``AutodiffDevice::new()`` of each checkpointing variant of the suite."""
    device = Device.flex().autodiff()
    return device.gradient_checkpointing() if request.param is BALANCED else device


def _close(tensor: Tensor, expected: object, *, exact: bool = False) -> None:
    """``assert_eq`` (exact) or ``assert_approx_eq`` with Burn's default tolerance."""
    if exact:
        np.testing.assert_array_equal(tensor.to_numpy(), np.asarray(expected, dtype=np.float32))
    else:
        np.testing.assert_allclose(tensor.to_numpy(), np.asarray(expected, dtype=np.float32), rtol=1e-3, atol=1e-3)


def _leaves(ad: Device, *data: object) -> list[Tensor]:
    return [Tensor.from_floats(d, ad).require_grad() for d in data]


# --- add.rs, sub.rs, mul.rs, div.rs, neg.rs -----------------------------------------------------------

def test_should_diff_add(ad: Device) -> None:
    t1, t2 = _leaves(ad, [2.0, 5.0], [4.0, 1.0])
    t3 = t1 + t2
    grads = t3.backward()
    _close(t1.grad(grads), [1.0, 1.0], exact=True)
    _close(t2.grad(grads), [1.0, 1.0], exact=True)
    _close(t3, [6.0, 6.0], exact=True)


@pytest.mark.parametrize(("op", "out", "grad"), [
    ("add", [7.0, 15.0], [1.0, 1.0]), ("sub", [-3.0, 5.0], [1.0, 1.0]),
], ids=["should_diff_add_scalar", "should_diff_sub_scalar"])
def test_scalar_add_sub(ad: Device, op: str, out: list, grad: list) -> None:
    [t] = _leaves(ad, [2.0, 10.0])
    result = getattr(t, op)(5.0)
    grads = result.backward()
    _close(t.grad(grads), grad, exact=True)
    _close(result, out, exact=True)


def test_add_complex_1(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [13.0, -3.0]], [[4.0, 7.0], [2.0, 3.0]], [[2.0, 2.0], [2.0, 2.0]])
    t5 = (t1 + t2).add(t3).add(5.0).add(t1).add(t2)
    grads = t1.add(t5).backward()
    _close(t1.grad(grads), [[3.0, 3.0], [3.0, 3.0]], exact=True)
    _close(t2.grad(grads), [[2.0, 2.0], [2.0, 2.0]], exact=True)


def test_should_diff_sub(ad: Device) -> None:
    t1, t2 = _leaves(ad, [2.0, 5.0], [4.0, 1.0])
    t3 = t1.sub(t2)
    grads = t3.backward()
    _close(t1.grad(grads), [1.0, 1.0], exact=True)
    _close(t2.grad(grads), [-1.0, -1.0], exact=True)
    _close(t3, [-2.0, 4.0], exact=True)


def test_sub_complex_1(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [13.0, -3.0]], [[4.0, 7.0], [2.0, 3.0]], [[2.0, 2.0], [2.0, 2.0]])
    t5 = t1.sub(t2).sub(t3).sub(5.0)
    grads = t1.sub(t5).backward()
    _close(t1.grad(grads), [[0.0, 0.0], [0.0, 0.0]], exact=True)
    _close(t2.grad(grads), [[1.0, 1.0], [1.0, 1.0]], exact=True)


def test_should_diff_mul(ad: Device) -> None:
    t1, t2 = _leaves(ad, [1.0, 7.0], [4.0, 7.0])
    t3 = t1.mul(t2)
    grads = t3.backward()
    _close(t1.grad(grads), [4.0, 7.0], exact=True)
    assert t2.grad(grads) is not None
    _close(t3, [4.0, 49.0], exact=True)


def test_should_diff_mul_scalar(ad: Device) -> None:
    [t] = _leaves(ad, [2.0, 5.0])
    out = t.mul(4.0)
    grads = out.backward()
    _close(out, [8.0, 20.0], exact=True)
    _close(t.grad(grads), [4.0, 4.0], exact=True)


def test_mul_complex_1(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [13.0, -3.0]], [[4.0, 7.0], [2.0, 3.0]], [[2.0, 2.0], [2.0, 2.0]])
    grads = t1.mul(t1.mul(t2).mul(t3)).backward()
    _close(t1.grad(grads), [[16.0, 196.0], [104.0, -36.0]], exact=True)
    _close(t2.grad(grads), [[2.0, 98.0], [338.0, 18.0]], exact=True)


def test_should_diff_div(ad: Device) -> None:
    t1, t2 = _leaves(ad, [1.0, 7.0], [4.0, 7.0])
    grads = t1.div(t2).backward()
    _close(t1.grad(grads), [0.25, 0.14285715])
    _close(t2.grad(grads), [-0.0625, -0.14285715])


def test_should_diff_div_scalar(ad: Device) -> None:
    [t] = _leaves(ad, [1.0, 7.0])
    grads = t.div(4.0).backward()
    _close(t.grad(grads), [0.25, 0.25], exact=True)


def test_div_complex_1(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [13.0, -3.0]], [[4.0, 7.0], [2.0, 3.0]], [[2.0, 2.0], [2.0, 2.0]])
    grads = t1.div(t2).div(t3).backward()
    _close(t1.grad(grads), [[0.1250, 0.07142857], [0.25, 0.16666667]])
    _close(t2.grad(grads), [[-0.03125, -0.07142857], [-1.6250, 0.16666667]])
    _close(t3.grad(grads), [[-0.0625, -0.25], [-1.6250, 0.25]])


def test_div_complex_2(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]])
    grads = t1.matmul(t2).div(t2).backward()
    _close(t1.grad(grads), [[2.00, 2.92857146], [1.36666667, 2.0]])
    _close(t2.grad(grads), [[0.08333334, 0.09591837], [-0.05555558, -0.06714284]])


def test_should_diff_neg(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [[4.0, 7.0], [2.0, 3.0]])
    grads = t1.matmul(t2.neg()).neg().backward()
    _close(t1.grad(grads), [[11.0, 5.0], [11.0, 5.0]], exact=True)
    _close(t2.grad(grads), [[3.0, 3.0], [10.0, 10.0]], exact=True)


# --- exp.rs, log.rs, sqrt.rs, relu.rs, sigmoid.rs, trig.rs (tanh), pow.rs (powf_scalar) ---------------

@pytest.mark.parametrize(("name", "data_1", "data_2", "unary", "then_matmul", "grad_1", "grad_2"), [
    ("should_diff_exp", [[1.0, 7.0], [-2.0, -3.0]], [[4.0, -7.0], [2.0, 3.0]], Tensor.exp, False,
     [[54.5991, 27.4746], [54.5991, 27.4746]], [[-5.4598e01, -9.1188e-04], [2.9556e01, 8.0342e01]]),
    ("should_diff_log", [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]], Tensor.log, True,
     [[60.2652, 72.3130], [60.2652, 72.3130]], [[22.8614, 24.5043], [24.5729, 26.8507]]),
    ("should_diff_sqrt", [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]], Tensor.sqrt, True,
     [[82.112640, 99.083275], [82.112640, 99.083275]], [[30.309311, 33.120457], [34.581974, 38.769463]]),
    ("should_diff_tanh", [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]], Tensor.tanh, True,
     [[32.0, 32.0], [32.0, 32.0]], [[8.00092, 8.000153], [8.000003, 7.999995]]),
    ("should_diff_powf_scalar", [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]],
     lambda t: t.powf_scalar(0.4), True, [[68.0, 79.0328], [68.0, 79.0328]],
     [[23.5081, 25.2779], [26.0502, 28.6383]]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_unary_op_gradients(ad: Device, name: str, data_1: list, data_2: list, unary, then_matmul: bool,
                            grad_1: list, grad_2: list) -> None:
    t1, t2 = _leaves(ad, data_1, data_2)
    out = t1.matmul(unary(t2))
    if then_matmul:
        out = out.matmul(t2)
    grads = out.backward()
    _close(t1.grad(grads), grad_1)
    _close(t2.grad(grads), grad_2)


def test_should_diff_relu(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [-2.0, -3.0]], [[4.0, -7.0], [2.0, 3.0]])
    grads = t1.matmul(t2).relu().matmul(t2).backward()
    _close(t1.grad(grads), [[-47.0, 9.0], [-35.0, 15.0]], exact=True)
    _close(t2.grad(grads), [[15.0, 13.0], [-2.0, 39.0]], exact=True)


@pytest.mark.parametrize(("value", "grad"), [(0.8762, 0.207549), (-90.0, 0.0)],
                         ids=["should_diff_sigmoid", "small_neg_val_should_not_cause_grad_overflow"])
def test_sigmoid(ad: Device, value: float, grad: float) -> None:
    [t] = _leaves(ad, [value])
    grads = t.sigmoid().backward()
    _close(t.grad(grads), [grad])


# --- aggregation.rs, matmul.rs, reshape.rs, transpose.rs ----------------------------------------------

DATA_1, DATA_2 = [[1.0, 7.0], [-2.0, -3.0]], [[4.0, -7.0], [2.0, 3.0]]


def test_should_diff_mean(ad: Device) -> None:
    t1, t2 = _leaves(ad, DATA_1, DATA_2)
    grads = t1.mul(t1.matmul(t2).mean().reshape([1, 1])).backward()  # mean().unsqueeze()
    _close(t1.grad(grads), [[3.5, 9.5], [3.5, 9.5]])
    _close(t2.grad(grads), [[-0.75, -0.75], [3.0, 3.0]])


def test_should_diff_sum_1(ad: Device) -> None:
    t1, t2 = _leaves(ad, DATA_1, DATA_2)
    grads = t1.mul(t1.matmul(t2).sum().reshape([1, 1])).backward()
    _close(t1.grad(grads), [[14.0, 38.0], [14.0, 38.0]])
    _close(t2.grad(grads), [[-3.0, -3.0], [12.0, 12.0]])


def test_should_diff_sum_2(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]])
    t3 = t1.matmul(t2)
    grads = t3.sum_dim(1).mul(t3).sum().backward()
    _close(t1.grad(grads), [[494.0, 722.0], [2990.0, 4370.0]])
    _close(t2.grad(grads), [[690.0, 690.0], [958.0, 958.0]])


def test_should_diff_sum_dim(ad: Device) -> None:
    t1, t2 = _leaves(ad, DATA_1, DATA_2)
    grads = t1.mul(t1.matmul(t2).sum_dim(1)).backward()  # sum_dim keeps the dim: [2, 1]
    _close(t1.grad(grads), [[8.0, 72.0], [6.0, -34.0]])
    _close(t2.grad(grads), [[18.0, 18.0], [71.0, 71.0]])


def test_should_diff_matmul(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [[4.0, 7.0], [2.0, 3.0]])
    t3 = t1.matmul(t2)
    grads = t3.backward()
    _close(t1.grad(grads), [[11.0, 5.0], [11.0, 5.0]], exact=True)
    _close(t2.grad(grads), [[3.0, 3.0], [10.0, 10.0]], exact=True)
    _close(t3, [[18.0, 28.0], [14.0, 23.0]], exact=True)


@pytest.mark.parametrize(("outer", "grad_1", "grad_2"), [
    (False, [[44.0, 20.0], [44.0, 20.0]], [[56.0, 56.0], [16.0, 16.0]]),
    (True, [[800.0, 792.0], [360.0, 592.0]], [[264.0, 264.0], [344.0, 344.0]]),
], ids=["test_matmul_complex_1", "test_matmul_complex_2"])
def test_matmul_complex(ad: Device, outer: bool, grad_1: list, grad_2: list) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [13.0, -3.0]], [[4.0, 7.0], [2.0, 3.0]], [[2.0, 2.0], [2.0, 2.0]])
    out = t1.matmul(t2).matmul(t3)
    grads = (t1.matmul(out) if outer else out).backward()
    _close(t1.grad(grads), grad_1, exact=True)
    _close(t2.grad(grads), grad_2, exact=True)


def test_should_diff_reshape(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [4.0, 7.0, 2.0, 3.0])
    grads = t1.matmul(t2.reshape([2, 2])).backward()
    _close(t1.grad(grads), [[11.0, 5.0], [11.0, 5.0]], exact=True)
    _close(t2.grad(grads), [3.0, 3.0, 10.0, 10.0], exact=True)


def test_should_diff_transpose(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [[4.0, 7.0], [2.0, 3.0]])
    grads = t1.matmul(t2.transpose()).transpose().backward()
    _close(t1.grad(grads), [[6.0, 10.0], [6.0, 10.0]])
    _close(t2.grad(grads), [[3.0, 10.0], [3.0, 10.0]])


def test_should_diff_swap_dims(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[[0.0, 1.0], [3.0, 4.0]], [[6.0, 7.0], [9.0, 10.0]]],
                     [[[1.0, 4.0], [2.0, 5.0]], [[7.0, 10.0], [8.0, 11.0]]])
    grads = t1.matmul(t2.swap_dims(0, 2)).matmul(t2.swap_dims(1, 2)).backward()
    _close(t1.grad(grads), [[[66.0, 78.0], [66.0, 78.0]], [[270.0, 306.0], [270.0, 306.0]]])
    _close(t2.grad(grads), [[[22.0, 286.0], [28.0, 316.0]], [[172.0, 652.0], [190.0, 694.0]]])


# --- mask.rs, cat.rs ------------------------------------------------------------------------------------

def test_should_diff_mask_fill(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [[4.0, 7.0], [2.0, 3.0]])
    mask = Tensor.from_bools([[True, False], [False, True]], ad)
    grads = t1.matmul(t2).mask_fill(mask, 2.0).backward()
    _close(t1.grad(grads), [[7.0, 3.0], [4.0, 2.0]], exact=True)
    _close(t2.grad(grads), [[2.0, 1.0], [3.0, 7.0]], exact=True)


def test_should_diff_mask_where(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, [[1.0, 7.0], [2.0, 3.0]], [[4.0, 7.0], [2.0, 3.0]], [[8.8, 9.8], [10.8, 11.8]])
    mask = Tensor.from_bools([[True, False], [False, True]], ad)
    grads = t1.matmul(t2).matmul(t3).mask_where(mask, t3).backward()
    _close(t1.grad(grads), [[121.8, 55.0], [110.8, 50.0]])
    _close(t2.grad(grads), [[27.4, 33.4], [95.0, 115.0]])
    _close(t3.grad(grads), [[15.0, 18.0], [23.0, 29.0]])


def test_should_diff_cat_more_than_1_dim(ad: Device) -> None:
    t1, t2 = _leaves(ad, [[2.0, -1.0], [5.0, 2.0]], [[5.0, 4.0], [-1.0, 4.0], [4.0, 1.0]])
    t3 = Tensor.cat([t1, t2], 0)
    assert t3.shape == (5, 2)
    grads = t3.backward()
    assert t1.grad(grads).shape == t1.shape and t2.grad(grads).shape == t2.shape


def test_should_slice_grads_correctly_when_some_inputs_not_tracked(ad: Device) -> None:
    [t1] = _leaves(ad, [[1.0]])
    t2 = Tensor.from_floats([[10.0, 20.0]], ad)  # not tracked
    [t3] = _leaves(ad, [[100.0, 200.0, 300.0]])
    weights = Tensor.from_floats([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], ad)
    grads = (Tensor.cat([t1, t2, t3], 1) * weights).sum().backward()
    _close(t1.grad(grads), [[1.0]], exact=True)
    _close(t3.grad(grads), [[4.0, 5.0, 6.0]], exact=True)
    assert t2.grad(grads) is None


# --- bridge.rs, gradients.rs --------------------------------------------------------------------------

def test_one_hot_preserves_autodiff_device(ad: Device) -> None:
    targets = Tensor.from_ints([0, 1], ad)
    assert targets.device().is_autodiff()
    one_hot = targets.one_hot(2).float()
    assert one_hot.device().is_autodiff()
    logits = Tensor.ones([2, 2], ad).require_grad()
    grads = (logits * one_hot).sum().backward()
    logits_grad = logits.grad(grads)
    assert logits_grad is not None and not logits_grad.device().is_autodiff()


def test_should_update_tensor_when_grad_replace(ad: Device) -> None:
    """gradients.rs (``activation::gelu`` of the second operand omitted: no gelu; it only shapes values)."""
    t1 = Tensor.random([32, 32], ad).require_grad()
    t2 = Tensor.random([32, 32], ad)
    grads = t1.matmul(t2).backward()
    grad_1 = t1.grad(grads)
    updated = Tensor.random([32, 32], ad).require_grad()
    t1.grad_replace(grads, updated.inner())
    new = t1.grad(grads)
    assert not np.array_equal(new.to_numpy(), grad_1.to_numpy())
    np.testing.assert_array_equal(new.to_numpy(), updated.to_numpy())


# --- checkpoint.rs: each graph must run backward under both strategies ---------------------------------

def _memory_bound_eager(a: Tensor, b: Tensor) -> Tensor:
    return a.add(b)


def _memory_bound_eager_scalar(a: Tensor, b: float) -> Tensor:
    return a.add(b)


def _compute_bound_eager(a: Tensor, b: Tensor) -> Tensor:
    return a.mask_where(Tensor.empty_bool(list(a.shape), a.device()), b)


def _compute_bound_eager_scalar(a: Tensor, b: float) -> Tensor:
    return a.mask_fill(Tensor.empty_bool(list(a.shape), a.device()), b)


def _memory_bound_lazy(a: Tensor, b: Tensor) -> Tensor:
    return a.mul(b)


def _compute_bound_lazy(a: Tensor, b: Tensor) -> Tensor:
    return a.matmul(b)


def _data(first: float) -> list:
    return [[first, 7.0], [7.0, 7.0]]


def test_autodiff_checkpoint_complicated_computation(ad: Device) -> None:
    t0, t1, t2, t3, t4 = _leaves(ad, *(_data(v) for v in (0.0, 0.1, 0.2, 0.3, 0.4)))
    t5 = _compute_bound_eager(t0, t1)
    t6 = _compute_bound_lazy(t2, t3)
    t7 = _memory_bound_eager(t3, t4)
    t8 = _compute_bound_lazy(t6, t7)
    t9 = _memory_bound_eager_scalar(t7, 11.0)
    t10 = _memory_bound_lazy(t5, t8)
    t11 = _memory_bound_lazy(t8, t9)
    _compute_bound_lazy(t10, t11).backward()


def test_autodiff_checkpoint_with_missing_requirement(ad: Device) -> None:
    [t0] = _leaves(ad, _data(0.0))
    t1 = Tensor.from_floats(_data(0.1), ad)  # does not require_grad
    t2 = _memory_bound_eager(t0, t1)
    t3 = _memory_bound_eager_scalar(t2, 11.0)
    t4 = _memory_bound_eager_scalar(t2, 11.0)
    t5 = _compute_bound_lazy(t3, t4)
    t6 = _compute_bound_eager_scalar(t5, 11.0)
    t7 = _memory_bound_eager(t5, t2)
    _memory_bound_eager(t6, t7).backward()


def test_autodiff_checkpoint_with_many_duplicates(ad: Device) -> None:
    [t0] = _leaves(ad, [[4.0, 7.0], [7.0, 7.0]])
    t1 = _memory_bound_eager(t0, t0)
    t2 = _compute_bound_eager(t0, t0)
    t3 = _memory_bound_lazy(t0, t0)
    t4 = _compute_bound_lazy(t0, t0)
    t5 = _memory_bound_eager(t1, t0)
    t6 = _memory_bound_eager(t0, t5)
    t7 = _compute_bound_lazy(t3, t5)
    t8 = _compute_bound_eager(t4, t2)
    t9 = _memory_bound_lazy(t6, t7)
    t10 = _memory_bound_eager(t0, t9)
    t11 = _memory_bound_eager_scalar(t10, 9.0)
    _compute_bound_lazy(t8, t11).backward()


def test_autodiff_checkpoint_with_long_chain_of_eager_memory_bound(ad: Device) -> None:
    [t0] = _leaves(ad, _data(0.0))
    t1 = Tensor.from_floats(_data(0.1), ad)
    t2, t3, t4 = _leaves(ad, _data(0.2), _data(0.3), _data(0.4))
    t8 = _memory_bound_eager(_memory_bound_eager(_memory_bound_eager(_memory_bound_eager(t0, t1), t2), t3), t4)
    _memory_bound_lazy(t8, t1).backward()


def test_autodiff_checkpoint_half_sub_graph_not_tracked(ad: Device) -> None:
    t0, t1, t2 = (Tensor.from_floats(_data(v), ad) for v in (0.0, 0.1, 0.2))
    t3, t4, t5 = _leaves(ad, _data(0.3), _data(0.4), _data(0.5))
    t7 = _compute_bound_eager(_memory_bound_lazy(t0, t1), t2)
    t9 = _compute_bound_lazy(_memory_bound_eager(t3, t4), t5)
    _compute_bound_lazy(t7, t9).backward()


def test_autodiff_checkpoint_very_complex(ad: Device) -> None:
    [t0] = _leaves(ad, _data(0.0))
    t1 = Tensor.from_floats(_data(0.1), ad)
    t2, t3, t4 = _leaves(ad, _data(0.2), _data(0.3), _data(0.4))
    t5 = _memory_bound_eager_scalar(t0, 8.0)
    t6 = _memory_bound_lazy(t5, t1)
    t7 = _compute_bound_lazy(t6, t6)
    t8 = _memory_bound_lazy(t1, t5)
    t9 = _memory_bound_eager_scalar(t7, 7.0)
    t10 = _compute_bound_eager(t5, t8)
    t11 = _memory_bound_eager(t2, t9)
    t12 = _memory_bound_lazy(t2, t2)
    t13 = _compute_bound_eager(t10, t11)
    t14 = _compute_bound_eager_scalar(t3, 8.0)
    t15 = _compute_bound_lazy(t4, t12)
    t16 = _memory_bound_lazy(t10, t7)
    t17 = _compute_bound_lazy(t13, t1)
    t18 = _memory_bound_eager(t15, t16)
    t19 = _compute_bound_eager(t14, t17)
    t20 = _memory_bound_lazy(t18, t19)
    _memory_bound_eager_scalar(t20, 8.0).backward()


# --- memory_management.rs: a backward pass consumes the graph it walks ---------------------------------
# burn-autodiff runtime/server.rs `backward` removes every traversed node's step; `cleanup` frees the graphs
# built on a consumed node (memory_management.rs `free_unavailable_nodes`); a later backward from a freed root
# panics at `steps.remove(&node_id).expect("Node should have a step registered, ...")`.

MM = [[1.0, 2.0], [3.0, 4.0]]


def _no_step(call) -> None:  # Burn: #[should_panic]
    with pytest.raises(rs.RequiresAutodiff) as info:
        call()
    assert str(info.value) == MSG_NO_STEP and info.value.code == "MV108"


def test_mm_independent_trees(ad: Device) -> None:
    t0, t1, t2, t3 = _leaves(ad, MM, MM, MM, MM)
    t6 = (t0 * t1) * (t2 * t3)
    t7, t8, t9, t10 = _leaves(ad, MM, MM, MM, MM)
    t13 = (t7 * t8) * (t9 * t10)
    t6.backward()
    grads = t13.backward()
    assert all(t.grad(grads) is not None for t in (t7, t8, t9, t10))


def test_mm_crossover_trees_root_unavailable(ad: Device) -> None:
    t0, t1, t2, t3 = _leaves(ad, MM, MM, MM, MM)
    t4 = t0 * t1
    t6 = t4 * (t2 * t3)
    t7, t8 = _leaves(ad, MM, MM)
    t10 = t4 * (t7 * t8)
    t6.backward()
    _no_step(t10.backward)


def test_mm_crossover_trees_with_referred_subtree(ad: Device) -> None:
    t0, t1, t2, t3 = _leaves(ad, MM, MM, MM, MM)
    t4 = t0 * t1
    t6 = t4 * (t2 * t3)
    t7, t8 = _leaves(ad, MM, MM)
    t9 = t7 * t8
    _t10 = t4 * t9
    t6.backward()
    t9.backward()


def test_mm_three_crossover_trees_last_still_usable(ad: Device) -> None:
    t0, t1, t2, t3 = _leaves(ad, MM, MM, MM, MM)
    t5 = t2 * t3
    t6 = (t0 * t1) * t5
    t7, t8, t9, t10 = _leaves(ad, MM, MM, MM, MM)
    t12 = t9 * t10
    t13 = (t7 * t8) * t12
    _t14 = t5 * t12
    t6.backward()
    t13.backward()


def test_mm_three_crossover_trees_middle_one_unavailable(ad: Device) -> None:
    t0, t1, t2, t3 = _leaves(ad, MM, MM, MM, MM)
    t5 = t2 * t3
    t6 = (t0 * t1) * t5
    t7, t8, t9, t10 = _leaves(ad, MM, MM, MM, MM)
    t12 = t9 * t10
    _t13 = (t7 * t8) * t12
    t14 = t5 * t12
    t6.backward()
    _no_step(t14.backward)


def test_mm_self_referencing_tree(ad: Device) -> None:
    t0, t1, t2 = _leaves(ad, MM, MM, MM)
    t3 = t0 * t1
    (t3 * (t2 * t3)).backward()


def test_mm_with_non_impacting_detach(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, MM, MM, MM)
    grads = ((t1 * t2).detach() * t3).backward()
    assert t3.grad(grads) is not None


def test_mm_with_missing_require_grad_after_cleanup(ad: Device) -> None:
    [t1] = _leaves(ad, MM)
    t2, t3 = Tensor.from_floats(MM, ad), Tensor.from_floats(MM, ad)
    t5 = (t1 * t2) * t3
    Tensor.from_floats(MM, ad).require_grad().backward()  # a trivial backward, to trigger cleanup
    grads = t5.backward()
    assert t1.grad(grads) is not None and t2.grad(grads) is None and t3.grad(grads) is None


def test_mm_with_detach_after_cleanup(ad: Device) -> None:
    t1, t2, t3 = _leaves(ad, MM, MM, MM)
    t5 = (t1 * t2) * t3.detach()
    Tensor.from_floats(MM, ad).require_grad().backward()
    grads = t5.backward()
    assert t1.grad(grads) is not None and t2.grad(grads) is not None and t3.grad(grads) is None


def test_mm_deletables_propagate_well(ad: Device) -> None:
    t0, t1 = _leaves(ad, MM, MM)
    t2 = t0 * t1
    t3 = t2.exp()
    _t4 = t3.log()
    t2.backward()
    _no_step(t3.backward)  # the intermediate t3 hangs from the consumed t2 too


def test_mm_node_explored_once_can_still_be_tagged_as_useful_when_found_again_deeper(ad: Device) -> None:
    for _ in range(12):
        t0, t1 = _leaves(ad, MM, MM)
        t2 = t1.exp()
        t3 = t0.exp()
        _t4 = t3 * t2
        t8 = t2.exp().exp().exp().exp()
        t3.backward()
        grads = t8.backward()
        assert t1.grad(grads) is not None


def test_a_second_backward_from_the_same_root_panics(ad: Device) -> None:
    """server.rs `backward`: the root's step was removed by the first pass."""
    [x] = _leaves(ad, [1.0, 2.0])
    loss = (x * 2.0).sum()
    loss.backward()
    _no_step(loss.backward)
    # a new graph on the same leaves is fine: a parameter trains across steps
    grads = (x * 3.0).sum().backward()
    _close(x.grad(grads), [3.0, 3.0], exact=True)


# --- crates/burn/tests/autodiff_context.rs at 0aaa2a9f ----------------------------------------------------

def test_gradient_flows_to_enabled_operand_but_not_disabled_constant() -> None:
    x = Tensor.from_floats([2.0, 3.0], Device.flex().autodiff())
    assert x.is_autodiff() and not x.is_tracked()
    x = x.require_grad()
    constant = Tensor.from_floats([4.0, 5.0], Device.flex())
    output = (x * constant).sum()
    assert output.is_autodiff() and output.is_tracked()
    grads = output.backward()
    _close(x.grad(grads), [4.0, 5.0], exact=True)
    assert not constant.is_autodiff() and not constant.is_tracked() and not constant.is_require_grad()
    # burn-tensor api/autodiff.rs `grad_impl`: a Disabled context has no gradient (None, before any dispatch)
    assert constant.grad(grads) is None and constant.grad_remove(grads) is None
    with pytest.raises(rs.RequiresAutodiff, match="Requires autodiff tensor."):  # Dispatch::backward's panic
        constant.backward()


def test_autodiff_and_tracking_states_follow_graph_transitions() -> None:
    plain = Tensor.from_floats([1.0, 2.0], Device.flex())
    assert not plain.is_autodiff() and not plain.is_tracked() and not plain.is_require_grad()
    autodiff = plain.autodiff()
    assert autodiff.is_autodiff() and not autodiff.is_tracked() and not autodiff.is_require_grad()
    leaf = autodiff.require_grad()
    assert leaf.is_autodiff() and leaf.is_tracked() and leaf.is_require_grad()
    detached_leaf = leaf.detach()
    assert detached_leaf.is_autodiff() and detached_leaf.is_tracked() and detached_leaf.is_require_grad()
    derived = leaf * 2.0
    assert derived.is_autodiff() and derived.is_tracked() and not derived.is_require_grad()
    detached = derived.detach()
    assert detached.is_autodiff() and not detached.is_tracked() and not detached.is_require_grad()
    plain = derived.without_autodiff()
    assert not plain.is_autodiff() and not plain.is_tracked() and not plain.is_require_grad()


def test_tensor_autodiff_conversions_are_idempotent() -> None:
    """api/autodiff.rs: ``inner`` is ``without_autodiff`` and ``from_inner`` is ``autodiff``; both test
    ``is_autodiff()`` first, so neither fails on a tensor already in the state it asks for."""
    plain = Tensor.from_floats([1.0, 2.0], Device.flex())
    plain = plain.without_autodiff().inner()
    assert not plain.is_autodiff()
    autodiff = plain.autodiff()
    assert autodiff.is_autodiff()
    autodiff = Tensor.from_inner(autodiff)
    assert autodiff.is_autodiff()
    plain = autodiff.without_autodiff().inner()
    assert not plain.is_autodiff()


def test_enabling_autodiff_twice_preserves_checkpointing_strategy() -> None:
    tensor = Tensor.from_floats([1.0, 2.0], Device.flex().autodiff().gradient_checkpointing())
    tensor = tensor.autodiff()
    assert tensor.gradient_checkpointing_strategy() is BALANCED
    tensor = Tensor.from_inner(tensor)
    assert tensor.gradient_checkpointing_strategy() is BALANCED


def test_device_autodiff_conversions_are_idempotent() -> None:
    """device.rs ``Device::autodiff``: "Calling this method on a device that already has autodiff enabled
    returns it unchanged, preserving its gradient-checkpointing strategy"; the strategy is an ``Option``."""
    device = Device.flex().autodiff().gradient_checkpointing().autodiff()
    assert device.is_autodiff() and device.gradient_checkpointing_strategy() is BALANCED
    device = device.without_autodiff().inner()
    assert not device.is_autodiff() and device.gradient_checkpointing_strategy() is None


def test_tensor_autodiff_builder_configures_checkpointing() -> None:
    tensor = Tensor.from_floats([1.0, 2.0], Device.flex()).autodiff().with_gradient_checkpointing_strategy(BALANCED)
    assert tensor.is_autodiff() and tensor.gradient_checkpointing_strategy() is BALANCED
    assert reveal_device(tensor) == "Autodiff { device: Flex, checkpointing: Balanced } float untracked"


def test_tensor_checkpointing_strategy_setter_requires_autodiff() -> None:
    with pytest.raises(rs.RequiresAutodiff, match="Tensor::with_gradient_checkpointing_strategy requires autodiff"):
        Tensor.from_floats([1.0, 2.0], Device.flex()).with_gradient_checkpointing_strategy(BALANCED)
    with pytest.raises(rs.RequiresAutodiff, match="call Tensor::autodiff first"):
        Tensor.from_ints([1, 2], Device.flex()).with_gradient_checkpointing_strategy(DISABLED)
    labels = Tensor.from_ints([1, 2], Device.flex().autodiff()).with_gradient_checkpointing_strategy(BALANCED)
    assert labels.gradient_checkpointing_strategy() is BALANCED  # an associated int reports autodiff


def test_gradient_checkpointing_of_a_plain_device_panics() -> None:
    """device.rs ``Device::gradient_checkpointing``'s panic at that commit."""
    with pytest.raises(rs.AutodiffNotEnabled) as info:
        Device.flex().gradient_checkpointing()
    assert str(info.value) == "Device::gradient_checkpointing requires autodiff; call Device::autodiff first"
    assert info.value.code == "MV110"


def test_require_grad_on_a_plain_tensor_does_nothing() -> None:
    """float.rs ``require_grad``/``set_require_grad``: "This function does nothing when autodiff is not
    enabled" (the assert ``Tensor::require_grad requires autodiff`` came with the cross-backend transfer
    change after d16f7ba2ed: burn-backend-tests context.rs ``requiring_gradients_on_a_plain_tensor_is_rejected``
    is not in the pinned tree)."""
    plain = Tensor.ones([2], Device.flex())
    for t in (plain.require_grad(), plain.set_require_grad(True), plain.set_require_grad(False)):
        assert t is plain and not t.is_autodiff() and not t.is_require_grad() and not t.is_tracked()


@pytest.mark.parametrize("profile", ["burn-2026-08", "burn-0.21"])
def test_earlier_profiles_keep_the_2c06be35_api(profile: str) -> None:
    """At 2c06be35 ``Device::autodiff`` of an autodiff device panics, the strategy of a plain device panics,
    ``inner()`` of a plain float panics and a plain tensor can carry a strategy."""
    with rs.profile(profile):
        with pytest.raises(rs.DoubleAutodiff, match="Only first-order autodiff is supported"):
            Device.flex().autodiff().autodiff()
        with pytest.raises(rs.AutodiffNotEnabled, match="Autodiff is not enabled on this device"):
            Device.flex().gradient_checkpointing_strategy()
        with pytest.raises(rs.RequiresAutodiff, match="Requires autodiff tensor."):
            Tensor.ones([2], Device.flex()).inner()
        tagged = Tensor.ones([2], Device.flex()).with_gradient_checkpointing_strategy(BALANCED)
        assert reveal_device(tagged) == "Flex float checkpointing: Balanced"


# --- burn-tensor src/device.rs and src/tensor/api/check.rs tests (2c06be35) ------------------------------

def test_user_facing_capture_device_supports_repeated_scopes() -> None:
    device = Device.capture()
    first = device.capture_scope(lambda scope: scope.complete([], []))
    second = device.capture_scope(lambda scope: scope.complete([], []))
    assert first.operations == [] and second.operations == []


def test_capture_scope_rejects_a_non_capture_device() -> None:
    assert Device.default().capture_scope(lambda scope: scope.complete([], [])) is rs.CaptureError.INVALID_DEVICE


def test_move_non_autodiff_float_tensor_to_autodiff_device() -> None:
    """autodiff_move_tests: a non-tracked float (e.g. a gradient) lands on the underlying hardware."""
    device = Device.default()
    moved = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], device).to_device(device.autodiff())
    assert moved.to_list() == [[1.0, 2.0], [3.0, 4.0]] and not moved.is_autodiff()


def test_binary_ops_shapes() -> None:
    """check.rs binary_ops_shapes_no_broadcast (#[should_panic]) and binary_ops_shapes_with_broadcast."""
    with pytest.raises(ValueError, match="broadcast"):
        Tensor.zeros([3, 5], Device.flex()) + Tensor.zeros([3, 6], Device.flex())
    assert (Tensor.zeros([3, 5], Device.flex()) + Tensor.zeros([1, 5], Device.flex())).shape == (3, 5)
