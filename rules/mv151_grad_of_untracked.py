"""Rule MV151: the gradient of an untracked autodiff tensor is always None (advisory)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from devicelint.diagnostics import Diagnostic
from devicelint.domain import TensorAtom
from devicelint.facts import FactStore, Possibility

from runtime_shim.semantics import AF, Role

from .base import Rule

GRADIENT_READS = ("Tensor.grad", "Tensor.grad_remove")


def _untracked(p: Possibility) -> bool:
    """A successful gradient read of an untracked autodiff leaf (Burn's ``Requirement::None``)."""
    if p.failed:
        return False
    tensor = dict(p.operands).get("tensor")
    return isinstance(tensor, TensorAtom) and tensor.cls is AF and tensor.role is Role.UNTRACKED


class GradOfUntracked(Rule):
    """The gradient of an untracked autodiff tensor is always `None`.

    ## What it does
    Reports `t.grad(grads)` and `t.grad_remove(grads)` where `t` is an
    autodiff float that is an untracked leaf: it never had `require_grad()`,
    or it is the `detach()` of a non-leaf. It is an advisory warning: the call
    succeeds and returns `None`.

    ## Why it matters
    burn-autodiff's `float_detach` keeps `is_require_grad`, which is true for a
    tracked leaf only (`Requirement::Grad`), so detaching a computed tensor (the
    usual truncated-backpropagation step, `h = h.detach()`) gives an untracked
    leaf with no node in any graph. No gradient ever reaches it, and code that
    reads its gradient gets `None` (then usually fails on `None.to_list()`).

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    w = Tensor.ones([2], Device.flex().autodiff()).require_grad()
    h = (w * 2.0).detach()
    grads = (h * w).sum().backward()
    h.grad(grads)  # always None
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    w = Tensor.ones([2], Device.flex().autodiff()).require_grad()
    h = (w * 2.0).detach().require_grad()
    grads = (h * w).sum().backward()
    h.grad(grads)
    ```

    ## Fix safety
    No automatic fix: which tensor's gradient the code meant (the tracked leaf it
    was computed from, or the detached state as a new tracked leaf) is the
    author's choice.
    """

    default_level = "warning"
    code = "MV151"
    name = "grad-of-untracked"

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        for site, site_facts in facts.by_site().items():
            if site.api not in GRADIENT_READS:
                continue
            # a calling context in which the tensor is untracked on every path (a join with a tracked
            # state inside one context is left alone: the analysis may have merged two objects there)
            certain = [f for f in site_facts
                       if not f.unknown and f.possibilities and all(_untracked(p) for p in f.possibilities)]
            diagnostic = self.advisory(site, [(f, p) for f in certain for p in f.possibilities],
                                       len(certain) == len(site_facts), "the gradient of an untracked autodiff "
                                       "tensor (never `require_grad()`, or a detached non-leaf) is always None")
            if diagnostic is not None:
                yield diagnostic
