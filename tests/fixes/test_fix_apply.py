"""Fix and Edit (ruff's model), their JSON and cache forms, and ``apply_fixes`` on text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint.diagnostics import Diagnostic, Edit, Fix, Severity
from devicelint.fixes import FixError, apply_fixes

REPO = Path(__file__).resolve().parents[2]


def diag(*edits: Edit, applicability: str = "safe", row: int = 1, code: str = "MV102") -> Diagnostic:
    fix = Fix(applicability, f"fix at {row}", tuple(edits))
    return Diagnostic(code, "name", Severity.ERROR, "message", "f.py", row, 1, row, 2, fix=fix)


def test_fix_json_is_ruffs_shape_and_the_cache_keeps_it() -> None:
    d = diag(Edit(2, 3, 2, 3, ".inner()"), Edit(4, 1, 5, 2, ""), applicability="unsafe")
    assert d.to_json()["fix"] == {
        "applicability": "unsafe", "message": "fix at 1",
        "edits": [{"content": ".inner()", "location": {"row": 2, "column": 3}, "end_location": {"row": 2, "column": 3}},
                  {"content": "", "location": {"row": 4, "column": 1}, "end_location": {"row": 5, "column": 2}}]}
    assert Diagnostic.from_cache(d.to_cache()) == d
    plain = Diagnostic("MV105", "n", Severity.WARNING, "m", "f.py", 1, 1, 1, 2)
    assert Diagnostic.from_cache(plain.to_cache()) == plain and plain.to_json()["fix"] is None
    broken = d.to_cache()
    broken[-1][2][0][0] = "two"
    with pytest.raises(ValueError):
        Diagnostic.from_cache(broken)
    with pytest.raises(ValueError):
        Fix("maybe", "m", (Edit(1, 1, 1, 1, "x"),))


def test_insert_delete_replace_with_character_columns() -> None:
    text = "é = t.inner()\nx.to_device(d)\n"
    new, applied = apply_fixes(text, [diag(Edit(1, 6, 1, 14, ""), row=1),
                                      diag(Edit(2, 2, 2, 2, ".inner()"), row=2)])
    assert new == "é = t\nx.inner().to_device(d)\n" and len(applied) == 2


def test_unsafe_fixes_need_the_flag() -> None:
    text = "a\n"
    unsafe = diag(Edit(1, 2, 1, 2, "!"), applicability="unsafe")
    assert apply_fixes(text, [unsafe]) == (text, [])
    assert apply_fixes(text, [unsafe], unsafe=True) == ("a!\n", [unsafe])


def test_overlapping_fixes_wait_for_the_next_pass() -> None:
    text = "abcdef\n"
    first = diag(Edit(1, 2, 1, 4, "X"), row=1)
    overlapping = diag(Edit(1, 3, 1, 5, "Y"), row=2)
    touching = diag(Edit(1, 4, 1, 4, "Z"), row=3)
    later = diag(Edit(1, 6, 1, 7, "W"), row=4)
    new, applied = apply_fixes(text, [later, overlapping, first, touching])
    assert new == "aXdeW\n" and applied == [first, later]
    # the same fix for two diagnostics is applied once and reported for both
    twin = Diagnostic("MV109", "n", Severity.ERROR, "m", "f.py", 9, 1, 9, 2, fix=first.fix)
    new, applied = apply_fixes(text, [first, twin])
    assert new == "aXdef\n" and applied == [first, twin]


def test_two_insertions_at_one_place_keep_the_fix_order() -> None:
    d = diag(Edit(1, 1, 1, 1, "from m import T\n"), Edit(1, 1, 1, 1, "T.wrap("), Edit(1, 2, 1, 2, ")"))
    assert apply_fixes("x\n", [d])[0] == "from m import T\nT.wrap(x)\n"


def test_line_ends_crlf_cr_and_no_final_newline() -> None:
    text = "a\r\nbc\rd"
    new, _ = apply_fixes(text, [diag(Edit(2, 3, 2, 3, "!"), row=2), diag(Edit(3, 2, 3, 2, "?"), row=3)])
    assert new == "a\r\nbc!\rd?"


def test_edits_outside_the_text_are_errors() -> None:
    with pytest.raises(FixError):
        apply_fixes("ab\n", [diag(Edit(1, 5, 1, 5, "x"))])
    with pytest.raises(FixError):
        apply_fixes("ab\n", [diag(Edit(4, 1, 4, 1, "x"))])


def test_the_analysis_does_not_import_libcst_until_a_fix_is_built(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text("from runtime_shim import Device, Tensor\nTensor.ones([2], Device.flex())\n", encoding="utf-8")
    failing = tmp_path / "failing.py"
    failing.write_text("from runtime_shim import Device, Tensor\n"
                       "Tensor.ones([2], Device.flex().autodiff()).to_device(Device.flex())\n", encoding="utf-8")
    probe = ("import sys\nfrom devicelint.scheduler import analyze_component\nfrom devicelint import frontend\n"
             "sources = frontend.load([sys.argv[1]])\n"
             "d = analyze_component(sources, frozenset(s.module for s in sources), 'burn-2026-08', None)\n"
             "print(bool([x for x in d if x.fix]), 'libcst' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True,
                           env=env).stdout.split() for path in (clean, failing)]
    assert runs == [["False", "False"], ["True", "True"]]
