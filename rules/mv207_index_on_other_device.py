"""Rule MV207: an index tensor on another device than the tensor it indexes."""

from __future__ import annotations

from devicelint.diagnostics import Fix
from devicelint.facts import Site, SiteFact

from .base import OutcomeRule
from .move_fix import move_to_gpu_operand


class IndexOnOtherDevice(OutcomeRule):
    """An index tensor on another device than the tensor it indexes.

    ## What it does
    Reports `index_select`, `gather`, `scatter*`, `take`, `index_add/copy/fill/put`
    and `t[index]` whose index tensor is on a device none of the data is on.
    Advanced indexing (`t[index]`, `t[index] = v`) accepts a CPU index on any
    device; a GPU index only on its own device.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    The index is read by the kernel on the data's device:
    `RuntimeError: Expected all tensors to be on the same device, but found at
    least two devices, cuda:0 and cpu!` or, for indexing a CPU tensor with a GPU
    index, `indices should be either on cpu or on the same device as the
    indexed tensor (cpu)`.

    ## Example
    ```python
    import torch

    table = torch.randn(100, 16, device="cuda")
    rows = torch.index_select(table, 0, torch.tensor([3, 14, 15]))
    ```

    ## Use instead
    ```python
    import torch

    table = torch.randn(100, 16, device="cuda")
    rows = torch.index_select(table, 0, torch.tensor([3, 14, 15], device=table.device))
    ```

    ## Fix safety
    Unsafe, and offered only for a call of the data and a CPU index that fails
    on every path, the data a plain name on a GPU: the index becomes
    `index.to(data.device)`. Creating the index on the data's device where it
    is built saves the copy.
    The message ends with the usual fix (create the index on the data's device, or `.to(x.device)`).
    """

    code = "MV207"
    reported_at_caller = True
    hint = "create the index on the data's device, or move it: `.to(x.device)`"
    name = "index-on-other-device"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        # only the index moves (the data is `arg0` of a function, the receiver of a method)
        return move_to_gpu_operand(site, site_facts, source, self.code,
                                   frozenset(f"arg{n}" for n in range(1, 4)))
