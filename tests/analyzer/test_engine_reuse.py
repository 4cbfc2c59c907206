"""Later engine passes keep the runs whose inputs did not change: the same diagnostics as running
everything again, for less work."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from devicelint.engine import reuse
from devicelint.engine.core import Engine
from devicelint.runner import check, check_source
from devicelint.settings import Settings
from engine_support import remember_engines

REPO = Path(__file__).resolve().parents[2]


def as_data(report) -> list[dict]:
    return [d.to_json() for d in report.diagnostics]


@pytest.mark.parametrize("folder", ["fixtures", "fixtures/torch", "examples"])
def test_keeping_runs_changes_no_diagnostic(folder: str, monkeypatch: pytest.MonkeyPatch,
                                            all_rules_findings: Callable[[str], list]) -> None:
    settings = Settings(jobs=1, select=("ALL",))
    kept = all_rules_findings(folder)  # the same check (runs kept: the default), made once per session
    monkeypatch.setattr(reuse.PassReuse, "keep_runs", False)
    everything = as_data(check([str(REPO / folder)], settings))
    assert kept == everything
    assert kept  # the comparison is about real findings


# An attribute filled by a method after another method read it: the engine needs a second pass, in which
# only the readers of that attribute (and their callers) run again.
PROGRAM = """\
from runtime_shim import Device, Tensor


class Tracer:
    def __init__(self):
        self.kept = {}

    def report(self):
        return self.kept["out"].to_device(Device.flex())

    def hook(self, t):
        self.kept["out"] = t


tracer = Tracer()
print(tracer.report())
tracer.hook(Tensor.ones([2], Device.ndarray().autodiff()))
""" + "".join(f"""

def unrelated_{n}(t):
    return t.to_device(Device.ndarray())


unrelated_{n}(Tensor.ones([2], Device.flex()))
""" for n in range(5))


def _analyzed(keep: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict], list[Engine]]:
    monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
    engines = remember_engines(monkeypatch)
    return as_data(check_source(PROGRAM, "tracer.py", Settings(jobs=1))), engines


def test_a_later_pass_runs_again_only_what_read_the_changed_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    kept, (engine,) = _analyzed(True, monkeypatch)
    assert engine.kept_this_pass  # the last pass kept the unrelated functions' runs
    ran = {engine.contexts[c].function for c in engine.ran_this_pass}
    assert "Tracer.report" in ran
    assert not any(name.startswith("unrelated_") for name in ran)
    everything, _ = _analyzed(False, monkeypatch)
    assert kept == everything
    assert any(d["code"] == "MV102" for d in kept)  # the hooked autodiff tensor, moved to a plain device


def test_the_pass_trace_says_what_each_pass_ran_and_kept(tmp_path: Path) -> None:
    program = tmp_path / "tracer.py"
    program.write_text(PROGRAM, encoding="utf-8")
    env = dict(os.environ, DEVICELINT_TRACE_PASSES="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "devicelint", "check", str(program), "--isolated", "--no-cache",
                           "--exit-zero", "-q"], capture_output=True, text=True, env=env, cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("devicelint: pass ")]
    assert len(lines) >= 2, done.stderr
    assert " 0 kept," in lines[0] and " 0 kept," not in lines[1], lines


# A package whose module-level code needs a second pass (``report`` reads the cache before ``hook`` fills it):
# the modules that read nothing that changed keep their top-level runs, including one in an import cycle
# (``layers`` reads the package while the package is loading) and one read through ``import *``.
PACKAGE = {
    "__init__.py": """\
DEFAULT = "cpu"
from .registry import register, REGISTRY
from .layers import *
from . import models
""",
    "registry.py": """\
REGISTRY = {}


def register(cls):
    REGISTRY[cls.__name__] = cls
    return cls
""",
    "layers.py": """\
import torch
import shop

DEVICE = "cuda"
FALLBACK = shop.DEFAULT


def make(n):
    return torch.zeros(n, device=DEVICE)


def make_fallback(n):
    return torch.zeros(n, device=FALLBACK)
""",
    "models.py": """\
import torch
from .registry import register, REGISTRY
from .layers import make, make_fallback


@register
class Net:
    def __init__(self):
        self.cache = {}

    def report(self):
        return self.cache["out"] + make_fallback(2)

    def hook(self, t):
        self.cache["out"] = t


net = Net()
print(net.report())
net.hook(make(2))
""",
}


def _package_checked(tmp_path: Path, keep: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict], list[Engine]]:
    package = tmp_path / "shop"
    package.mkdir(exist_ok=True)
    for name, text in PACKAGE.items():
        (package / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
    engines = remember_engines(monkeypatch)
    return as_data(check([str(package)], Settings(jobs=1, select=("ALL",)))), engines


def test_a_later_pass_keeps_the_top_level_runs_of_modules_that_read_nothing_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    everything, _ = _package_checked(tmp_path, False, monkeypatch)
    kept, engines = _package_checked(tmp_path, True, monkeypatch)
    assert kept == everything
    assert [(d["code"], Path(d["filename"]).name, d["location"]["row"]) for d in kept] == [("MV201", "models.py", 12)]
    assert engines
    for engine in engines:  # (one per ``torch.cuda.is_available()`` world)
        # the last pass kept what read nothing that changed: the registry, and the layers (read through
        # ``import *``, and reading the package while it loads); not the models, whose top level reads the cache
        assert {"shop.registry", "shop.layers"} <= engine.modules_kept
        assert "shop.models" not in engine.modules_kept


# A lazily built singleton in a module global, and a device global that a setup function changes. A summary is
# reused only while what its run read below it holds the same: ``build`` runs again after ``setup`` (``make``,
# which it calls, reads DEVICE), but the stores into ``_KERNEL`` and DEVICE do not make every later call a new
# context: ``Kernel.run`` has one context per device.
SINGLETON = """\
import torch
from runtime_shim import reveal_device

_KERNEL = None
DEVICE = "cpu"


class Kernel:
    def run(self, x):
        return x + torch.zeros(2, device=DEVICE)


def get_kernel():
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = Kernel()
    return _KERNEL


def make():
    return torch.zeros(2, device=DEVICE)


def build():
    return make()


def step(x):
    return get_kernel().run(x)


reveal_device(build())
step(torch.ones(2))
step(torch.ones(2))


def setup():
    global DEVICE
    DEVICE = "cuda"


setup()
reveal_device(build())
step(torch.ones(2))
"""


def test_a_summary_is_reused_only_while_the_globals_read_below_it_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    engines = remember_engines(monkeypatch)
    report = check_source(SINGLETON, "kernels.py", Settings(jobs=1))
    notes = [(d.row, d.message) for d in report.diagnostics if not d.code]
    assert notes == [(32, "reveal_device: cpu tensor"), (43, "reveal_device: cpu tensor | cuda:0 tensor")]
    [finding] = report.findings
    assert (finding.code, finding.row) == ("MV201", 10)  # the cpu input, added after the move to cuda
    for engine in engines:
        runs = [ctx for ctx in engine.contexts.values() if ctx.function == "Kernel.run"]
        assert len(runs) == 2, [ctx.args for ctx in runs]


# A recursive helper: its context iterates to a fixpoint (its calls of itself see the approximation so far),
# which the same inputs give again, so a later pass keeps it and what called it.
RECURSIVE = PROGRAM + """

def nested(t, n):
    if n == 0:
        return t
    return nested(t, n - 1).to_device(Device.flex())


def unrelated_recursion(t):
    return nested(t, 3)


unrelated_recursion(Tensor.ones([2], Device.flex()))
"""


def test_a_later_pass_keeps_a_recursive_context(monkeypatch: pytest.MonkeyPatch) -> None:
    def analyzed(keep: bool) -> tuple[list[dict], list[Engine]]:
        monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
        engines = remember_engines(monkeypatch)
        return as_data(check_source(RECURSIVE, "tracer.py", Settings(jobs=1))), engines

    kept, (engine,) = analyzed(True)
    ran = {engine.contexts[c].function for c in engine.ran_this_pass}
    assert "Tracer.report" in ran  # the second pass's reason
    assert not {"nested", "unrelated_recursion"} & ran, ran
    assert {"nested", "unrelated_recursion"} <= {engine.contexts[c].function for c in engine.kept_this_pass}
    everything, _ = analyzed(False)
    assert kept == everything


# ``count`` reads every attribute of a project module (its parameters). The second pass (``report`` read the
# tracer's cache before ``hook`` filled it) keeps that run while the instance has the same attributes.
MOVED = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Tracer:
    def __init__(self):
        self.kept = {}

    def report(self):
        return self.kept["out"].numpy()

    def hook(self, t):
        self.kept["out"] = t


def count(model):
    return sum(p.numel() for p in model.parameters())


model = Net().to("cuda")
print(count(model))
tracer = Tracer()
print(tracer.report())
tracer.hook(model(torch.ones(3, 4, device="cuda")))
"""


def test_a_later_pass_keeps_a_run_that_read_every_attribute_of_an_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    def analyzed(keep: bool) -> tuple[list[dict], list[Engine]]:
        monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
        engines = remember_engines(monkeypatch)
        return as_data(check_source(MOVED, "moved.py", Settings(jobs=1))), engines

    kept, (engine,) = analyzed(True)
    assert "Tracer.report" in {engine.contexts[c].function for c in engine.ran_this_pass}
    assert "count" in {engine.contexts[c].function for c in engine.kept_this_pass}
    everything, _ = analyzed(False)
    assert kept == everything
    assert any(d["code"] == "MV203" for d in kept)  # the CUDA output read as numpy


def test_a_run_that_read_every_attribute_is_not_kept_once_the_instance_has_another(
        monkeypatch: pytest.MonkeyPatch) -> None:
    engines = remember_engines(monkeypatch)
    monkeypatch.setattr(Engine, "release", lambda self: None)  # (the records, once the facts are out)
    check_source(MOVED, "moved.py", Settings(jobs=1))
    (engine,) = engines
    (record,) = (r for r in engine.records.values() if r.fn.name == "count")
    assert record.scans and not record.tainted  # it read the instance's attributes, and says which
    (owner, _skip), attrs = next(iter(record.scans.items()))
    assert engine._same_scans(record.scans)
    engine.heap_owners[owner] = [*attrs, "added_later"]
    assert not engine._same_scans(record.scans)
