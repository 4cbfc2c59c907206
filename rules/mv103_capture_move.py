"""Rule MV103: a tensor moved off a capture device."""

from __future__ import annotations

from .base import OutcomeRule


class CaptureMove(OutcomeRule):
    """A capture tensor is moved off its capture device.

    ## What it does
    Reports `to_device` calls that move a capture tensor to a non-capture device
    (`Cannot move a tensor from a capture device`), and a computed capture tensor
    to another capture device (`capture tensor <id> has no initialized value`).

    ## Why it fails
    A capture device records a graph and never executes: a computed capture
    tensor has a shape but no data, so there is nothing to move.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    capture = Device.capture()

    def build(scope):
        x = Tensor.ones([2], capture)
        return x.exp()

    y = capture.capture_scope(build)
    host = y.to_device(Device.flex())
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    capture = Device.capture()

    def build(scope):
        x = Tensor.ones([2], capture)
        return scope.complete([x], [x.exp()])

    graph = capture.capture_scope(build)
    host = Tensor.ones([2], Device.flex()).exp()
    ```

    ## Fix safety
    Unsafe: the captured graph has to be compiled and run by a real backend; the
    replacement recomputes the value on a device that executes.
    """

    code = "MV103"
    name = "capture-move"
