"""Rule MV109: autodiff of an autodiff device or tensor."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, fails_everywhere


class DoubleAutodiff(OutcomeRule):
    """Autodiff wrapped around autodiff.

    ## What it does
    Reports `autodiff()` of a device that is already autodiff,
    `Tensor.from_inner` of a tensor that is already autodiff, and an int/bool
    tensor moved to an autodiff device that wraps a capture device.

    ## Why it fails
    Burn supports first-order autodiff only:
    `not implemented: Only first-order autodiff is supported`, or
    `Autodiff should not wrap an autodiff tensor.`

    ## Example
    ```python
    from runtime_shim import Device

    device = Device.flex().autodiff()
    training = device.autodiff()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device

    device = Device.flex().autodiff()
    training = device if device.is_autodiff() else device.autodiff()
    ```

    ## Fix safety
    Safe: the fix drops the second autodiff (`device.autodiff()` becomes
    `device`, `Tensor.from_inner(t)` becomes `t`). The device or tensor is
    already autodiff, which is what the call asked for, and it keeps its own
    checkpointing strategy. Offered only where every calling context fails, and
    never where the deleted text holds a comment; the int/bool move to an
    autodiff device wrapping a capture device has no automatic fix.
    """

    code = "MV109"
    name = "double-autodiff"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        if site.api not in ("Device.autodiff", "Tensor.from_inner") or not fails_everywhere(site_facts, self.code):
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        if call is None:
            return None
        if site.api == "Device.autodiff":
            edits, message = parsed.unwrap_method(call), "Drop the second `.autodiff()`"
        else:
            edits, message = parsed.unwrap_call(call), "Drop `Tensor.from_inner`: the tensor is already autodiff"
        return Fix(SAFE, message, tuple(edits)) if edits else None
