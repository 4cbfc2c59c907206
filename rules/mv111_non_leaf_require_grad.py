"""Rule MV111: require_grad on a tensor that is not a leaf."""

from __future__ import annotations

from .base import OutcomeRule


class NonLeafRequireGrad(OutcomeRule):
    """`require_grad()` on an autodiff tensor computed from tracked tensors.

    ## What it does
    Reports `require_grad()` / `set_require_grad(True)` on an autodiff float that
    is the result of operations on tracked tensors (a non-leaf).

    ## Why it fails
    Only leaves can start tracking:
    `Can't convert a non leaf tensor into a tracked tensor`.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.ones([2], Device.flex().autodiff()).require_grad()
    scaled = (weights * 2.0).require_grad()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.ones([2], Device.flex().autodiff()).require_grad()
    scaled = (weights * 2.0).detach().require_grad()
    ```

    ## Fix safety
    Unsafe: `detach()` starts a new leaf; gradients stop at it.
    """

    code = "MV111"
    name = "non-leaf-require-grad"
