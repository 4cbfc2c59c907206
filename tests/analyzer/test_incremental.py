"""Incremental runs are exact: after random edits, a run with the cache reports what a cold run reports.

Copies of the fixture packages (and a few single-file torch fixtures next to them) are edited by seeded
random edits of the kinds people make (a function body, a default argument, a moved line, a deleted file,
a renamed import, comments and blank lines), one after another; after each edit the run that reuses the
cache and a run without it must give the same diagnostics, finding by finding. Nothing here is timed.
"""

from __future__ import annotations

import ast
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from devicelint import incremental
from devicelint.runner import Report, check
from devicelint.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
#: every fixture package (a directory of fixtures/ with an ``__init__.py``), and tests/data's project
PACKAGES = tuple(sorted(p.name for p in (ROOT / "fixtures").iterdir() if (p / "__init__.py").is_file()))
DATA_PROJECT = ROOT / "tests" / "data" / "torch_project"
TORCH_FILES = ("dataloader_batch_not_moved.py", "buffer_reset_on_cpu.py", "causal_mask_blocks.py")
EDITS_PER_PROJECT = 12


def _findings(report: Report) -> list[list[object]]:
    return [d.to_cache() for d in report.diagnostics]


def _project(tmp_path: Path, *packages: str) -> Path:
    root = tmp_path / "project"
    for package in packages:
        source = ROOT / "fixtures" / package if package != "torch_project" else DATA_PROJECT
        shutil.copytree(source, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.toml"))
    for name in TORCH_FILES:
        shutil.copy(ROOT / "fixtures" / "torch" / name, root / name)
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


# --------------------------------------------------------------------------- edits (each returns False when
# the file has nothing it can edit)


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def edit_body(path: Path, rng: random.Random) -> bool:
    """Insert a statement into a function body (a new local, or a return of a constant)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    functions = _functions(ast.parse("".join(lines)))
    if not functions:
        return False
    fn = rng.choice(functions)
    first = fn.body[0]
    indent = " " * first.col_offset
    statement = rng.choice(["_unused = 1\n", "_unused = [0] * 3\n", "pass\n"])
    lines.insert(first.lineno - 1, indent + statement)
    path.write_text("".join(lines), encoding="utf-8")
    return True


def edit_default(path: Path, rng: random.Random) -> bool:
    """Change a default argument to another constant."""
    text = path.read_text(encoding="utf-8")
    defaults = [d for fn in _functions(ast.parse(text)) for d in (*fn.args.defaults, *fn.args.kw_defaults)
                if d is not None and d.lineno == d.end_lineno]
    if not defaults:
        return False
    node = rng.choice(defaults)
    lines = text.splitlines(keepends=True)
    line = lines[node.lineno - 1].encode()
    replacement = rng.choice(["None", "0", "'cpu'", "True"]).encode()
    lines[node.lineno - 1] = (line[: node.col_offset] + replacement + line[node.end_col_offset:]).decode()
    path.write_text("".join(lines), encoding="utf-8")
    return True


def move_line(path: Path, rng: random.Random) -> bool:
    """Swap two adjacent one-line statements of the same block."""
    text = path.read_text(encoding="utf-8")
    pairs = []
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            pairs += [(a, b) for a, b in zip(body, body[1:], strict=False)
                      if a.lineno == a.end_lineno and b.lineno == b.end_lineno and b.lineno == a.lineno + 1]
    if not pairs:
        return False
    a, b = rng.choice(pairs)
    lines = text.splitlines(keepends=True)
    lines[a.lineno - 1], lines[b.lineno - 1] = lines[b.lineno - 1], lines[a.lineno - 1]
    path.write_text("".join(lines), encoding="utf-8")
    return True


def delete_file(path: Path, rng: random.Random) -> bool:
    """Delete a module (never a package's ``__init__.py``)."""
    if path.name == "__init__.py":
        return False
    path.unlink()
    return True


def rename_import(path: Path, rng: random.Random) -> bool:
    """Rename a module and every import of it in the project."""
    if path.name == "__init__.py" or path.parent.name == "project":
        return False
    old, new = path.stem, path.stem + "_renamed"
    path.rename(path.with_name(new + ".py"))
    pattern = re.compile(rf"\b{re.escape(old)}\b")
    for other in _files(path.parent.parent):
        text = other.read_text(encoding="utf-8")
        changed = "".join(pattern.sub(new, line) if "import" in line else line
                          for line in text.splitlines(keepends=True))
        if changed != text:
            other.write_text(changed, encoding="utf-8")
    return True


def append_comment(path: Path, rng: random.Random) -> bool:
    """A comment at the end of the file, or at the end of a random line (what the analysis never reads)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    comment = rng.choice(["# reviewed", "# TODO: cuda", "# set_device later", "  # noqa-free note"])
    if not lines or rng.random() < 0.5:
        lines.append(f"{comment}\n")
    else:
        row = rng.randrange(len(lines))
        stripped = lines[row].rstrip("\n")
        if '"""' in stripped or "'''" in stripped or stripped.endswith("\\"):
            return False  # a comment would land inside a string or break a continuation
        lines[row] = f"{stripped}  {comment}\n"
    path.write_text("".join(lines), encoding="utf-8")
    return True


def blank_line(path: Path, rng: random.Random) -> bool:
    """A blank line between two top-level statements (moves every later line)."""
    text = path.read_text(encoding="utf-8")
    body = ast.parse(text).body
    if len(body) < 2:
        return False
    node = rng.choice(body[1:])
    lines = text.splitlines(keepends=True)
    lines.insert(node.lineno - 1, "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return True


def delete_statement(path: Path, rng: random.Random) -> bool:
    """Replace a one-line statement of a function body by ``pass`` (a move, a check or a call dropped)."""
    text = path.read_text(encoding="utf-8")
    statements = [s for fn in _functions(ast.parse(text)) for s in fn.body
                  if s.lineno == s.end_lineno and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not statements:
        return False
    node = rng.choice(statements)
    lines = text.splitlines(keepends=True)
    lines[node.lineno - 1] = " " * node.col_offset + "pass\n"
    path.write_text("".join(lines), encoding="utf-8")
    return True


def swap_device(path: Path, rng: random.Random) -> bool:
    """Turn one device string into another (``"cuda"`` into ``"cpu"`` and back): findings come and go."""
    text = path.read_text(encoding="utf-8")
    found = list(re.finditer(r"([\"'])(cuda|cpu)(:\d)?\1", text))
    if not found:
        return False
    match = rng.choice(found)
    other = "cpu" if match.group(2) == "cuda" else "cuda"
    path.write_text(text[: match.start(2)] + other + text[match.end(2):], encoding="utf-8")
    return True


def add_helper(path: Path, rng: random.Random) -> bool:
    """A new function nothing calls that stores an attribute the file stores elsewhere (``obj.device = None``):
    what it may change reaches the other functions (skipped by the demand sweep, it makes the attribute
    unknown everywhere)."""
    text = path.read_text(encoding="utf-8")
    attributes = sorted({t.attr for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Assign, ast.AugAssign))
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                         if isinstance(t, ast.Attribute)})
    if not attributes:
        return False
    name = f"_helper_{rng.randrange(1000)}"
    value = rng.choice(["None", "'cpu'", "obj"])
    path.write_text(text.rstrip("\n") + f"\n\n\ndef {name}(obj):\n    obj.{rng.choice(attributes)} = {value}\n",
                    encoding="utf-8")
    return True


EDITS: tuple[Callable[[Path, random.Random], bool], ...] = (
    edit_body, edit_default, move_line, delete_file, rename_import, append_comment, append_comment, blank_line,
    delete_statement, swap_device, add_helper)


@pytest.mark.parametrize("package", [*PACKAGES, "torch_project"])
def test_incremental_runs_equal_cold_runs(tmp_path: Path, package: str) -> None:
    _edit_and_compare(_project(tmp_path, package), tmp_path / "cache", f"incremental-{package}", 1,
                      EDITS_PER_PROJECT)


def test_incremental_runs_equal_cold_runs_under_the_demand_sweep(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every component analysed as a library is (the demand sweep: uncalled functions that hold no device
    source are skipped and what they may store becomes unknown), which reads more of a file's text."""
    from devicelint.engine import demand

    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 0)
    _edit_and_compare(_project(tmp_path, "trainkit", "gradkit", "launcher", "torch_project"), tmp_path / "cache",
                      "incremental-demand", 1, 2 * EDITS_PER_PROJECT)


def test_the_edits_change_findings(tmp_path: Path) -> None:
    """The comparisons are not vacuous: the seeded edits of the runs above change what a cold run finds."""
    changed = 0
    for package in ("trainkit", "devicekit", "servekit"):
        (tmp_path / package).mkdir()
        changed += _edit_and_compare(_project(tmp_path / package, package), tmp_path / package / "cache",
                                     f"incremental-{package}", 1, EDITS_PER_PROJECT)
    assert changed >= 3


def test_incremental_runs_with_worker_processes(tmp_path: Path) -> None:
    """Components analysed in worker processes (the semantic digests are taken meanwhile, in the parent)."""
    _edit_and_compare(_project(tmp_path, "trainkit", "servekit", "distillkit"), tmp_path / "cache",
                      "incremental-workers", 2, 6)


def _edit_and_compare(root: Path, cache: Path, seed: str, jobs: int, edits: int) -> int:
    """Seeded random edits, each followed by a run with the cache and a cold run (finding by finding); the
    number of edits that changed the cold run's findings."""
    settings = Settings(cache_dir=str(cache), jobs=jobs)
    cold = Settings(jobs=1)
    before = _findings(check([str(root)], cold))
    assert _findings(check([str(root)], settings)) == before
    rng = random.Random(seed)
    done = changed = 0
    while done < edits:
        files = _files(root)
        edit = rng.choice(EDITS)
        if not edit(rng.choice(files), rng):
            continue
        done += 1
        warm = check([str(root)], settings)
        now = _findings(check([str(root)], cold))
        assert _findings(warm) == now, f"after {edit.__name__} (edit {done})"
        changed += now != before
        before = now
    return changed


def test_a_comment_reuses_the_component_and_a_body_edit_does_not(tmp_path: Path) -> None:
    root = _project(tmp_path, "trainkit")
    settings = Settings(cache_dir=str(tmp_path / "cache"), jobs=1)
    first = check([str(root)], settings)
    assert first.cache_misses >= 1
    module = next(p for p in _files(root / "trainkit") if _functions(ast.parse(p.read_text(encoding="utf-8"))))
    module.write_text(module.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    second = check([str(root)], settings)
    assert (second.cache_hits, second.cache_misses) == (first.components, 0)
    assert _findings(second) == _findings(first)
    assert edit_body(module, random.Random(0))
    third = check([str(root)], settings)
    assert third.cache_misses == 1


def test_a_comment_on_a_finding_line_is_checked_against_its_text(tmp_path: Path) -> None:
    """A finding's line changed (the columns and any fix come from its text): the component runs again."""
    root = _project(tmp_path, "trainkit")
    settings = Settings(cache_dir=str(tmp_path / "cache"), jobs=1)
    first = check([str(root)], settings)
    finding = next(d for d in first.diagnostics if d.is_finding)
    path = Path(finding.file)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[finding.row - 1] = lines[finding.row - 1].rstrip("\n") + "  # here\n"
    path.write_text("".join(lines), encoding="utf-8")
    second = check([str(root)], settings)
    assert second.cache_misses == 1
    assert _findings(second) == _findings(check([str(root)], Settings(jobs=1)))


def test_the_text_probes_cover_every_question_the_engine_asks_of_a_files_text() -> None:
    from devicelint.engine.worlds import world_axes
    from devicelint.models import entry_points
    from devicelint.models.registry import default_models

    splits = {q for axis, questions in world_axes(default_models())
              for q in (*questions, *(refinement.question for refinement in axis.refinements))}
    assert b"cuda.is_available" in splits and b"parse_args" in splits  # (the models' world axes)
    asked = {*splits, *(f.encode() for f in entry_points._FRAMEWORKS), b"transformers", b"TrainingArguments",
             b"set_device", b"cuda.device(", b"runtime_shim", b"def ", b"lambda"}
    assert asked <= set(incremental.TEXT_PROBES)
    # a new question of the raw text (``... in source.data``, ``source.mentions(...)``) must be added to the
    # probes: these are all (argparse_model's ``setattr`` and ``.attr`` are a pre-filter in front of a tree walk)
    reads = re.compile(r"\bin [\w.]*(?:source|\bs|\bm)\.(?:data|text)\b|\.data\.count\(|\bsource\.mentions\(")
    found = sorted(f"{p.relative_to(ROOT)}" for p in (ROOT / "analyzer").rglob("*.py")
                   if p.parent.name != "lsp" and reads.search(p.read_text(encoding="utf-8")))
    assert found == ["analyzer/engine/core.py", "analyzer/engine/demand.py", "analyzer/engine/worlds.py",
                     "analyzer/models/argparse_model.py", "analyzer/models/entry_points.py",
                     "analyzer/models/torch_model.py"]
