"""Rule MV102: exactly one side of a move is autodiff."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from runtime_shim.semantics import AF

from .base import OutcomeRule, fails_everywhere, operand_atoms


class AutodiffMismatchMove(OutcomeRule):
    """A move between autodiff and non-autodiff instances.

    ## What it does
    Reports `to_device` calls that move an autodiff float to a plain (or capture)
    device, and, under profile `burn-0.21`, a plain float to an autodiff device.
    Also reports creating a tensor on an autodiff device that wraps a capture
    device, and `Tensor.from_inner` of a capture tensor.

    ## Why it fails
    Burn's dispatch has no arm that turns an autodiff tensor into a plain one by
    moving it; it panics with
    `Cannot move between autodiff and non-autodiff instances.`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    exported = weights.to_device(Device.ndarray())
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([4, 4], Device.flex().autodiff())
    exported = weights.inner().to_device(Device.ndarray())
    ```

    ## Fix safety
    Safe: the fix inserts `.inner()` before the move (`x.to_device(d)` becomes
    `x.inner().to_device(d)`), so the tensor leaves the tape and the same values
    land on the plain device. The original move could never produce a tensor
    that gradients reach (it panics, and a plain device holds no autodiff
    tensor), so nothing the program could compute is lost. Offered only where
    every calling context moves an autodiff float (not for `burn-0.21`'s plain
    float to an autodiff device, nor where some context passes).
    """

    code = "MV102"
    name = "autodiff-mismatch-move"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        if site.api != "Tensor.to_device" or not fails_everywhere(site_facts, self.code):
            return None
        if not all(atom.cls is AF for atom in operand_atoms(site_facts, "tensor")):
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        if call is None or parsed.method_receiver(call) is None:
            return None
        edit = parsed.insert(parsed.after_receiver(call), ".inner()")
        return Fix(SAFE, "Leave the graph with `.inner()` before the move", (edit,))
