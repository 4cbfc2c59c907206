"""Rule MV901: a file the analyzer cannot decode or parse."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from devicelint.diagnostics import Diagnostic, Severity
from devicelint.facts import FactStore

from .base import Rule


class UnparsableFile(Rule):
    """A file that cannot be decoded or parsed.

    ## What it does
    Reports files that mention `runtime_shim` (or a project module that does) but
    cannot be decoded with their declared encoding (PEP 263) or parsed by
    CPython's parser. Nothing else in such a file is analysed.

    ## Why it matters
    A file the analyzer cannot read is a file whose device moves are unchecked.

    ## Example
    ```python
    from runtime_shim import Device

    def pick_device(:
        return Device.flex()
    ```

    ## Use instead
    ```python
    from runtime_shim import Device

    def pick_device():
        return Device.flex()
    ```

    ## Always reported
    Like ruff's syntax errors, this finding cannot be turned off: `select`, `ignore`,
    `per-file-ignores` and `# noqa` comments do not hide it (`select = ["MV2"]` still
    reports a broken file), since nothing in such a file was checked.

    ## Fix safety
    Not fixable automatically.
    """

    code = "MV901"
    name = "unparsable-file"

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        for failure in facts.file_failures:
            yield Diagnostic(self.code, self.name, Severity.ERROR, failure.message, failure.file, failure.line,
                             failure.col + 1, failure.line, failure.col + 1)
