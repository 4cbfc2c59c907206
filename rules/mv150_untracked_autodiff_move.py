"""Rule MV150: a plain float moved to an autodiff device stays untracked (advisory)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from devicelint.diagnostics import UNSAFE, Diagnostic, Fix
from devicelint.facts import FactStore, Possibility, Site, SiteFact

from .base import Rule


class UntrackedAutodiffMove(Rule):
    """A plain float moved to an autodiff device lands on the inner device, untracked.

    ## What it does
    Reports `to_device` calls that move a plain float (`Pf`/`Pf*`) to an autodiff
    device under profiles `burn-d16f7ba` and `burn-2026-08` (under `burn-0.21` the
    same move fails, MV102). It is an advisory warning: the move itself succeeds.

    ## Why it matters
    Burn handles the move as a move to the inner device: the result is still a
    plain float that reports a plain device. No gradient ever reaches it: at
    d16f7ba2ed an operation with a tracked tensor takes it in as a constant, and
    under `burn-2026-08` that operation fails with MV106.

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
    Unsafe: the fix makes the move explicit and wraps the moved tensor with
    `Tensor.from_inner` (`x.to_device(d)` becomes
    `Tensor.from_inner(x.to_device(d.inner()))`, importing `Tensor` from
    `runtime_shim` when the module does not), which puts it on the tape as an
    untracked autodiff leaf, so later operations with tracked tensors work.
    That changes what the program computes: the tensor is autodiff from then
    on, so operations that mixed it with plain floats now fail (MV106), and it
    carries the checkpointing strategy `Disabled` (or its own), not the target
    device's. Offered only where every calling context moves a plain float.
    """

    default_level = "warning"
    code = "MV150"
    name = "untracked-autodiff-move"
    redirect_row = "move.3"

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        for site, site_facts in facts.by_site().items():
            hits = [(f, p) for f in site_facts for p in f.possibilities if self._redirected(p)]
            everywhere = len(hits) == sum(len(f.possibilities) for f in site_facts) \
                and not any(f.unknown for f in site_facts)
            diagnostic = self.advisory(site, hits, everywhere, "a plain float moved to an autodiff device stays "
                                       "plain and untracked (it lands on the inner device; no gradient reaches it)")
            if diagnostic is not None:
                yield self.with_fix(diagnostic, site, site_facts, sources) if everywhere else diagnostic

    def _redirected(self, p: Possibility) -> bool:
        return p.redirected_from == self.redirect_row and not p.failed

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        """Called only where every possibility is the redirected move (see :meth:`check`)."""
        if site.api != "Tensor.to_device":
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        tensor = parsed.tensor_class() if call is not None else None
        if call is None or tensor is None:
            return None
        device = parsed.argument(call, 0, "device")
        if device is None:
            return None
        name, imports = tensor
        start, end = parsed.wrap_call(call, f"{name}.from_inner")
        edits = (*imports, start, *parsed.append_call(device.value, ".inner()"), end)
        return Fix(UNSAFE, f"Move to the inner device and wrap the moved tensor with `{name}.from_inner`", edits)
