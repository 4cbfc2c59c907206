"""The names and texts the runtime and the analyzer share: how a device prints, a tensor's reveal text, a
dispatch kind's Debug form, and the values ``capture_scope`` returns instead of a graph.

Pure Python, like the semantics tables (no numpy, no torch, no runtime state): the analyzer imports it to
print what the runtime prints, so a finding and a run read the same.
"""

from __future__ import annotations

import enum


class CaptureError(enum.Enum):
    """Returned (not raised) by ``capture_scope``, as Burn returns a ``Result``.

    The boundary errors come back as a :class:`runtime_shim.capture.BoundaryError` naming the tensor (burn-capture
    ``capture.rs`` ``CaptureScopeGuard::complete``; the values are its ``Display`` texts).
    """

    INVALID_DEVICE = "capture_scope called on a device that is not a capture device"
    ALREADY_ACTIVE = "a capture scope is already active on this device"
    UNKNOWN_BOUNDARY = "unknown graph {boundary} tensor {tensor}"
    DUPLICATE_BOUNDARY = "duplicate graph {boundary} tensor {tensor}"
    UNDECLARED_INPUT = "graph reads undeclared input tensor {tensor}"
    INVALID_INPUT = "graph input tensor {tensor} is produced within the graph"
    INVALID_OUTPUT = "graph output tensor {tensor} does not survive the graph"


def plain_device_text(backend: str, sub: str | None, index: int | str) -> str:
    """Burn's Debug form of a plain (non-autodiff) device: ``Cuda(1)``, ``LibTorch(Cuda(0))``, ``Flex``
    (``index`` is ``"?"`` where the analysis does not know it)."""
    if sub is not None:
        return f"LibTorch({sub}({index}))" if sub == "Cuda" else f"LibTorch({sub})"
    if backend in ("Cuda", "Rocm", "Capture"):
        return f"{backend}({index})"
    return backend


def device_text(plain: str, autodiff: bool, strategy: object = None) -> str:
    """Burn's Debug form of a device whose plain form is ``plain``, wrapped in Autodiff with its
    checkpointing strategy when ``autodiff``."""
    return f"Autodiff {{ device: {plain}, checkpointing: {strategy} }}" if autodiff else plain


def kind_debug_text(plain: str, autodiff: bool) -> str:
    """A tensor's dispatch kind as Burn's backend-mismatch panic prints it: ``Autodiff(Flex)``, ``Flex``."""
    return f"Autodiff({plain})" if autodiff else plain


def tensor_reveal_text(device: str, kind: str, detail: str = "") -> str:
    """A tensor's ``reveal_device`` text: its reported device, its kind, and the detail its class carries
    (an autodiff role, a strategy, ``initialized`` / ``computed``)."""
    return f"{device} {kind} {detail}" if detail else f"{device} {kind}"
