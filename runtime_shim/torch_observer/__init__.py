"""PyTorch observer: runs PyTorch programs and records each device failure (MV201-MV208) with its
call site, in runtime_shim's record format. See docs/torch_observer.md.

``observe()`` (in-process) and ``python -m runtime_shim.torch_observer [--real] PATHS`` (one
subprocess per program, through runtime_shim.runner). Importing this package imports torch.
"""

from .observer import Failure, Observer, observe

__all__ = ["Failure", "Observer", "observe"]
