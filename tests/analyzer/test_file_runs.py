"""``devicelint check FILE...``: a file is analysed with its project, and gets the findings ``check .`` gives it.

Each project below is copied into a temporary directory with a ``pyproject.toml`` (a user's repository), so
that its root is found by the marker, as ruff and pyright find it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint import projects
from devicelint.cli import main
from devicelint.config import discover
from devicelint.discovery import DiscoveryOptions
from devicelint.runner import check
from devicelint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
TORCH_PROJECT = REPO / "tests" / "data" / "torch_project"
# the fixture directories that are programs of several modules (a package, or a directory run with -m)
PACKAGES = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name != "torch"
                  and ((p / "__init__.py").exists() or (p / "__main__.py").exists()))

CONFIG = 'import torch\n\nDEVICE = torch.device("cuda")\n'
DATA = "import torch\n\n\ndef batch():\n    return torch.randn(4, 3), torch.randint(0, 2, (4,))\n"
TRAIN_BUGGY = """\
import torch

from .config import DEVICE
from .data import batch

weights = torch.randn(3, 2, device=DEVICE)
features, labels = batch()
scores = features @ weights
"""
TRAIN_FIXED = TRAIN_BUGGY.replace("features @ weights", "features.to(DEVICE) @ weights")


def _json(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, list[dict]]:
    capsys.readouterr()
    code = main(["check", "--no-cache", "--output-format", "json", *argv])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return code, json.loads(out)


def _copy_project(source: Path, target: Path) -> Path:
    """``source`` as a project of its own under ``target`` (a package inside it, or a whole project)."""
    if (source / "pyproject.toml").exists():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copytree(source, target / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        (target / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n", encoding="utf-8")
    return target


def _write_package(root: Path, train: str = TRAIN_BUGGY, marker: str | None = "pyproject.toml") -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    if marker is not None:
        (root / marker).write_text("[project]\nname = 'p'\nversion = '0'\n" if marker.endswith(".toml") else "",
                                   encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "config.py").write_text(CONFIG, encoding="utf-8")
    (pkg / "data.py").write_text(DATA, encoding="utf-8")
    (pkg / "train.py").write_text(train, encoding="utf-8")
    return pkg / "train.py"


@pytest.mark.parametrize("source", [*PACKAGES, TORCH_PROJECT], ids=lambda p: p.name)
def test_a_file_alone_gets_the_findings_check_dot_gives_it(source: Path, tmp_path: Path, capsys,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    project = _copy_project(source, tmp_path / "project")
    monkeypatch.chdir(project)
    _code, whole = _json(capsys, ".")
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*.py"))
    assert len(files) >= 2
    for name in files:
        _code, alone = _json(capsys, name)
        assert alone == [d for d in whole if d["filename"] == name], name
    if source == TORCH_PROJECT:  # the bug in train.py is caused by data.py's batches and config.py's device
        train = [d for d in whole if d["filename"] == os.path.join("classifier", "train.py") and d["code"]]
        assert [(d["code"], d["location"]["row"]) for d in train] == [("MV201", 30)], whole
        assert any("data.py" in r["filename"] for r in train[0]["related"])


def test_the_packages_have_findings_caused_in_other_modules() -> None:
    """Not vacuous: some fixture package has a finding whose message names another module of it."""
    report = check([str(p) for p in PACKAGES])
    crossing = [d for d in report.findings
                if any(f"{m.stem}.py:" in d.message for m in Path(d.file).parent.glob("*.py")
                       if m.name != Path(d.file).name)]
    assert crossing, [d.message for d in report.findings]


def test_a_file_run_reads_what_check_dot_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _copy_project(TORCH_PROJECT, tmp_path / "project")
    monkeypatch.chdir(project)
    settings = Settings(cache_dir=str(tmp_path / "cache")).validate()
    whole = check(["."], settings)
    assert whole.cache_misses > 0
    train = os.path.join("classifier", "train.py")
    run = projects.file_run(projects.Project(projects.find_root(train), settings, relative=True), [train])
    assert (run.report.cache_misses, run.report.cache_hits) == (0, 1)
    assert run.report.diagnostics == [d for d in whole.diagnostics if d.file == train]
    assert [d.code for d in run.report.findings] == ["MV201"]


def test_a_pre_commit_run_blocks_a_bug_caused_in_a_committed_module(tmp_path: Path) -> None:
    """What the hook runs (its entry, the staged file's name): the other modules are read from the project."""
    train = _write_package(tmp_path / "project", marker=".git")
    entry = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").split("entry: devicelint ")[1].split()[0:2]
    env = {**os.environ, "DEVICELINT_CACHE_DIR": str(tmp_path / "cache")}
    blocked = subprocess.run([sys.executable, "-m", "devicelint", *entry, "pkg/train.py"], cwd=train.parents[1],
                             capture_output=True, text=True, env=env)
    assert blocked.returncode == 1 and "pkg/train.py:8:10: MV201" in blocked.stdout, blocked.stdout + blocked.stderr
    train.write_text(TRAIN_FIXED, encoding="utf-8")
    passed = subprocess.run([sys.executable, "-m", "devicelint", *entry, "pkg/train.py"], cwd=train.parents[1],
                            capture_output=True, text=True, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_stdin_replaces_the_named_file_in_its_project(tmp_path: Path, capsys,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    train = _write_package(tmp_path / "project", train=TRAIN_FIXED)
    monkeypatch.chdir(train.parents[1])
    monkeypatch.setattr(sys, "stdin", _Stdin(TRAIN_BUGGY))
    code, found = _json(capsys, "--stdin-filename", "pkg/train.py", "-")
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("pkg/train.py", "MV201")]
    train.write_text(TRAIN_BUGGY, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", _Stdin(TRAIN_FIXED))
    assert _json(capsys, "--stdin-filename", "pkg/train.py", "-") == (0, [])
    monkeypatch.setattr(sys, "stdin", _Stdin(TRAIN_BUGGY))  # a new file, not on disk yet
    code, found = _json(capsys, "--stdin-filename", "pkg/train_new.py", "-")
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("pkg/train_new.py", "MV201")]


class _Stdin:
    def __init__(self, text: str) -> None:
        import io

        self.buffer = io.BytesIO(text.encode("utf-8"))


def test_files_of_several_projects_each_with_its_own(tmp_path: Path, capsys, monkeypatch) -> None:
    first = _write_package(tmp_path / "first")
    second = _write_package(tmp_path / "second", marker="setup.cfg")
    (second.parent / "config.py").write_text(CONFIG.replace('"cuda"', '"cpu"'), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, found = _json(capsys, str(first.relative_to(tmp_path)), str(second.relative_to(tmp_path)))
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("first/pkg/train.py", "MV201")]


def test_a_file_outside_any_project_is_analyzed_with_its_package(tmp_path: Path, capsys, monkeypatch) -> None:
    if projects.marker_root(str(tmp_path)) is not None:
        pytest.skip("the temporary directory is inside a project on this machine")
    train = _write_package(tmp_path / "loose", marker=None)
    (tmp_path / "loose" / "notes.py").write_text("import torch\nx = (\n", encoding="utf-8")  # a broken neighbour
    assert projects.find_root(str(train)) == projects.Root(str(tmp_path / "loose"), recursive=False)
    monkeypatch.chdir(tmp_path)
    code, found = _json(capsys, "loose/pkg/train.py")
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("loose/pkg/train.py", "MV201")]


def test_configured_roots_are_projects_of_their_own(tmp_path: Path, capsys, monkeypatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.devicelint]\nroots = ["apps/*"]\n', encoding="utf-8")
    gpu = _write_package(tmp_path / "apps" / "gpu", marker=None)
    cpu = _write_package(tmp_path / "apps" / "cpu", marker=None)  # the same module names, on the CPU
    (cpu.parent / "config.py").write_text(CONFIG.replace('"cuda"', '"cpu"'), encoding="utf-8")
    options = DiscoveryOptions(roots=discover(str(gpu)).roots())
    assert projects.find_root(str(gpu), options.roots).directory == str(tmp_path / "apps" / "gpu")
    monkeypatch.chdir(tmp_path)
    code, found = _json(capsys, "apps/cpu/pkg/train.py", "apps/gpu/pkg/train.py")
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("apps/gpu/pkg/train.py", "MV201")]


def test_this_repository_analyzes_each_fixture_as_its_own_program() -> None:
    roots = discover(str(FIXTURES / "trainkit" / "model.py")).roots()
    assert projects.find_root(str(FIXTURES / "trainkit" / "model.py"), roots).directory == str(FIXTURES / "trainkit")
    loose = projects.find_root(str(FIXTURES / "export_checkpoint.py"), roots)
    assert loose.directory == str(FIXTURES) and str(FIXTURES / "trainkit") in loose.nested


def test_excludes_apply_to_named_files_with_force_exclude_and_to_context(tmp_path: Path, capsys,
                                                                         monkeypatch) -> None:
    train = _write_package(tmp_path / "project")
    # an excluded copy of the package (a build output) is no context: it would shadow the real modules
    shutil.copytree(train.parent, tmp_path / "project" / "build" / "lib" / "pkg")
    (tmp_path / "project" / "build" / "lib" / "pkg" / "config.py").write_text(CONFIG.replace('"cuda"', '"cpu"'))
    monkeypatch.chdir(tmp_path / "project")
    code, found = _json(capsys, "pkg/train.py")
    assert code == 1 and [(d["filename"], d["code"]) for d in found] == [("pkg/train.py", "MV201")]
    assert _json(capsys, "--force-exclude", "build/lib/pkg/train.py") == (0, [])
