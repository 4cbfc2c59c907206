"""The cache: hits, misses, invalidation through imports (both directions), damaged caches, location."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint import cache as cache_module
from devicelint import import_graph, scheduler
from devicelint.cli import main
from devicelint.runner import check
from devicelint.settings import Settings

HELPERS = "from runtime_shim import Device\n\nTARGET = Device.ndarray()\n"
TRAIN = """\
from runtime_shim import Device, Tensor
from helpers import TARGET

weights = Tensor.random([2], Device.flex().autodiff())
weights.to_device(TARGET)
"""
LIB = """\
from runtime_shim import Device


def export(t):
    return t.to_device(Device.ndarray())
"""
MAIN = """\
from runtime_shim import Device, Tensor
from lib import export

export(Tensor.random([2], Device.flex().autodiff()))
"""
ROOT = Path(__file__).resolve().parents[2]
OTHER = """\
from runtime_shim import Device, Tensor

Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in {"helpers.py": HELPERS, "train.py": TRAIN, "lib.py": LIB, "main.py": MAIN,
                       "other.py": OTHER}.items():
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.delenv("DEVICELINT_CACHE_DIR", raising=False)
    return root


def analyze(root: Path, **settings: object):
    return check([str(root)], Settings(cache_dir=str(root.parent / "cache"), **settings))


def found(report) -> set[tuple[str, int, str]]:
    return {(Path(d.file).name, d.row, d.code) for d in report.findings}


def test_hits_and_misses(project: Path) -> None:
    cold = analyze(project)
    assert cold.components == 3 and cold.cache_hits == 0 and cold.cache_misses == 3
    assert found(cold) == {("train.py", 5, "MV102"), ("lib.py", 5, "MV102"), ("other.py", 3, "MV150")}
    warm = analyze(project)
    assert warm.cache_hits == 3 and warm.cache_misses == 0
    assert [d.to_json() for d in warm.diagnostics] == [d.to_json() for d in cold.diagnostics]
    (project / "other.py").write_text(OTHER + "# touched\n", encoding="utf-8")
    touched = analyze(project)
    assert touched.cache_hits == 2 and touched.cache_misses == 1  # only the changed file's component


def test_a_changed_import_invalidates_the_importer(project: Path) -> None:
    assert ("train.py", 5, "MV102") in found(analyze(project))
    (project / "helpers.py").write_text(HELPERS.replace("Device.ndarray()", "Device.flex().autodiff()"),
                                        encoding="utf-8")
    report = analyze(project)
    assert ("train.py", 5, "MV102") not in found(report)  # train.py itself is unchanged
    assert report.cache_misses == 1


def test_a_changed_caller_invalidates_the_callee(project: Path) -> None:
    assert ("lib.py", 5, "MV102") in found(analyze(project))
    (project / "main.py").write_text(MAIN.replace("Tensor.random([2], Device.flex().autodiff())",
                                                  "Tensor.random([2], Device.flex())"), encoding="utf-8")
    assert ("lib.py", 5, "MV102") not in found(analyze(project))  # lib.py is unchanged; its context is not


def test_a_new_module_changes_what_imports_resolve_to(project: Path) -> None:
    (project / "train.py").write_text(TRAIN.replace("from helpers import TARGET", "from devices import TARGET"),
                                      encoding="utf-8")
    assert ("train.py", 5, "MV102") not in found(analyze(project))  # `devices` is unknown: nothing is reported
    (project / "devices.py").write_text(HELPERS, encoding="utf-8")
    assert ("train.py", 5, "MV102") in found(analyze(project))


def test_warm_run_analyzes_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = analyze(project)

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("analysed again")

    monkeypatch.setattr(scheduler, "analyze_component", boom)
    monkeypatch.setattr(import_graph, "file_info", boom)
    monkeypatch.setattr(import_graph, "components", boom)  # the split into components is cached as well
    warm = analyze(project)
    assert [d.to_json() for d in warm.diagnostics] == [d.to_json() for d in cold.diagnostics]


#: Modules a cached run has no use for: the engine and its abstract domain, worker processes, ``confirm``.
NOT_FOR_A_WARM_RUN = ("devicelint.engine", "devicelint.domain", "multiprocessing", "concurrent.futures.process",
                      "devicelint.confirm.session", "devicelint.confirm.launch", "libcst",
                      # nor what only the analysis or a rule reads: the table, the facts, the import resolver
                      # and OpenSSL (each 1 to 7 ms of a 60 ms cached run)
                      "runtime_shim.semantics", "devicelint.facts", "devicelint.rules.base", "devicelint.imports",
                      "devicelint.shim_api", "_hashlib")


def test_a_warm_run_imports_no_engine(project: Path) -> None:
    """A cached check pays only for what it uses: every import is start-up time a warm run cannot hide."""
    command = [sys.executable, "-c", "import sys\nfrom devicelint.cli import main\nstatus = main(sys.argv[1:])\n"
               "print(sorted(sys.modules))", "check", str(project), "--cache-dir", str(project.parent / "cache"),
               "--exit-zero", "-q"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    cold = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert "devicelint.engine" in cold.stdout  # the first run analysed
    warm = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    modules = set(ast.literal_eval(warm.stdout.strip().splitlines()[-1]))
    assert [name for name in NOT_FOR_A_WARM_RUN if name in modules] == []


def test_selection_and_noqa_are_applied_after_the_cache(project: Path) -> None:
    analyze(project)
    report = analyze(project, select=("MV150",))
    assert report.cache_hits == 3 and found(report) == {("other.py", 3, "MV150")}
    (project / "pyproject.toml").write_text("", encoding="utf-8")
    text = (project / "other.py").read_text(encoding="utf-8").replace("autodiff())\n", "autodiff())  # noqa\n")
    (project / "other.py").write_text(text, encoding="utf-8")
    assert ("other.py", 3, "MV150") not in found(analyze(project))


def test_profile_and_backends_are_part_of_the_key(project: Path) -> None:
    analyze(project)
    legacy = analyze(project, profile="burn-0.21")
    assert legacy.cache_hits == 0 and ("other.py", 3, "MV102") in found(legacy)
    target = analyze(project, backends=frozenset({"Flex"}))
    assert target.cache_hits == 0 and any(code == "MV112" for _f, _r, code in found(target))
    assert analyze(project).cache_hits == 3


def test_a_new_analyzer_does_not_read_old_results(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    analyze(project)
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda *_directory: "another build")
    assert analyze(project).cache_hits == 0


def _cache_files(project: Path) -> list[Path]:
    return sorted((project.parent / "cache" / cache_module.FORMAT).glob("*.json"))


def test_a_damaged_cache_is_ignored(project: Path) -> None:
    cold = analyze(project)
    [path] = _cache_files(project)
    for garbage in (b"", b"{not json", b"\xff\xfe", b"[1, 2]", b'{"files": 3, "components": "x"}'):
        path.write_bytes(garbage)
        report = analyze(project)
        assert report.cache_hits == 0
        assert [d.to_json() for d in report.diagnostics] == [d.to_json() for d in cold.diagnostics]
    # a damaged entry: that component is analysed again, the others are read
    document = json.loads(path.read_text(encoding="utf-8"))
    slot = next(iter(document["components"]))
    document["components"][slot]["diagnostics"] = [["MV102", "x", "bogus-severity"]]
    names = iter(document["files"])
    document["files"][next(names)]["info"] = {"imports": "nope"}
    document["files"][next(names)]["info"]["imports"] = [["i"], ["f", "x", 1, None]]
    path.write_text(json.dumps(document), encoding="utf-8")
    report = analyze(project)
    assert report.cache_hits == 2 and report.cache_misses == 1
    assert [d.to_json() for d in report.diagnostics] == [d.to_json() for d in cold.diagnostics]
    assert not list(path.parent.glob(".tmp-*"))  # atomic writes leave no temporary file
    # a damaged split into components (not a partition of the files, not a list): computed again
    for groups in ([[0, 1], [1, 2, 3, 4]], [[0], [1], [2]], "x", [[0, 1, 2, 3, "4"]], [[], [0, 1, 2, 3, 4]]):
        document = json.loads(path.read_text(encoding="utf-8"))
        [grouping] = document["groups"].values()
        grouping["groups"] = groups
        path.write_text(json.dumps(document), encoding="utf-8")
        report = analyze(project)
        assert report.components == 3 and report.cache_hits == 3
        assert [d.to_json() for d in report.diagnostics] == [d.to_json() for d in cold.diagnostics]


def test_unwritable_cache_is_not_an_error(project: Path) -> None:
    blocker = project.parent / "cache"
    blocker.write_text("a file where the cache directory should be")
    assert found(analyze(project))  # analysed, nothing cached, no exception


def test_cli_cache_location_and_no_cache(project: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["check", "-q", "."]) == 1
    default = project / ".devicelint_cache"
    assert (default / "CACHEDIR.TAG").is_file() and (default / ".gitignore").read_text().endswith("*\n")
    assert list((default / cache_module.FORMAT).glob("*.json"))
    assert main(["check", "-q", "--cache-dir", str(project.parent / "elsewhere"), "."]) == 1
    assert (project.parent / "elsewhere" / "CACHEDIR.TAG").is_file()
    (project / "pyproject.toml").write_text('[tool.devicelint]\ncache-dir = "build/dl-cache"\n', encoding="utf-8")
    assert main(["check", "-q", "."]) == 1
    assert (project / "build" / "dl-cache" / "CACHEDIR.TAG").is_file()
    (project / "pyproject.toml").unlink()
    fresh = project.parent / "fresh"
    assert main(["check", "-q", "--no-cache", "--cache-dir", str(fresh), "."]) == 1
    assert not fresh.exists()
    capsys.readouterr()
    assert main(["clean"]) == 0 and not default.exists()
    assert "Removed" in capsys.readouterr().out


def test_stdin_is_not_cached(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    text = OTHER.encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    assert main(["check", "-q", "--cache-dir", str(project.parent / "c"), "--stdin-filename", "edited.py"]) == 1
    [path] = sorted((project.parent / "c" / cache_module.FORMAT).glob("*.json")) or [None]
    document = json.loads(path.read_text(encoding="utf-8")) if path else {"files": {}, "components": {}}
    assert "edited.py" not in document["files"] and not document["components"]
