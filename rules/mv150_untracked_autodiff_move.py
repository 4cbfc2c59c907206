"""Rule MV150: a plain float moved to an autodiff device stays untracked (advisory)."""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.diagnostics import Diagnostic, Severity
from analyzer.facts import FactStore

from .base import Rule, related_for


class UntrackedAutodiffMove(Rule):
    """A plain float moved to an autodiff device lands on the inner device, untracked.

    ## What it does
    Reports `to_device` calls that move a plain float (`Pf`/`Pf*`) to an autodiff
    device under profile `burn-2026-08` (under `burn-0.21` the same move fails,
    MV102). It is an advisory warning: the move itself succeeds.

    ## Why it matters
    Burn handles the move as a move to the inner device: the result is still a
    plain float that reports a plain device. No gradient ever reaches it, and
    the first operation with a tracked tensor fails with MV106.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    device = Device.flex().autodiff()
    batch = Tensor.ones([2, 3], Device.flex()).to_device(device)
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    device = Device.flex().autodiff()
    batch = Tensor.from_inner(Tensor.ones([2, 3], Device.flex()))
    ```

    ## Fix safety
    Safe for inputs (they need no gradient); `Tensor.from_inner` puts the tensor
    on the tape as an untracked leaf, so later operations with tracked tensors work.
    """

    default_level = "warning"
    code = "MV150"
    name = "untracked-autodiff-move"
    redirect_row = "move.3"

    def check(self, facts: FactStore) -> Iterator[Diagnostic]:
        for site, site_facts in facts.by_site().items():
            hits = sorted(((f, p) for f in site_facts for p in f.possibilities
                           if p.redirected_from == self.redirect_row and not p.failed),
                          key=lambda fp: (fp[0].context.id, fp[1].describe_operands()))
            if not hits:
                continue
            everywhere = all(p.redirected_from == self.redirect_row and not p.failed
                             for f in site_facts for p in f.possibilities) and not any(f.unknown for f in site_facts)
            text = (f"a plain float moved to an autodiff device stays plain and untracked (it lands on the inner "
                    f"device; no gradient reaches it) [{site.api}: {hits[0][1].describe_operands()}]")
            if not everywhere:
                text += f"; on some paths: {hits[0][0].context.describe()}"
            yield self.diagnostic(site, Severity.WARNING, text, related_for(hits))
