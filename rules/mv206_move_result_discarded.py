"""Rule MV206: the result of tensor.to()/.cuda()/.cpu() thrown away."""

from __future__ import annotations

import ast

from devicelint.diagnostics import UNSAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule


class MoveResultDiscarded(OutcomeRule):
    """A tensor's `.to()`, `.cuda()` or `.cpu()` used as a statement: the moved copy is thrown away.

    ## What it does
    Reports expression statements `x.to(device)`, `x.to(other_tensor)`,
    `x.cuda()` and `x.cpu()` whose receiver is a tensor. (`model.to(device)` on
    an `nn.Module` is fine: modules move in place. `x.to(torch.float16)` is a
    cast, not a move.) The target need not be known: `x.to(device)` with a
    device from the environment is reported too (but not `x.to(dtype)` with an
    unknown argument named like a dtype, maybe a cast).

    ## Why it fails
    Tensors do not move in place: the call returns a new tensor on the target
    device and leaves `x` where it was. Nothing raises here; the code that then
    uses `x` fails with a device mismatch, or silently runs on the wrong device.

    ## Example
    ```python
    import torch

    inputs = torch.randn(3, 4)
    inputs.cuda()
    ```

    ## Use instead
    ```python
    import torch

    inputs = torch.randn(3, 4)
    inputs = inputs.cuda()
    ```

    ## Fix safety
    Unsafe: assigning the result makes the move happen, so the code after it
    now sees the tensor on the new device (the intent, but a behaviour change
    that can surface other mismatches). Offered when the receiver is a name or
    an attribute (`x`, `self.x`) that is not a `for` loop's variable (assigning
    a loop variable would not change the container it came from).
    """

    code = "MV206"
    name = "move-result-discarded"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        call = parsed.call_at(site)
        receiver = parsed.method_receiver(call) if call is not None else None
        if call is None or receiver is None:
            return None
        target = source[parsed.start(receiver):parsed.end(receiver)]
        try:
            node = ast.parse(target, mode="eval").body
        except SyntaxError:
            return None
        if not _assignable(node) or _loop_variable(source, site, target):
            return None
        return Fix(UNSAFE, f"Assign the moved tensor: `{target} = {target}.…`",
                   (parsed.insert(parsed.start(call, outer=False), f"{target} = "),))


def _assignable(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _loop_variable(source: str, site: Site, target: str) -> bool:
    """Whether ``target`` is bound by a ``for`` loop whose body holds the site."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    for loop in ast.walk(tree):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and target in {
                n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}:
            body = loop.body if isinstance(loop, (ast.For, ast.AsyncFor)) else []
            if any(s.lineno <= site.line <= (s.end_lineno or s.lineno) for s in body):
                return True
    return False
