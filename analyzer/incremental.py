"""When a changed file cannot change a component's diagnostics: its *semantic digest*.

A component's cached diagnostics are a function of what the engine reads of its files: their syntax trees
(positions included), a few questions asked of their raw text (:data:`TEXT_PROBES`), and, for the rules, the
text of the lines a diagnostic points at (columns in characters, fix edits). Edits that leave all of these
as they were (a comment added, a trailing blank line, a comment line changed, whitespace at the end of a
line) give the same diagnostics, so a component whose changed files are all such edits is a cache hit after
parsing only those files.

The semantic digest of a file hashes its tree (``pickle`` of the ``ast`` nodes: every field and position)
and the count of each text probe. The lines a component's diagnostics point at are stored per file with a
digest of their text (:func:`touched_lines`); a file holding a fix must be byte-identical (a fix's edit is
built from the file's text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import frontend
from .import_graph import digest

if TYPE_CHECKING:
    from .diagnostics import Diagnostic

#: every substring of a file's raw text the engine asks about (world splits, frameworks, run budgets, the
#: demand sweep's shim check, the ``set_device`` scan): the engine's answers depend on the file's text only
#: through these and through the tree. ``tests/analyzer/test_incremental.py`` checks the engine's questions
#: are all here.
TEXT_PROBES: tuple[bytes, ...] = (
    b"cuda.is_available", b"cuda.device_count", b"mps.is_available", b"LightningModule",  # worlds.QUESTIONS
    b"Trainer", b"Accelerator", b"PartialState",  # the torch worlds asked by hf_trainer, accelerate_model
    b"transformers", b"TrainingArguments",  # the Trainer model's scan
    b"parse_args", b"parse_known_args", b"parse_intermixed_args",  # worlds.ARGPARSE_QUESTIONS
    b"import fire", b"from fire", b"import click", b"from click", b"import typer", b"from typer",
    b"fire", b"click", b"typer", b"hydra", b"pytest", b"pytorch_lightning", b"lightning",  # entry points
    b"set_device", b"cuda.device(",  # torch_model's scan for a current device
    b"runtime_shim",  # the demand sweep
    b"def ", b"lambda",  # the run budget (counted)
)
_PICKLE_PROTOCOL = 4


def semantic_digest(source: frontend.SourceFile) -> str | None:
    """The digest of what the engine reads of ``source`` (None: it cannot be parsed). Parses it if needed;
    call it before the engine runs on the tree (nothing of the analysis may be on the nodes)."""
    if source.semantic is not None:
        return source.semantic  # (taken before its bodies were made lazy)
    if frontend.parse(source) is not None or source.tree is None:
        return None
    import pickle  # (here: a run whose files are all unchanged needs no digest)

    data = source.data
    probes = ",".join(str(data.count(probe)) for probe in TEXT_PROBES)
    return digest(pickle.dumps(source.tree, _PICKLE_PROTOCOL) + b"\0" + probes.encode(), 16)


def touched_lines(diagnostics: list[Diagnostic]) -> tuple[dict[str, set[int]], set[str]]:
    """(per file, the rows the diagnostics, their related locations and fix edits point at; the files that
    hold a fix's edit)."""
    rows: dict[str, set[int]] = {}
    fixed: set[str] = set()
    for d in (*diagnostics, *(f for root in diagnostics for f in root.folded)):
        rows.setdefault(d.file, set()).update(range(d.row, d.end_row + 1))
        for related in (*d.related, *((d.inner,) if d.inner is not None else ())):
            rows.setdefault(related.file, set()).add(related.row)
        if d.fix is not None:
            fixed.add(d.file)
    return rows, fixed


def lines_digest(source: frontend.SourceFile, rows: list[int]) -> str:
    """The digest of ``rows`` of ``source``'s text (decoded as the front end decodes it)."""
    from .runner import ensure_lines

    ensure_lines(source)
    lines = source.lines
    picked = [lines[row - 1] if 0 < row <= len(lines) else "\0" for row in rows]
    return digest("\n".join(picked).encode("utf-8", "surrogatepass"), 16)


def member_record(source: frontend.SourceFile, byte_digest: str, semantic: str | None,
                  rows: set[int] | None) -> list[Any]:
    """A component member as its cache entry stores it: [byte digest, semantic digest, rows, rows' digest]."""
    picked = sorted(rows) if rows else []
    return [byte_digest, semantic, picked, lines_digest(source, picked) if picked else ""]


def equivalent(members: list[Any], sources: list[frontend.SourceFile], digests: list[str],
               fixed: list[str]) -> bool:
    """Would the component whose cached members are ``members`` give the same diagnostics for ``sources``
    (whose byte digests are ``digests``)? Parses the changed files only."""
    if len(members) != len(sources):
        return False
    for record, source, now in zip(members, sources, digests, strict=True):
        if not (isinstance(record, list) and len(record) == 4):
            return False
        was, semantic, rows, rows_digest = record
        if was == now:
            continue
        if source.path in fixed or semantic is None:
            return False
        if semantic_digest(source) != semantic:
            return False
        if rows and (not isinstance(rows, list) or lines_digest(source, rows) != rows_digest):
            return False
    return True
