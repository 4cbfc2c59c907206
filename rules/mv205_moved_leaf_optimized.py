"""Rule MV205: a requires-grad leaf moved with .to()/.cuda(), then optimized or read for .grad."""

from __future__ import annotations

from .base import OutcomeRule


class MovedLeafOptimized(OutcomeRule):
    """A requires-grad tensor moved to a device, then given to an optimizer or read for `.grad`.

    ## What it does
    Reports optimizers built from a parameter list that holds a non-leaf
    tensor, and `.grad` reads of a non-leaf. The usual cause:
    `torch.ones(1, requires_grad=True).to(device)` / `.cuda()`: the leaf is
    the CPU tensor, what the name holds is the result of the move.

    ## Why it fails
    Autograd records the move, so its result is not a leaf: an optimizer
    refuses it (`ValueError: can't optimize a non-leaf Tensor`), and its
    `.grad` is never populated (`None`, with a `UserWarning: The .grad
    attribute of a Tensor that is not a leaf Tensor is being accessed`): the
    training silently does not update it.

    ## Example
    ```python
    import torch

    temperature = torch.ones(1, requires_grad=True).cuda()
    optimizer = torch.optim.Adam([temperature], lr=0.01)
    ```

    ## Use instead
    ```python
    import torch

    temperature = torch.ones(1, device="cuda", requires_grad=True)
    optimizer = torch.optim.Adam([temperature], lr=0.01)
    ```

    ## Fix safety
    No automatic fix yet: creating the tensor on the device needs the creation
    call rewritten, which may be far from the report.
    """

    code = "MV205"
    name = "moved-leaf-optimized"
