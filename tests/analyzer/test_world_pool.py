"""A component's worlds as separate work items (analyzer/world_items.py): the diagnostics, notes and output text
are those of one process, a world that raises is the component's MV903, and the component's budgets count
over every world as in one process."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from devicelint import cli, frontend, scheduler, world_items
from devicelint.cli import main
from devicelint.engine import worlds
from devicelint.engine.core import Engine
from devicelint.runner import check
from devicelint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data"
# the programs there and whether some component has several worlds (torch_project asks none); not gpu_parity,
# whose findings differ from run to run in one process alike (sets ordered by identity hashes)
PROJECTS = [(DATA / "torch_project", False), (DATA / "entry_points", True)]


def every_world_apart(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Split every component that has several worlds, however small; the list counts the components merged
    from worlds in the parent (so a test sees the split happen)."""
    merged: list[int] = []
    monkeypatch.setattr(world_items, "splits", lambda costs, jobs, count: [count(n) for n in range(len(costs))])
    monkeypatch.setattr(scheduler, "MIN_PARALLEL_FILES", 1)
    from_worlds = world_items.component_from_worlds

    def counted(sources: list, outcomes: list, *args: object) -> list:
        merged.append(len(outcomes))
        return from_worlds(sources, outcomes, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(world_items, "component_from_worlds", counted)
    return merged


def as_data(report) -> tuple[list[dict], list[dict]]:
    return [d.to_json() for d in report.diagnostics], [d.to_json() for d in report.notes]


def test_worlds_apart_equal_one_process_on_the_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    serial = check([str(FIXTURES)], Settings(jobs=1))
    merged = every_world_apart(monkeypatch)
    parallel = check([str(FIXTURES)], Settings(jobs=2))
    assert len(merged) > 50 and max(merged) >= 4  # many components analysed world by world, some in 4+ worlds
    assert len(serial.diagnostics) > 100
    serial_findings, serial_notes = as_data(serial)
    parallel_findings, parallel_notes = as_data(parallel)
    for one, apart in zip(serial_findings, parallel_findings, strict=True):  # finding by finding, related too
        assert apart == one
    assert parallel_notes == serial_notes


@pytest.mark.parametrize(("project", "split"), PROJECTS, ids=[str(p.relative_to(REPO)) for p, _split in PROJECTS])
def test_worlds_apart_print_what_one_process_prints(project: Path, split: bool, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    command = ["check", str(project), "--no-cache", "--isolated", "--exit-zero", "--output-format", "full"]
    monkeypatch.setattr(cli, "_cpus", lambda: 1)
    assert main(command) == 0
    serial = capsys.readouterr()
    merged = every_world_apart(monkeypatch)
    monkeypatch.setattr(cli, "_cpus", lambda: 2)
    assert main(command) == 0
    parallel = capsys.readouterr()
    assert bool(merged) == split and all(count > 1 for count in merged)
    assert serial.out.strip() and parallel.out == serial.out and parallel.err == serial.err
    assert parallel.out == serial.out and parallel.err == serial.err


# --------------------------------------------------------------------------- one component, several worlds

PROGRAM = """\
    import argparse

    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    device = "cpu" if args.cpu or not torch.cuda.is_available() else "cuda"


    def body(x):
    {body}
        return x


    model = torch.nn.Linear(4, 4).to(device)
    batch = torch.zeros(2, 4)
    out = model(body(batch))
"""


def program(tmp_path: Path, statements: int = 50) -> Path:
    body = "".join(f"    y{i} = x + {i}\n" for i in range(statements))
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(PROGRAM).format(body=body.rstrip("\n")))
    return path


def run_both(path: Path, monkeypatch: pytest.MonkeyPatch, **settings: object) -> tuple:
    serial = check([str(path)], Settings(jobs=1, **settings))  # type: ignore[arg-type]
    merged = every_world_apart(monkeypatch)
    parallel = check([str(path)], Settings(jobs=2, **settings))  # type: ignore[arg-type]
    assert merged == [4]  # the command line's two worlds times CUDA's two, each in a worker
    return serial, parallel


def test_the_program_fails_in_one_world_apart_as_in_one_process(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    serial, parallel = run_both(program(tmp_path), monkeypatch)
    assert [d.code for d in serial.findings] == ["MV202"] and "CUDA" in serial.findings[0].message
    assert as_data(parallel) == as_data(serial)


def test_a_world_that_raises_is_the_components_mv903(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = program(tmp_path)
    sources = frontend.load(frontend.discover([str(path)]))
    third = worlds.plan_worlds(sources).leaves()[2]
    line = path.read_text().splitlines().index("model = torch.nn.Linear(4, 4).to(device)") + 1
    exec_stmt = Engine.exec_stmt

    def raising(self: Engine, node: object, st: object, fr: object) -> object:
        if self.assumptions == third and getattr(node, "lineno", 0) == line:  # model = ... in the third world only
            raise ValueError("boom in one world")
        return exec_stmt(self, node, st, fr)  # type: ignore[arg-type]

    monkeypatch.setattr(Engine, "exec_stmt", raising)  # (forked workers inherit it)
    serial, parallel = run_both(path, monkeypatch)
    (failed,) = serial.findings
    assert failed.code == "MV903" and failed.row == line and "boom in one world" in failed.message
    assert parallel.findings[0].to_json() == failed.to_json()
    assert [d.to_json() for d in parallel.findings] == [d.to_json() for d in serial.findings]
    assert [(n.name, n.file, n.row) for n in parallel.notes] == [(n.name, n.file, n.row) for n in serial.notes]
    assert "boom in one world" in parallel.notes[0].message  # the worker's traceback


def statements_per_world(path: Path) -> list[int]:
    sources = frontend.load(frontend.discover([str(path)]))
    for source in sources:
        frontend.parse(source)
    plan = worlds.plan_worlds(sources)
    counting = Settings(max_component_steps=10**9).limits()
    return [world_items.run_world_item(sources, n, frozenset(s.module for s in sources), "", None, counting,
                                       "auto").ticked for n in range(len(plan.leaves()))]


@pytest.mark.parametrize("share", ["one world", "the worlds together"])
def test_a_budget_over_every_world_stops_the_component_as_in_one_process(
        share: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = program(tmp_path, statements=3000)
    ticked = statements_per_world(path)
    assert len(ticked) == 4 and min(ticked) > 3000
    # past one world's statements, or within each world's but past what they take together
    steps = 2048 if share == "one world" else max(ticked) + 2048
    assert steps < sum(ticked) - 2048
    serial, parallel = run_both(path, monkeypatch, max_component_steps=steps)
    assert not serial.findings and not parallel.findings
    (note,) = serial.notes
    assert note.name == scheduler.BUDGET_NOTE and f"more than {steps:,} statements" in note.message
    assert as_data(parallel) == as_data(serial)
    # with the worlds' statements allowed: the finding in both
    serial, parallel = run_both(path, monkeypatch, max_component_steps=sum(ticked) + 4096)
    assert [d.code for d in serial.findings] == ["MV202"] and as_data(parallel) == as_data(serial)


def test_a_function_budget_stops_the_same_runs_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = program(tmp_path, statements=3000)
    serial, parallel = run_both(path, monkeypatch, max_function_steps=1000)
    (note,) = serial.notes
    assert "`body` stopped at its budget (" in note.message
    assert as_data(parallel) == as_data(serial)


def test_one_large_component_is_split_and_many_small_ones_are_not() -> None:
    big = world_items.MIN_SPLIT_COST
    assert world_items.splits([big * 3, 100, 100], 2, lambda n: 6) == [6, 1, 1]
    assert world_items.splits([big, big, big, big], 2, lambda n: 6) == [1, 1, 1, 1]  # each a worker's share
    assert world_items.splits([big - 1], 2, lambda n: 6) == [1]  # too small to pay for a worker
    assert world_items.splits([big * 3, 100], 2, lambda n: 1) == [1, 1]  # one world: nothing to split


def test_spawned_workers_run_worlds_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where fork is not used (macOS, Windows), a world's worker gets the files' bytes and parses them again."""
    import multiprocessing

    monkeypatch.setattr(scheduler, "_context", lambda: (multiprocessing.get_context("spawn"), False))
    serial, parallel = run_both(program(tmp_path), monkeypatch)
    assert [d.code for d in parallel.findings] == ["MV202"] and as_data(parallel) == as_data(serial)


def test_what_a_world_sends_back_keeps_the_choices_told_by_identity() -> None:
    import pickle

    from devicelint.choices import NO_TEST, ValueTest

    assert pickle.loads(pickle.dumps(NO_TEST)) is NO_TEST
    test = ValueTest("--device#1", (True, False))
    assert pickle.loads(pickle.dumps(test)) == test
