"""The pre-commit hook for real: in a temporary git repository with devicelint's hook installed
(``.pre-commit-hooks.yaml``, a local ``repo:`` path), a commit with a failing move is blocked, the
hook with ``--fix`` fixes it, and the fixed file commits; a staged file whose failure is caused by a committed
module of its package is blocked too (the hook analyses each file with its project).

Slow (typically 10-60 s, network-bound): pre-commit builds the hook's virtual environment itself,
``pip install`` of devicelint from a snapshot of this checkout, which fetches numpy and libcst from
PyPI (CI has PyPI). That is the point: it shows the hook installs from the repository alone, without
torch. It runs in CI (``.ci/run`` runs every test). The pre-commit cache (PRE_COMMIT_HOME) stays in
tmp_path.

The hook repository is a snapshot commit of this checkout's files (tracked and untracked, not
ignored), so the test sees the working tree in development and a fresh clone in CI alike
(``pre-commit try-repo`` would take only tracked files' changes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.tools import find_tool, tool

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "analyzer/", "rules/", "runtime_shim/")

FAILING = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2, 2], Device.flex().autodiff())  # trained on Flex
exported = weights.to_device(Device.ndarray())
"""
FIXED = FAILING.replace("weights.to_device", "weights.inner().to_device")
# a package whose devices are named in one module and used in another: staging only the user fails
CONFIG = """\
from runtime_shim import Device

TRAIN_DEVICE = Device.flex().autodiff()  # weights are trained on Flex
EXPORT_DEVICE = Device.ndarray()
"""
EXPORT = """\
from runtime_shim import Tensor

from .config import EXPORT_DEVICE, TRAIN_DEVICE

weights = Tensor.random([2, 2], TRAIN_DEVICE)
exported = weights.to_device(EXPORT_DEVICE)
"""


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([tool("git"), *args], cwd=cwd, capture_output=True, text=True, check=check, env=_env(cwd))


def _env(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "RUNTIME_SHIM_"))}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               PRE_COMMIT_HOME=str(cwd.parent / "pre-commit-home"), DEVICELINT_CACHE_DIR=str(cwd.parent / "cache"))
    env.pop("PYTHONPATH", None)  # the hook must run devicelint from its own environment
    # HOME stays: pip reads the machine's index configuration there; git's own is ignored above
    return env


def _snapshot(target: Path) -> str:
    """This checkout's package files, committed in a new repository; the commit's id."""
    listed = subprocess.run([tool("git"), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in listed:
        if name and name.startswith(PACKAGE_FILES) and (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "snapshot")
    return _git(target, "rev-parse", "HEAD").stdout.strip()


def _config(rev: str, hook_repo: Path, args: list[str]) -> str:
    return (f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: devicelint\n"
            f"    args: {args!r}\n".replace("'", '"'))


def _commit(project: Path, message: str) -> subprocess.CompletedProcess:
    _git(project, "add", "-A")
    return subprocess.run([tool("git"), "commit", "-q", "-m", message], cwd=project, capture_output=True, text=True,
                          env=_env(project), timeout=900)


@pytest.mark.slow
def test_the_hook_blocks_a_failing_move_and_passes_the_fixed_file(tmp_path: Path) -> None:
    if find_tool("git") is None:
        pytest.fail("git is needed for pre-commit")
    hook_repo, project = tmp_path / "devicelint", tmp_path / "project"
    hook_repo.mkdir()
    project.mkdir()
    rev = _snapshot(hook_repo)

    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(_config(rev, hook_repo, []), encoding="utf-8")
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, capture_output=True,
                               text=True, env=_env(project))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (project / "README.txt").write_text("not python: the hook skips it\n", encoding="utf-8")
    first = _commit(project, "readme")
    assert first.returncode == 0, first.stdout + first.stderr

    (project / "export.py").write_text(FAILING, encoding="utf-8")
    blocked = _commit(project, "a failing move")
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0 and "export.py:4:12: MV102 [error] [*]" in output, output
    assert _git(project, "log", "--oneline").stdout.count("\n") == 1  # nothing was committed

    # the hook environment is devicelint without torch
    pythons = list((tmp_path / "pre-commit-home").glob("repo*/py_env-*/bin/python"))
    assert pythons, list((tmp_path / "pre-commit-home").iterdir())
    probe = subprocess.run([str(pythons[0]), "-c", "import importlib.util as u; print(u.find_spec('torch') is None, "
                            "u.find_spec('libcst') is not None)"], capture_output=True, text=True)
    assert probe.stdout.split() == ["True", "True"], probe.stderr

    # with --fix the hook fixes the file (and, as pre-commit does for any modifying hook, stops this commit)
    (project / ".pre-commit-config.yaml").write_text(_config(rev, hook_repo, ["--fix"]), encoding="utf-8")
    fixing = _commit(project, "fix on commit")
    assert fixing.returncode != 0 and "files were modified by this hook" in fixing.stdout + fixing.stderr
    assert (project / "export.py").read_text(encoding="utf-8") == FIXED

    passed = _commit(project, "the fixed move")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert _git(project, "show", "HEAD:export.py").stdout == FIXED

    # only pkg/export.py is staged; the devices it moves between come from the committed pkg/config.py
    (project / ".pre-commit-config.yaml").write_text(_config(rev, hook_repo, []), encoding="utf-8")
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "pkg" / "config.py").write_text(CONFIG, encoding="utf-8")
    configured = _commit(project, "the package's devices")
    assert configured.returncode == 0, configured.stdout + configured.stderr
    (project / "pkg" / "export.py").write_text(EXPORT, encoding="utf-8")
    cross = _commit(project, "a failing move across modules")
    output = cross.stdout + cross.stderr
    assert cross.returncode != 0 and "pkg/export.py:6:12: MV102 [error]" in output, output
