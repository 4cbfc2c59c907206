"""Train a two-layer MLP with plain SGD on an autodiff Flex device.

The Burn pattern, step by step: parameters are tracked autodiff leaves
(`require_grad`), the forward pass and the loss run on the autodiff device,
`backward()` gives the gradients, and each SGD step builds the new parameter
from the *inner* (plain) tensors: `Tensor.from_inner(w.inner() - lr * grad)`,
then marks it tracked again for the next step.
"""

import numpy as np

from runtime_shim import Device, Tensor, reveal_device

STEPS = 300
LEARNING_RATE = 0.1
HIDDEN = 16


def init_param(shape, device, rng, scale):
    values = rng.uniform(-scale, scale, size=shape).astype(np.float32)
    return Tensor.from_data(values, device).require_grad()


def forward(params, x):
    w1, b1, w2, b2 = params
    hidden = (x @ w1 + b1).tanh()
    return hidden @ w2 + b2


def mse(pred, target):
    return (pred - target).powf_scalar(2.0).mean()


def sgd_step(params, grads, lr):
    updated = []
    for p in params:
        g = p.grad(grads)  # a plain float on the inner backend (Flex), carrying the strategy
        updated.append(Tensor.from_inner(p.inner() - lr * g).require_grad())
    return updated


def main():
    device = Device.flex().autodiff()
    rng = np.random.default_rng(0)

    # Synthetic regression task: y = x0 * x1 on [-1, 1]^2.
    x_np = rng.uniform(-1.0, 1.0, size=(128, 2)).astype(np.float32)
    y_np = (x_np[:, :1] * x_np[:, 1:]).astype(np.float32)
    x = Tensor.from_data(x_np, device)
    y = Tensor.from_data(y_np, device)

    params = [
        init_param((2, HIDDEN), device, rng, 1.0),
        init_param((1, HIDDEN), device, rng, 0.1),
        init_param((HIDDEN, 1), device, rng, 1.0 / HIDDEN**0.5),
        init_param((1, 1), device, rng, 0.1),
    ]
    print("parameters:", reveal_device(params[0]))

    losses = []
    for step in range(STEPS + 1):
        loss = mse(forward(params, x), y)
        grads = loss.backward()
        losses.append(loss.into_scalar())
        if step % 50 == 0:
            print(f"step {step:4d}  loss {losses[-1]:.5f}")
        params = sgd_step(params, grads, LEARNING_RATE)

    assert losses[-1] < 0.5 * losses[0], "the loss did not go down"
    print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}")


if __name__ == "__main__":
    main()
