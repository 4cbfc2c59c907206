"""Rule MV211: a random op, or a DataLoader's sampler, draws with a generator of another device type."""

from __future__ import annotations

from .base import OutcomeRule


class GeneratorOnAnotherDevice(OutcomeRule):
    """A random op or a `DataLoader` drawing with a generator of another device type.

    ## What it does
    Reports a random creation given a generator of another device type than its
    output (`torch.randn(n, device="cuda", generator=torch.Generator())`), and a
    `DataLoader(...)` built while the default device is a GPU
    (`torch.set_default_device("cuda")`, `with torch.device("cuda"):`,
    `torch.set_default_tensor_type(torch.cuda.FloatTensor)`) that shuffles
    (`shuffle=True`, `sampler=RandomSampler(...)`) with a CPU generator (the
    sampler's own, made when it is given none, or a `torch.Generator()`
    passed as `generator=`), and the converse: a CUDA `generator=` for a
    loader built on the CPU default device. The message names the default
    device and where it was set, and where the generator comes from. The default
    device is the one in force where the loader is built.

    ## Why it fails
    A random op checks that its generator is of its output's device type. For
    a loader, `RandomSampler.__iter__` draws its permutation with `torch.randperm(n,
    generator=generator)`, which allocates on the default device and checks that
    the generator is of that device's type, and a loader seeds its workers with
    `random_(generator=generator)` on the default device: iterating the loader
    raises `RuntimeError: Expected a 'cuda' device type for generator but found
    'cpu'` (or `Expected a 'cpu' device type for generator but found 'cuda'`).

    ## Example
    ```python
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_default_device("cuda")
    data = TensorDataset(torch.randn(64, 8), torch.randn(64))
    loader = DataLoader(data, batch_size=16, shuffle=True)
    ```

    ## Use instead
    ```python
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_default_device("cuda")
    data = TensorDataset(torch.randn(64, 8), torch.randn(64))
    loader = DataLoader(data, batch_size=16, shuffle=True, generator=torch.Generator(device="cuda"))
    ```

    ## Fix safety
    No automatic fix: a generator on the default device (`generator=torch.Generator(device="cuda")`)
    changes the random stream (a seeded run shuffles differently); building the loader
    before setting the default device, or under `with torch.device("cpu"):`, keeps it.
    """

    code = "MV211"
    name = "generator-device"
    reported_at_setup = True  # a loader: where it is built (it fails when iterated); a random op: where it is
    hint = "give the loader a generator on the default device: `generator=torch.Generator(device='cuda')`"
    row_hints = {"torch.random_op": "give it a generator of its output's device: `torch.Generator(device=...)`"}
