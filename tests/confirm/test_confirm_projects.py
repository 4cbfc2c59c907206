"""``devicelint confirm`` on a project, as its user runs it.

* its entry points (``[project.scripts]``, ``__main__`` packages, files with a ``__main__`` guard) are
  found and listed, but only the entries named in ``[tool.devicelint.confirm]`` or with ``--entry`` run,
  with their arguments; a project with none named is a one-line usage error that lists them;
* the project root is on ``sys.path`` (a script in ``scripts/`` imports the package without PYTHONPATH);
* a crashed program shows the tail of its stderr; a missing C++ compiler for the fake CUDA guard is
  one line saying what to install.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from devicelint.cli import main  # noqa: E402

PROJECT = {
    "pyproject.toml": """\
        [project]
        name = "trainer"
        version = "0"

        [project.scripts]
        trainer-cli = "trainer.cli:main"
        """,
    "trainer/__init__.py": "",
    "trainer/model.py": """\
        import torch


        def make(device):
            return torch.nn.Linear(3, 2).to(device)
        """,
    "trainer/train.py": """\
        import argparse
        from pathlib import Path

        import torch

        from trainer.model import make


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--steps", type=int, required=True)
            parser.add_argument("--out", required=True)
            args = parser.parse_args()
            model = make("cuda")
            for _ in range(args.steps):
                model(torch.ones(4, 3, device="cuda")).sum().backward()
            Path(args.out).write_text(f"steps={args.steps}")


        if __name__ == "__main__":
            main()
        """,
    "trainer/cli.py": """\
        import sys
        from pathlib import Path

        import torch


        def main():
            Path(sys.argv[-1]).write_text(" ".join(sys.argv[1:]) + " " + str(torch.zeros(1).device))
            return 0
        """,
    "trainer/__main__.py": """\
        from pathlib import Path

        import torch

        Path("package_main_ran").write_text(str(torch.zeros(1)))
        """,
    "scripts/evaluate.py": """\
        import sys
        from pathlib import Path

        import torch

        from trainer.model import make

        if __name__ == "__main__":
            Path(sys.argv[1]).write_text(str(make("cpu")(torch.ones(1, 3)).shape))
        """,
    "scripts/crash.py": """\
        import torch

        if __name__ == "__main__":
            print("about to fail", file=__import__("sys").stderr)
            raise RuntimeError("the checkpoint is missing: " + str(torch.ones(1).device))
        """,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _confirm(root: Path, *args: str) -> tuple[int, dict]:
    out = (root if root.is_dir() else root.parent) / "confirm.json"
    status = main(["confirm", "--no-cache", "--timeout", "120", "--output-format", "json", "-o", str(out),
                   str(root), *args])
    return status, json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    _write(root, PROJECT)
    work = tmp_path / "work"  # run from elsewhere: nothing may import through the working directory
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return root


def test_configured_entries_run_with_arguments_and_the_others_are_only_listed(project: Path) -> None:
    out = project / "trained.txt"
    with open(project / "pyproject.toml", "a", encoding="utf-8") as handle:
        handle.write(f'\n[tool.devicelint.confirm]\nentries = ["trainer.train --steps 2 --out {out}"]\n')
    status, report = _confirm(project)
    assert status == 0, report
    assert [p["program"] for p in report["programs"]] == [f"trainer.train --steps 2 --out {out}"]
    assert report["programs"][0]["args"] == ["--steps", "2", "--out", str(out)]
    assert report["programs"][0]["command"] == f"python -m trainer.train --steps 2 --out {out}"
    assert report["programs"][0]["status"] == "ok"
    assert out.read_text(encoding="utf-8") == "steps=2"
    # found, never run: scripts have side effects
    assert report["not_run"] == ["trainer-cli", "scripts/crash.py", "scripts/evaluate.py", "trainer"]
    assert not (Path.cwd() / "package_main_ran").exists()


def test_command_line_entries_run_a_console_script_and_a_script_importing_the_package(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli_out, eval_out = project / "cli.txt", project / "eval.txt"
    status = main(["confirm", "--no-cache", "--timeout", "120", str(project),
                   "--entry", f"trainer-cli --fast '{cli_out}'",
                   "--entry", f"{project / 'scripts' / 'evaluate.py'} {eval_out}"])
    text = capsys.readouterr().out
    assert status == 0, text
    assert cli_out.read_text(encoding="utf-8") == f"--fast {cli_out} cpu"
    assert eval_out.read_text(encoding="utf-8") == "torch.Size([1, 2])"  # `import trainer` worked
    assert "not run: name them in entries: scripts/crash.py, trainer, trainer.train" in text


def test_a_crashed_program_shows_the_tail_of_its_stderr(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["confirm", "--no-cache", "--timeout", "120", str(project), "--entry", "scripts/crash.py"])
    assert status == 2
    # --entry paths start at the working directory: this one is not there
    assert "no such script, file or directory" in capsys.readouterr().err
    status = main(["confirm", "--no-cache", "--timeout", "120", str(project),
                   "--entry", str(project / "scripts" / "crash.py")])
    text = capsys.readouterr().out
    assert status == 1
    lines = text.splitlines()
    crashed = next(i for i, line in enumerate(lines) if ": crashed: RuntimeError: the checkpoint is missing" in line)
    tail = lines[crashed + 1:crashed + 8]
    assert "    | about to fail" in tail
    assert "    | RuntimeError: the checkpoint is missing: cpu" in tail
    assert any(line.startswith("    | Traceback") for line in tail)


def test_a_project_without_named_entries_is_a_usage_error_listing_them(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["confirm", "--no-cache", str(project)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "name them in [tool.devicelint.confirm] entries or with --entry" in err
    assert "entry points: trainer-cli, scripts/crash.py, scripts/evaluate.py, trainer, trainer.train" in err
    assert not (Path.cwd() / "package_main_ran").exists()


@pytest.mark.parametrize("table, message", [
    ('entries = "trainer.train"', "`confirm.entries` must be a list of non-empty strings"),
    ('entries = ["trainer.train"]\nrun-all = true', "unknown key `run-all` in [tool.devicelint.confirm]"),
])
def test_a_bad_confirm_table_is_a_one_line_error(project: Path, capsys: pytest.CaptureFixture[str],
                                                 table: str, message: str) -> None:
    with open(project / "pyproject.toml", "a", encoding="utf-8") as handle:
        handle.write(f"\n[tool.devicelint.confirm]\n{table}\n")
    assert main(["confirm", "--no-cache", str(project)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_fixture_directories_still_run_every_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pyproject.toml: a directory of programs runs them all, as before."""
    _write(tmp_path / "progs", {"a.py": "import torch\nprint(torch.ones(1))\n",
                                "b.py": "import torch\nprint(torch.zeros(1))\n"})
    monkeypatch.chdir(tmp_path)
    status, report = _confirm(tmp_path / "progs")
    assert status == 0
    assert sorted(p["program"] for p in report["programs"]) == ["progs/a.py", "progs/b.py"]
    assert report["not_run"] == []


def test_a_missing_compiler_for_the_fake_cuda_guard_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from runtime_shim.torch_observer import guard_ext

    if not guard_ext.needed():
        pytest.skip("a CUDA build of torch has its own guard")
    _write(tmp_path, {"uses_cuda.py": "import torch\nprint(torch.ones(1, device='cuda'))\n"})
    monkeypatch.setenv("RUNTIME_SHIM_TORCH_EXT_DIR", str(tmp_path / "empty_cache"))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.chdir(tmp_path)
    assert main(["confirm", "--no-cache", "--timeout", "120", "--no-preload", "uses_cuda.py"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("devicelint: error: cannot run PyTorch programs with fake CUDA: no C++ compiler")
    assert "install a C++ compiler (Debian: apt-get install g++) or set CXX" in err


def test_an_entrys_command_line_shows_its_arguments_once(project: Path) -> None:
    from devicelint.confirm.entries import load_project, resolve

    loaded = load_project(str(project))
    files = [str(p) for p in project.rglob("*.py")]
    script = resolve("trainer-cli --fast 'a b'", files, str(project), loaded.import_roots, loaded.scripts)
    assert (script.kind, script.target, script.args) == ("call", "trainer.cli:main", ["--fast", "a b"])
    assert script.command() == "trainer-cli --fast 'a b'"
    path = resolve("scripts/evaluate.py out.txt", files, str(project), loaded.import_roots, loaded.scripts)
    assert path.command().endswith("scripts/evaluate.py out.txt") and path.args == ["out.txt"]
    module = resolve("trainer.train --steps 1", files, str(project), loaded.import_roots, loaded.scripts)
    assert module.command() == "python -m trainer.train --steps 1"
    assert str(project / "trainer" / "model.py") in module.files  # its package: judged as the program's own


def test_reveal_device_on_torch_values_is_judged_against_the_analysis(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, {"reveals.py": """\
        import torch

        from devicelint import reveal_device

        x = torch.ones(2, device="cuda", requires_grad=True)
        y = x * 2
        reveal_device(x)
        reveal_device(y)
        reveal_device(y.detach().to("cpu"))
        reveal_device(torch.nn.Linear(2, 2).to("cuda:1"))
        """})
    monkeypatch.chdir(tmp_path)
    status, report = _confirm(tmp_path / "reveals.py")
    verdicts = sorted((s["location"]["row"], v["kind"]) for s in report["sites"] for v in s["verdicts"])
    assert verdicts == [(7, "agree"), (8, "agree"), (9, "agree"), (10, "agree")], report["sites"]
    assert [s["runtime"]["reveals"] for s in sorted(report["sites"], key=lambda s: s["location"]["row"])] == [
        ["cuda:0 tensor, requires grad (leaf)"], ["cuda:0 tensor, requires grad (non-leaf)"], ["cpu tensor"],
        ["nn.Linear on cuda:1"]]
    assert status == 0
