"""runtime_shim: Burn's multi-backend tensor dispatch, in Python.

Devices, tensors, moves, operations and autodiff with Burn's semantics and
failures (see ``runtime_shim.semantics``, the single table both this runtime
and the devicelint analyzer evaluate). Public API: ``../shared/runtime-shim-api.md``.
"""

from .autodiff import Gradients
from .capture import CaptureError, Graph, Scope
from .devices import Device, UnknownDevice
from .errors import (
    AutodiffCrossBackendMove,
    AutodiffMismatchMove,
    AutodiffNotEnabled,
    BackendMismatch,
    BackendUnavailable,
    CaptureMove,
    CaptureOutsideScope,
    CheckpointingMismatch,
    DeviceMismatch,
    DispatchError,
    DoubleAutodiff,
    NonLeafRequireGrad,
    RequiresAutodiff,
)
from .modes import current_profile, is_virtual, mode, profile, set_profile, set_virtual, virtual_devices
from .recorder import recording
from .reveal import reveal_device
from .semantics import PROFILES, CheckpointingStrategy
from .tensor import Tensor, TensorData

__version__ = "0.1.0"

__all__ = [
    "AutodiffCrossBackendMove", "AutodiffMismatchMove", "AutodiffNotEnabled", "BackendMismatch",
    "BackendUnavailable", "CaptureError", "CaptureMove", "CaptureOutsideScope", "CheckpointingMismatch",
    "CheckpointingStrategy", "Device", "DeviceMismatch", "DispatchError", "DoubleAutodiff", "Gradients",
    "Graph", "NonLeafRequireGrad", "PROFILES", "RequiresAutodiff", "Scope", "Tensor", "TensorData",
    "UnknownDevice", "current_profile", "is_virtual", "mode", "profile", "recording", "reveal_device",
    "set_profile", "set_virtual", "virtual_devices",
]
