"""Rule MV104: a capture tensor created or used without an active scope."""

from __future__ import annotations

from .base import OutcomeRule


class CaptureOutsideScope(OutcomeRule):
    """A capture tensor is created or used outside its capture scope.

    ## What it does
    Reports creations on a capture device, moves to a capture device and
    operations on capture tensors that run where no `capture_scope` is open on
    that device, or after the scope that made the tensor has completed, also
    after `scope.complete(...)` inside the traced function itself.

    ## Why it fails
    Capture operations are recorded into the graph of the active scope; without
    one Burn panics with
    `capture tensor operations must run inside CaptureDevice::capture_scope`.
    `complete()` closes the scope's session at once: an operation on its
    tensors or a creation on its device after it panics with
    `capture scope is already complete`.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    capture = Device.capture()
    x = Tensor.zeros([2, 2], capture)
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    capture = Device.capture()

    def build(scope):
        x = Tensor.zeros([2, 2], capture)
        return scope.complete([x], [x.exp()])

    graph = capture.capture_scope(build)
    ```

    ## Fix safety
    Unsafe: moving code into a scope changes what the graph records.
    """

    code = "MV104"
    name = "capture-outside-scope"
