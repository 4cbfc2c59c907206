"""``devicelint confirm``: run programs under runtime_shim (PyTorch programs under its torch observer)
and compare, site by site, with the analysis.

Modules: :mod:`.programs` (which programs, their header settings), :mod:`.launch` and
:mod:`.child` (run them, recording, in parallel), :mod:`.analysis` (the analyzer side),
:mod:`.sites` (records and diagnostics as call sites), :mod:`.match` (the verdicts),
:mod:`.reveal` (comparing revealed states), :mod:`.session` (one run, end to end),
:mod:`.report` (table, JSON), :mod:`.command` (the CLI). See docs/confirm.md.
"""

#: Seconds each program may run (the CLI's default; here so that building the parser imports nothing else).
DEFAULT_TIMEOUT = 60.0
