"""Output formats (``--output-format``) and ``--statistics``.

* ``concise``: one line per finding, ``path:row:col: CODE [severity] message``, with ``[*]``
  after the severity when ``--fix`` would fix it (ruff's marker);
* ``full``: the same with the source line, a caret under the span, and the related locations;
* ``json``: a list of ``{code, name, message, severity, filename, location{row,column},
  end_location{row,column}, fix, url, related}`` (ruff's shape plus ``severity``,
  ``related``), 1-based rows and character columns;
* ``json-lines``: one such object per line;
* ``github``: GitHub Actions workflow commands (``::error``/``::warning``/``::notice``) that
  annotate the pull request, paths relative to the git work tree's root (the repository);
* ``sarif``: a SARIF 2.1.0 log for GitHub code scanning: paths relative to the git work tree's
  root (else the working directory) through the ``%SRCROOT%`` base id, every rule with ``id``,
  ``shortDescription``, ``fullDescription``, ``help``, ``helpUri``, results with
  ``relatedLocations``, ``partialFingerprints`` and, where a rule has one, the ``fixes``.
  ``tests/data/sarif-schema-2.1.0.json`` (the official schema) validates it in the tests.

A new format is a function ``(diagnostics, sources) -> str`` added to :data:`FORMATS`; :func:`render`
calls it (and tells the human formats whether unsafe fixes are on, for the ``[*]`` marker).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable
from typing import Any

from . import __version__
from .diagnostics import Diagnostic, Severity, printable, rule_url
from .discovery import git_root
from .frontend import SourceFile

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_ROOT = "%SRCROOT%"


def _flat(message: str) -> str:
    return " ".join(message.split())


def display_path(path: str) -> str:
    """Relative to the working directory when the file is under it, else as given."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return printable(path)
    return printable(path if relative.startswith("..") else relative)


def cell_of(path: str, row: int, sources: dict[str, SourceFile]) -> tuple[int | None, int]:
    """(cell number, row inside the cell) for a notebook's row, else (None, row)."""
    source = sources.get(path)
    if source is None or source.cells is None:
        return None, row
    return source.cells.locate(row)


def _position(path: str, row: int, column: int, sources: dict[str, SourceFile]) -> str:
    """``path:row:col``, or ``path:cell N:row:col`` in a notebook (ruff's spelling)."""
    cell, row = cell_of(path, row, sources)
    return f"{display_path(path)}:{'' if cell is None else f'cell {cell}:'}{row}:{column}"


def _json(d: Diagnostic, sources: dict[str, SourceFile]) -> dict:
    item = d.to_json(_url(d))
    cell, row = cell_of(d.file, d.row, sources)
    if cell is not None:  # ruff's shape for notebooks: rows inside the cell, and the cell's number
        item["cell"] = cell
        item["location"]["row"] = row
        item["end_location"]["row"] = cell_of(d.file, d.end_row, sources)[1]
    for r, out in zip(d.related, item["related"], strict=True):
        r_cell, r_row = cell_of(r.file, r.row, sources)
        if r_cell is not None:
            out["cell"], out["location"]["row"] = r_cell, r_row
    return item


def _url(d: Diagnostic) -> str | None:
    return rule_url(d.code, d.name) if d.code else None


def _label(d: Diagnostic, unsafe_fixes: bool) -> str:
    if not d.code:
        return f"{d.severity}:"
    fixable = d.fix is not None and d.fix.applies(unsafe_fixes)
    return f"{d.code} [{d.severity}]" + (" [*]" if fixable else "")


def concise(diagnostics: list[Diagnostic], sources: dict[str, SourceFile], unsafe_fixes: bool = False) -> str:
    lines = []
    for d in diagnostics:
        label = _label(d, unsafe_fixes)
        lines.append(f"{_position(d.file, d.row, d.column, sources)}: {label} {_flat(d.message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def full(diagnostics: list[Diagnostic], sources: dict[str, SourceFile], unsafe_fixes: bool = False) -> str:
    blocks = []
    for d in diagnostics:
        label = _label(d, unsafe_fixes)
        block = [f"{_position(d.file, d.row, d.column, sources)}: {label} {d.name}"]
        block.extend("  " + line if line else "" for line in d.message.strip().splitlines())
        source = sources.get(d.file)
        if source is not None and 1 <= d.row <= len(source.lines):
            text = source.lines[d.row - 1]
            shown = cell_of(d.file, d.row, sources)[1]
            width = len(str(shown))
            block.append(f"{' ' * width} |")
            block.append(f"{shown} | {text}")
            end = d.end_column if d.end_row == d.row else len(text) + 1
            block.append(f"{' ' * width} | {' ' * (d.column - 1)}{'^' * max(1, end - d.column)}")
        for r in d.related:
            block.append(f"  = related: {_position(r.file, r.row, r.column, sources)}: {r.message}")
        if d.fix is not None:
            hint = "" if d.fix.applies(unsafe_fixes) else " (unsafe: enable with `--unsafe-fixes`)"
            block.append(f"  = help: {d.fix.message}{hint}")
        blocks.append("\n".join(block))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def as_json(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    """A JSON list, one object per line (``json.dumps(indent=...)`` is the pure-Python encoder: several
    times slower on large outputs)."""
    if not diagnostics:
        return "[]\n"
    return "[\n" + ",\n".join("  " + json.dumps(_json(d, sources)) for d in diagnostics) + "\n]\n"


def json_lines(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    return "".join(json.dumps(_json(d, sources)) + "\n" for d in diagnostics)


# --------------------------------------------------------------------------- GitHub Actions


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def repo_path(path: str, root: str) -> str:
    """``path`` relative to the repository's root (what GitHub matches annotations against, whatever
    directory the job ran in); as displayed when the file is outside it."""
    absolute = os.path.abspath(path)
    return printable(os.path.relpath(absolute, root).replace(os.sep, "/")) if _under(absolute, root) \
        else display_path(path)


def github(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    root = sarif_root()
    lines = []
    for d in diagnostics:
        command = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(d.severity, "notice")
        title = f"devicelint ({d.code})" if d.code else "devicelint (reveal_device)"
        properties = (f"title={_escape_property(title)},file={_escape_property(repo_path(d.file, root))},"
                      f"line={d.row},col={d.column},endLine={d.end_row},endColumn={d.end_column}")
        text = f"{d.code} {_flat(d.message)}" if d.code else _flat(d.message)
        cell, row = cell_of(d.file, d.row, sources)
        if cell is not None:  # an annotation on a notebook: the cell and the row inside it, in the text
            text = f"cell {cell}, line {row}: {text}"
        lines.append(f"::{command} {properties}::{_escape_data(text)}")
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------- SARIF 2.1.0


def sarif_root() -> str:
    """The git work tree's root above the working directory, else the working directory."""
    cwd = os.getcwd()
    return git_root(cwd) or cwd


def _file_uri(path: str, directory: bool = False) -> str:
    uri = "file://" + urllib.parse.quote(os.fsencode(os.path.abspath(path).replace(os.sep, "/")))
    if not uri.startswith("file:///"):  # Windows: file:///C:/...
        uri = "file:///" + uri[len("file://"):]
    return uri + ("/" if directory and not uri.endswith("/") else "")


def _artifact(path: str, root: str) -> dict:
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root) if _under(absolute, root) else None
    if relative is None:
        return {"uri": _file_uri(absolute)}
    # a URI holds the name's bytes percent-encoded (a name that is not UTF-8 included)
    return {"uri": urllib.parse.quote(os.fsencode(relative.replace(os.sep, "/"))), "uriBaseId": SARIF_ROOT}


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _sections(doc: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    current = ""
    for line in doc.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return {k: v.strip() for k, v in sections.items()}


def _plain(markdown: str) -> str:
    """Markdown prose without code blocks, one paragraph per line."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return "\n".join(" ".join(p.split()) for p in text.split("\n\n") if p.strip())


def sarif_rules() -> list[dict]:
    from devicelint.rules import all_rules

    out = []
    for rule in all_rules():
        doc = rule.doc()
        sections = _sections(doc)
        what = _plain(sections.get("What it does", "")) or rule.summary()
        why = _plain(sections.get("Why it matters", "") or sections.get("Why it fails", ""))
        out.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary()},
            "fullDescription": {"text": what + ("\n" + why if why else "")},
            "help": {"text": doc, "markdown": doc},
            "helpUri": rule_url(rule.code, rule.name),
            # GitHub code scanning reads these: precision ranks alerts, problem.severity labels them
            "properties": {"tags": ["devicelint", "correctness"], "precision": "high",
                           "problem.severity": _problem_severity(rule)},
        })
        level = getattr(rule, "default_level", None)  # a rule that only ever warns says so
        if level in ("error", "warning", "note"):
            out[-1]["defaultConfiguration"] = {"level": level}
    return out


def _problem_severity(rule: object) -> str:
    level = getattr(rule, "default_level", None)
    if level is None:
        return "error"
    return "warning" if getattr(rule, "code", "").startswith("MV1") else "recommendation"


def _sarif_fix(d: Diagnostic, artifact: dict) -> dict:
    """A SARIF ``fix``: one artifact change, a replacement per edit (regions in character columns)."""
    assert d.fix is not None
    replacements = [{"deletedRegion": {"startLine": e.row, "startColumn": e.column, "endLine": e.end_row,
                                       "endColumn": e.end_column},
                     "insertedContent": {"text": e.content}} for e in d.fix.edits]
    description = d.fix.message + ("" if d.fix.is_safe else " (unsafe)")
    return {"description": {"text": description},
            "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}]}


def _fingerprint(d: Diagnostic, uri: str, sources: dict[str, SourceFile], seen: Counter) -> str:
    """Stable when lines move: the rule, the file and the line's text (and which of its equals it is)."""
    source = sources.get(d.file)
    text = source.lines[d.row - 1].strip() if source is not None and 1 <= d.row <= len(source.lines) else ""
    base = f"{d.code}\0{uri}\0{text}\0{d.column if not text else ''}"
    seen[base] += 1
    import hashlib  # here: only SARIF and GitLab reports need it (OpenSSL takes 2 ms to load)

    return hashlib.sha256(f"{base}\0{seen[base]}".encode()).hexdigest()[:32]


def _cell_prefix(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    cell, row = cell_of(d.file, d.row, sources)
    return "" if cell is None else f"cell {cell}, line {row}: "


def sarif(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    root = sarif_root()
    rules = sarif_rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    seen: Counter = Counter()
    results = []
    for d in diagnostics:
        if not d.code:  # reveal_device notes: not results of a rule
            continue
        artifact = _artifact(d.file, root)
        region = {"startLine": d.row, "startColumn": d.column, "endLine": d.end_row,
                  "endColumn": max(d.end_column, 1)}
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": "error" if d.severity is Severity.ERROR else "warning",
            "message": {"text": _cell_prefix(d, sources) + _flat(d.message)},
            "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
            "partialFingerprints": {"devicelint/v1": _fingerprint(d, artifact["uri"], sources, seen)},
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.fix is not None:
            result["fixes"] = [_sarif_fix(d, artifact)]
        if d.related:
            result["relatedLocations"] = [
                {"id": i, "message": {"text": r.message},
                 "physicalLocation": {"artifactLocation": _artifact(r.file, root),
                                      "region": {"startLine": max(r.row, 1), "startColumn": max(r.column, 1)}}}
                for i, r in enumerate(d.related)]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            # no informationUri: SARIF wants an absolute URI there and the project has no public host;
            # each rule's helpUri is a relative reference to the rules page (a valid URI reference)
            "tool": {"driver": {"name": "devicelint", "version": __version__, "semanticVersion": __version__,
                                "rules": rules}},
            "originalUriBaseIds": {SARIF_ROOT: {"uri": _file_uri(root, directory=True)}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"


FORMATS: dict[str, Callable[[list[Diagnostic], dict[str, SourceFile]], str]] = {
    "concise": concise,
    "full": full,
    "json": as_json,
    "json-lines": json_lines,
    "github": github,
    "sarif": sarif,
}

MACHINE_FORMATS = frozenset({"json", "json-lines", "github", "sarif"})  # no summary line after them


# --------------------------------------------------------------------------- --statistics


def statistics(diagnostics: list[Diagnostic], output_format: str, unsafe_fixes: bool = False,
               notes: list[Diagnostic] | None = None) -> str:
    """Findings counted per code (ruff's ``--statistics``): a table, or JSON for the JSON formats.

    ``fixable``: the rule has an autofix; ``fixable_count``: findings ``--fix`` would fix (with
    ``unsafe_fixes``, unsafe fixes count too); the table marks those codes ``[*]``. The JSON also counts the
    run's ``notes`` by name, with an empty code (``analysis-budget``: components whose analysis stopped at a
    work budget, their findings unknown)."""
    from devicelint.rules import rule_by_code

    counts: Counter = Counter()
    fixable: Counter = Counter()
    names: dict[str, str] = {}
    for d in diagnostics:
        if d.is_finding:
            counts[d.code] += 1
            names[d.code] = d.name
            fixable[d.code] += d.fix is not None and d.fix.applies(unsafe_fixes)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if output_format in ("json", "json-lines", "sarif"):
        def has_fix(code: str) -> bool:
            rule = rule_by_code(code)
            return rule is not None and rule.fixable()

        noted = Counter(note.name for note in notes or ())
        return json.dumps([{"code": code, "name": names[code], "count": count, "fixable": has_fix(code),
                            "fixable_count": fixable[code]} for code, count in rows]
                          + [{"code": "", "name": name, "count": count, "fixable": False, "fixable_count": 0}
                             for name, count in sorted(noted.items())], indent=2) + "\n"
    if not rows:
        return ""
    count_width = max(len(str(count)) for _code, count in rows)
    code_width = max(len(code) for code, _count in rows)
    return "".join(f"{count:>{count_width}}\t{code:<{code_width}}\t{'[*] ' if fixable[code] else ''}{names[code]}\n"
                   for code, count in rows)


def render(output_format: str, diagnostics: list[Diagnostic], sources: dict[str, SourceFile],
           unsafe_fixes: bool = False) -> str:
    """The diagnostics in ``output_format`` (the human formats mark what ``--fix`` would fix)."""
    if output_format in ("concise", "full"):
        return FORMATS[output_format](diagnostics, sources, unsafe_fixes=unsafe_fixes)  # type: ignore[call-arg]
    return FORMATS[output_format](diagnostics, sources)
