"""Rule MV902: a ``# noqa`` directive that suppresses nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from devicelint.diagnostics import Diagnostic, Severity
from devicelint.facts import FactStore
from devicelint.noqa import OUR_CODE, Directive

from .base import Rule


class UnusedSuppression(Rule):
    """A `# noqa` comment that suppresses nothing.

    ## What it does
    Reports a line's `# noqa: MV...` directive whose devicelint codes are not
    reported there (`unused`), are not enabled (`non-enabled`), name no rule
    (`unknown`) or are repeated (`duplicated`). Codes of other tools (`E501`,
    `F401`, ...) are left alone, so `# noqa: E501, MV102` is only checked for
    `MV102`. A bare `# noqa` is never reported: it usually serves another linter
    (ruff, flake8), and devicelint cannot tell. The file-level
    `# devicelint: noqa` is never reported either.

    ## Why it matters
    A suppression outlives the failure it was written for: once the code is fixed,
    a stale `# noqa: MV102` silently hides the next device error on that line.
    This is why MV902 is enabled by default, unlike ruff's opt-in RUF100: here a
    suppression hides a crash at run time, not a style nit. It stays quiet on
    directives it cannot attribute (bare ones, other tools' codes), so it never
    fires on code that is right.

    ## Example
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([2], Device.flex().autodiff())
    frozen = weights.inner().to_device(Device.ndarray())  # noqa: MV102
    ```

    ## Use instead
    ```python
    from runtime_shim import Device, Tensor

    weights = Tensor.random([2], Device.flex().autodiff())
    frozen = weights.inner().to_device(Device.ndarray())
    ```

    ## Fix safety
    Not fixed automatically yet; removing the directive (or its unused codes)
    would be a safe fix.
    """

    code = "MV902"
    name = "unused-noqa"
    default_level = "warning"

    def check(self, facts: FactStore, sources: Mapping[str, str] | None = None) -> Iterator[Diagnostic]:
        """Nothing from facts: the runner calls :meth:`unused` once suppressions have been applied."""
        return iter(())

    def unused(self, path: str, directives: list[Directive], used: dict[Directive, set[str]],
               enabled: Callable[[str], bool], known: Callable[[str], bool]) -> list[Diagnostic]:
        """The line directives of ``path`` that suppressed nothing (``used``: the codes each suppressed)."""
        out = []
        for directive in directives:
            if directive.file_level:
                continue
            suppressed = used.get(directive, set())
            if directive.codes is None:
                continue  # a bare directive may serve another linter: not ours to judge
            groups: dict[str, list[str]] = {"unused": [], "non-enabled": [], "unknown": [], "duplicated": []}
            seen: set[str] = set()
            for code in directive.codes:
                if not OUR_CODE.fullmatch(code):
                    continue  # another tool's code
                if code in seen:
                    groups["duplicated"].append(code)
                    continue
                seen.add(code)
                if code == self.code or code in suppressed:
                    continue
                if not known(code):
                    groups["unknown"].append(code)
                elif not enabled(code):
                    groups["non-enabled"].append(code)
                else:
                    groups["unused"].append(code)
            parts = [f"{kind}: {', '.join(f'`{c}`' for c in codes)}" for kind, codes in groups.items() if codes]
            if parts:
                out.append(self._report(path, directive, f"Unused `noqa` directive ({'; '.join(parts)})"))
        return out

    def _report(self, path: str, directive: Directive, message: str) -> Diagnostic:
        return Diagnostic(self.code, self.name, Severity.WARNING, message, path, directive.row, directive.column,
                          directive.row, directive.end_column)
