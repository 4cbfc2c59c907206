"""The observer's stand-in for ``torch_geometric`` (see :mod:`.stand_ins`): the package, whose ``data``,
``loader`` and ``nn`` are the stand-ins beside this one."""

from __future__ import annotations

__version__ = "0.0.0+runtime-shim-stand-in"
__path__: list[str] = []  # a package: its submodules are found by the stand-ins' finder

from torch_geometric import data, loader, nn  # noqa: E402 - the submodules, as ``import torch_geometric`` binds them

__all__ = ["data", "loader", "nn"]
