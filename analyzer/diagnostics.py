"""Diagnostics: what the rules report (code, severity, message, span, related locations)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

# Where each rule's documentation lives: one page, one anchor per rule ("## MV102 (autodiff-mismatch-move)"
# gives "#mv102-autodiff-mismatch-move"). The host is a placeholder until the project has a public home.
RULES_DOCS = "https://devicelint.invalid/docs/rules.md"


def rule_url(code: str, name: str) -> str:
    """The documentation of rule ``code`` (the page itself when ``code`` is empty)."""
    return f"{RULES_DOCS}#{code.lower()}-{name}" if code else RULES_DOCS


class Severity(enum.StrEnum):
    ERROR = "error"  # fails on every path and context that reaches the site
    WARNING = "warning"  # fails on some of them (or an advisory rule)
    NOTE = "note"  # information (reveal_device), never a finding

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Related:
    """A location that explains a diagnostic (where a state was created, a call site of the context)."""

    file: str
    row: int  # 1-based
    column: int  # 1-based; byte-based until the runner converts it
    message: str


@dataclass
class Diagnostic:
    """One finding. Rows are 1-based; columns are 1-based characters once the runner has finished them."""

    code: str  # "" for notes
    name: str
    severity: Severity
    message: str
    file: str
    row: int
    column: int
    end_row: int
    end_column: int
    related: list[Related] = field(default_factory=list)
    fix: None = None  # fixes come later (libcst, lazily)

    @property
    def is_finding(self) -> bool:
        return self.severity is not Severity.NOTE

    def sort_key(self) -> tuple:
        return (self.file, self.row, self.column, self.code, self.message)

    def to_json(self, url: str | None = None) -> dict:
        return {
            "code": self.code or None,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "filename": self.file,
            "location": {"row": self.row, "column": self.column},
            "end_location": {"row": self.end_row, "column": self.end_column},
            "fix": self.fix,
            "url": url,
            "related": [
                {"filename": r.file, "location": {"row": r.row, "column": r.column}, "message": r.message}
                for r in self.related
            ],
        }

    def to_cache(self) -> list[Any]:
        """A compact form for the cache (:meth:`from_cache` reverses it)."""
        return [self.code, self.name, self.severity.value, self.message, self.file, self.row, self.column,
                self.end_row, self.end_column, [[r.file, r.row, r.column, r.message] for r in self.related]]

    @classmethod
    def from_cache(cls, item: list[Any]) -> Diagnostic:
        """The inverse of :meth:`to_cache`; ``ValueError`` (or ``TypeError``) for anything malformed."""
        code, name, severity, message, file, row, column, end_row, end_column, related = item
        for text in (code, name, message, file):
            if not isinstance(text, str):
                raise ValueError("malformed diagnostic")
        for number in (row, column, end_row, end_column):
            if not isinstance(number, int) or isinstance(number, bool):
                raise ValueError("malformed diagnostic")
        links = []
        for r_file, r_row, r_column, r_message in related:
            if not (isinstance(r_file, str) and isinstance(r_row, int) and isinstance(r_column, int)
                    and isinstance(r_message, str)):
                raise ValueError("malformed related location")
            links.append(Related(r_file, r_row, r_column, r_message))
        return cls(code, name, Severity(severity), message, file, row, column, end_row, end_column, links)
