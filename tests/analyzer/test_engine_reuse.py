"""Later engine passes keep the runs whose inputs did not change: the same diagnostics as running
everything again, for less work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_support import remember_engines

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
    engines = remember_engines(monkeypatch)
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


def test_the_pass_trace_says_what_each_pass_ran_and_kept(tmp_path: Path) -> None:
    program = tmp_path / "tracer.py"
    program.write_text(PROGRAM, encoding="utf-8")
    env = dict(os.environ, DEVICELINT_TRACE_PASSES="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "analyzer", "check", str(program), "--isolated", "--no-cache",
                           "--exit-zero", "-q"], capture_output=True, text=True, env=env, cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("devicelint: pass ")]
    assert len(lines) >= 2, done.stderr
    assert lines[0].endswith(" 0 kept") and not lines[1].endswith(" 0 kept"), lines
