"""Export trained weights: leave autodiff first, then move to a plain CPU device.

Training runs on an autodiff NdArray device. For export the parameters go to
Burn's `Cpu` backend (plain, no autodiff). An autodiff tensor cannot be moved
to a plain device directly, so each weight is taken off the tape with
`.inner()` and the plain tensor is moved; see `export_weights_broken.py` for
the version that forgets `.inner()`.
"""

import io

import numpy as np

from runtime_shim import Device, Tensor, reveal_device


def fit_linear(device, steps=100, lr=0.5):
    """Fit y = x @ w + b to a known linear map; returns the trained (autodiff) parameters."""
    rng = np.random.default_rng(1)
    x_np = rng.normal(size=(64, 3)).astype(np.float32)
    true_w = np.array([[2.0], [-1.0], [0.5]], dtype=np.float32)
    x = Tensor.from_data(x_np, device)
    y = Tensor.from_data(x_np @ true_w + 0.25, device)

    w = Tensor.zeros((3, 1), device).require_grad()
    b = Tensor.zeros((1, 1), device).require_grad()
    for _ in range(steps):
        loss = ((x @ w + b) - y).powf_scalar(2.0).mean()
        grads = loss.backward()
        w = Tensor.from_inner(w.inner() - lr * w.grad(grads)).require_grad()
        b = Tensor.from_inner(b.inner() - lr * b.grad(grads)).require_grad()
    print(f"final training loss {loss.into_scalar():.6f}")
    return {"linear.weight": w, "linear.bias": b}


def export(params, device):
    """Plain copies of the parameters on ``device``, ready to serialize."""
    exported = {}
    for name, param in params.items():
        exported[name] = param.inner().to_device(device)
    return exported


def main():
    params = fit_linear(Device.ndarray().autodiff())
    cpu = Device.cpu()
    exported = export(params, cpu)

    for name, tensor in exported.items():
        print(f"{name:14s} {reveal_device(tensor)}  {np.round(tensor.to_numpy().ravel(), 3).tolist()}")
        assert tensor.device() == cpu and not tensor.device().is_autodiff()

    buffer = io.BytesIO()
    np.savez(buffer, **{name: t.to_numpy() for name, t in exported.items()})
    buffer.seek(0)
    restored = np.load(buffer)
    np.testing.assert_allclose(restored["linear.weight"].ravel(), [2.0, -1.0, 0.5], atol=1e-3)
    np.testing.assert_allclose(restored["linear.bias"].ravel(), [0.25], atol=1e-3)
    print(f"exported {len(restored.files)} tensors ({buffer.getbuffer().nbytes} bytes)")


if __name__ == "__main__":
    main()
