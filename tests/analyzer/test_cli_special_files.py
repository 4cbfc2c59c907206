"""What the command line reads and how it refuses: special files (FIFOs, devices, broken links), the
per-file size cap, file names that are not UTF-8 in every output format, a closed stdin, notebooks (cell by
cell), and syntax errors that no selection hides. Run as users run it: ``python -m devicelint``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

BROKEN = "import runtime_shim\nx = (\n"
FAILING = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
weights.to_device(Device.ndarray())
"""
NOT_REGULAR = "not a regular file"


def devicelint(cwd: Path, *argv: str, stdin: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "devicelint", "check", "--no-cache", *argv], cwd=cwd, env=env,
                          capture_output=True, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          timeout=timeout)


def no_crash(proc: subprocess.CompletedProcess) -> None:
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
def test_fifo_device_and_broken_link_are_skipped_with_a_note(tmp_path: Path) -> None:
    """A FIFO named x.py would block the read forever, /dev/zero never ends: neither is read."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BROKEN, encoding="utf-8")
    os.mkfifo(tmp_path / "pkg" / "x.py")
    os.symlink("/dev/zero", tmp_path / "pkg" / "zero.py")
    os.symlink(tmp_path / "nowhere.py", tmp_path / "pkg" / "dangling.py")
    os.symlink(tmp_path / "pkg" / "bad.py", tmp_path / "pkg" / "link_to_regular.py")
    proc = devicelint(tmp_path, "pkg")
    no_crash(proc)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert f"pkg/x.py: {NOT_REGULAR}" in err and f"pkg/zero.py: {NOT_REGULAR}" in err
    assert "pkg/dangling.py: a broken symbolic link" in err
    out = proc.stdout.decode()
    assert "pkg/bad.py:2:5: MV901" in out and "pkg/link_to_regular.py:2:5: MV901" in out  # links to files: read
    # a FIFO named explicitly: a note, no hang
    proc = devicelint(tmp_path, "pkg/x.py")
    no_crash(proc)
    assert f"pkg/x.py: {NOT_REGULAR}" in proc.stderr.decode()
    # --quiet hides the notes
    assert NOT_REGULAR not in devicelint(tmp_path, "--quiet", "pkg").stderr.decode()


def test_files_over_the_size_cap_are_skipped_with_a_note(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_text(FAILING + "# padding\n" * 200, encoding="utf-8")
    (tmp_path / "small.py").write_text(FAILING, encoding="utf-8")
    size = big.stat().st_size
    proc = devicelint(tmp_path, "--max-file-size", "1KB", ".")
    no_crash(proc)
    assert f"big.py: {size} bytes, over `max-file-size` (1000 bytes): skipped" in proc.stderr.decode()
    assert "small.py:4:1: MV102" in proc.stdout.decode() and "big.py" not in proc.stdout.decode()
    # the configuration key, and 0 for no limit
    (tmp_path / "pyproject.toml").write_text('[tool.devicelint]\nmax-file-size = "1KiB"\n', encoding="utf-8")
    proc = devicelint(tmp_path, ".")
    assert "over `max-file-size` (1024 bytes)" in proc.stderr.decode()
    proc = devicelint(tmp_path, "--max-file-size", "0", ".")
    assert "big.py:4:1: MV102" in proc.stdout.decode() and b"max-file-size" not in proc.stderr


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="needs a file system that takes any bytes")
@pytest.mark.parametrize("output_format", ["concise", "full", "json", "json-lines", "github", "sarif"])
def test_file_names_that_are_not_utf8_are_escaped(tmp_path: Path, output_format: str) -> None:
    name = b"caf\xe9.py"
    with open(os.path.join(os.fsencode(tmp_path), name), "w", encoding="utf-8") as handle:
        handle.write(FAILING)
    proc = devicelint(tmp_path, "--output-format", output_format, ".")
    no_crash(proc)
    assert proc.returncode == 1
    out = proc.stdout.decode("utf-8")  # valid UTF-8
    expected = "caf%E9.py" if output_format == "sarif" else "caf\\\\xe9.py" if output_format.startswith("json") \
        else "caf\\xe9.py"
    assert expected in out
    if output_format.startswith("json") or output_format == "sarif":
        for line in ([out] if output_format in ("json", "sarif") else out.splitlines()):
            json.loads(line)
    # the same through -o
    report = tmp_path / "report.txt"
    proc = devicelint(tmp_path, "--output-format", output_format, "-o", str(report), ".")
    no_crash(proc)
    assert proc.returncode == 1 and expected in report.read_text(encoding="utf-8")


def test_closed_stdin_is_a_usage_error(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = ("import os, subprocess, sys\nos.close(0)\n"
            "sys.exit(subprocess.run([sys.executable, '-m', 'devicelint', 'check', '--no-cache', '-'],"
            " stdin=None, close_fds=True).returncode)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    no_crash(proc)
    assert proc.returncode == 2
    assert b"'-' reads the file from stdin, but stdin is closed" in proc.stderr


def notebook(*cells: tuple[str, list[str]], language: str = "python") -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "source": source, "metadata": {},
                   **({"outputs": [], "execution_count": None} if kind == "code" else {})} for kind, source in cells],
        "metadata": {"language_info": {"name": language}}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


MOVES = notebook(
    ("markdown", ["# Training\n"]),
    ("code", ["%matplotlib inline\n", "from runtime_shim import Device, Tensor\n"]),
    ("code", ["!pip install numpy\n", "weights = Tensor.random([2], Device.flex().autodiff())\n"]),
    ("markdown", ["Now move it.\n"]),
    ("code", ["files = !ls\n", "Tensor?\n", "weights.to_device(Device.ndarray())\n"]),
)


def test_a_notebook_is_analyzed_cell_by_cell(tmp_path: Path) -> None:
    """Code cells joined in order (one namespace, as the notebook runs), findings at their cell and row;
    IPython magics do not break the parse; never a silent "All checks passed!"."""
    (tmp_path / "train.ipynb").write_text(MOVES, encoding="utf-8")
    proc = devicelint(tmp_path, "train.ipynb")
    no_crash(proc)
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "All checks passed" not in out
    assert out.startswith("train.ipynb:cell 5:3:1: MV102 [error] Cannot move between autodiff")
    assert "created at train.ipynb:cell 3:2" in out  # places named in the message are cells too
    item = json.loads(devicelint(tmp_path, "--output-format", "json", "train.ipynb").stdout)[0]
    assert (item["filename"], item["cell"], item["location"], item["fix"]) == (
        "train.ipynb", 5, {"row": 3, "column": 1}, None)  # no fix is ever written into a notebook
    assert [(r["cell"], r["location"]["row"]) for r in item["related"]] == [(3, 2), (5, 3)]
    full = devicelint(tmp_path, "--output-format", "full", "train.ipynb").stdout.decode()
    assert "3 | weights.to_device(Device.ndarray())" in full
    # --fix leaves the notebook's bytes alone; a directory's notebooks are found; stdin works too
    proc = devicelint(tmp_path, "--fix", "--unsafe-fixes", "train.ipynb")
    assert proc.returncode == 1 and (tmp_path / "train.ipynb").read_text(encoding="utf-8") == MOVES
    assert "train.ipynb:cell 5:3:1: MV102" in devicelint(tmp_path, ".").stdout.decode()
    with open(tmp_path / "train.ipynb", "rb") as handle:
        proc = devicelint(tmp_path, "--stdin-filename", "train.ipynb", "-", stdin=handle.fileno())
    assert "train.ipynb:cell 5:3:1: MV102" in proc.stdout.decode()


def test_notebook_syntax_errors_and_broken_notebooks_are_reported(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text(notebook(("code", ["import torch\n"]), ("code", ["x = (\n"])),
                                           encoding="utf-8")
    (tmp_path / "notjson.ipynb").write_text("{ not json: runtime_shim", encoding="utf-8")
    (tmp_path / "r.ipynb").write_text(notebook(("code", ["library(runtime_shim)\n"]), language="R"),
                                      encoding="utf-8")
    proc = devicelint(tmp_path, "broken.ipynb", "notjson.ipynb", "r.ipynb")
    no_crash(proc)
    out = proc.stdout.decode()
    assert "broken.ipynb:cell 2:1:5: MV901 [error] cannot parse file" in out
    assert "notjson.ipynb:1:1: MV901 [error] cannot read notebook: not a notebook: invalid JSON" in out
    assert "r.ipynb:1:1: MV901 [error] cannot read notebook: its language is R: only Python notebooks" in out


@pytest.mark.parametrize("argv", [["--select", "MV2"], ["--ignore", "MV901"], ["--ignore", "ALL"],
                                  ["--per-file-ignores", "*.py:MV9"], ["--select", "MV102"]])
def test_syntax_errors_are_always_reported(tmp_path: Path, argv: list[str]) -> None:
    """Like ruff's syntax errors, MV901 cannot be deselected: a broken file is a file nothing was checked in."""
    (tmp_path / "broken.py").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "noqa.py").write_text("import runtime_shim\nx = (  # noqa: MV901\n", encoding="utf-8")
    proc = devicelint(tmp_path, *argv, ".")
    no_crash(proc)
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "All checks passed" not in out
    assert "broken.py:2:5: MV901" in out and "noqa.py:2:5: MV901" in out
    (tmp_path / "pyproject.toml").write_text('[tool.devicelint]\nselect = ["MV2"]\n', encoding="utf-8")
    assert "broken.py:2:5: MV901" in devicelint(tmp_path, ".").stdout.decode()


def test_ipython_syntax_keeps_the_rows() -> None:
    from devicelint.notebook import to_program

    program, cells = to_program(notebook(
        ("code", ["%%time\n", "anything at all (\n"]),
        ("raw", ["ignored\n"]),
        ("code", "%load_ext foo\nx, y = !ls\nobj??\nmsg = ('a %s'\n       % x)  # why?\n"),
        ("code", []),
        ("code", ["z = 1"]),
    ).encode())
    assert program.decode().splitlines() == [
        "pass  # cell magic", "",
        "pass  # magic", "x, y = None  # magic", "pass  # magic", "msg = ('a %s'", "       % x)  # why?",
        "z = 1"]
    assert cells.cells == ((1, 1, 2), (3, 3, 5), (4, 8, 0), (5, 8, 1))
    assert cells.locate(4) == (3, 2) and cells.locate(8) == (5, 1)


def test_shell_and_magic_lines_continued_with_a_backslash_are_one_line_of_ipython() -> None:
    """``! python train.py \\`` followed by indented option lines (as notebooks of diffusers and peft write them)
    is one shell command: its continuation lines are not Python."""
    from devicelint.notebook import to_program

    program, _cells = to_program(notebook(
        ("code", "!accelerate launch train.py \\\n    --lr 1e-4 \\\n    --epochs 2\nx = 1 + \\\n    2\n"),
        ("code", "files = !ls \\\n   -la\n%env A=1 \\\n  B=2\n"),
    ).encode())
    assert program.decode().splitlines() == [
        "pass  # magic", "", "", "x = 1 + \\", "    2",
        "files = None  # magic", "", "pass  # magic", ""]


def test_ipython_syntax_indented_in_a_block_is_ipython_where_a_statement_starts() -> None:
    """IPython reads ``%``/``!``/``obj?`` at the start of any logical line, indented too (a tutorial's
    ``if logger == "Comet":`` then ``  %pip install comet_ml``); inside brackets, a string or after a
    backslash the same characters are Python and stay."""
    from devicelint.notebook import to_program

    program, _cells = to_program(notebook(
        ("code", "logger = 'Comet'\nif logger == 'Comet':\n  %pip install -q comet_ml \\\n     clearml\n"
                 "  import os\nelse:\n    files = !ls\n    !echo done\n    os?\n"),
        ("code", "msg = ('a %s'\n% 3)\ndoc = '''\n!not a shell line\n%s'''\nx = 1 + \\\n  2\n"
                 "y = [1,  # a ( in a comment\n]\n!echo 'it is one cell'\n"),
    ).encode())
    assert program.decode().splitlines() == [
        "logger = 'Comet'", "if logger == 'Comet':", "  pass  # magic", "", "  import os", "else:",
        "    files = None  # magic", "    pass  # magic", "    pass  # magic",
        "msg = ('a %s'", "% 3)", "doc = '''", "!not a shell line", "%s'''", "x = 1 + \\", "  2",
        "y = [1,  # a ( in a comment", "]", "pass  # magic"]
    compile(program, "nb.py", "exec")  # the blocks keep their shape


def test_a_notebook_with_magics_in_blocks_is_analysed(tmp_path: Path) -> None:
    """The notebook is not unparsable: the finding after the magic is reported where it is."""
    (tmp_path / "nb.ipynb").write_text(notebook(
        ("code", ["from runtime_shim import Device, Tensor\n", "if True:\n", "    %pip install numpy\n"]),
        ("code", ["weights = Tensor.random([2], Device.flex().autodiff())\n",
                  "weights.to_device(Device.ndarray())\n"]),
    ), encoding="utf-8")
    out = devicelint(tmp_path, "nb.ipynb").stdout.decode()
    assert "MV901" not in out and "nb.ipynb:cell 2:2:1: MV102" in out
