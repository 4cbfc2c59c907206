"""Rule MV212: pack_padded_sequence given its lengths on a GPU."""

from __future__ import annotations

from .base import OutcomeRule


class LengthsOnGpu(OutcomeRule):
    """`pack_padded_sequence` given `lengths` on a GPU.

    ## What it does
    Reports `torch.nn.utils.rnn.pack_padded_sequence(input, lengths, ...)`
    whose `lengths` is a tensor on a GPU: lengths computed from a CUDA mask
    (`mask.sum(1)`), moved with the rest of the batch, or made with
    `device=device`. A Python list, or a CPU tensor, is fine whatever device the
    input is on.

    ## Why it fails
    Packing sizes its result on the host: since PyTorch 1.7 the lengths must
    be a CPU int64 tensor, and a GPU one raises `RuntimeError: 'lengths'
    argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor`.

    ## Example
    ```python
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    x = torch.randn(3, 5, 8, device="cuda")
    mask = torch.ones(3, 5, device="cuda")
    packed = pack_padded_sequence(x, mask.sum(1).long(), batch_first=True, enforce_sorted=False)
    ```

    ## Use instead
    ```python
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    x = torch.randn(3, 5, 8, device="cuda")
    mask = torch.ones(3, 5, device="cuda")
    packed = pack_padded_sequence(x, mask.sum(1).long().cpu(), batch_first=True, enforce_sorted=False)
    ```

    ## Fix safety
    No automatic fix offered: `lengths.cpu()` is the fix, and it is one
    copy of a few integers to the host per batch.
    """

    code = "MV212"
    name = "lengths-on-gpu"
    hint = "pass the lengths on the CPU: `lengths.cpu()`"
