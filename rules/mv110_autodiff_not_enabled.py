"""Rule MV110: checkpointing asked of a plain device."""

from __future__ import annotations

from .base import OutcomeRule


class AutodiffNotEnabled(OutcomeRule):
    """`gradient_checkpointing()` or `gradient_checkpointing_strategy()` on a plain device.

    ## What it does
    Reports the two checkpointing calls on a device that is not autodiff.

    ## Why it fails
    Checkpointing is a setting of the autodiff wrapper; a plain device has none:
    `Autodiff is not enabled on this device` (at d16f7ba2ed, the default profile:
    `Device::gradient_checkpointing requires autodiff; call Device::autodiff
    first`, and `gradient_checkpointing_strategy()` of a plain device is `None`).

    ## Example
    ```python
    from runtime_shim import Device

    device = Device.flex().gradient_checkpointing()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device

    device = Device.flex().autodiff().gradient_checkpointing()
    ```

    ## Fix safety
    Safe: the result is the autodiff device with the `Balanced` strategy that the
    call meant.
    """

    code = "MV110"
    name = "autodiff-not-enabled"
