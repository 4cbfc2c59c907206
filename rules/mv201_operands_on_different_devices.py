"""Rule MV201: a PyTorch op whose tensor operands are on different devices."""

from __future__ import annotations

from devicelint.diagnostics import Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule
from .move_fix import move_to_gpu_operand


class OperandsOnDifferentDevices(OutcomeRule):
    """A PyTorch operation whose tensor operands are on different devices.

    ## What it does
    Reports arithmetic, comparisons, `matmul`, `torch.cat`/`stack`, losses and
    the other device-checked ops (operators, `torch.*`, `Tensor.*` and
    `torch.nn.functional.*`) whose tensors are on different devices, including
    `cuda:0` against `cuda:1`. In element-wise ops a 0-dim CPU tensor is exempt:
    PyTorch treats it like a Python number (`cuda_tensor * torch.tensor(2.0)`
    works). Concatenating or stacking it is not
    (`torch.stack([cuda_loss, torch.tensor(0.0)])` fails), nor is a layer's
    input (MV202), nor are the arguments of ops that check every tensor's
    device (`clamp`'s tensor bounds, `mse_loss`, `bucketize`, `searchsorted`;
    the index ops: MV207).

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    A kernel runs on one device and reads every input from there:
    `RuntimeError: Expected all tensors to be on the same device, but found at
    least two devices, cuda:0 and cpu!` A GPU whose index the program chooses
    as it runs (`.cuda(local_rank)`, `torch.device("cuda", rank)`) is named in
    the message by what gave the index, `cuda:<local_rank>` (`cuda:?` where
    that is not a variable, a parameter or an attribute of one), where PyTorch
    prints the number.

    ## Example
    ```python
    import torch

    logits = torch.randn(8, 4, device="cuda")
    labels = torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(logits, labels)
    ```

    ## Use instead
    ```python
    import torch

    logits = torch.randn(8, 4, device="cuda")
    labels = torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(logits, labels.to(logits.device))
    ```

    ## Fix safety
    Unsafe, and offered only for a call of two tensors (`f(a, b)`, `a.f(b)`)
    that fails on every path with one of them on the CPU and the other, a plain
    name, on a GPU: the CPU one becomes `cpu.to(gpu.device)`. The copy changes what
    the call reads (later in-place changes of the CPU tensor are not seen), and
    whether the copy belongs in the data pipeline instead is a decision about
    where the work runs.
    The message ends with the usual fix (`.to(x.device)` on one operand).
    """

    code = "MV201"
    reported_at_caller = True
    hint = "move one operand to the other's device: `.to(x.device)`"
    name = "operands-on-different-devices"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        return move_to_gpu_operand(site, site_facts, source, self.code)
