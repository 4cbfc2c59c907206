"""Rule MV108: an autodiff-only call on a float that is not autodiff."""

from __future__ import annotations

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule, fails_everywhere


class RequiresAutodiff(OutcomeRule):
    """`inner()`, `backward()` or `grad()` on a float tensor that is not autodiff.

    ## What it does
    Reports `inner()`, `backward()`, `grad()`, `grad_remove()` and
    `grad_replace()` whose tensor is a plain float (or a plain capture float),
    and `backward()` from an autodiff float that nothing tracked flows into.
    At d16f7ba2ed (the default profile) `inner()` of a tensor without autodiff
    returns it and `grad()`/`grad_remove()` give `None`, while
    `with_gradient_checkpointing_strategy()` of one fails (`Tensor::with_gradient_checkpointing_strategy
    requires autodiff; call Tensor::autodiff first`).

    ## Why it fails
    These calls unwrap the autodiff primitive; a plain float has none:
    `Requires autodiff tensor.` A frequent cause is a tensor created on the
    plain device, or one already taken off the tape with `inner()`/`no_grad()`
    (`without_autodiff()` in later Burn).
    An untracked autodiff float (never `require_grad()`, or a non-leaf cut off
    with `detach()`) has no step on the tape, and Burn's autodiff server panics
    in `backward()`: `Node should have a step registered, did you forget to call
    `Tensor::register_grad` on the tensor where you need gradients?`

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    loss = Tensor.ones([1], Device.flex()).sum()
    grads = loss.backward()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.ones([1], Device.flex().autodiff()).require_grad()
    loss = (weights * 2.0).sum()
    grads = loss.backward()
    ```

    ## Fix safety
    Safe, for `inner()` only: the fix drops an `.inner()` applied to a plain
    float (`x.inner()` becomes `x`). The tensor is already off the tape, so it is
    exactly what `inner()` of its autodiff form would give. Offered only where
    every calling context calls `inner()` on a plain float, and never where the
    deleted text holds a comment. `backward()` and `grad()` on a plain float have
    no automatic fix: making the computation autodiff is a design change (memory
    use and speed).
    """

    code = "MV108"
    name = "requires-autodiff"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        if site.api != "Tensor.inner" or not fails_everywhere(site_facts, self.code):
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        edits = parsed.unwrap_method(call) if call is not None else None
        return Fix(SAFE, "Drop `.inner()`: the tensor is already plain", tuple(edits)) if edits else None
