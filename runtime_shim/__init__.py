"""runtime_shim: Burn's multi-backend tensor dispatch, in Python.

Devices, tensors, moves, operations and autodiff with Burn's semantics and
failures (see ``runtime_shim.semantics``, the single table both this runtime
and the devicelint analyzer evaluate). Public API: ``runtime-shim-api.md``.

Names are loaded on first use (PEP 562), so ``import runtime_shim.semantics``
stays pure Python: the analyzer imports the table without numpy or torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> the submodule that defines it
_EXPORTS = {
    "Gradients": "autodiff",
    "CaptureError": "capture", "BoundaryError": "capture", "Graph": "capture", "Scope": "capture",
    "Device": "devices", "UnknownDevice": "devices",
    "current_profile": "modes", "is_virtual": "modes", "mode": "modes", "profile": "modes",
    "set_profile": "modes", "set_virtual": "modes", "virtual_devices": "modes",
    "recording": "recorder",
    "reveal_device": "reveal",
    "PROFILES": "semantics", "CheckpointingStrategy": "semantics",
    "Tensor": "tensor", "TensorData": "tensor",
    **{name: "errors" for name in (
        "DispatchError", "AutodiffCrossBackendMove", "AutodiffMismatchMove", "CaptureMove",
        "CaptureOutsideScope", "DeviceMismatch", "BackendMismatch", "CheckpointingMismatch",
        "RequiresAutodiff", "DoubleAutodiff", "AutodiffNotEnabled", "NonLeafRequireGrad",
        "BackendUnavailable")},
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime_shim' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
