"""``reveal_device``: the one-line text of a tensor's or device's dispatch state.

The analyzer's static ``reveal_device`` prints the same text, so a run and an
analysis can be compared site by site. Shapes of the text:

* device: ``repr(device)``, e.g. ``Autodiff { device: Flex, checkpointing: Balanced }``
* tensor: ``<reported device> <kind>[ <detail>]`` where the detail is the role
  of an autodiff float (``untracked``, ``tracked``, ``non-leaf``), the strategy
  a plain float carries (``checkpointing: Balanced``), or a capture tensor's
  ``initialized`` / ``computed``.
"""

from __future__ import annotations

import sys
from typing import Any

from . import recorder as recording
from .devices import Device
from .semantics import AF, CC, CC_INT, CI, CI_INT, PF_STAR
from .texts import tensor_reveal_text


def reveal_device(x: Any) -> str:
    """The dispatch state of a tensor or a device, as one line of text (recorded as a reveal).

    A PyTorch tensor, module or device gets the text the analyzer's static reveal gives it
    (:func:`torch_reveal_text`: device, and whether it requires grad as a leaf or a non-leaf),
    printed to standard error as ``typing.reveal_type`` does, returned, and recorded like any reveal."""
    torch_text = torch_reveal_text(x)
    if torch_text is not None:
        print(f"reveal_device: {torch_text}", file=sys.stderr, flush=True)
        if recording.ACTIVE:  # under confirm: compared with the analyzer's reveal at this call
            recording.record_ok("reveal_device", reveal=torch_text)
        return torch_text
    text = reveal_text(x)
    if recording.ACTIVE:
        recording.record_ok("reveal_device", reveal=text)
    return text


def reveal_text(x: Any) -> str:
    """:func:`reveal_device`'s text, not recorded (``repr`` uses it: printing a tensor is no reveal)."""
    from .tensor import Tensor

    if isinstance(x, Device):
        text = repr(x)
    elif isinstance(x, Tensor):
        detail = ""
        if x._cls is AF:
            detail = x._role.value
        elif x._cls is PF_STAR:
            detail = f"checkpointing: {x._strategy}"
        elif x._cls in (CI, CI_INT):
            detail = "initialized"
        elif x._cls in (CC, CC_INT):
            detail = "computed"
        text = tensor_reveal_text(repr(x.device()), x._kind, detail)
    else:
        raise TypeError(f"reveal_device takes a Tensor or a Device, got {type(x).__name__}")
    return text


def torch_reveal_text(x: Any) -> str | None:
    """The reveal text of a ``torch.Tensor``, ``torch.nn.Module`` or ``torch.device`` (the analyzer's
    format, ``analyzer.torch_domain``); ``None`` for anything else. torch is never imported here: an
    object of it means the program already has."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if isinstance(x, torch.device):
        return f"torch.device('{x}')"
    if isinstance(x, torch.Tensor):
        parts = [f"{x.device} tensor"]
        if x.dim() == 0:
            parts.append("0-dim")
        if x.requires_grad:
            parts.append("requires grad (leaf)" if x.is_leaf else "requires grad (non-leaf)")
        if isinstance(x, torch.nn.Parameter):
            parts.append("module weight")
        return ", ".join(parts)
    if isinstance(x, torch.nn.Module):
        devices = sorted({str(t.device) for t in (*x.parameters(), *x.buffers())})
        return f"nn.{type(x).__name__}" + (f" on {', '.join(devices)}" if devices else "")
    return None
