"""The command line: exit codes, output formats, suppressions, stdin, errors without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint import __version__
from devicelint.cli import main
from devicelint.rules import all_rules

REPO = Path(__file__).resolve().parents[2]

FAILING = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
weights.to_device(Device.ndarray())
"""

CLEAN = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
weights.inner().to_device(Device.ndarray())
"""


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI caches by default: keep the cache out of the working tree."""
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    failing = write(tmp_path, "failing.py", FAILING)
    clean = write(tmp_path, "clean.py", CLEAN)
    assert run(capsys, "check", str(clean))[0] == 0
    code, out, _err = run(capsys, "check", str(failing))
    assert code == 1
    assert "failing.py:4:1: MV102 [error]" in out
    assert "Found 1 finding" in out
    assert run(capsys, "check", "--exit-zero", str(failing))[0] == 0


def test_usage_errors_exit_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for argv in (("check", str(tmp_path / "missing.py")), ("check", "--profile", "burn-1999", str(tmp_path)),
                 ("check", "--select", "E501", str(tmp_path)), ("check", "--backends", "Tpu", str(tmp_path)),
                 ("check", "--target-device", "gpu", str(tmp_path)),
                 ("explain", "MV999"), ("frobnicate",), ()):
        code, _out, err = run(capsys, *argv)
        assert code == 2, argv
        assert "Traceback" not in err


def test_missing_path_from_a_real_process(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", str(tmp_path / "nope")], capture_output=True,
                          text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "No such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_project_module_named_like_the_standard_library_does_not_shadow_it(tmp_path: Path) -> None:
    """``python -m devicelint`` run inside a package that has its own ``typing.py`` (torch_geometric has one)
    analyses it instead of importing it."""
    (tmp_path / "typing.py").write_text("raise ImportError('the project\'s typing.py was imported')\n")
    (tmp_path / "train.py").write_text("import torch\n\nx = torch.ones(3, device='cuda') + torch.ones(3)\n")
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", ".", "--no-cache", "--isolated",
                           "--target-device", "cuda"], capture_output=True, text=True, cwd=tmp_path)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert "train.py:3" in proc.stdout and "MV201" in proc.stdout


def test_a_real_process_delivers_all_its_output_before_exiting(tmp_path: Path) -> None:
    """``python -m devicelint check`` ends without the interpreter's teardown: what it wrote must still arrive
    whole, through a pipe far larger than the pipe's buffer and into ``-o``, with the exit status."""
    moves = "".join(f"\n\ndef move_{i}():\n    t = Tensor.random([2], Device.flex().autodiff())\n"
                    "    return t.to_device(Device.ndarray())\n" for i in range(600))  # a failure each
    write(tmp_path, "many.py", "from runtime_shim import Device, Tensor\n" + moves)
    command = [sys.executable, "-m", "devicelint", "check", str(tmp_path), "--no-cache", "--output-format", "json"]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stdout) > 1 << 17 and len(json.loads(proc.stdout)) == 600
    output = tmp_path / "out" / "report.json"
    proc = subprocess.run([*command, "-o", str(output)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(json.loads(output.read_text(encoding="utf-8"))) == 600


def test_the_script_keeps_the_report_for_the_exit_and_the_library_call_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """The script ends the process right after a check: the report (the files' trees) is not freed first."""
    import gc

    import devicelint.cli as cli
    from devicelint.runner import Report

    write(tmp_path, "ok.py", "x = 1\n")
    monkeypatch.setattr(cli, "_RETAINED", None)
    assert main(["check", str(tmp_path), "--no-cache"]) == 0 and cli._RETAINED is None

    def exit_(status: int) -> None:
        raise SystemExit(status)

    monkeypatch.setattr(cli.os, "_exit", exit_)
    monkeypatch.setattr(sys, "argv", ["devicelint", "check", str(tmp_path), "--no-cache"])
    try:
        with pytest.raises(SystemExit) as ended:
            cli.console()
        assert not gc.isenabled()  # the retained trees are never walked by a collection
    finally:
        gc.enable()
    assert ended.value.code == 0
    assert [type(kept) for kept in cli._RETAINED] == [Report]
    assert "All checks passed" in capsys.readouterr().out


def test_json_output_shape(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    failing = write(tmp_path, "failing.py", FAILING)
    code, out, _err = run(capsys, "check", "--output-format", "json", str(failing))
    assert code == 1
    [item] = json.loads(out)
    assert set(item) == {"code", "name", "message", "severity", "filename", "location", "end_location", "fix",
                         "url", "related"}
    assert item["code"] == "MV102" and item["severity"] == "error" and item["name"] == "autodiff-mismatch-move"
    assert item["location"] == {"row": 4, "column": 1}
    assert item["end_location"] == {"row": 4, "column": 36}
    assert item["message"].startswith("Cannot move between autodiff and non-autodiff instances.")
    assert "Autodiff { device: Flex, checkpointing: Disabled } float untracked" in item["message"]
    rows = sorted(r["location"]["row"] for r in item["related"])
    assert rows == [3, 4]  # where the tensor was created, and the target device
    assert item["fix"]["applicability"] == "safe" and item["fix"]["edits"][0]["content"] == ".inner()"


def test_full_output_shows_source_and_related(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    failing = write(tmp_path, "failing.py", FAILING)
    _code, out, _err = run(capsys, "check", "--output-format", "full", str(failing))
    assert "weights.to_device(Device.ndarray())" in out
    assert "^" * 35 in out
    assert "= related:" in out


def test_columns_count_characters(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = FAILING.replace("weights.to_device", "résumé = 1; weights.to_device")
    path = write(tmp_path, "accents.py", text)
    _code, out, _err = run(capsys, "check", "--output-format", "json", str(path))
    [item] = json.loads(out)
    assert item["location"]["column"] == len("résumé = 1; ") + 1


def test_noqa(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lines = FAILING.splitlines()
    variants = {
        "coded": lines[:3] + [lines[3] + "  # noqa: MV102"],
        "bare": lines[:3] + [lines[3] + "  # noqa"],
        "several": lines[:3] + [lines[3] + "  # noqa: MV102, E501"],
        "file": ["# devicelint: noqa", *lines],
    }
    for name, body in variants.items():
        path = write(tmp_path, f"{name}.py", "\n".join(body) + "\n")
        assert run(capsys, "check", str(path))[0] == 0, name
    # a code that suppresses nothing there: MV902 (unused-noqa) names it, at the comment
    mixed = write(tmp_path, "mixed.py", "\n".join(lines[:3] + [lines[3] + "  # noqa: MV105, MV102"]) + "\n")
    code, out, _err = run(capsys, "check", str(mixed))
    assert code == 1
    assert "mixed.py:4:38: MV902 [warning] Unused `noqa` directive (unused: `MV105`)" in out
    assert "MV102 [error]" not in out
    other = write(tmp_path, "other.py", "\n".join(lines[:3] + [lines[3] + "  # noqa: MV105"]) + "\n")
    assert run(capsys, "check", str(other))[0] == 1
    in_string = write(tmp_path, "string.py", "\n".join(lines[:3] + [lines[3] + "; x = '# noqa'"]) + "\n")
    assert run(capsys, "check", str(in_string))[0] == 1


def test_select_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    failing = write(tmp_path, "failing.py", FAILING)
    assert run(capsys, "check", "--select", "MV105", str(failing))[0] == 0
    assert run(capsys, "check", "--select", "MV1", str(failing))[0] == 1
    assert run(capsys, "check", "--ignore", "MV102", str(failing))[0] == 0
    assert run(capsys, "check", "--select", "MV1", "--ignore", "MV10", str(failing))[0] == 0
    assert run(capsys, "check", "--ignore", "MV1", "--select", "MV102", str(failing))[0] == 1


def test_profile_flag(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "move.py", "from runtime_shim import Device, Tensor\n"
                                      "Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())\n")
    code, out, _err = run(capsys, "check", str(path))
    assert code == 1 and "MV150 [warning]" in out
    code, out, _err = run(capsys, "check", "--profile", "burn-0.21", str(path))
    assert code == 1 and "MV102 [error]" in out and "MV150" not in out


def test_profile_burn_next_lifts_mv101_and_keeps_the_tape(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "move.py", "from runtime_shim import Device, Tensor, reveal_device\n"
                                      "w = Tensor.ones([2], Device.flex().autodiff()).require_grad()\n"
                                      "m = w.to_device(Device.cuda(0).autodiff())\n"
                                      "reveal_device(m)\n"
                                      "m.require_grad()\n")
    code, out, _err = run(capsys, "check", str(path))
    assert code == 1 and "MV101 [error]" in out
    code, out, _err = run(capsys, "check", "--profile", "burn-next", str(path))
    assert code == 1 and "MV101" not in out and "MV111 [error]" in out  # a non-leaf of w's graph
    assert "Autodiff { device: Cuda(0), checkpointing: Disabled } float non-leaf" in out


def test_default_profile_is_the_pinned_commit_and_its_old_name_is_accepted(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """An autodiff and a plain float merge at d16f7ba2ed (the default) and fail at 2c06be35."""
    path = write(tmp_path, "mix.py", "from runtime_shim import Device, Tensor\n"
                                     "w = Tensor.ones([2], Device.flex().autodiff()).require_grad()\n"
                                     "w * Tensor.ones([2], Device.flex())\n")
    assert run(capsys, "check", str(path))[0] == 0
    assert run(capsys, "check", "--profile", "burn-2026-09", str(path))[0] == 0
    code, out, _err = run(capsys, "check", "--profile", "burn-2026-08", str(path))
    assert code == 1 and "MV106 [error]" in out


def test_backends_flag(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "gpu.py", "from runtime_shim import Device\nDevice.wgpu()\n")
    assert run(capsys, "check", str(path))[0] == 0
    code, out, _err = run(capsys, "check", "--backends", "flex,NdArray", str(path))
    assert code == 1 and "MV112 [error]" in out


def test_target_device_flag_is_validated_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "train.py", "import torch\n")
    code, _out, err = run(capsys, "check", "--target-device", "GPU", str(path))
    assert code == 2 and "Traceback" not in err
    assert "`target-device` must be one of auto, cuda, cpu, not 'GPU'" in err
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, "check", "--no-cache", "--target-device", "cpu", str(path))[0] == 0


def test_the_cache_keeps_each_target_device_apart(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "train.py", 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'
                                       "model = torch.nn.Linear(4, 2).to(device)\nmodel(torch.randn(3, 4))\n")
    cache = str(tmp_path / "cache")
    for target, expected in (("cuda", "[error]"), ("cpu", None), ("auto", "[warning]"), ("cuda", "[error]")):
        code, out, _err = run(capsys, "check", "--cache-dir", cache, "--output-format", "concise",
                              "--target-device", target, str(path))
        assert (code, expected is None or expected in out) == ((0, True) if expected is None else (1, True)), out


def test_unparsable_and_undecodable_files_are_mv901(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken = write(tmp_path, "broken.py", "import runtime_shim\ndef f(:\n    pass\n")
    code, out, err = run(capsys, "check", "--output-format", "json", str(broken))
    assert code == 1 and "Traceback" not in err
    [item] = json.loads(out)
    assert item["code"] == "MV901" and item["location"]["row"] == 2
    undecodable = write(tmp_path, "latin.py", b"# -*- coding: utf-8 -*-\nimport runtime_shim\nx = '\xe9'\n")
    code, out, _err = run(capsys, "check", "--output-format", "json", str(undecodable))
    [item] = json.loads(out)
    assert code == 1 and item["code"] == "MV901" and item["location"]["row"] == 3
    bogus = write(tmp_path, "bogus.py", b"# -*- coding: no-such-codec -*-\nimport runtime_shim\n")
    [item] = json.loads(run(capsys, "check", "--output-format", "json", str(bogus))[1])
    assert item["code"] == "MV901"
    irrelevant = write(tmp_path / "other", "broken.py", "def f(:\n")
    assert run(capsys, "check", str(irrelevant))[0] == 0  # never mentions runtime_shim: not even parsed


def test_pep263_declared_encoding(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = "# -*- coding: latin-1 -*-\n" + FAILING.replace("weights =", "caf\xe9 = 1\nweights =")
    path = write(tmp_path, "latin1.py", text.encode("latin-1"))
    code, out, _err = run(capsys, "check", "--output-format", "json", str(path))
    [item] = json.loads(out)
    assert code == 1 and item["code"] == "MV102" and item["location"]["row"] == 6


def test_stdin(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "-", "--stdin-filename", "train.py"],
                          input=FAILING, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 1
    assert proc.stdout.startswith("train.py:4:1: MV102 [error]")
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "-"], input=CLEAN, capture_output=True,
                          text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr


def test_quiet_and_directories(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkg/a.py", FAILING)
    write(tmp_path, "pkg/b.py", CLEAN)
    code, out, _err = run(capsys, "check", "-q", str(tmp_path))
    assert code == 1
    assert out.count("\n") == 1 and "Found" not in out


def test_rules_explain_version(capsys: pytest.CaptureFixture) -> None:
    code, out, _err = run(capsys, "rules")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [rule.code for rule in all_rules()]
    code, out, _err = run(capsys, "explain", "mv106")
    assert code == 0 and "## Example" in out and "backend-mismatch" in out
    code, out, _err = run(capsys, "--version")
    assert code == 0 and out.strip() == f"devicelint {__version__}"


def test_reveal_notes_do_not_count_as_findings(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "reveal.py", "from runtime_shim import Device, reveal_device\n"
                                        "reveal_device(Device.flex().autodiff())\n")
    code, out, _err = run(capsys, "check", str(path))
    assert code == 0
    assert "note: reveal_device: Autodiff { device: Flex, checkpointing: Disabled }" in out


def test_analyzer_never_imports_torch(tmp_path: Path) -> None:
    path = write(tmp_path, "failing.py", FAILING)
    script = ("import sys\nfrom devicelint.cli import main\ncode = main(['check', '-q', sys.argv[1]])\n"
              "assert 'torch' not in sys.modules, 'torch was imported'\nprint('exit', code)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("exit 1")


def test_show_files_and_no_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkg/a.py", FAILING)
    write(tmp_path, "pkg/notes.txt", "not python")
    write(tmp_path, ".venv/lib/b.py", FAILING)
    code, out, _err = run(capsys, "check", "--show-files", str(tmp_path))
    assert code == 0 and out.splitlines() == [str(tmp_path / "pkg" / "a.py")]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "check", str(empty))
    assert code == 0 and "No Python files found" in err and out == "All checks passed!\n"


def test_flag_values_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "failing.py", FAILING)
    for argv in (("--output-format", "xml"), ("--per-file-ignores", "*.py"), ("--extend-select", "X1"),
                 ("--ignore", "MV999"), ("--config", "not toml ["), ("--stdin-filename", "x.py", str(path))):
        code, out, err = run(capsys, "check", *argv, str(path))
        assert code == 2, argv
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, argv


def test_analyze_all_parses_the_files_the_relevance_skip_leaves_out(tmp_path: Path, capsys) -> None:
    broken = write(tmp_path, "unrelated.py", "def f(:\n    pass\n")  # never mentions runtime_shim
    assert run(capsys, "check", "--no-cache", str(broken))[0] == 0
    status, out, _err = run(capsys, "check", "--no-cache", "--analyze-all", str(broken))
    assert status == 1 and "MV901" in out


def test_a_named_target_device_checks_the_default_command_line_there(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    # ``--device`` picks the model's device; the batch is made on the CPU: on a CUDA machine with the default
    # command line it fails, an error naming both devices; ``--device cpu`` is not that machine's run
    path = write(tmp_path, "train.py", """import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
device = "cpu" if args.cpu else args.device
model = nn.Linear(4, 2).to(device)
print(model(torch.ones(3, 4)))
""")
    code, out, _err = run(capsys, "check", "--no-cache", "--output-format", "concise", "--target-device", "cuda",
                          str(path))
    assert code == 1 and "[error] `nn.Linear` mixes devices: input cpu tensor" in out and "command line" not in out
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\ntarget-device = "cuda"\n')
    assert run(capsys, "check", "--no-cache", "--output-format", "concise", str(path))[1] == out
    code, out, _err = run(capsys, "check", "--no-cache", "--output-format", "concise", "--target-device", "auto",
                          str(path))
    assert code == 1 and "[warning]" in out and "when the command line gives no options" in out
