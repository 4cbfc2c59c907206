"""World axes are the models' (analyzer/models/base.py ``WorldAxis``): a model whose library's question splits
the analysis declares it, and the engine runs and merges its worlds with no change of its own."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from devicelint.domain import BOOL, Atom, V, Value, const
from devicelint.engine import worlds
from devicelint.engine.flow_state import Frame, State
from devicelint.models.argparse_model import COMMAND_LINE_WORLDS, DEFAULTS_WORLD, GIVEN_WORLD
from devicelint.models.base import UNHANDLED, Assumption, LibraryModel, Unhandled, World, WorldAxis
from devicelint.models.registry import default_models
from devicelint.models.torch_worlds import CUDA_AVAILABLE, GPU_COUNT, MPS_AVAILABLE, TORCH_WORLDS
from devicelint.runner import check
from devicelint.settings import Settings

#: what ``envflags.enabled("USE_GPU")`` answers: the toy model's own key
USE_GPU: Final[Assumption[bool]] = Assumption("envflags.USE_GPU")
SET, UNSET = "USE_GPU is set", "USE_GPU is not set"


@dataclass(frozen=True)
class _FlagRef(Atom):
    path: str

    def reveal(self) -> str:
        return self.path


class _EnvFlags(LibraryModel):
    """A toy library that reads an environment variable: ``envflags.enabled("USE_GPU")`` is the world's
    answer (unknown outside one), and a program that calls it is analysed with the variable set and not."""

    name = "envflags"
    world_axes = (WorldAxis("envflags.enabled", (b"envflags.enabled",),
                            (World(SET, {USE_GPU: True}), World(UNSET, {USE_GPU: False}))),)

    def import_ref(self, path: str) -> Value | None:
        return V(_FlagRef(path)) if path.split(".")[0] == "envflags" else None

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        return V(_FlagRef(f"{atom.path}.{attr}")) if isinstance(atom, _FlagRef) else UNHANDLED

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not (isinstance(atom, _FlagRef) and atom.path == "envflags.enabled"):
            return UNHANDLED
        answer = self.assumption(USE_GPU)
        return BOOL if answer is None else V(const(answer))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy model registered after the others, as a line in ``registry.py`` would."""
    monkeypatch.setattr(worlds, "default_models", lambda: (*default_models(), _EnvFlags))


def _findings(tmp_path: Path, text: str, target: str = "auto") -> list[tuple[str, str, str]]:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text))
    report = check([str(path)], Settings(target_device=target))
    return [(d.code, d.severity.value, d.message) for d in report.diagnostics if d.is_finding]


# the model goes where the variable says; the batch is always on the GPU
FLAGGED = """
import envflags
import torch
from torch import nn

device = "cuda" if envflags.enabled("USE_GPU") else "cpu"
model = nn.Linear(4, 2).to(device)
batch = torch.ones(3, 4, device="cuda")
print(model(batch))
"""


def test_a_models_world_axis_splits_the_analysis_and_names_the_failing_world(
        tmp_path: Path, registered: None) -> None:
    [(code, severity, message)] = _findings(tmp_path, FLAGGED)
    assert (code, severity) == ("MV202", "warning")
    assert f"when {UNSET}; ok when {SET}" in message


def test_without_the_model_the_answer_is_unknown_and_no_world_is_named(tmp_path: Path) -> None:
    found = _findings(tmp_path, FLAGGED)
    assert found and all(SET not in message for _code, _severity, message in found)


def test_a_failure_in_every_world_of_the_axis_is_an_error(tmp_path: Path, registered: None) -> None:
    [(code, severity, message)] = _findings(tmp_path, FLAGGED.replace('device="cuda"', 'device="cuda:1"'))
    assert (code, severity) == ("MV202", "error")
    assert "USE_GPU" not in message


def test_its_worlds_combine_with_torchs_and_a_world_is_named_by_the_answers_that_tell_it_apart(
        tmp_path: Path, registered: None) -> None:
    """The failing world is the variable unset and CUDA available (where the batch's ``.cuda()`` runs): named
    by both answers, since each alone holds in a passing world too; the passing ones by one answer each."""
    text = FLAGGED.replace('device="cuda")', "device=\"cpu\")\nif torch.cuda.is_available():\n"
                           "    batch = batch.cuda()")
    [(code, severity, message)] = _findings(tmp_path, text)
    assert (code, severity) == ("MV202", "warning")
    assert f"fails at the top level of train.py when {UNSET} and CUDA is available; ok when CUDA is not " \
           f"available and when {SET};" in message


def test_a_named_target_device_leaves_an_axis_that_names_no_target_split(tmp_path: Path, registered: None) -> None:
    [(code, severity, message)] = _findings(tmp_path, FLAGGED, target="cuda")
    assert (code, severity) == ("MV202", "warning")
    assert f"when {UNSET}" in message


def _labels(asked: set[bytes], target: str = "auto", small: bool = True) -> list[str]:
    return [w.label for w in worlds.axis_worlds(TORCH_WORLDS, TORCH_WORLDS.questions, asked.__contains__, small,
                                                 target)]


def test_torchs_axis_refines_its_worlds_by_the_questions_a_program_asks() -> None:
    assert _labels({b"cuda.is_available"}) == ["CUDA is available", "CUDA is not available"]
    assert _labels({b"cuda.device_count"}) == ["one GPU is available", "several GPUs are available",
                                               "CUDA is not available"]
    assert _labels({b"mps.is_available"}) == ["CUDA is available", "neither CUDA nor MPS is available",
                                              "MPS is available"]
    assert _labels(set()) == [""]  # not asked: one run, nothing assumed
    assert _labels({b"cuda.is_available"}, small=False) == [""]  # a library: one run


def test_a_named_target_keeps_the_worlds_that_name_it_asked_or_not_in_any_component() -> None:
    asked = {b"cuda.device_count", b"mps.is_available"}
    assert _labels(asked, "cuda") == ["one GPU is available", "several GPUs are available"]
    assert _labels(asked, "cuda", small=False) == ["one GPU is available"]
    assert _labels(set(), "cuda", small=False) == ["CUDA is available"]
    [cpu] = worlds.axis_worlds(TORCH_WORLDS, TORCH_WORLDS.questions, asked.__contains__, True, "cpu")
    assert cpu.assumptions == {CUDA_AVAILABLE: False, GPU_COUNT: 0, MPS_AVAILABLE: False}  # never the MPS world


def test_other_models_questions_ask_an_axis_and_outer_axes_come_first() -> None:
    axes = worlds.world_axes(default_models())
    assert [axis.outer for axis, _questions in axes] == sorted(axis.outer for axis, _q in axes)[::-1]
    questions = {axis.name: asked for axis, asked in axes}
    assert b"LightningModule" in questions[TORCH_WORLDS.name]  # entry_points' Lightning asks torch's
    assert b"import fire" in questions["command line"]  # and a fire program is a command line


def test_a_named_target_keeps_the_command_line_as_run_with_no_options() -> None:
    asked = {b"parse_args"}.__contains__
    for target, labels in (("auto", [DEFAULTS_WORLD, GIVEN_WORLD]), ("cuda", [DEFAULTS_WORLD]),
                           ("cpu", [DEFAULTS_WORLD])):
        assert [w.label for w in worlds.axis_worlds(COMMAND_LINE_WORLDS, COMMAND_LINE_WORLDS.questions, asked, True,
                                                    target)] == labels
    # not asked, or a library: one run that assumes nothing, as without a target
    assert [w.label for w in worlds.axis_worlds(COMMAND_LINE_WORLDS, COMMAND_LINE_WORLDS.questions,
                                                set().__contains__, True, "cuda")] == [""]
    assert [w.label for w in worlds.axis_worlds(COMMAND_LINE_WORLDS, COMMAND_LINE_WORLDS.questions, asked, False,
                                                "cuda")] == [""]


# ``--no-cuda`` decides the model's device; the batch stays on the CPU
NO_CUDA_OPTION = """
import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--no-cuda", action="store_true")
args = parser.parse_args()
device = torch.device("cuda" if not args.no_cuda and torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
print(model(torch.ones(3, 4)))
"""


def test_a_named_target_reads_a_failure_with_the_default_command_line_as_an_error(tmp_path: Path) -> None:
    [(code, severity, message)] = _findings(tmp_path, NO_CUDA_OPTION, target="cuda")
    assert (code, severity) == ("MV202", "error")
    assert message.startswith("`nn.Linear` mixes devices: input cpu tensor") and "command line" not in message
    assert _findings(tmp_path, NO_CUDA_OPTION, target="cpu") == []
    [(code, severity, message)] = _findings(tmp_path, NO_CUDA_OPTION)  # without a target: the worlds named
    assert severity == "warning" and "when CUDA is available" in message
