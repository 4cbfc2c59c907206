"""``devicelint check --fix / --unsafe-fixes / --diff / --fix-only / --show-fixes`` and the ``fix`` keys:
what is written (encoding, BOM, line endings, mode bits, atomically), what is printed, the exit codes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint.cli import main
from devicelint.diagnostics import SAFE, Edit, Fix

REPO = Path(__file__).resolve().parents[2]

MV102 = ("from runtime_shim import Device, Tensor\n\n"
         "weights = Tensor.random([2], Device.flex().autodiff())  # note\n"
         "weights.to_device(Device.ndarray())\n")
MV102_FIXED = MV102.replace("weights.to_device", "weights.inner().to_device")
MV150 = ("from runtime_shim import Device, Tensor\n\n"
         "batch = Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())\n")
MV150_FIXED = ("from runtime_shim import Device, Tensor\n\n"
               "batch = Tensor.from_inner(Tensor.ones([2], Device.flex())"
               ".to_device(Device.flex().autodiff().inner()))\n")
# the first failure ends the program: what follows it is analysed once the first is fixed
CHAIN = ("from runtime_shim import Device, Tensor\n\n"
         "weights = Tensor.random([2], Device.flex().autodiff())\n"
         "weights.to_device(Device.ndarray())\n"
         "device = Device.flex().autodiff().autodiff()\n"
         "Tensor.ones([2], Device.flex()).inner()\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_concise_marks_fixable_and_counts_hidden_unsafe_fixes(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "a.py").write_text(MV102, encoding="utf-8")
    (project / "b.py").write_text(MV150, encoding="utf-8")
    code, out, _err = run(capsys, ".")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("a.py:4:1: MV102 [error] [*] Cannot move")
    assert lines[1].startswith("b.py:3:9: MV150 [warning] a plain float")  # unsafe: no marker without the flag
    assert lines[-1] == ("[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the "
                         "`--unsafe-fixes` option).")
    out = run(capsys, "--unsafe-fixes", ".")[1]
    assert "MV150 [warning] [*]" in out and out.endswith("[*] 2 fixable with the `--fix` option.\n")
    out = run(capsys, "--select", "MV150", ".")[1]
    assert out.endswith("No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n")
    out = run(capsys, "--output-format", "full", "--select", "MV150", ".")[1]
    assert "= help: Move to the inner device" in out and "unsafe: enable with `--unsafe-fixes`" in out


def test_fix_keeps_formatting_and_reports_what_remains(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "a.py").write_text(MV102, encoding="utf-8")
    (project / "b.py").write_text(MV150, encoding="utf-8")
    code, out, _err = run(capsys, "--fix", "--show-fixes", ".")
    assert (project / "a.py").read_text(encoding="utf-8") == MV102_FIXED
    assert (project / "b.py").read_text(encoding="utf-8") == MV150  # unsafe: left alone
    assert code == 1 and "MV150" in out and "MV102" not in out.split("Fixed")[0]
    assert "Found 2 findings (1 fixed, 1 remaining)." in out
    assert out.endswith("Fixed 1 finding:\n- a.py:\n    1 × MV102 (autodiff-mismatch-move)\n")
    code, out, _err = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert code == 0 and (project / "b.py").read_text(encoding="utf-8") == MV150_FIXED
    assert out == "Found 1 finding (1 fixed, 0 remaining).\n"
    code, out, _err = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert code == 0 and out == "All checks passed!\n"


def test_fix_passes_until_stable(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "chain.py").write_text(CHAIN, encoding="utf-8")
    # the analysis goes on past each failure: all three independent bugs in one run, each with its fix
    # under 2c06be35's semantics: at d16f7ba2ed `Device::autodiff` and `Tensor::inner` are idempotent
    found = json.loads(run(capsys, "--profile", "burn-2026-08", "--output-format", "json", ".")[1])
    assert [d["code"] for d in found] == ["MV102", "MV109", "MV108"]
    code, out, _err = run(capsys, "--profile", "burn-2026-08", "--fix", "--show-fixes", ".")
    assert code == 0 and "Found 3 findings (3 fixed, 0 remaining)." in out
    assert (project / "chain.py").read_text(encoding="utf-8") == (
        "from runtime_shim import Device, Tensor\n\n"
        "weights = Tensor.random([2], Device.flex().autodiff())\n"
        "weights.inner().to_device(Device.ndarray())\n"
        "device = Device.flex().autodiff()\n"
        "Tensor.ones([2], Device.flex())\n")


def test_crlf_bom_encoding_and_mode_are_kept(project: Path, capsys: pytest.CaptureFixture) -> None:
    crlf = project / "crlf.py"
    crlf.write_bytes(MV102.replace("\n", "\r\n").encode())
    bom = project / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + MV102.replace("# note", "# \u00e9t\u00e9").encode())
    latin = project / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n" + MV102.replace("# note", "# \u00e9t\u00e9")).encode("latin-1"))
    os.chmod(bom, 0o750)
    assert run(capsys, "--fix", ".")[0] == 0
    assert crlf.read_bytes() == MV102_FIXED.replace("\n", "\r\n").encode()
    assert bom.read_bytes() == b"\xef\xbb\xbf" + MV102_FIXED.replace("# note", "# \u00e9t\u00e9").encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n"
                                  + MV102_FIXED.replace("# note", "# \u00e9t\u00e9")).encode("latin-1")
    assert stat.S_IMODE(os.stat(bom).st_mode) == 0o750
    assert sorted(p.name for p in project.iterdir() if p.is_file()) == ["bom.py", "crlf.py", "latin.py"]


def test_diff_writes_nothing(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "a.py").write_text(MV102, encoding="utf-8")
    code, out, err = run(capsys, "--diff", ".")
    assert code == 1 and (project / "a.py").read_text(encoding="utf-8") == MV102
    assert out.splitlines()[:2] == ["--- a.py", "+++ a.py"]
    assert "-weights.to_device(Device.ndarray())" in out and "+weights.inner().to_device(Device.ndarray())" in out
    assert err == "Would fix 1 finding.\n"
    (project / "a.py").write_text(MV102_FIXED, encoding="utf-8")
    code, out, _err = run(capsys, "--diff", ".")
    assert code == 0 and out == ""


def test_fix_only_reports_nothing_that_remains(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "a.py").write_text(MV102, encoding="utf-8")
    (project / "b.py").write_text(MV150, encoding="utf-8")
    code, out, _err = run(capsys, "--fix-only", ".")
    assert code == 0 and out == "Fixed 1 finding.\n"
    assert (project / "a.py").read_text(encoding="utf-8") == MV102_FIXED
    code, out, _err = run(capsys, "--fix-only", ".")
    assert code == 0 and out == "No findings fixed.\n"


def test_fix_keys_in_the_configuration(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "pyproject.toml").write_text("[tool.devicelint]\nfix = true\nunsafe-fixes = true\n", encoding="utf-8")
    (project / "b.py").write_text(MV150, encoding="utf-8")
    assert run(capsys, "--no-fix", ".")[0] == 1 and (project / "b.py").read_text(encoding="utf-8") == MV150
    assert run(capsys, "--no-unsafe-fixes", ".")[0] == 1
    assert (project / "b.py").read_text(encoding="utf-8") == MV150
    assert run(capsys, ".")[0] == 0 and (project / "b.py").read_text(encoding="utf-8") == MV150_FIXED
    (project / "pyproject.toml").write_text("[tool.devicelint]\nfix = 1\n", encoding="utf-8")
    code, _out, err = run(capsys, ".")
    assert code == 2 and "`fix` must be true or false" in err


def test_stdin_prints_the_fixed_source(project: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "--fix", "--stdin-filename", "x.py", "-"],
                          input=MV102.encode(), capture_output=True, cwd=project, env=env)
    assert proc.returncode == 0 and proc.stdout == MV102_FIXED.encode()
    assert b"Found 1 finding (1 fixed, 0 remaining)." in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "--diff", "-"], input=MV102.encode(),
                          capture_output=True, cwd=project, env=env)
    assert proc.returncode == 1 and b"+weights.inner().to_device" in proc.stdout


def test_a_failed_write_leaves_whole_files(project: Path, capsys: pytest.CaptureFixture,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are replaced whole: one that fails mid-write stays as it was, no temporary file stays."""
    for name in ("a.py", "b.py"):
        (project / name).write_text(MV102, encoding="utf-8")
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    code, _out, err = run(capsys, "--fix", ".")
    assert code == 2 and "cannot write b.py: No space left on device (the file is unchanged)" in err
    assert (project / "a.py").read_text(encoding="utf-8") == MV102_FIXED
    assert (project / "b.py").read_text(encoding="utf-8") == MV102
    assert sorted(p.name for p in project.iterdir() if p.is_file()) == ["a.py", "b.py"]


def test_a_fix_that_breaks_the_syntax_is_reverted(project: Path, capsys: pytest.CaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from devicelint.rules.mv102_autodiff_mismatch_move import AutodiffMismatchMove

    def broken(self, site, site_facts, source):  # a buggy fix: an unclosed parenthesis
        return Fix(SAFE, "broken", (Edit(site.line, site.col + 1, site.line, site.col + 1, "("),))

    monkeypatch.setattr(AutodiffMismatchMove, "fix", broken)
    (project / "a.py").write_text(MV102, encoding="utf-8")
    code, out, err = run(capsys, "--fix", "--no-cache", ".")
    assert code == 1 and (project / "a.py").read_text(encoding="utf-8") == MV102
    assert "made it unparsable and were left out" in err and "MV102" in out


def test_the_cache_keeps_fixes(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "a.py").write_text(MV102, encoding="utf-8")
    cold = json.loads(run(capsys, "--output-format", "json", ".")[1])
    warm = json.loads(run(capsys, "--output-format", "json", ".")[1])
    assert any((project / ".cache").rglob("*.json"))
    assert cold == warm and warm[0]["fix"]["edits"][0]["content"] == ".inner()"


def test_a_read_only_file_is_not_replaced(project: Path, capsys: pytest.CaptureFixture) -> None:
    """Mode 0444 is respected even by root (the rename would bypass it): the file's own bits decide."""
    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(MV102, encoding="utf-8")
    os.chmod(project / "b.py", 0o444)
    code, _out, err = run(capsys, "--fix", "--no-cache", ".")
    assert code == 2 and "b.py: not fixed: the file is read-only (the file is unchanged)" in err
    assert (project / "b.py").read_text(encoding="utf-8") == MV102
    assert stat.S_IMODE(os.stat(project / "b.py").st_mode) == 0o444
    assert (project / "a.py").read_text(encoding="utf-8") == MV102_FIXED
    assert (project / "c.py").read_text(encoding="utf-8") == MV102_FIXED
    # exactly which files were written and which were not
    assert "fixes written to 2 file(s): a.py, c.py; not written to 1 file(s): b.py" in err
    assert "Traceback" not in err and "internal error" not in err


def test_a_file_changed_during_the_run_is_not_fixed(project: Path, capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The user saves a line while the analysis runs: the fix (computed from the old bytes) is not written."""
    from devicelint.fixes import files as fix_files

    (project / "a.py").write_text(MV102, encoding="utf-8")
    (project / "b.py").write_text(MV102, encoding="utf-8")
    saved = MV102 + "print('saved during the run')\n"
    real_fix_report = fix_files.fix_report

    def edit_then_fix(*args, **kwargs):  # the edit lands after the analysis read the file
        outcome = real_fix_report(*args, **kwargs)
        (project / "a.py").write_text(saved, encoding="utf-8")
        return outcome

    monkeypatch.setattr(fix_files, "fix_report", edit_then_fix)
    code, _out, err = run(capsys, "--fix", "--no-cache", ".")
    assert code == 2 and "a.py: not fixed: it changed during the run (the file is unchanged)" in err
    assert (project / "a.py").read_text(encoding="utf-8") == saved  # the user's line is kept
    assert (project / "b.py").read_text(encoding="utf-8") == MV102_FIXED
    assert "fixes written to 1 file(s): b.py; not written to 1 file(s): a.py" in err
    assert sorted(p.name for p in project.iterdir() if p.is_file()) == ["a.py", "b.py"]  # no temporary left


def test_write_atomic_compares_right_before_the_rename(tmp_path: Path) -> None:
    from devicelint.fixes.files import NotWritten, write_atomic

    target = tmp_path / "x.py"
    target.write_bytes(b"new content\n")
    with pytest.raises(NotWritten, match="changed during the run"):
        write_atomic(str(target), b"fixed\n", expected=b"old content\n")
    assert target.read_bytes() == b"new content\n"
    write_atomic(str(target), b"fixed\n", expected=b"new content\n")
    assert target.read_bytes() == b"fixed\n"
