r"""Diagnostics: what the rules report (code, severity, message, span, related locations, fix).

A :class:`Fix` follows ruff's model: an applicability (``"safe"``: applied by ``--fix``;
``"unsafe"``: only with ``--unsafe-fixes``, because it may change what the program
computes), a message, and non-overlapping text edits (:class:`Edit`). Edit positions are
1-based rows and 1-based *character* columns, like a diagnostic's; the rows count
``\n``, ``\r\n`` and ``\r`` line ends (as CPython's ``ast`` does) in the decoded text
without its BOM. :func:`analyzer.fixes.apply_fixes` applies them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Where each rule's documentation lives: one page, generated from the rules' docstrings by
# analyzer.rules_doc, one heading per rule ("## MV102 (autodiff-mismatch-move)" has the anchor
# "#mv102-autodiff-mismatch-move"). A relative reference: the page is in the repository, there is no
# public host; protocols that need an absolute URI resolve it with rules_page_uri().
RULES_DOCS = "docs/rules.md"
RULES_PAGE = Path(__file__).resolve().parents[1] / RULES_DOCS


def rule_anchor(code: str, name: str) -> str:
    """The anchor of rule ``code``'s heading on the rules page."""
    return f"{code.lower()}-{name}"


def rule_url(code: str, name: str) -> str:
    """The documentation of rule ``code``, relative to the repository's root (the page itself when
    ``code`` is empty)."""
    return f"{RULES_DOCS}#{rule_anchor(code, name)}" if code else RULES_DOCS


def rules_page_uri(code: str, name: str) -> str | None:
    """An absolute ``file:`` URI of rule ``code``'s documentation when the page is installed next to the
    analyzer (a source checkout or an editable install), else None."""
    if not RULES_PAGE.is_file():
        return None
    page = RULES_PAGE.as_uri()
    return f"{page}#{rule_anchor(code, name)}" if code else page


#: how a finding lists a later call that fails over the same root cause (its related location's message starts
#: so): the rules write it, a ``noqa`` that silences the finding reads it (:func:`analyzer.runner.suppress`)
FAILS_HERE_TOO = "fails here too"


class Severity(enum.StrEnum):
    ERROR = "error"  # fails on every path and context that reaches the site
    WARNING = "warning"  # fails on some of them (or an advisory rule)
    NOTE = "note"  # information (reveal_device), never a finding

    def __str__(self) -> str:
        return self.value


def printable(text: str) -> str:
    """``text`` with the bytes of a file name that is not valid UTF-8 (held as lone surrogates, Python's
    ``surrogateescape``) written as ``\\xNN`` escapes: every output format can be encoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") \
            .encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@dataclass(frozen=True)
class Related:
    """A location that explains a diagnostic (where a state was created, a call site of the context)."""

    file: str
    row: int  # 1-based
    column: int  # 1-based; byte-based until the runner converts it
    message: str


SAFE, UNSAFE = "safe", "unsafe"
APPLICABILITIES = (SAFE, UNSAFE)


@dataclass(frozen=True)
class Edit:
    """Replace the text from (row, column) up to, not including, (end_row, end_column) with ``content``.

    An insertion has equal start and end; a deletion has empty ``content``."""

    row: int
    column: int
    end_row: int
    end_column: int
    content: str

    @property
    def start(self) -> tuple[int, int]:
        return (self.row, self.column)

    @property
    def end(self) -> tuple[int, int]:
        return (self.end_row, self.end_column)

    def to_json(self) -> dict:
        return {"content": self.content, "location": {"row": self.row, "column": self.column},
                "end_location": {"row": self.end_row, "column": self.end_column}}


@dataclass(frozen=True)
class Fix:
    """A rule's fix for one diagnostic: ``applicability`` is ``"safe"`` or ``"unsafe"``."""

    applicability: str
    message: str
    edits: tuple[Edit, ...]

    def __post_init__(self) -> None:
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"unknown fix applicability {self.applicability!r}")
        if not self.edits:
            raise ValueError("a fix needs at least one edit")

    @property
    def is_safe(self) -> bool:
        return self.applicability == SAFE

    def applies(self, unsafe: bool) -> bool:
        """Whether this fix is applied when unsafe fixes are (``unsafe``) or are not enabled."""
        return self.is_safe or unsafe

    def to_json(self) -> dict:
        """Ruff's shape: ``{"applicability", "message", "edits": [{"content", "location", "end_location"}]}``."""
        return {"applicability": self.applicability, "message": self.message,
                "edits": [e.to_json() for e in self.edits]}

    def to_cache(self) -> list[Any]:
        return [self.applicability, self.message,
                [[e.row, e.column, e.end_row, e.end_column, e.content] for e in self.edits]]

    @classmethod
    def from_cache(cls, item: list[Any]) -> Fix:
        applicability, message, edits = item
        if not isinstance(message, str) or not isinstance(edits, list):
            raise ValueError("malformed fix")
        out = []
        for row, column, end_row, end_column, content in edits:
            if not (all(_is_int(n) for n in (row, column, end_row, end_column)) and isinstance(content, str)):
                raise ValueError("malformed fix edit")
            out.append(Edit(row, column, end_row, end_column, content))
        return cls(applicability, message, tuple(out))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    fix: Fix | None = None  # the rule's fix, if it has one for this site
    # reported at the call that passed a failing operand: the call that fails (also among ``related``)
    inner: Related | None = None
    #: the findings the later calls it lists as failing "here too" would be on their own (:mod:`rules.cascades`):
    #: reported in its place where a noqa comment silences it
    folded: list[Diagnostic] = field(default_factory=list)

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
            "filename": printable(self.file),
            "location": {"row": self.row, "column": self.column},
            "end_location": {"row": self.end_row, "column": self.end_column},
            "fix": self.fix.to_json() if self.fix is not None else None,
            "url": url,
            "related": [
                {"filename": printable(r.file), "location": {"row": r.row, "column": r.column}, "message": r.message}
                for r in self.related
            ],
        }

    def to_cache(self) -> list[Any]:
        """A compact form for the cache (:meth:`from_cache` reverses it)."""
        return [self.code, self.name, self.severity.value, self.message, self.file, self.row, self.column,
                self.end_row, self.end_column, [[r.file, r.row, r.column, r.message] for r in self.related],
                [self.inner.file, self.inner.row, self.inner.column, self.inner.message] if self.inner else None,
                [d.to_cache() for d in self.folded], self.fix.to_cache() if self.fix is not None else None]

    @classmethod
    def from_cache(cls, item: list[Any]) -> Diagnostic:
        """The inverse of :meth:`to_cache`; ``ValueError`` (or ``TypeError``) for anything malformed."""
        code, name, severity, message, file, row, column, end_row, end_column, related, inner, folded, fix = item
        for text in (code, name, message, file):
            if not isinstance(text, str):
                raise ValueError("malformed diagnostic")
        if not all(_is_int(number) for number in (row, column, end_row, end_column)):
            raise ValueError("malformed diagnostic")
        links = [_related_from_cache(r) for r in related]
        if not isinstance(folded, list):
            raise ValueError("malformed diagnostic")
        return cls(code, name, Severity(severity), message, file, row, column, end_row, end_column, links,
                   Fix.from_cache(fix) if fix is not None else None,
                   _related_from_cache(inner) if inner is not None else None, [cls.from_cache(d) for d in folded])


def _related_from_cache(item: list[Any]) -> Related:
    r_file, r_row, r_column, r_message = item
    if not (isinstance(r_file, str) and _is_int(r_row) and _is_int(r_column) and isinstance(r_message, str)):
        raise ValueError("malformed related location")
    return Related(r_file, r_row, r_column, r_message)
