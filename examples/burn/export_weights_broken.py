# expect-failure: MV102 at line 41
"""Export trained weights, the wrong way: moving autodiff tensors to a plain device.

Same training as `export_weights.py`, but the export loop calls
`param.to_device(Device.cpu())` on the autodiff parameters themselves. Burn
refuses to move a tensor between an autodiff and a non-autodiff device:
`Cannot move between autodiff and non-autodiff instances.` (MV102). The fix
is `param.inner().to_device(...)`.
"""

import numpy as np

from runtime_shim import Device, Tensor


def fit_linear(device, steps=100, lr=0.5):
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


def main():
    params = fit_linear(Device.ndarray().autodiff())
    cpu = Device.cpu()

    exported = {}
    for name, param in params.items():
        # BUG: `param` is still an autodiff tensor; it needs `.inner()` first.
        exported[name] = param.to_device(cpu)

    for name, tensor in exported.items():
        print(name, tensor.to_numpy().ravel())


if __name__ == "__main__":
    main()
