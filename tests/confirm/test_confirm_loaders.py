"""``devicelint confirm`` on the DataLoader rules, whose findings sit at the ``DataLoader(...)`` call
(``Rule.reported_at_setup``) while the failure is raised where the loader is iterated: each is judged on the
failures whose records name its call among their callers, and a loader no failure came through stays where it is
(not reached)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from devicelint.cli import main  # noqa: E402
from devicelint.rules import all_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _confirm(paths: list[str], out: Path, cwd: Path) -> dict:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        main(["confirm", "--no-cache", "--timeout", "180", "--output-format", "json", "-o", str(out), *paths])
    finally:
        os.chdir(here)
    return json.loads(out.read_text())


def test_the_loader_rules_are_reported_at_setup() -> None:
    assert {r.code for r in all_rules() if r.reported_at_setup} == {"MV209", "MV210", "MV211"}


def test_loader_findings_agree_through_the_loop_that_fails(tmp_path: Path) -> None:
    program = tmp_path / "loaders.py"
    program.write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        torch.set_default_device("cuda")
        data = TensorDataset(torch.randn(8, 2))
        shuffled = DataLoader(data, batch_size=4, shuffle=True)
        never_iterated = DataLoader(data, batch_size=4, shuffle=True)
        try:
            for (x,) in shuffled:
                pass
        except RuntimeError as error:
            print(error)
        torch.set_default_device(None)
    """).lstrip(), encoding="utf-8")
    doc = _confirm([str(program)], tmp_path / "confirm.json", tmp_path)
    verdicts = {(s["location"]["row"], v["code"]): v["kind"] for s in doc["sites"] for v in s["verdicts"]}
    assert verdicts == {(6, "MV211"): "agree", (7, "MV211"): "not reached"}
    assert doc["summary"]["misses"] == doc["summary"]["false_alarms"] == 0
