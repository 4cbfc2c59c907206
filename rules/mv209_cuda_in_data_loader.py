"""Rule MV209: GPU tensors where a DataLoader's worker processes or pin-memory thread need CPU ones."""

from __future__ import annotations

from .base import OutcomeRule


class CudaInDataLoader(OutcomeRule):
    """GPU tensors in a `DataLoader`'s worker processes or pinned batches.

    ## What it does
    Reports a `DataLoader(...)` whose items are GPU tensors while it has
    `num_workers > 0` (a dataset's `__getitem__` that calls `.cuda()` or
    `.to(device)`, or indexes tensors kept on the GPU), and one with
    `pin_memory=True` whose batches (from the default collation or a
    `collate_fn`) are already on the GPU. A loader given a
    `multiprocessing_context` is left out of the first check (a `"spawn"`
    worker may use CUDA).

    ## Why it fails
    Worker processes are forked (the default start method on Linux), and CUDA
    cannot be used in a forked child once the parent has initialised it:
    `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA
    with multiprocessing, you must use the 'spawn' start method`. Pinning
    copies a batch into page-locked host memory, which only CPU tensors have:
    `RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors
    can be pinned`. Both fail when the loop first iterates the loader.

    ## Example
    ```python
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Frames(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, index):
            return torch.randn(3, 32, 32).cuda()


    loader = DataLoader(Frames(), batch_size=8, num_workers=4)
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Frames(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, index):
            return torch.randn(3, 32, 32)


    loader = DataLoader(Frames(), batch_size=8, num_workers=4, pin_memory=True)
    for frames in loader:
        frames = frames.cuda(non_blocking=True)
    ```

    ## Fix safety
    No automatic fix: the move belongs in the training loop, after the batch
    leaves the loader, and where that loop is is the author's call.
    """

    code = "MV209"
    name = "cuda-in-data-loader"
