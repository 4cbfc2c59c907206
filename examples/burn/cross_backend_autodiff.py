# expect-failure: MV101 at line 47
"""Split a model across two backends during training: encoder on Cuda, head on Flex.

The encoder's output is a tracked autodiff tensor on `Autodiff(Cuda(0))`. The
head's parameters live on `Autodiff(Flex)`, so the hidden activations are moved
there with `to_device`. Between devices of the *same* backend that is a
recorded autodiff move, but across backends Burn (d16f7ba2ed, as at 2c06be35) panics:
`Autodiff tensor cannot be moved between backends.` (MV101). Cross-backend
autodiff transfers only arrive with PR #5624. Workarounds: keep both halves
on one backend, or cut the graph (`.inner()`) and train the halves separately.
"""

import numpy as np

from runtime_shim import Device, Tensor, reveal_device


class Encoder:
    def __init__(self, device, rng):
        self.weight = Tensor.from_data(rng.normal(scale=0.5, size=(8, 16)).astype(np.float32), device).require_grad()

    def forward(self, x):
        return (x @ self.weight).relu()


class Head:
    def __init__(self, device, rng):
        self.weight = Tensor.from_data(rng.normal(scale=0.25, size=(16, 1)).astype(np.float32), device).require_grad()

    def forward(self, hidden):
        return (hidden @ self.weight).sigmoid()


def main():
    rng = np.random.default_rng(3)
    encoder_device = Device.cuda(0).autodiff()
    head_device = Device.flex().autodiff()
    encoder = Encoder(encoder_device, rng)
    head = Head(head_device, rng)

    x = Tensor.from_data(rng.normal(size=(32, 8)).astype(np.float32), encoder_device)
    target = Tensor.from_data(rng.integers(0, 2, size=(32, 1)).astype(np.float32), head_device)

    hidden = encoder.forward(x)
    print("encoder output:", reveal_device(hidden))
    # BUG: an autodiff tensor cannot cross backends (Cuda -> Flex) at this Burn version.
    hidden = hidden.to_device(head_device)
    prob = head.forward(hidden)
    loss = (prob - target).powf_scalar(2.0).mean()
    grads = loss.backward()
    print("encoder grad:", reveal_device(encoder.weight.grad(grads)))


if __name__ == "__main__":
    main()
