"""The child side of the command line (and of ``devicelint confirm``): start the observer before the
program runs. Importing this module does not import torch; :func:`start_from_env` does."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing the observer imports torch: only when it starts
    from .observer import Observer

#: Environment variable naming the mode (``fake`` or ``real``) for :func:`start_from_env`.
MODE_VARIABLE = "RUNTIME_SHIM_TORCH"

#: Run ahead of the program by runtime_shim.runner's bootstrap and by ``devicelint confirm``'s child.
PRELUDE = "import runtime_shim.torch_observer.session as _observer_session; _observer_session.start_from_env()\n"

#: Third-party modules the observer imports when it starts (FakeTensorMode imports torch._dynamo, about
#: 2 s): a launcher that forks programs may import them once, ahead of every program.
PRELOAD = ("torch", "torch._dynamo")

_observer: Observer | None = None


def start_from_env() -> Observer:
    """Start (once) the observer for this process; it stays on until the process ends."""
    global _observer
    if _observer is None:
        from . import stand_ins
        from .observer import Observer

        _observer = Observer(os.environ.get(MODE_VARIABLE, "fake")).start()
        # libraries not installed here: their stand-ins (an installed one is found first), for the program's
        # imports only (torch, imported by now, keeps its own fallbacks: ``torch.hub`` without tqdm)
        stand_ins.install()
    return _observer
