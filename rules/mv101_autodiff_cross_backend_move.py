"""Rule MV101: an autodiff tensor moved to the autodiff device of another backend."""

from __future__ import annotations

from .base import OutcomeRule


class AutodiffCrossBackendMove(OutcomeRule):
    """An autodiff tensor is moved to an autodiff device of another backend.

    ## What it does
    Reports `to_device` calls whose tensor is an autodiff float (`Af`) and whose
    target is an autodiff device wrapping a different backend (Flex to NdArray,
    Cuda to LibTorch, ...).

    ## Why it fails
    Burn records autodiff moves on the tape only between devices of one backend;
    across backends the dispatch panics with
    `not implemented: Autodiff tensor cannot be moved between backends.`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    moved = weights.to_device(Device.ndarray().autodiff())
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    moved = Tensor.from_inner(weights.inner().to_device(Device.ndarray()))
    ```

    ## Fix safety
    Unsafe: leaving autodiff (`inner()`) cuts the graph, so gradients of the moved
    tensor no longer reach the original one. Keep training on one backend if the
    gradients must flow back.
    """

    code = "MV101"
    name = "autodiff-cross-backend-move"
