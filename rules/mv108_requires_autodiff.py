"""Rule MV108: an autodiff-only call on a float that is not autodiff."""

from __future__ import annotations

from .base import OutcomeRule


class RequiresAutodiff(OutcomeRule):
    """`inner()`, `backward()` or `grad()` on a float tensor that is not autodiff.

    ## What it does
    Reports `inner()`, `backward()`, `grad()`, `grad_remove()` and
    `grad_replace()` whose tensor is a plain float (or a plain capture float).

    ## Why it fails
    These calls unwrap the autodiff primitive; a plain float has none:
    `Requires autodiff tensor.` A frequent cause is a tensor created on the
    plain device, or one already taken off the tape with `inner()`/`no_grad()`.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    loss = Tensor.ones([1], Device.flex()).sum()
    grads = loss.backward()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.ones([1], Device.flex().autodiff()).require_grad()
    loss = (weights * 2.0).sum()
    grads = loss.backward()
    ```

    ## Fix safety
    Unsafe: making the computation autodiff changes memory use and speed.
    """

    code = "MV108"
    name = "requires-autodiff"
