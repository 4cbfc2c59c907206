"""devicelint's analyzer: follows every tensor and device through a program and reports the
device moves, operations and autodiff calls that will fail, before the code runs.

Pipeline: :mod:`~analyzer.frontend` (find, skip, decode, parse) → :mod:`~analyzer.imports`
→ :mod:`~analyzer.engine` (abstract interpretation; :mod:`~analyzer.lift` evaluates
``runtime_shim.semantics`` cells over :mod:`~analyzer.domain` values) → :mod:`~analyzer.facts`
→ the rules (package ``rules``) → :mod:`~analyzer.runner` / :mod:`~analyzer.cli`.
"""

__version__ = "0.1.0"
