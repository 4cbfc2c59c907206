"""False positives of devicelint's PyTorch rules (MV2xx) on real PyTorch code: the triage table.

What it does
    For each corpus (the pinned wheels of bench/analyzer_speed.py, :data:`~bench.analyzer_speed.CORPORA`:
    timm, transformers, torchvision and pytorch-lightning, downloaded once into ``--cache-dir``), it runs::

        python -m devicelint check DIR --select MV2 --output-format json --no-cache --exit-zero \\
            --isolated --no-respect-gitignore

    in a fresh interpreter (``--isolated`` and ``--no-respect-gitignore``: no configuration file of
    this repo and no ``.gitignore`` of ``bench/.cache/`` apply to the corpus, as in the speed bench;
    ``--analyze-all`` adds devicelint's switch that turns its relevance skip off), collects the
    diagnostics and writes a triage table: corpus, ``file:line`` (relative to the unpacked wheel, so
    the path starts with the package: ``timm/models/vision_transformer.py:120``), code, severity,
    message and a verdict.

    The verdict comes from the triage file (``--triage``, default ``bench/triage.toml``, optional),
    one table per diagnostic keyed by ``"corpus:path:line:code"``::

        ["timm:timm/layers/helpers.py:42:MV201"]
        verdict = "false-positive"     # or "true-bug"
        note = "the tensor is moved by the caller; fixed in the engine by ..."

    and is ``untriaged`` for a diagnostic the file does not name. Entries of the file that match no
    diagnostic of the corpora run are listed as stale (a fixed false positive, or a shifted line).

    Per corpus: physical lines of its ``.py`` files (as the speed bench counts them), the
    diagnostics, and the false positives per 50,000 lines, counting ``false-positive`` *and*
    ``untriaged`` ones (the goal: ≤ 1). A selector that matches no rule of this checkout
    (``MV2`` before the PyTorch rules exist) is reported as such, with 0 diagnostics, and the
    script still exits 0: the table fills in once the rules are there.

    Example trees: ``--tree NAME[@VERSION]=DIR`` (repeatable) adds a directory of program-style code
    (``examples/`` of a project, a tutorial repository) as a corpus of its own, analysed the same way,
    with paths relative to ``DIR``; ``VERSION`` (a commit) is printed with it. With trees given, the
    pinned wheels run only when ``--corpora`` names them.

Reproduce
    python bench/false_positives.py --markdown /tmp/fp.md --json /tmp/fp.json
    python bench/false_positives.py --corpora timm,torchvision --select ALL
    python bench/false_positives.py --tree pytorch-examples@77f55b9=/tmp/fp/examples --tree pyg=/tmp/pyg/examples
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from bench.analyzer_speed import (  # noqa: E402
    CORPORA,
    DEFAULT_CACHE,
    Corpus,
    corpus_names,
    devicelint_env,
    devicelint_flags,
    environment,
    fetch,
    load_corpus,
    rule_codes,
    run_command,
    split_selection,
)
from bench.report import markdown_table, write_json  # noqa: E402

DEFAULT_TRIAGE = ROOT / "bench" / "triage.toml"
DEFAULT_SELECT = "MV2"
LINES_PER_UNIT = 50_000
GOAL_FP_PER_50K = 1.0  # the goal: at most one false positive per 50,000 lines
VERDICTS = ("true-bug", "false-positive")
UNTRIAGED = "untriaged"
COUNTED_AS_FALSE = ("false-positive", UNTRIAGED)  # an untriaged diagnostic counts against the goal


# ---------------------------------------------------------------- the pure parts (tests/test_bench_false_positives.py)


@dataclass
class Diagnostic:
    corpus: str
    path: str  # relative to the unpacked wheel, posix
    line: int
    column: int
    code: str
    severity: str
    message: str
    verdict: str = UNTRIAGED
    note: str = ""

    @property
    def key(self) -> str:
        return triage_key(self.corpus, self.path, self.line, self.code)


def triage_key(corpus: str, path: str, line: int, code: str) -> str:
    """The triage file's key of one diagnostic: ``corpus:path:line:code``."""
    return f"{corpus}:{path}:{line}:{code}"


def relative_path(filename: str, root: Path, cwd: Path) -> str:
    """``filename`` as devicelint printed it (relative to ``cwd`` or absolute), relative to ``root`` when inside it."""
    path = Path(filename)
    if not path.is_absolute():
        path = cwd / path
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(filename).as_posix()


def parse_diagnostics(text: str, corpus: str, root: Path, cwd: Path) -> list[Diagnostic]:
    """The findings of ``devicelint check --output-format json`` output; code-less notes (reveal_device) left out.

    ValueError when ``text`` is not devicelint's JSON (a list of objects).
    """
    try:
        items = json.loads(text or "[]")
    except json.JSONDecodeError as error:
        raise ValueError(f"devicelint's output is not JSON: {error}") from None
    if not isinstance(items, list):
        raise ValueError("devicelint's JSON output is not a list")
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"devicelint's JSON output has a non-object entry: {item!r}")
        if not item.get("code"):
            continue  # a note, not a finding
        location = item.get("location") or {}
        found.append(Diagnostic(corpus, relative_path(item.get("filename") or "?", root, cwd),
                                int(location.get("row") or 0), int(location.get("column") or 0), item["code"],
                                item.get("severity") or "?", " ".join(str(item.get("message") or "").split())))
    found.sort(key=lambda d: (d.path, d.line, d.column, d.code))
    return found


def parse_triage(text: str) -> dict[str, dict[str, str]]:
    """The triage file's entries: key -> {"verdict", "note"}; ValueError on a malformed one."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"the triage file is not TOML: {error}") from None
    entries = {}
    for key, value in data.items():
        if key.count(":") < 3 or not isinstance(value, dict):
            raise ValueError(f"triage entry {key!r}: want a table keyed by \"corpus:path:line:code\"")
        verdict = value.get("verdict")
        if verdict not in VERDICTS:
            raise ValueError(f"triage entry {key!r}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        unknown = set(value) - {"verdict", "note"}
        if unknown:
            raise ValueError(f"triage entry {key!r}: unknown keys {', '.join(sorted(unknown))}")
        entries[key] = {"verdict": verdict, "note": str(value.get("note", ""))}
    return entries


def load_triage(path: Path) -> dict[str, dict[str, str]]:
    """The triage file at ``path``; empty when there is none."""
    return parse_triage(path.read_text(encoding="utf-8")) if path.exists() else {}


def apply_triage(diagnostics: list[Diagnostic], triage: dict[str, dict[str, str]]) -> list[str]:
    """Set each diagnostic's verdict and note from ``triage``; return the keys of ``triage`` left unused (stale)."""
    used = set()
    for diagnostic in diagnostics:
        entry = triage.get(diagnostic.key)
        if entry is None:
            diagnostic.verdict, diagnostic.note = UNTRIAGED, ""
        else:
            diagnostic.verdict, diagnostic.note = entry["verdict"], entry["note"]
            used.add(diagnostic.key)
    return sorted(set(triage) - used)


def fp_per_50k(false_positives: int, lines: int) -> float | None:
    """False positives per 50,000 lines (None for an empty corpus)."""
    return false_positives * LINES_PER_UNIT / lines if lines > 0 else None


def tally(diagnostics: list[Diagnostic], lines: int, measured: bool = True) -> dict[str, Any]:
    """The counts of one corpus (or all): per verdict and code, the false positives and their rate per 50k lines.

    ``measured`` False (devicelint did not run, failed, or no rule of the selection exists): no rate, no verdict.
    """
    verdicts = Counter(d.verdict for d in diagnostics)
    false = sum(verdicts[v] for v in COUNTED_AS_FALSE)
    rate = fp_per_50k(false, lines) if measured else None
    return {"lines": lines, "diagnostics": len(diagnostics),
            "true_bugs": verdicts["true-bug"], "false_positives": verdicts["false-positive"],
            "untriaged": verdicts[UNTRIAGED], "counted_false": false, "fp_per_50k": rate,
            "goal_met": None if rate is None else rate <= GOAL_FP_PER_50K,
            "by_code": dict(sorted(Counter(d.code for d in diagnostics).items()))}


def cell(value: object) -> str:
    """A markdown table cell: pipes escaped, on one line."""
    return " ".join(str(value).split()).replace("|", "\\|")


def summary_table(rows: list[dict[str, Any]], total: dict[str, Any]) -> str:
    def line(name: str, version: str, status: str, counts: dict[str, Any], files: object) -> list[object]:
        rate = counts["fp_per_50k"]
        goal = "n/a" if rate is None else ("met" if counts["goal_met"] else "**not met**")
        return [name, version, status, files, f"{counts['lines']:,}", counts["diagnostics"], counts["true_bugs"],
                counts["false_positives"], counts["untriaged"], "n/a" if rate is None else f"{rate:.2f}", goal]

    body = [line(r["corpus"], r["version"], r["status"], r["counts"], r["files"]) for r in rows]
    if len(rows) > 1:
        body.append(line("**all**", "", "", total, sum(r["files"] for r in rows)))
    return markdown_table(["corpus", "version", "devicelint", "files", "lines", "diagnostics", "true bugs",
                           "false positives", "untriaged", f"FP per 50k lines (≤ {GOAL_FP_PER_50K:g})", "goal"],
                          body, text_columns=3)


def triage_table(diagnostics: list[Diagnostic]) -> str:
    return markdown_table(["corpus", "location", "code", "severity", "message", "verdict", "note"],
                          [[d.corpus, f"`{d.path}:{d.line}`", d.code, d.severity, cell(d.message), d.verdict,
                            cell(d.note)] for d in diagnostics], text_columns=7)


# ---------------------------------------------------------------- running devicelint


def parse_tree(spec: str) -> tuple[str, str, Path]:
    """``NAME[@VERSION]=DIR`` (or just ``DIR``, named after it): the tree's name, version and directory;
    ValueError on an empty name or a directory that does not exist."""
    label, sep, directory = spec.rpartition("=")
    path = Path(directory if sep else spec).expanduser()
    name, _at, version = (label if sep else path.resolve().name).partition("@")
    if not name or ":" in name:
        raise ValueError(f"--tree {spec!r}: a tree needs a name without ':' (NAME[@VERSION]=DIR)")
    if not path.is_dir():
        raise ValueError(f"--tree {spec!r}: {path} is not a directory")
    return name, version or "-", path


def check_command(directory: Path, select: str, flags: set[str], analyze_all: bool) -> list[str]:
    command = [sys.executable, "-m", "devicelint", "check", str(directory), "--select", select, "--output-format",
               "json", "--no-cache", "--exit-zero",
               *[flag for flag in ("--isolated", "--no-respect-gitignore") if flag in flags]]
    return [*command, "--analyze-all"] if analyze_all else command


def examine(name: str, cache: Path, select: str, flags: set[str], analyze_all: bool,
            timeout: float) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Download and unpack one corpus, run devicelint on it; its row (without counts) and its diagnostics."""
    corpus = load_corpus(name, CORPORA[name], fetch(name, CORPORA[name], cache))
    # the unpacked wheel: paths start with the package
    return examine_corpus(corpus, corpus.directory.parent, select, flags, analyze_all, timeout)


def examine_corpus(corpus: Corpus, root: Path, select: str, flags: set[str], analyze_all: bool,
                   timeout: float) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Run devicelint on a corpus (paths relative to ``root``); its row (without counts) and its diagnostics."""
    name = corpus.name
    row: dict[str, Any] = {"corpus": name, "version": corpus.version, "directory": str(corpus.directory),
                           "files": len(corpus.files), "lines": corpus.lines, "seconds": None, "error": None}
    if not select:  # nothing of the selection exists in this checkout yet
        row["status"] = "no rule matches"
        row["command"] = None
        return row, []
    command = check_command(corpus.directory, select, flags, analyze_all)
    row["command"] = command
    print(f"  {name}: {' '.join(command[1:])}", file=sys.stderr)
    done = run_command(command, root, timeout, keep_stdout=True, env=devicelint_env())
    row["seconds"] = done.seconds
    if not done.ok:
        row["status"] = "timed out" if done.timed_out else "failed"
        row["error"] = done.error or f"exit status {done.returncode}"
        return row, []
    try:
        diagnostics = parse_diagnostics(done.stdout, name, root, root)
    except ValueError as error:
        row["status"], row["error"] = "failed", str(error)
        return row, []
    row["status"] = "ok"
    return row, diagnostics


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=None,
                        help=f"comma-separated, among {', '.join(CORPORA)}, or all (default: all, none with --tree)")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME[@VERSION]=DIR",
                        help="a directory of example programs analysed as a corpus of its own (repeatable)")
    parser.add_argument("--select", default=DEFAULT_SELECT,
                        help=f"the rules whose findings are triaged, passed to --select (default: {DEFAULT_SELECT})")
    parser.add_argument("--analyze-all", action="store_true",
                        help="pass --analyze-all to devicelint (its relevance skip off)")
    parser.add_argument("--triage", default=str(DEFAULT_TRIAGE),
                        help="the verdicts, a TOML file keyed by \"corpus:path:line:code\" (default bench/triage.toml)")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                        help="where wheels and sources are kept (default bench/.cache/, git-ignored)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="limit per devicelint run (default 1800 s)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--markdown", metavar="PATH", help="also write the summary and triage tables to PATH")
    args = parser.parse_args(argv)
    try:
        trees = [parse_tree(spec) for spec in args.tree]
        names = corpus_names(args.corpora or "all") if args.corpora or not trees else []
    except ValueError as error:
        parser.error(str(error))
    if len({name for name, _v, _d in trees} | set(names)) < len(trees) + len(names):
        parser.error("two corpora or trees share a name")

    try:
        triage = load_triage(Path(args.triage))
        flags = devicelint_flags()
        if args.analyze_all and "--analyze-all" not in flags:
            raise RuntimeError("this checkout's `devicelint check` has no --analyze-all")
        kept, missing = split_selection(args.select, rule_codes())
        rows, diagnostics = [], []
        for name in names:
            row, found = examine(name, Path(args.cache_dir), kept, flags, args.analyze_all, args.timeout)
            rows.append(row)
            diagnostics += found
        for name, version, directory in trees:
            corpus = load_corpus(name, version, directory.resolve())
            row, found = examine_corpus(corpus, corpus.directory, kept, flags, args.analyze_all, args.timeout)
            rows.append(row)
            diagnostics += found
        names = [*names, *(name for name, _v, _d in trees)]
    except (RuntimeError, ValueError) as error:
        print(f"false_positives: {error}", file=sys.stderr)
        return 2

    stale = apply_triage(diagnostics, {k: v for k, v in triage.items() if k.split(":", 1)[0] in names})
    for row in rows:
        row["counts"] = tally([d for d in diagnostics if d.corpus == row["corpus"]], row["lines"],
                              row["status"] == "ok")
    ran = [row for row in rows if row["status"] == "ok"]  # the total is of the corpora devicelint ran on
    total = tally(diagnostics, sum(row["lines"] for row in ran), bool(ran))
    total["measured_lines"], total["lines"] = total["lines"], sum(row["lines"] for row in rows)
    notes = []
    if missing:
        notes.append(f"--select {args.select}: {', '.join(missing)} matches no rule of this checkout "
                     "(`devicelint rules`): no diagnostics of it yet")
    notes += [f"{row['corpus']}: devicelint {row['status']}: {row['error']}" for row in rows if row["error"]]
    notes += [f"stale triage entry (no such diagnostic now): {key}" for key in stale]
    failed = any(row["status"] in ("failed", "timed out") for row in rows)

    rate = total["fp_per_50k"]
    text = (f"false positives ({args.select}): {total['diagnostics']} diagnostics in {total['measured_lines']:,} "
            f"lines analysed (of {total['lines']:,}), "
            f"{total['true_bugs']} true bugs, {total['false_positives']} false positives, "
            f"{total['untriaged']} untriaged: "
            + ("not measured" if rate is None else f"{rate:.2f} per 50k lines (goal ≤ {GOAL_FP_PER_50K:g}: "
               f"{'met' if total['goal_met'] else 'not met'})")
            + ("; devicelint FAILED on " + ", ".join(r["corpus"] for r in rows if r["status"] != "ok"
                                                     and r["status"] != "no rule matches") if failed else ""))
    summary = summary_table(rows, total)
    times = ", ".join(f"{r['corpus']} {r['seconds']:.1f} s" for r in rows if r["seconds"] is not None)
    header = (f"# devicelint false positives: `--select {args.select}`"
              + (", `--analyze-all`" if args.analyze_all else "") + "\n\n"
              + "Corpora: " + ", ".join(f"{r['corpus']} {r['version']}" for r in rows)
              + f"; triage file: {args.triage}" + (" (absent)" if not Path(args.triage).exists() else "")
              + (f"; devicelint wall time: {times}" if times else "") + ".")
    print(header)
    print()
    print(summary)
    print()
    for note in notes:
        print(note)
    print(text)
    if args.markdown:
        target = Path(args.markdown)
        target.parent.mkdir(parents=True, exist_ok=True)
        details = triage_table(diagnostics) if diagnostics else "No diagnostics."
        target.write_text("\n\n".join([header, "## Summary", summary, *(["\n".join(f"- {n}" for n in notes)]
                                                                         if notes else []),
                                       "## Diagnostics", details, text]) + "\n", encoding="utf-8")
    write_json(args.json, {"benchmark": "false_positives", "environment": environment(),
                           "select": args.select, "analyze_all": args.analyze_all, "triage_file": args.triage,
                           "goal_fp_per_50k": GOAL_FP_PER_50K, "counted_as_false": list(COUNTED_AS_FALSE),
                           "selected": kept, "unmatched_selectors": missing, "rows": rows, "total": total,
                           "stale_triage": stale,
                           "diagnostics": [{**asdict(d), "key": d.key} for d in diagnostics],
                           "notes": notes, "summary": text})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
