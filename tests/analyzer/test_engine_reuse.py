"""Later engine passes keep the runs whose inputs did not change: the same diagnostics as running
everything again, for less work."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.engine import reuse
from analyzer.engine.core import Engine
from analyzer.runner import check, check_source
from analyzer.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def as_data(report) -> list[dict]:
    return [d.to_json() for d in report.diagnostics]


@pytest.mark.parametrize("folder", ["fixtures", "fixtures/torch", "examples"])
def test_keeping_runs_changes_no_diagnostic(folder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(jobs=1, select=("ALL",))
    kept = as_data(check([str(REPO / folder)], settings))
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


def _analysed(keep: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict], list[Engine]]:
    monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
    engines: list[Engine] = []
    run = Engine.run

    def remembered(self: Engine) -> None:
        engines.append(self)
        run(self)

    monkeypatch.setattr(Engine, "run", remembered)
    return as_data(check_source(PROGRAM, "tracer.py", Settings(jobs=1))), engines


def test_a_later_pass_runs_again_only_what_read_the_changed_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    kept, (engine,) = _analysed(True, monkeypatch)
    assert engine.kept_this_pass  # the last pass kept the unrelated functions' runs
    ran = {engine.contexts[c].function for c in engine.ran_this_pass}
    assert "Tracer.report" in ran
    assert not any(name.startswith("unrelated_") for name in ran)
    everything, _ = _analysed(False, monkeypatch)
    assert kept == everything
    assert any(d["code"] == "MV102" for d in kept)  # the hooked autodiff tensor, moved to a plain device
