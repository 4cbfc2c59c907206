"""Rule MV102: exactly one side of a move is autodiff."""

from __future__ import annotations

from .base import OutcomeRule


class AutodiffMismatchMove(OutcomeRule):
    """A move between autodiff and non-autodiff instances.

    ## What it does
    Reports `to_device` calls that move an autodiff float to a plain (or capture)
    device, and, under profile `burn-0.21`, a plain float to an autodiff device.
    Also reports creating a tensor on an autodiff device that wraps a capture
    device, and `Tensor.from_inner` of a capture tensor.

    ## Why it fails
    Burn's dispatch has no arm that turns an autodiff tensor into a plain one by
    moving it; it panics with
    `Cannot move between autodiff and non-autodiff instances.`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    exported = weights.to_device(Device.ndarray())
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    exported = weights.inner().to_device(Device.ndarray())
    ```

    ## Fix safety
    Safe for export and inference paths: `inner()` gives the same values off the
    tape. Unsafe where gradients must reach the moved tensor.
    """

    code = "MV102"
    name = "autodiff-mismatch-move"
