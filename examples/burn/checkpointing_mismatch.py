# expect-failure: MV107 at line 50
"""Gradient checkpointing on the backbone only: a strategy mismatch.

The backbone is large, so its parameters are created on a device with
gradient checkpointing (`Balanced`: memory-bound activations are recomputed
in the backward pass). The classifier head was written separately against
the plain autodiff device (strategy `Disabled`). Both devices are the same
hardware, `Flex`, so the device check passes, but Burn requires the two
operands of an operation to share a checkpointing strategy:
`Gradient checkpointing strategy mismatch: Balanced vs Disabled. ...` (MV107).
The fix: build every parameter of one model from the same device value.
"""

import numpy as np

from runtime_shim import Device, Tensor, reveal_device


def linear(rng, fan_in, fan_out, device):
    scale = 1.0 / np.sqrt(fan_in)
    w = rng.uniform(-scale, scale, size=(fan_in, fan_out)).astype(np.float32)
    return Tensor.from_data(w, device).require_grad()


class Backbone:
    def __init__(self, rng, device):
        self.layers = [linear(rng, 8, 32, device), linear(rng, 32, 32, device)]

    def forward(self, x):
        for w in self.layers:
            x = (x @ w).relu()
        return x


def main():
    rng = np.random.default_rng(11)
    train_device = Device.flex().autodiff()
    checkpointed = train_device.gradient_checkpointing()
    print("backbone device:", checkpointed)
    print("head device:    ", train_device)
    assert checkpointed == train_device  # equality is hardware identity: the strategy is ignored

    backbone = Backbone(rng, checkpointed)
    head = linear(rng, 32, 4, train_device)

    x = Tensor.from_data(rng.normal(size=(16, 8)).astype(np.float32), checkpointed)
    features = backbone.forward(x)
    print("features:", reveal_device(features), "| head:", reveal_device(head))
    # BUG: Balanced features times a Disabled head weight.
    logits = features @ head
    loss = logits.powf_scalar(2.0).mean()
    loss.backward()


if __name__ == "__main__":
    main()
