"""Rule MV210: a DataLoader with pin_memory=True whose batches are already on a GPU."""

from __future__ import annotations

from .base import OutcomeRule


class PinnedCudaBatch(OutcomeRule):
    """A `DataLoader` with `pin_memory=True` whose batches are already on a GPU.

    ## What it does
    Reports the `DataLoader(...)` call that asks for `pin_memory=True` when the
    batches it yields hold a CUDA tensor: a dataset's `__getitem__` or the
    `collate_fn` put them on the GPU. The message names the batch tensor's
    device and where it was moved there.

    ## Why it fails
    On a machine with a GPU the loader pins every batch (`Tensor.pin_memory()`
    on each tensor), and only CPU tensors can be pinned: iterating the loader
    raises `RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU
    tensors can be pinned` (PyTorch 2.x: `is_pinned()` answers `False` for a
    GPU tensor, so the copy to pinned memory is attempted and refused). With
    workers it is raised from the pin-memory thread (`Caught RuntimeError in pin
    memory thread for device 0`).

    ## Example
    ```python
    import torch
    from torch.utils.data import DataLoader

    def to_gpu(samples):
        return torch.stack(samples).cuda()

    samples = [torch.randn(8) for _ in range(64)]
    loader = DataLoader(samples, batch_size=16, pin_memory=True, collate_fn=to_gpu)
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.data import DataLoader

    samples = [torch.randn(8) for _ in range(64)]
    loader = DataLoader(samples, batch_size=16, pin_memory=True)
    batches = [batch.cuda(non_blocking=True) for batch in loader]
    ```

    ## Fix safety
    No automatic fix: pinning is for host batches copied to the GPU with
    `non_blocking=True`; either drop `pin_memory=True` or keep the batches on
    the CPU and move them in the training loop.
    """

    code = "MV210"
    name = "pinned-cuda-batch"
    reported_at_setup = True  # at the DataLoader call; it fails when the loader is iterated
    hint = "drop `pin_memory=True`, or keep batches on the CPU and move them in the loop (`non_blocking=True`)"
