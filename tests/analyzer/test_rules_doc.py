"""docs/rules.md is generated from the rules' docstrings and is up to date; every diagnostic's URL points at a
heading of that page."""

from __future__ import annotations

import re

import pytest
from devicelint.cli import main
from devicelint.diagnostics import rule_url
from devicelint.rules import all_rules
from devicelint.rules_doc import PAGE, render
from devicelint.rules_doc import main as rules_doc_main


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-``/``_`` dropped, spaces to ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_page_is_up_to_date() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), "run `python -m devicelint.rules_doc`"
    assert rules_doc_main(["--check"]) == 0


def test_every_rule_url_names_a_heading_of_the_page() -> None:
    anchors = {_github_anchor(line[3:]) for line in render().splitlines() if line.startswith("## ")}
    for rule in all_rules():
        page, anchor = rule_url(rule.code, rule.name).split("#")
        assert page == "docs/rules.md" and anchor in anchors, rule.code


def test_each_rule_has_its_documentation_on_the_page() -> None:
    text = render()
    for rule in all_rules():
        assert f"## {rule.code} ({rule.name})" in text
        assert rule.summary() in text
    assert "\n## What it does" not in text  # a rule's own sections are subsections of its heading


def test_rules_markdown_prints_the_page(capsys: pytest.CaptureFixture) -> None:
    assert main(["rules", "--markdown"]) == 0
    assert capsys.readouterr().out == render()


def test_check_reports_a_stale_page(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    stale = tmp_path / "rules.md"
    stale.write_text("# Rules\n", encoding="utf-8")
    monkeypatch.setattr("devicelint.rules_doc.PAGE", stale)
    assert rules_doc_main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert rules_doc_main([]) == 0 and stale.read_text(encoding="utf-8") == render()
    assert rules_doc_main(["--bogus"]) == 2


def test_runtime_rules_say_in_which_profiles_they_fire(capsys: pytest.CaptureFixture) -> None:
    """The page and `devicelint explain` name the profiles a rule fires in, from the tables."""
    text = render()
    mv150 = text.split("## MV150 (")[1].split("\n## ")[0]
    assert "Never under `burn-0.21`" in mv150  # there the move fails (MV102) instead
    mv106 = text.split("## MV106 (")[1].split("\n## ")[0]
    assert "(`backend.mixed`): only under `burn-2026-08`, `burn-0.21`" in mv106  # d16f7ba2ed merges them
    assert main(["explain", "MV108"]) == 0
    out = capsys.readouterr().out
    assert "## Profiles" in out and "(`api.with_strategy-float`): only under `burn-d16f7ba` (default)" in out
    assert main(["explain", "MV201"]) == 0
    assert "Profiles" not in capsys.readouterr().out  # a PyTorch rule: no profile concerns it
