"""Rule MV106: operands that reach different backends, or autodiff and plain floats mixed."""

from __future__ import annotations

from .base import OutcomeRule


class BackendMismatch(OutcomeRule):
    """Operands of one operation reach different backends (or mix autodiff and plain floats).

    ## What it does
    Reports two-input operations whose operands reach different backends,
    multi-input operations (`mask_where`, `Tensor.cat`) whose other inputs are on
    another backend than the first one, and `grad_replace` with a gradient that is
    not a plain float of the tensor's backend. Under profile `burn-2026-08` it also
    reports an autodiff float mixed with a plain float of the same hardware; at the
    pinned commit (the default, `burn-d16f7ba`) those merge, the plain float
    joining the graph as a constant.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    Dispatch routes an operation on its first float input's backend and extracts
    every other input for that backend; one on another backend has no arm:
    ``input tensor `mask` is on the wrong backend`` (at 2c06be35: `The provided
    tensors are not on the same backend. Got backends ...`, also for the
    autodiff-and-plain mix).

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    scores = Tensor.random([2, 3], Device.flex())
    padding = Tensor.ones([2, 3], Device.ndarray()).greater(0.5)
    masked = scores.mask_fill(padding, 0.0)
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    scores = Tensor.random([2, 3], Device.flex())
    padding = Tensor.ones([2, 3], Device.ndarray()).greater(0.5).to_device(Device.flex())
    masked = scores.mask_fill(padding, 0.0)
    ```

    ## Fix safety
    Safe: move the other input to the first one's device before the operation
    (under `burn-2026-08`, create a plain float that must join an autodiff one on
    the autodiff device, or wrap it with `Tensor.from_inner`).
    """

    code = "MV106"
    reported_at_caller = True
    name = "backend-mismatch"
