"""``devicelint lsp``: the language server (stdio; pygls 2 and lsprotocol, the ``lsp`` extra).

Modules: :mod:`.positions` (columns ↔ LSP code units), :mod:`.options` (settings),
:mod:`analyzer.projects` (what an edit re-analyses), :mod:`.convert` (lsprotocol types),
:mod:`.actions` (code actions), :mod:`.server` (state, debouncing, crash reports),
:mod:`.features` (the LSP methods), :mod:`.framing` (cutting stdin into messages), :mod:`.transport`
(the stdio loop), :mod:`.protocol` (what each message may do when), :mod:`.config_report` (configuration
errors as diagnostics). Importing this package imports no pygls: the CLI
imports it only for ``devicelint lsp``.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys

# Names a module imported when the server starts (tests use it to make a rule raise); unset in use.
PRELOAD_ENV = "DEVICELINT_LSP_PRELOAD"
MISSING = "`devicelint lsp` needs pygls and lsprotocol: pip install 'devicelint[lsp]'"


def main() -> int:
    """Serve over stdin/stdout until the client says exit: 0 after shutdown, else 1; 2 when pygls is missing."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        print(f"devicelint: error: {MISSING}", file=sys.stderr)
        return 2
    from .features import register
    from .server import DeviceLintServer

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="devicelint-lsp: %(message)s")
    preload = os.environ.get(PRELOAD_ENV)
    if preload:
        importlib.import_module(preload)
    server = register(DeviceLintServer())
    # A long-lived heap of trees and abstract values: the default thresholds would walk it over and over
    # (the CLI raises them too); what is loaded by now lives as long as the server.
    gc.set_threshold(100_000, 50, 100)
    gc.freeze()
    return server.serve()
