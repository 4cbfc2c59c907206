"""Rule MV202: a module's weights and its input on different devices."""

from __future__ import annotations

from .base import OutcomeRule


class ModuleInputOnOtherDevice(OutcomeRule):
    """A module called with an input on another device than its weights.

    ## What it does
    Reports calls of `torch.nn` layers (`nn.Linear`, `nn.Conv2d`, norms,
    `nn.Embedding`, `nn.Sequential` chains, ...) and ops inside a module's
    `forward` that combine its parameters or buffers with a tensor on another
    device. A method the program calls directly (a metric's `update`, a
    `loss` method outside `forward`) runs no module, as PyTorch counts it: a
    mismatch with the module's buffers there is MV201. The analysis follows `model.to(device)` / `.cuda()` / `.cpu()`
    (modules move in place, with their parameters, buffers and sub-modules;
    plain tensor attributes do not), `torch.set_default_device` and
    `with torch.device(...)` blocks.

    Inside a function whose failing operands all came in through its arguments,
    the finding is reported at the call that passed them (the outermost one that
    did), with the failing call as its first related location.

    ## Why it fails
    The layer's kernel reads its weights and its input from one device:
    `RuntimeError: Expected all tensors to be on the same device, but found at
    least two devices, cuda:0 and cpu!` (convolutions word it `Input type
    (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the
    same`). `nn.DataParallel` checks its module before it scatters the inputs:
    `RuntimeError: module must have its parameters and buffers on device cuda:0
    (device_ids[0]) but found one of them on device: cuda:1` (its inputs may be
    anywhere; the module must be on `device_ids[0]`). `DistributedDataParallel`
    given `device_ids` checks that its module is on a GPU: `ValueError:
    DistributedDataParallel device_ids and output_device arguments only work
    with single-device/multiple-device GPU modules or CPU modules, but got
    device_ids [0], output_device None, and module parameters
    {device(type='cpu')}.` (`DDP(model, device_ids=[rank])` before
    `model.to(rank)`). A GPU whose index the program chooses as it runs
    (`model.cuda(local_rank)`) is named by what gave the index,
    `cuda:<local_rank>` (`cuda:?` where that is not a variable, a parameter or
    an attribute of one), where PyTorch prints the number.

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(10, 2)
    model.cuda()
    prediction = model(torch.randn(4, 10))
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(10, 2)
    model.cuda()
    prediction = model(torch.randn(4, 10, device="cuda"))
    ```

    ## Fix safety
    No automatic fix: moving the input or the module are both plausible, and
    the input's move often belongs in the data loader.
    The message ends with the usual fixes (move the batch to the model's device; register a plain
    tensor attribute as a buffer so that `model.to()` moves it); for `nn.DataParallel`'s check, move the
    module to `device_ids[0]`; for `DistributedDataParallel`'s, move the module to the process's GPU first.
    """

    code = "MV202"
    reported_at_caller = True
    hint = "move the batch to the model's device (a tensor attribute: register it as a buffer)"
    row_hints = {"torch.DataParallel": "move the module to device_ids[0] (its inputs may stay on any device)",
                 "torch.DistributedDataParallel": "move the module to the process's GPU before wrapping it "
                                                  "(`model.to(rank)`)"}
    name = "module-and-input-on-different-devices"
