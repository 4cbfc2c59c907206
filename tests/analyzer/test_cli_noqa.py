"""Suppressions and MV902 (unused-noqa), through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from devicelint import noqa
from devicelint.cli import main

HEAD = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
"""
MOVE = "weights.to_device(Device.ndarray())"  # MV102 on every path
CLEAN = "frozen = weights.inner().to_device(Device.ndarray())"


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def lint(tmp_path: Path, capsys: pytest.CaptureFixture, body: str, *flags: str,
         head: str = HEAD) -> tuple[int, list[str]]:
    path = tmp_path / "train.py"
    path.write_text(head + body + "\n", encoding="utf-8")
    code = main(["check", "--output-format", "concise", "-q", *flags, str(path)])
    out = capsys.readouterr().out
    return code, [line.split("train.py:", 1)[1] for line in out.splitlines()]


def test_directives_are_parsed_with_their_spans() -> None:
    found = noqa.parse("x = 1  # noqa: MV102,MV105 reason\ny = '# noqa'\n# devicelint: noqa: MV150\nz = 2  #NOQA\n")
    [line, file_level, bare] = found.directives
    assert (line.row, line.column, line.end_column, line.codes) == (1, 8, 27, ("MV102", "MV105"))
    assert file_level.file_level and file_level.codes == ("MV150",)
    assert bare.codes is None and bare.row == 4 and not found.file_level
    assert found.lines == {1: frozenset({"MV102", "MV105"}), 4: noqa.ALL}
    assert noqa.parse("# devicelint: noqa\n").file_level
    assert not noqa.parse("x = 1  # noqa-ish\n").directives
    assert noqa.parse("x = 1  # noqa:MV102 # type: ignore\n").directives[0].codes == ("MV102",)


def test_used_directives_are_silent(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for comment in ("# noqa", "# noqa: MV102", "# noqa: MV102, E501", "# NOQA:MV102"):
        assert lint(tmp_path, capsys, f"{MOVE}  {comment}") == (0, []), comment
    assert lint(tmp_path, capsys, MOVE, head="# devicelint: noqa\n" + HEAD) == (0, [])
    assert lint(tmp_path, capsys, MOVE, head="# devicelint: noqa: MV102\n" + HEAD) == (0, [])
    # a multi-line call: the directive may sit on its last line
    assert lint(tmp_path, capsys, "weights.to_device(\n    Device.ndarray(),\n)  # noqa: MV102") == (0, [])


def test_unused_directives_are_mv902(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, lines = lint(tmp_path, capsys, f"{CLEAN}  # noqa: MV102")
    assert lines == ["4:55: MV902 [warning] Unused `noqa` directive (unused: `MV102`)"]
    code, lines = lint(tmp_path, capsys, f"{MOVE}  # noqa: MV102, MV105, MV999, MV102")
    assert lines == ["4:38: MV902 [warning] Unused `noqa` directive (unused: `MV105`; unknown: `MV999`; "
                     "duplicated: `MV102`)"]
    code, lines = lint(tmp_path, capsys, f"{CLEAN}  # noqa: MV105", "--ignore", "MV105")
    assert lines == ["4:55: MV902 [warning] Unused `noqa` directive (non-enabled: `MV105`)"]
    # a per-file ignored code leaves its directive unused (as in ruff)
    code, lines = lint(tmp_path, capsys, f"{MOVE}  # noqa: MV102", "--per-file-ignores", "train.py:MV102")
    assert lines == ["4:38: MV902 [warning] Unused `noqa` directive (unused: `MV102`)"]


def test_what_mv902_leaves_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa: E501, F401") == (0, [])  # other tools' codes
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa") == (0, [])  # bare: may serve another linter
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa UP004") == (0, [])  # flake8's colon-less form is bare
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa: MV105, MV902") == (0, [])  # suppressed by its own code
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa", head="# devicelint: noqa: MV902\n" + HEAD) == (0, [])
    assert lint(tmp_path, capsys, CLEAN, head="# devicelint: noqa\n" + HEAD) == (0, [])  # file level: never
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa", "--ignore", "MV902") == (0, [])
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa", "--select", "MV1") == (0, [])
    assert lint(tmp_path, capsys, f"{CLEAN}  # noqa", "--per-file-ignores", "*.py:MV9") == (0, [])
    assert lint(tmp_path, capsys, f"x = '# noqa'\n{CLEAN}") == (0, [])  # inside a string: not a comment
    # a file the analyzer skips (it never mentions runtime_shim) is not looked at
    assert lint(tmp_path, capsys, "x = 1  # noqa", head="") == (0, [])


def test_ignore_noqa(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, lines = lint(tmp_path, capsys, f"{MOVE}  # noqa\n{CLEAN}  # noqa", "--ignore-noqa")
    assert code == 1 and [line.split(": ")[1].split()[0] for line in lines] == ["MV102"]


def test_only_directives_that_can_change_a_finding_of_ours_are_read_in_a_batch_run() -> None:
    """``# noqa: E501`` is another tool's: a batch run skips tokenizing a file that holds only such directives
    (the editor's quick fix still reads them all, to add a code to one)."""
    assert not noqa.may_matter("import os  # noqa: E402\nx = 1  # NOQA:F401, E501\n")
    assert noqa.may_matter("import os  # noqa: E402\nx = 1  # noqa\n")  # bare: suppresses ours too
    assert noqa.may_matter("x = 1  # noqa: E501, mv201\n")
    assert noqa.may_matter("# devicelint: noqa: MV150\n")
    assert noqa.parse("import os  # noqa: E402\n").directives  # what the quick fix reads
