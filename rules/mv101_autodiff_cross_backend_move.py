"""Rule MV101: an autodiff tensor moved to the autodiff device of another backend."""

from __future__ import annotations

from devicelint.diagnostics import UNSAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, fails_everywhere


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
    Unsafe: the fix detaches, moves to the target's inner device and re-wraps
    (`x.to_device(d)` becomes `Tensor.from_inner(x.inner().to_device(d.inner()))`,
    importing `Tensor` from `runtime_shim` when the module does not). Leaving
    autodiff cuts the graph: gradients stop at the move and never reach the
    original tensor, and the new leaf is untracked with strategy `Disabled`.
    Keep training on one backend if the gradients must flow back.
    """

    code = "MV101"
    name = "autodiff-cross-backend-move"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        if site.api != "Tensor.to_device" or not fails_everywhere(site_facts, self.code):
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        if call is None or parsed.method_receiver(call) is None:
            return None
        device = parsed.argument(call, 0, "device")
        tensor = parsed.tensor_class() if device is not None else None
        if device is None or tensor is None:
            return None
        name, imports = tensor
        start, end = parsed.wrap_call(call, f"{name}.from_inner")
        edits = (*imports, start, parsed.insert(parsed.after_receiver(call), ".inner()"),
                 *parsed.append_call(device.value, ".inner()"), end)
        return Fix(UNSAFE, f"Move off the graph to the target's inner device and re-wrap with `{name}.from_inner` "
                           "(gradients stop at the move)", edits)
