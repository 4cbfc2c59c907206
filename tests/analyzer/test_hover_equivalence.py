"""One analysis, whatever asks: the editor's run (expressions recorded for hover, which also turns pass reuse off)
reports exactly the findings of the command line's run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from analyzer.runner import check
from analyzer.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def findings(paths: list[str], settings: Settings) -> list[dict]:
    return [d.to_json() for d in check(paths, settings).diagnostics]


@pytest.mark.parametrize("folder", ["fixtures", "fixtures/torch", "examples"])
def test_recording_expressions_changes_no_finding(folder: str) -> None:
    settings = Settings(jobs=1, select=("ALL",))
    normal = findings([str(REPO / folder)], settings)
    editor = findings([str(REPO / folder)], dataclasses.replace(settings, record_expressions=True))
    assert editor == normal
    assert normal  # the comparison is about real findings
