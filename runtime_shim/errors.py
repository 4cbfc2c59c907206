"""Run-time failures: one ``DispatchError`` subclass per rule code.

``str(error)`` is Burn's message; ``error.code`` is the analyzer's rule code for
the same failure; ``error.panic`` is the line as Rust would print it.
"""

from __future__ import annotations

from .semantics import PANIC_PREFIX


class DispatchError(RuntimeError):
    """A failure Burn would panic on. Raised before any state changes."""

    code: str = ""
    name: str = ""

    def __init__(self, message: str, *, template: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.panic = PANIC_PREFIX.get(template or message, "") + message


class AutodiffCrossBackendMove(DispatchError):
    code, name = "MV101", "autodiff-cross-backend-move"


class AutodiffMismatchMove(DispatchError):
    code, name = "MV102", "autodiff-mismatch-move"


class CaptureMove(DispatchError):
    code, name = "MV103", "capture-move"


class CaptureOutsideScope(DispatchError):
    code, name = "MV104", "capture-outside-scope"


class DeviceMismatch(DispatchError):
    code, name = "MV105", "device-mismatch"


class BackendMismatch(DispatchError):
    code, name = "MV106", "backend-mismatch"


class CheckpointingMismatch(DispatchError):
    code, name = "MV107", "checkpointing-mismatch"


class RequiresAutodiff(DispatchError):
    code, name = "MV108", "requires-autodiff"


class DoubleAutodiff(DispatchError):
    code, name = "MV109", "double-autodiff"


class AutodiffNotEnabled(DispatchError):
    code, name = "MV110", "autodiff-not-enabled"


class NonLeafRequireGrad(DispatchError):
    code, name = "MV111", "non-leaf-require-grad"


class BackendUnavailable(DispatchError):
    code, name = "MV112", "backend-unavailable"


ERROR_BY_CODE: dict[str, type[DispatchError]] = {
    cls.code: cls for cls in DispatchError.__subclasses__()
}


def error_for(code: str, message: str, template: str | None = None) -> DispatchError:
    """The exception for a table :class:`~runtime_shim.semantics.Fail` cell."""
    return ERROR_BY_CODE[code](message, template=template)
