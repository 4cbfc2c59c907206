"""Rule MV109: autodiff of an autodiff device or tensor."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, fails_everywhere


class DoubleAutodiff(OutcomeRule):
    """Autodiff wrapped around autodiff.

    ## What it does
    Reports an int/bool tensor moved to an autodiff device that wraps a capture
    device and, where Burn panics on them (2c06be35 and v0.21: profiles
    `burn-2026-08`, `burn-0.21`), `autodiff()` of a device that is already
    autodiff and `Tensor.from_inner` of a tensor that is already autodiff. At
    d16f7ba2ed those two return the device or tensor unchanged.

    ## Why it fails
    Burn supports first-order autodiff only: the move reaches `internal error:
    entered unreachable code: Autodiff should not wrap an autodiff device.`;
    at 2c06be35 the conversions panic with `not implemented: Only first-order
    autodiff is supported` or `Autodiff should not wrap an autodiff tensor.`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    train = Device.capture().autodiff()
    labels = Tensor.from_ints([0, 1], Device.flex()).to_device(train)
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    train = Device.flex().autodiff()
    labels = Tensor.from_ints([0, 1], Device.flex()).to_device(train)
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
