"""Rule MV105: a checked binary operation between tensors on unequal devices."""

from __future__ import annotations

from .base import OutcomeRule


class DeviceMismatch(OutcomeRule):
    """A checked binary operation between tensors on different devices.

    ## What it does
    Reports `add`, `sub`, `mul`, `div`, comparisons and `matmul` (and their
    operators) whose operands are on devices that differ by backend or by index.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    These operations compare the two devices first (hardware identity: autodiff
    and checkpointing are ignored) and panic with
    `=== Tensor Operation Error === ... The provided tensors are not on the same device.`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    a = Tensor.ones([2], Device.cuda(0))
    b = Tensor.ones([2], Device.cuda(1))
    total = a + b
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    a = Tensor.ones([2], Device.cuda(0))
    b = Tensor.ones([2], Device.cuda(1))
    total = a + b.to_device(a.device())
    ```

    ## Fix safety
    Safe: the move copies the data to the other operand's device.
    """

    code = "MV105"
    reported_at_caller = True
    name = "device-mismatch"
