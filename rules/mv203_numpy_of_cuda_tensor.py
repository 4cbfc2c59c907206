"""Rule MV203: converting a CUDA tensor to numpy."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, operand_atoms


class NumpyOfCudaTensor(OutcomeRule):
    """Converting a tensor on a GPU to a numpy array.

    ## What it does
    Reports `t.numpy()`, `np.asarray(t)`, `np.array(t)` and numpy functions
    given a tensor, or a list or tuple of tensors (`np.mean(losses)`: they
    convert each with `__array__`), when a tensor is on a GPU (or any device
    but the CPU).

    ## Why it fails
    A numpy array lives in host memory; PyTorch does not copy implicitly:
    `TypeError: can't convert cuda:0 device type tensor to numpy. Use
    Tensor.cpu() to copy the tensor to host memory first.` A GPU whose index
    the program chooses as it runs (`.cuda(local_rank)`) is named by what gave
    the index, `cuda:<local_rank>` (`cuda:?` where that is not a variable, a
    parameter or an attribute of one), where PyTorch prints the number.

    ## Example
    ```python
    import torch

    logits = torch.randn(32, 10, device="cuda")
    predicted = logits.argmax(dim=1).numpy()
    ```

    ## Use instead
    ```python
    import torch

    logits = torch.randn(32, 10, device="cuda")
    predicted = logits.argmax(dim=1).cpu().numpy()
    ```

    ## Fix safety
    Safe: `.cpu()` copies the tensor to host memory (on a CPU tensor it returns
    the tensor itself), which is what the conversion needs; the array holds the
    same values. Offered wherever the rule reports, since the copy is harmless
    on the paths where the tensor is already on the CPU; not for tensors inside
    a list or tuple (`.cpu()` is a tensor's method: convert the elements, or
    `torch.stack` them first).
    """

    code = "MV203"
    name = "numpy-of-cuda-tensor"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        from devicelint.fixes.spans import source_for

        if operand_atoms(site_facts, "element"):
            return None  # tensors inside a list or tuple (`np.mean(losses)`): `.cpu()` is a tensor's method
        edits = source_for(source).append_to_converted(site, ".cpu()")
        return Fix(SAFE, "Copy the tensor to host memory first: `.cpu()`", tuple(edits)) if edits else None
