"""Rule MV109: autodiff of an autodiff device or tensor."""

from __future__ import annotations

from .base import OutcomeRule


class DoubleAutodiff(OutcomeRule):
    """Autodiff wrapped around autodiff.

    ## What it does
    Reports `autodiff()` of a device that is already autodiff,
    `Tensor.from_inner` of a tensor that is already autodiff, and an int/bool
    tensor moved to an autodiff device that wraps a capture device.

    ## Why it fails
    Burn supports first-order autodiff only:
    `not implemented: Only first-order autodiff is supported`, or
    `Autodiff should not wrap an autodiff tensor.`

    ## Example
    ```python
    from runtime_shim import Device

    device = Device.flex().autodiff()
    training = device.autodiff()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device

    device = Device.flex().autodiff()
    training = device if device.is_autodiff() else device.autodiff()
    ```

    ## Fix safety
    Safe: the device is already the autodiff device.
    """

    code = "MV109"
    name = "double-autodiff"
