"""The observer's stand-in for ``torchvision`` (see :mod:`.stand_ins`): the package, whose ``models`` and ``ops``
are the stand-ins beside this one."""

from __future__ import annotations

__version__ = "0.0.0+runtime-shim-stand-in"
__path__: list[str] = []  # a package: its submodules are found by the stand-ins' finder

from torchvision import models, ops  # noqa: E402 - the submodules, as ``import torchvision`` binds them

__all__ = ["models", "ops"]
