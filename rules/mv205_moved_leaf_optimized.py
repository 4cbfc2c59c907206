"""Rule MV205: a requires-grad leaf moved with .to()/.cuda(), then optimized or read for .grad."""

from __future__ import annotations

import ast

from devicelint.diagnostics import SAFE, Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule


class MovedLeafOptimized(OutcomeRule):
    """A requires-grad tensor moved to a device, then given to an optimizer or read for `.grad`.

    ## What it does
    Reports optimizers built from a parameter list that holds a non-leaf
    tensor, `.grad` reads of a non-leaf, and changes of a non-leaf's
    requires-grad flag (`t.requires_grad = flag`, `t.requires_grad_(False)`).
    The usual cause:
    `torch.ones(1, requires_grad=True).to(device)` / `.cuda()`: the leaf is
    the CPU tensor, what the name holds is the result of the move.

    ## Why it fails
    Autograd records the move, so its result is not a leaf: an optimizer
    refuses it (`ValueError: can't optimize a non-leaf Tensor`), and its
    `.grad` is never populated (`None`, with a `UserWarning: The .grad
    attribute of a Tensor that is not a leaf Tensor is being accessed`): the
    training silently does not update it. Freezing or unfreezing it raises
    `RuntimeError: you can only change requires_grad flags of leaf variables.`
    (`requires_grad_(True)` on it does nothing: it requires grad already).

    ## Example
    ```python
    import torch

    temperature = torch.ones(1, requires_grad=True).cuda()
    optimizer = torch.optim.Adam([temperature], lr=0.01)
    ```

    ## Use instead
    ```python
    import torch

    temperature = torch.ones(1, device="cuda", requires_grad=True)
    optimizer = torch.optim.Adam([temperature], lr=0.01)
    ```

    ## Fix safety
    Safe, where offered: when the reported tensor comes from
    `torch.<factory>(..., requires_grad=True).to(device)` (or `.cuda()`) in the
    same file, the fix creates it on the device instead
    (`torch.<factory>(..., requires_grad=True, device=device)`): the same values
    on the same device, now a leaf, which is what the optimizer and `.grad`
    need. Not offered for other moves (`.to(device, dtype)`, a tensor moved far
    from where it was made) or where the rewrite would drop a comment.
    """

    code = "MV205"
    name = "moved-leaf-optimized"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        origins = {getattr(atom, "origin", None) for f in site_facts for p in f.possibilities if p.code == self.code
                   for _role, atom in p.operands if getattr(atom, "moved_from", None) is not None}
        if len(origins) != 1:
            return None
        origin = origins.pop()
        if origin is None or origin.file != site.file:
            return None
        from devicelint.fixes.spans import source_for

        parsed = source_for(source)
        move = _move_of_factory(source, origin.line, origin.col)
        if move is None:
            return None
        factory, target, call = move
        start = parsed._byte_offset(factory.end_lineno, factory.end_col_offset)  # after the factory's ")"
        end = parsed._byte_offset(call.end_lineno, call.end_col_offset)  # the end of the move
        if parsed.has_comment(start, end):
            return None
        return Fix(SAFE, f"Create the tensor on the device: `device={target}`",
                   (parsed.edit(start - 1, end, f", device={target})"),))


_FACTORIES = {"tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "eye"}


def _move_of_factory(source: str, line: int, col: int) -> tuple | None:
    """``torch.F(..., requires_grad=True).to(d)`` / ``.cuda()`` starting at (line, col): the factory call, the
    device's source text and the move call; ``None`` for anything else."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.lineno == line and node.col_offset == col
                and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call)):
            continue
        factory = node.func.value
        name = factory.func.attr if isinstance(factory.func, ast.Attribute) else None
        if name not in _FACTORIES or any(k.arg == "device" or k.arg is None for k in factory.keywords) or not any(
                k.arg == "requires_grad" for k in factory.keywords):
            return None
        if node.func.attr == "cuda" and not node.args and not node.keywords:
            return factory, '"cuda"', node
        if node.func.attr == "to" and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], ast.Starred):
            return factory, ast.get_source_segment(source, node.args[0]), node
        return None
    return None
