"""The observer's stand-in for ``matplotlib`` (see :mod:`.stand_ins`): the package, for ``matplotlib.pyplot``
(``stand_in_pyplot``) and ``matplotlib.use(backend)``."""

from __future__ import annotations

from typing import Any

__version__ = "0.0.0+runtime-shim-stand-in"
__path__: list[str] = []  # a package: ``matplotlib.pyplot`` is found by the stand-ins' finder
rcParams: dict[str, Any] = {}


def use(backend: str, *, force: bool = True) -> None:
    pass
