"""Parallel analysis: components (files connected through imports) analysed in worker processes give
exactly what one process gives, and what one engine over the whole project gives."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from devicelint import frontend, import_graph, scheduler
from devicelint.cli import main
from devicelint.domain import NONE, TOP
from devicelint.engine import worlds
from devicelint.engine.worlds import run_worlds
from devicelint.facts import FactStore
from devicelint.models import torch_model
from devicelint.models.argparse_model import ArgparseModel
from devicelint.models.torch_model import TorchModel
from devicelint.models.torch_worlds import TORCH_WORLDS
from devicelint.rules import all_rules
from devicelint.runner import check, suppress
from devicelint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def as_data(report) -> list[dict]:
    return [d.to_json() for d in report.diagnostics]


def derived_as_roles(diagnostics: list[dict]) -> list[dict]:
    """The diagnostics with each related location that names what an operand was derived from (its
    ``source``) reduced to the operand's role. Every possibility keeps its earliest origin at joins, merges of
    worlds and facts, so everything else is the same however the files are grouped; a source can still
    follow the order one engine met the calls in, where two results equal but for it meet outside a join."""
    out = []
    for diagnostic in diagnostics:
        kept, roles = [], []
        for related in diagnostic.get("related") or []:
            message = related["message"]
            if " is derived from: " in message or " is what a failing call was meant to give" in message:
                roles.append(message.split(" is ", 1)[0])
            else:
                kept.append(related)
        out.append({**diagnostic, "related": kept, "derived_roles": sorted(roles)})
    return out


def whole_program(paths: list[str], settings: Settings) -> list[dict]:
    """The reference: one engine over every relevant file (what the runner did before components)."""
    sources = frontend.load(frontend.discover(paths, settings.discovery))
    facts = FactStore()
    facts.profile = settings.profile
    parsed = []
    for source in frontend.relevant(sources, settings.torch_rules()):
        failure = frontend.parse(source)
        if failure is not None:
            facts.file_failures.append(failure)
        else:
            parsed.append(source)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, scheduler.RECURSION_LIMIT))
    try:
        run_worlds(parsed, facts, settings.profile, settings.backends, frozenset(s.module for s in sources))
    finally:
        sys.setrecursionlimit(limit)
    by_file = {s.path: s for s in sources}
    texts = {s.path: s.text for s in parsed}  # the rules build their fixes from them
    diagnostics = [scheduler.finish(d, by_file) for rule in all_rules() for d in rule.check(facts, texts)]
    diagnostics += [scheduler.finish(d, by_file) for d in scheduler.reveal_notes(facts)]
    directives = {s.path: [] for s in parsed}  # MV902 is not what this compares
    kept = suppress(diagnostics, settings, directives, by_file)
    return [d.to_json() for d in sorted(kept, key=lambda d: d.sort_key())]


@pytest.fixture
def force_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "MIN_PARALLEL_FILES", 2)


def test_parallel_equals_serial_on_the_fixtures(force_pool: None) -> None:
    serial = check([str(FIXTURES)], Settings(jobs=1))
    assert serial.components > 1
    parallel_report = check([str(FIXTURES)], Settings(jobs=4))
    assert as_data(parallel_report) == as_data(serial)
    assert len(serial.diagnostics) > 100


def test_components_equal_the_whole_program_on_the_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(jobs=1, select=tuple(r.code for r in all_rules() if r.code != "MV902"))
    # a program that asks torch.cuda.device_count() splits the CUDA world in two; the reference, one program of
    # every fixture, would split them all (and count one context more in messages): not compared here; so does
    # torch.backends.mps.is_available() (a third world, MPS): not compared here either (torch's axis unrefined).
    # The reference asks torch.cuda.is_available() for every fixture (some fixture asks): so do the components
    # (every program asks b""), or a fixture whose failure needs CUDA would name that world in one run only
    monkeypatch.setattr(TorchModel, "world_axes", (replace(TORCH_WORLDS, questions=(b"",), refinements=()),))
    # a program that parses its command line is analysed with and without options, and an option assigned as an
    # attribute anywhere in it is not read as its default: the reference would split and blur every fixture
    monkeypatch.setattr(ArgparseModel, "world_axes", ())
    # likewise a program that changes the current CUDA device makes "cuda" unknown in every function nothing
    # calls (they may run under any device): the reference would have it unknown in every fixture
    monkeypatch.setattr(torch_model, "UNCALLED_MODES", (None, TOP, None))
    # and a program that sets the current device inside a function (``torch.cuda.set_device(local_rank)`` in a
    # DDP worker) makes "cuda" unknown everywhere in it: in the reference, in every fixture. Here the device a
    # function sets is followed where the flow goes, and an unknown one changes nothing, in both runs
    monkeypatch.setattr(torch_model, "_changes_current_device_unseen", lambda tree: False)
    set_device = TorchModel._call_set_device

    def known_devices_only(model: TorchModel, path: str, args: list, kwargs: dict, *rest: object) -> object:
        bound = torch_model.argument(path, args, kwargs, "device")
        if path != "torch.cuda.device" and model._cuda_index(bound, rest[1]) < 0:
            return NONE
        return set_device(model, path, args, kwargs, *rest)

    monkeypatch.setattr(TorchModel, "_call_set_device", known_devices_only)
    components = as_data(check([str(FIXTURES)], settings))
    # every fixture is a small program analysed per torch.cuda.is_available() answer; so is the reference
    monkeypatch.setattr(worlds, "MAX_WORLD_FILES", 10**6)
    # two tensors equal but for their origin are one possibility, which keeps the earliest origin whatever order
    # the analysis met them in (one engine over every fixture, or one per program)
    assert derived_as_roles(components) == derived_as_roles(whole_program([str(FIXTURES)], settings))


PROJECT = {
    # a package reached in several ways: `import pkg` then pkg.sub.attr, `from . import`, a star import
    "app/pkg/__init__.py": "from runtime_shim import Device\nDEFAULT = Device.flex()\n",
    "app/pkg/devices.py": "from runtime_shim import Device\nTRAIN = Device.ndarray().autodiff()\n"
                          "EXPORT = Device.flex()\n",
    "app/pkg/export.py": "from . import devices\n\n\ndef export(t):\n    return t.to_device(devices.EXPORT)  # moved\n",
    "app/pkg/star.py": "from .devices import *  # noqa: F403\n",
    "app/main.py": "import pkg.export\nimport pkg\nfrom runtime_shim import Tensor\nfrom pkg.star import TRAIN\n\n"
                   "w = Tensor.random([2], TRAIN)\npkg.export.export(w)\nw.to_device(pkg.DEFAULT)\n"
                   "w.to_device(pkg.devices.EXPORT)\n",
    # a module whose global another module rebinds
    "cfg/settings.py": "from runtime_shim import Device\nDEVICE = Device.flex()\n",
    "cfg/use.py": "import settings\nfrom runtime_shim import Device, Tensor\n\n\ndef run():\n"
                  "    return Tensor.ones([2], Device.flex().autodiff()).to_device(settings.DEVICE)\n",
    "cfg/setup.py": "import settings\nimport use\nfrom runtime_shim import Device\n\n"
                    "settings.DEVICE = Device.ndarray()\nuse.run()\n",
    # the same module names in two roots, and a name only the other root has
    "one/helpers.py": "from runtime_shim import Device\nTARGET = Device.ndarray()\n",
    "one/train.py": "from runtime_shim import Device, Tensor\nfrom helpers import TARGET\nfrom extra import X\n\n"
                    "Tensor.random([2], Device.flex().autodiff()).to_device(TARGET)\nX.to_device(TARGET)\n",
    "two/helpers.py": "from runtime_shim import Device\nTARGET = Device.flex().autodiff()\n",
    "two/extra.py": "from runtime_shim import Device, Tensor\nX = Tensor.ones([2], Device.flex().autodiff())\n",
    "two/train.py": "from runtime_shim import Device, Tensor\nfrom helpers import TARGET\n\n"
                    "Tensor.random([2], Device.ndarray()).to_device(TARGET)\n",
    # independent scripts
    "scripts/a.py": "from runtime_shim import Device, Tensor\nTensor.ones([2], Device.flex()).to_device("
                    "Device.flex().autodiff())\n",
    "scripts/b.py": "from runtime_shim import Device, reveal_device\nreveal_device(Device.wgpu())\n",
    "scripts/c.py": "import runtime_shim\ndef broken(:\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_components_follow_the_engines_resolution(project: Path) -> None:
    sources = frontend.load(frontend.discover([str(project)]))
    chosen = frontend.relevant(sources)
    infos = [import_graph.file_info(s) for s in chosen]
    parsed = [(s, i) for s, i in zip(chosen, infos, strict=True) if i.failure is None]
    groups = import_graph.components([s for s, _ in parsed], [i for _, i in parsed], {s.module for s in sources})
    named = sorted(sorted(str(Path(parsed[i][0].path).relative_to(project)) for i in g) for g in groups)
    assert ["app/main.py", "app/pkg/__init__.py", "app/pkg/devices.py", "app/pkg/export.py",
            "app/pkg/star.py"] in named
    assert ["cfg/settings.py", "cfg/setup.py", "cfg/use.py"] in named
    # one/train.py: its own root's helpers, and `extra` from the other root (the engine's fallback)
    assert ["one/helpers.py", "one/train.py", "two/extra.py"] in named
    assert ["two/helpers.py", "two/train.py"] in named
    assert ["scripts/a.py"] in named and ["scripts/b.py"] in named


def test_components_equal_the_whole_program_on_a_tangled_project(project: Path, force_pool: None) -> None:
    settings = Settings(jobs=1, select=tuple(r.code for r in all_rules() if r.code != "MV902"))
    reference = whole_program([str(project)], settings)
    assert {d["code"] for d in reference} >= {"MV102", "MV150", "MV901", None}
    assert as_data(check([str(project)], settings)) == reference
    settings.jobs = 3
    assert as_data(check([str(project)], settings)) == reference


def test_spawned_workers_give_the_same(project: Path, force_pool: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where fork is not used (macOS, Windows), workers get the files' bytes and parse them again."""
    import multiprocessing

    serial = as_data(check([str(project)], Settings(jobs=1)))
    monkeypatch.setattr(scheduler, "_context", lambda: (multiprocessing.get_context("spawn"), False))
    assert as_data(check([str(project)], Settings(jobs=2))) == serial


def test_a_failing_worker_is_an_internal_error(project: Path, force_pool: None, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        try:
            raise ValueError("boom")
        except ValueError as error:
            raise scheduler.AnalysisError("ValueError: boom") from error

    monkeypatch.setattr(scheduler, "analyze_component", broken)  # forked workers inherit it
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(project / ".cache"))
    code = main(["check", str(project)])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "internal error" in err and "boom" in err and "please report it" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 2
    monkeypatch.setenv("DEVICELINT_TRACEBACK", "1")  # for a bug report: where it happened
    assert main(["check", str(project)]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_an_unexpected_exception_is_an_internal_error(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    import devicelint.cli as cli

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("unexpected")

    monkeypatch.setattr(cli, "check", broken)
    assert main(["check", str(project)]) == 2
    err = capsys.readouterr().err
    assert "internal error: KeyError" in err and "please report it" in err and "Traceback" not in err
