"""Diagnostics: what the rules report (code, severity, message, span, related locations)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


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
