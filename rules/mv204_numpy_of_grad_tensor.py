"""Rule MV204: converting a tensor that requires grad to numpy."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, operand_atoms


class NumpyOfGradTensor(OutcomeRule):
    """Converting a tensor that requires grad to a numpy array.

    ## What it does
    Reports `t.numpy()`, `np.asarray(t)` and numpy functions given a tensor,
    or a list or tuple of tensors, when a tensor requires grad (a parameter, a `requires_grad=True` leaf,
    the output of a layer or of an op on one) and grad mode is on (outside
    `torch.no_grad()` / `torch.inference_mode()` blocks and functions
    decorated with them).

    ## Why it fails
    The array would share memory with a tensor autograd tracks:
    `RuntimeError: Can't call numpy() on Tensor that requires grad. Use
    tensor.detach().numpy() instead.`

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(3, 1)
    loss = nn.functional.mse_loss(model(torch.randn(16, 3)), torch.randn(16, 1))
    print(loss.numpy())
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(3, 1)
    loss = nn.functional.mse_loss(model(torch.randn(16, 3)), torch.randn(16, 1))
    print(loss.detach().numpy())
    ```

    ## Fix safety
    Safe: `.detach()` gives the same values off the graph; the array is a
    read-out, so no gradient is lost (the original tensor stays in the graph).
    Offered wherever the rule reports (on a tensor without grad `.detach()`
    changes nothing), except for tensors inside a list or tuple.
    """

    code = "MV204"
    name = "numpy-of-grad-tensor"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        from devicelint.fixes.spans import source_for

        if operand_atoms(site_facts, "element"):
            return None  # tensors inside a list or tuple (`np.mean(losses)`): `.detach()` is a tensor's method
        edits = source_for(source).append_to_converted(site, ".detach()")
        return Fix(SAFE, "Leave the graph first: `.detach()`", tuple(edits)) if edits else None
