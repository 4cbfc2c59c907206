"""Rule MV209: a CUDA tensor made in a DataLoader worker started by fork."""

from __future__ import annotations

from .base import OutcomeRule


class CudaInForkedLoaderWorker(OutcomeRule):
    """A CUDA tensor made in a DataLoader worker process started by fork.

    ## What it does
    Reports a call that creates a tensor on a GPU or moves one there (`.cuda()`,
    `.to(device)` with a CUDA device, `torch.tensor(..., device="cuda")`, a
    creation under a CUDA device stored on the dataset) inside a dataset's
    `__getitem__`, a transform or function it calls, or a `collate_fn`, when the
    `DataLoader` reading it has `num_workers` above 0 (a known number, or an
    option's default) and starts its workers by fork: no
    `multiprocessing_context` (the default start method, fork on Linux) or
    `"fork"`. A `TensorDataset` (or a list, or a tensor) of GPU tensors read
    by such workers is reported at the `DataLoader(...)` call: torch's own
    indexing touches CUDA in the worker. The message names the tensor's device and where it was made, and
    the loader whose workers run the code.

    ## Why it fails
    Each worker is a copy of the training process made by `fork()` after the
    process initialised CUDA (the model moved to the GPU), and CUDA cannot be
    initialised again in such a child. The first CUDA call in the worker raises
    `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA
    with multiprocessing, you must use the 'spawn' start method`, and the loop
    over the loader raises `Caught RuntimeError in DataLoader worker process 0`.

    ## Example
    ```python
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Features(Dataset):
        def __init__(self):
            self.rows = torch.randn(64, 8)

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, index):
            return self.rows[index].cuda()

    model = torch.nn.Linear(8, 2).cuda()
    for batch in DataLoader(Features(), batch_size=16, num_workers=2):
        model(batch)
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Features(Dataset):
        def __init__(self):
            self.rows = torch.randn(64, 8)

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, index):
            return self.rows[index]

    model = torch.nn.Linear(8, 2).cuda()
    for batch in DataLoader(Features(), batch_size=16, num_workers=2, pin_memory=True):
        model(batch.cuda(non_blocking=True))
    ```

    ## Fix safety
    No automatic fix: either the samples stay on the CPU and the training loop
    moves each batch (the usual way, with `pin_memory=True` for fast copies), or
    the loader starts its workers with `multiprocessing_context="spawn"` (each
    worker then initialises CUDA itself, at a cost in start-up time and GPU
    memory); which one is the author's call.
    """

    code = "MV209"
    name = "cuda-in-forked-loader-worker"
    reported_at_setup = True  # (a library dataset's rows: at the DataLoader call; fails when iterated)
    hint = ("keep samples on the CPU and move each batch in the training loop, or start the workers with "
            "`multiprocessing_context='spawn'`")
