"""Rule MV201: a PyTorch op whose tensor operands are on different devices."""

from __future__ import annotations

import ast

from analyzer.diagnostics import UNSAFE, Fix
from analyzer.facts import Site, SiteFact
from analyzer.torch_domain import TorchTensorAtom

from .base import OutcomeRule, fails_everywhere, operand_atoms


class OperandsOnDifferentDevices(OutcomeRule):
    """A PyTorch operation whose tensor operands are on different devices.

    ## What it does
    Reports arithmetic, comparisons, `matmul`, `torch.cat`/`stack`, losses and
    the other device-checked ops (operators, `torch.*`, `Tensor.*` and
    `torch.nn.functional.*`) whose tensors are on different devices, including
    `cuda:0` against `cuda:1`. In element-wise ops a 0-dim CPU tensor is exempt:
    PyTorch treats it like a Python number (`cuda_tensor * torch.tensor(2.0)`
    works). Concatenating or stacking it is not
    (`torch.stack([cuda_loss, torch.tensor(0.0)])` fails), nor is a layer's
    input (MV202).

    ## Why it fails
    A kernel runs on one device and reads every input from there:
    `RuntimeError: Expected all tensors to be on the same device, but found at
    least two devices, cuda:0 and cpu!`

    ## Example
    ```python
    import torch

    logits = torch.randn(8, 4, device="cuda")
    labels = torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(logits, labels)
    ```

    ## Use instead
    ```python
    import torch

    logits = torch.randn(8, 4, device="cuda")
    labels = torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(logits, labels.to(logits.device))
    ```

    ## Fix safety
    Unsafe, and offered only for a call of two tensor arguments that fails on
    every path with one of them on the CPU and the other, a plain name, on a
    GPU: the CPU argument becomes `arg.to(other.device)`. The copy changes what
    the call reads (later in-place changes of the CPU tensor are not seen), and
    whether the copy belongs in the data pipeline instead is a decision about
    where the work runs.
    The message ends with the usual fix (`.to(x.device)` on one operand).
    """

    code = "MV201"

    def fix(self, site: Site, site_facts: list[SiteFact], source: str) -> Fix | None:
        from analyzer.fixes.spans import source_for

        if not fails_everywhere(site_facts, self.code):
            return None
        devices = []
        for role in ("arg0", "arg1"):
            atoms = operand_atoms(site_facts, role)
            kinds = {atom.dev.type for atom in atoms if isinstance(atom, TorchTensorAtom)}
            if not atoms or len(kinds) != 1 or len(kinds) != len({type(a) for a in atoms}):
                return None
            devices.append(kinds.pop())
        if sorted(devices) != ["cpu", "cuda"] or any(r not in ("arg0", "arg1") for f in site_facts
                                                      for p in f.possibilities for r, _a in p.operands):
            return None
        parsed = source_for(source)
        call = parsed.call_at(site)
        if call is None or any(a.star or a.keyword is not None for a in call.args) or len(call.args) != 2:
            return None
        cpu, gpu = (call.args[0], call.args[1]) if devices[0] == "cpu" else (call.args[1], call.args[0])
        name = source[parsed.start(gpu.value):parsed.end(gpu.value)]
        if not name.isidentifier() or name in ("self", "cls") or not isinstance(ast.parse(name, mode="eval").body,
                                                                                ast.Name):
            return None
        edits = parsed.append_call(cpu.value, f".to({name}.device)")
        return Fix(UNSAFE, f"Move the CPU operand to `{name}.device`", tuple(edits))
    reported_at_caller = True
    hint = "move one operand to the other's device: `.to(x.device)`"
    name = "operands-on-different-devices"
