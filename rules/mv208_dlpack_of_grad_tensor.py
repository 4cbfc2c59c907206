"""Rule MV208: DLPack export of a tensor that requires grad."""

from __future__ import annotations

from .base import OutcomeRule


class DlpackOfGradTensor(OutcomeRule):
    """DLPack export of a tensor that requires grad.

    ## What it does
    Reports `t.__dlpack__()` and `numpy.from_dlpack(t)` (which calls it) on a
    tensor that requires grad: a parameter, a leaf made with
    `requires_grad=True`, or a result computed from one.

    ## Why it fails
    A DLPack capsule shares memory outside autograd, so PyTorch refuses it
    (under `torch.no_grad()` too): `BufferError: Can't export tensors that
    require gradient, use tensor.detach()`.

    ## Example
    ```python
    import numpy as np
    import torch

    weights = torch.nn.Parameter(torch.randn(4, 4))
    view = np.from_dlpack(weights)
    ```

    ## Use instead
    ```python
    import numpy as np
    import torch

    weights = torch.nn.Parameter(torch.randn(4, 4))
    view = np.from_dlpack(weights.detach())
    ```

    ## Fix safety
    No automatic fix yet: `.detach()` shares the same memory, so writes through
    the exported view change the parameter behind autograd's back; whether that
    is intended is the author's call.
    """

    code = "MV208"
    name = "dlpack-of-grad-tensor"
