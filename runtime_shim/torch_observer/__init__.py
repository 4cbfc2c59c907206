"""PyTorch observer: runs PyTorch programs and records each device failure (MV201-MV208) with its
call site, in runtime_shim's record format. See docs/torch_observer.md.

``observe()`` (in-process) and ``python -m runtime_shim.torch_observer [--real] PATHS`` (one
subprocess per program, through runtime_shim.runner). ``Failure``, ``Observer`` and ``observe``
import torch when first used; :mod:`.session`'s constants (``PRELUDE``, ``MODE_VARIABLE``) do not,
so a launcher (``devicelint confirm``) can name them without importing torch itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .observer import Failure, Observer, observe

__all__ = ["Failure", "Observer", "observe"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import observer

        return getattr(observer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
