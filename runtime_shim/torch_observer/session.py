"""The child side of the command line: start the observer before the program runs."""

from __future__ import annotations

import os

from .observer import Observer

#: Environment variable naming the mode (``fake`` or ``real``) for :func:`start_from_env`.
MODE_VARIABLE = "RUNTIME_SHIM_TORCH"

#: Run by runtime_shim.runner's bootstrap ahead of the program.
PRELUDE = "import runtime_shim.torch_observer.session as _observer_session; _observer_session.start_from_env()\n"

_observer: Observer | None = None


def start_from_env() -> Observer:
    """Start (once) the observer for this process; it stays on until the process ends."""
    global _observer
    if _observer is None:
        _observer = Observer(os.environ.get(MODE_VARIABLE, "fake")).start()
    return _observer
