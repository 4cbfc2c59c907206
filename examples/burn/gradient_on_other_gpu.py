"""Pipeline parallelism over two GPUs with autodiff moves.

Stage one runs on `Cuda(0)`, stage two on `Cuda(1)`. Moving the tracked
activations between two devices of the same backend is a recorded autodiff
move: the backward pass sends the gradient back across it, so the stage-one
weight's gradient arrives on `Cuda(0)`, where that weight lives, and the SGD
update stays on each stage's own device.
"""

import numpy as np

from runtime_shim import Device, Tensor, reveal_device


def param(rng, shape, device):
    return Tensor.from_data(rng.normal(scale=0.3, size=shape).astype(np.float32), device).require_grad()


def sgd(p, grads, lr):
    return Tensor.from_inner(p.inner() - lr * p.grad(grads)).require_grad()


def main():
    rng = np.random.default_rng(2)
    gpu0 = Device.cuda(0).autodiff()
    gpu1 = Device.cuda(1).autodiff()
    w0 = param(rng, (6, 12), gpu0)
    w1 = param(rng, (12, 1), gpu1)

    x = Tensor.from_data(rng.normal(size=(32, 6)).astype(np.float32), gpu0)
    y = Tensor.from_data(rng.normal(size=(32, 1)).astype(np.float32), gpu1)

    first_loss = None
    for step in range(20):
        hidden = (x @ w0).tanh()  # stage one, on cuda(0)
        hidden = hidden.to_device(gpu1)  # autodiff move cuda(0) -> cuda(1)
        loss = ((hidden @ w1) - y).powf_scalar(2.0).mean()  # stage two, on cuda(1)
        grads = loss.backward()

        g0, g1 = w0.grad(grads), w1.grad(grads)
        if step == 0:
            first_loss = loss.into_scalar()
            print("activations:", reveal_device(hidden))
            print("grad of w0: ", reveal_device(g0))
            print("grad of w1: ", reveal_device(g1))
        assert g0.device() == Device.cuda(0), g0.device()
        assert g1.device() == Device.cuda(1), g1.device()
        w0, w1 = sgd(w0, grads, 0.1), sgd(w1, grads, 0.1)

    print(f"loss {first_loss:.4f} -> {loss.into_scalar():.4f}")
    assert loss.into_scalar() < first_loss
    assert w0.device() == gpu0 and w1.device() == gpu1


if __name__ == "__main__":
    main()
