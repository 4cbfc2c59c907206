"""Rule MV903: the analyzer itself failed on a file (a bug in devicelint)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from devicelint.diagnostics import Diagnostic, Severity
from devicelint.facts import FactStore

from .base import Rule


class AnalysisFailed(Rule):
    """The analysis failed on this file: a bug in devicelint, please report it.

    ## What it does
    Reports a file whose analysis raised an exception inside devicelint, or whose worker
    process died (killed, for example by the system running out of memory). The finding
    sits on the statement the analysis had reached, when it is known, else on the first
    line. Its files' other findings are not reported (their states are unknown), and every
    other file's findings still are. `devicelint check --verbose` prints the traceback.

    ## Why it matters
    The file is not checked: a device move in it that will fail goes unreported. Valid
    Python never causes this: it is a bug to report, with the file (or the statement
    named) and the traceback.

    ## Example
    ```python
    # any valid program the analyzer fails on
    ```

    ## Use instead
    ```python
    # nothing to change in the program: report the finding (`--verbose` shows the traceback)
    ```

    ## Fix safety
    Not fixable: the program is not at fault.
    """

    code = "MV903"
    name = "analysis-failed"

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        """Nothing from facts: the runner reports a failed component through :meth:`failed`."""
        return iter(())

    def failed(self, path: str, row: int, column: int, what: str) -> Diagnostic:
        """The finding for a component whose analysis failed at ``path``:``row`` (``column``: 1-based)."""
        return Diagnostic(self.code, self.name, Severity.ERROR,
                          f"Analysis failed here, please report this devicelint bug: {what}", path, row, column,
                          row, column)
