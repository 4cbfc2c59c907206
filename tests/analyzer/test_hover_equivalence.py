"""One analysis, whatever asks: the editor's run (expressions recorded for hover, which also turns pass reuse off)
reports exactly the findings of the command line's run, on the fixtures and on generated programs
(bench/generated_programs.py)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from devicelint.runner import check, check_source
from devicelint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from bench.generated_programs import generate_seeded  # noqa: E402


def findings(paths: list[str], settings: Settings) -> list[dict]:
    return [d.to_json() for d in check(paths, settings).diagnostics]


@pytest.mark.parametrize("folder", ["fixtures", "fixtures/torch", "examples"])
def test_recording_expressions_changes_no_finding(folder: str, all_rules_findings: Callable[[str], list]) -> None:
    settings = Settings(jobs=1, select=("ALL",))
    normal = all_rules_findings(folder)  # findings([str(REPO / folder)], settings), made once per session
    editor = findings([str(REPO / folder)], dataclasses.replace(settings, record_expressions=True))
    assert editor == normal
    assert normal  # the comparison is about real findings


@pytest.mark.parametrize("seed", range(40))
def test_recording_expressions_changes_no_finding_on_generated_programs(seed: int) -> None:
    source = generate_seeded(seed, max_statements=30)
    settings = Settings(jobs=1, select=("ALL",))
    normal = [d.to_json() for d in check_source(source, "generated.py", settings).diagnostics]
    editor = [d.to_json() for d in check_source(source, "generated.py",
                                                 dataclasses.replace(settings, record_expressions=True)).diagnostics]
    assert editor == normal
