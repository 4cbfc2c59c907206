"""Rule MV106: operands that reach different backends, or autodiff and plain floats mixed."""

from __future__ import annotations

from .base import OutcomeRule


class BackendMismatch(OutcomeRule):
    """Operands of one operation reach different backends (or mix autodiff and plain floats).

    ## What it does
    Reports two-input operations whose operands' dispatch kinds differ (another
    backend, or an autodiff float with a plain float of the same hardware),
    multi-input operations (`mask_where`, `Tensor.cat`) whose other inputs do not
    match the first one's route, and `grad_replace` with a gradient that is not a
    plain float of the tensor's backend.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    Dispatch matches the operands' kinds pairwise and has no arm for mixed kinds:
    `The provided tensors are not on the same backend. Got backends ...`.
    A plain float moved to an autodiff device stays plain, which is the usual way
    to get here.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    device = Device.flex().autodiff()
    weights = Tensor.random([3, 3], device).require_grad()
    batch = Tensor.ones([2, 3], Device.flex())
    scores = batch @ weights
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    device = Device.flex().autodiff()
    weights = Tensor.random([3, 3], device).require_grad()
    batch = Tensor.ones([2, 3], device)
    scores = batch @ weights
    ```

    ## Fix safety
    Safe when the plain operand only needs to be on the tape as a constant:
    create it on the autodiff device (or wrap it with `Tensor.from_inner`).
    """

    code = "MV106"
    reported_at_caller = True
    name = "backend-mismatch"
