"""devicelint's analyzer: follows every tensor and device through a program and reports the
device moves, operations and autodiff calls that will fail, before the code runs.

Pipeline: :mod:`~analyzer.frontend` (find, skip, decode, parse) → :mod:`~analyzer.imports`
→ :mod:`~analyzer.engine` (abstract interpretation; :mod:`~analyzer.lift` evaluates
``runtime_shim.semantics`` cells over :mod:`~analyzer.domain` values) → :mod:`~analyzer.facts`
→ the rules (package ``rules``) → :mod:`~analyzer.runner` / :mod:`~analyzer.cli`.
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``from devicelint import reveal_device``: the run-time reveal (runtime_shim's, which also takes
    PyTorch tensors and modules), imported only when asked for so that the analyzer itself loads no
    runtime."""
    if name == "reveal_device":
        from runtime_shim.reveal import reveal_device

        return reveal_device
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
