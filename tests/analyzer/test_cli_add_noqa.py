"""``check --add-noqa``: a directive on each line with a finding, as ruff's ``--add-noqa``."""

from __future__ import annotations

from pathlib import Path

import pytest
from devicelint.cli import main

HEAD = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
"""
MOVE = "weights.to_device(Device.ndarray())"  # MV102 on every path
ADD = "a = Tensor.zeros([2], device=Device.flex())\nb = Tensor.zeros([2], device=Device.cuda(0))\n"


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def add_noqa(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--add-noqa", *args])
    out, err = capsys.readouterr()
    return code, out, err


def findings(capsys: pytest.CaptureFixture, *args: str) -> list[str]:
    main(["check", "--output-format", "concise", "-q", *args])
    return capsys.readouterr().out.splitlines()


def test_each_line_with_a_finding_gets_a_directive_and_the_findings_are_gone(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "train.py"
    path.write_text(HEAD + ADD + f"{MOVE}\nc = a + b\nd = a + b; {MOVE}\n", encoding="utf-8")
    assert len(findings(capsys, str(path))) == 4
    code, out, err = add_noqa(capsys, str(path))
    assert (code, out, err) == (0, "", "Added 3 noqa directives.\n")  # exit 0 with findings, as ruff
    assert path.read_text(encoding="utf-8").splitlines()[5:] == [
        f"{MOVE}  # noqa: MV102",
        "c = a + b  # noqa: MV105",
        f"d = a + b; {MOVE}  # noqa: MV102, MV105",  # one directive, codes sorted
    ]
    assert findings(capsys, str(path)) == []  # and none is unused (MV902)
    before = path.read_bytes()
    assert add_noqa(capsys, str(path)) == (0, "", "")  # nothing left to add: no count
    assert path.read_bytes() == before
    assert add_noqa(capsys, "-q", str(path)) == (0, "", "")


def test_the_failures_a_finding_lists_get_their_directives_too(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # the sum fails again over the batch the product left behind: one finding, but silenced alone it would hand
    # the sum back as a finding of its own (a directive silences its line only)
    path = tmp_path / "train.py"
    path.write_text("import torch\n\nweights = torch.randn(4, 4, device='cuda')\nbatch = torch.randn(8, 4)\n"
                    "hidden = batch @ weights\nmixed = hidden + batch\n", encoding="utf-8")
    assert len(findings(capsys, str(path))) == 1
    assert add_noqa(capsys, str(path)) == (0, "", "Added 2 noqa directives.\n")
    assert path.read_text(encoding="utf-8").splitlines()[4:] == [
        "hidden = batch @ weights  # noqa: MV201", "mixed = hidden + batch  # noqa: MV201"]
    assert findings(capsys, str(path)) == []


def test_a_line_with_a_directive_gets_the_codes_added_and_other_comments_stay(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "train.py"
    path.write_text(HEAD + ADD + "c = a + b  # noqa:E501 -- long line\nd = a + b  # type: ignore\n"
                    "e = a + b  # noqa: MV105\n", encoding="utf-8")
    code, _out, err = add_noqa(capsys, str(path))
    assert (code, err) == (0, "Added 2 noqa directives.\n")
    assert path.read_text(encoding="utf-8").splitlines()[5:] == [
        "c = a + b  # noqa: E501, MV105 -- long line",
        "d = a + b  # type: ignore  # noqa: MV105",
        "e = a + b  # noqa: MV105",  # suppressed already: untouched
    ]
    assert findings(capsys, str(path)) == []


def test_a_directive_goes_where_a_comment_can_end_the_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The first line of a finding after a backslash, or inside a multi-line string, cannot take a comment:
    its last line does (a directive suppresses what starts or ends on its line)."""
    path = tmp_path / "train.py"
    path.write_text(HEAD + ADD + "c = a \\\n    + b\nd = a.add(b, '''x\n''')\ne = (a +\n     b)\n",
                    encoding="utf-8")
    code, _out, err = add_noqa(capsys, str(path))
    assert (code, err) == (0, "Added 3 noqa directives.\n")
    assert path.read_text(encoding="utf-8").splitlines()[5:] == [
        "c = a \\", "    + b  # noqa: MV105",
        "d = a.add(b, '''x", "''')  # noqa: MV105",
        "e = (a +  # noqa: MV105", "     b)",
    ]
    assert findings(capsys, str(path)) == []


def test_the_file_keeps_its_encoding_bom_line_endings_and_mode(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "train.py"
    text = "# é\n" + HEAD + f"{MOVE}\nx = 1\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    path.chmod(0o640)
    assert add_noqa(capsys, str(path))[0] == 0
    expected = text.replace(MOVE, f"{MOVE}  # noqa: MV102").replace("\n", "\r\n")
    assert path.read_bytes() == b"\xef\xbb\xbf" + expected.encode("utf-8")
    assert (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temporary file left


def test_the_projects_configuration_decides_what_is_reported_and_so_what_gets_a_directive(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.devicelint]\nper-file-ignores = {"legacy/*" = ["MV102"]}\n'
                                             'ignore = ["MV105"]\n', encoding="utf-8")
    (tmp_path / "legacy").mkdir()
    legacy, train = tmp_path / "legacy" / "old.py", tmp_path / "train.py"
    legacy.write_text(HEAD + f"{MOVE}\n", encoding="utf-8")
    train.write_text(HEAD + ADD + f"c = a + b\n{MOVE}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert add_noqa(capsys, ".") == (0, "", "Added 1 noqa directive.\n")
    assert legacy.read_text(encoding="utf-8") == HEAD + f"{MOVE}\n"
    assert train.read_text(encoding="utf-8") == HEAD + ADD + f"c = a + b\n{MOVE}  # noqa: MV102\n"
    assert add_noqa(capsys, "--select", "MV105", "train.py") == (0, "", "Added 1 noqa directive.\n")
    assert "c = a + b  # noqa: MV105\n" in train.read_text(encoding="utf-8")


@pytest.mark.parametrize("flags", [["--fix"], ["--diff"], ["--fix-only"], ["--statistics"], ["--ignore-noqa"],
                                   ["--show-files"], ["-"], ["--stdin-filename", "train.py", "-"]])
def test_flags_that_cannot_go_with_it_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                       flags: list[str]) -> None:
    path = tmp_path / "train.py"
    path.write_text(HEAD + f"{MOVE}\n", encoding="utf-8")
    code, out, err = add_noqa(capsys, *flags, str(path))
    assert code == 2 and out == "" and err.startswith("devicelint: error: --add-noqa cannot be used with "), err
    assert path.read_text(encoding="utf-8") == HEAD + f"{MOVE}\n"


def test_a_file_it_cannot_write_or_parse_is_left_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken, locked = tmp_path / "broken.py", tmp_path / "locked.py"
    broken.write_text("from runtime_shim import Device\ndef f(:\n", encoding="utf-8")  # MV901: never suppressed
    locked.write_text(HEAD + f"{MOVE}\n", encoding="utf-8")
    locked.chmod(0o444)
    code, _out, err = add_noqa(capsys, str(tmp_path))
    assert code == 2 and "locked.py: no directives added: the file is read-only (the file is unchanged)" in err
    assert "Added" not in err
    assert broken.read_text(encoding="utf-8") == "from runtime_shim import Device\ndef f(:\n"
    assert locked.read_text(encoding="utf-8") == HEAD + f"{MOVE}\n"
