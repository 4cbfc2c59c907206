"""Rule MV107: operands carrying different checkpointing strategies."""

from __future__ import annotations

from .base import OutcomeRule


class CheckpointingMismatch(OutcomeRule):
    """The operands of one operation carry different checkpointing strategies.

    ## What it does
    Reports two-input operations between tensors whose gradient-checkpointing
    strategies are both set and differ (`Balanced` vs `Disabled`): two autodiff
    tensors from differently configured devices, a gradient and another
    tensor's gradient, or an int mask made on another autodiff device.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    Before routing, dispatch validates the strategies and asserts they are equal:
    ``assertion `left == right` failed: Gradient checkpointing strategy mismatch: ...``.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    plain = Device.flex().autodiff()
    balanced = plain.gradient_checkpointing()
    a = Tensor.ones([2], plain)
    b = Tensor.ones([2], balanced)
    c = a * b
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    balanced = Device.flex().autodiff().gradient_checkpointing()
    a = Tensor.ones([2], balanced)
    b = Tensor.ones([2], balanced)
    c = a * b
    ```

    ## Fix safety
    Safe: pick one strategy per model; it changes memory use, not results.
    """

    code = "MV107"
    reported_at_caller = True
    name = "checkpointing-mismatch"
