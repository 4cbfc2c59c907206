"""Every fixture: the analyzer's diagnostics equal the markers, and runtime_shim confirms them.

Analysis: the set of (line, code) errors, (line, code) warnings and (line, text)
reveals must equal the markers exactly (missing and unexpected both fail).

Execution (virtual devices unless the fixture says ``mode=real``): the program
runs to its end; every ``# expect:`` error site is in the record with that code;
every failure the runtime records in a fixture file is on a line marked with
that code (error or warning); every ``# reveal:`` line was reached and each
runtime reveal text is one of the marker's alternatives.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

import pytest
from devicelint.rules import all_rules
from devicelint.runner import check
from devicelint.settings import Settings, parse_backends
from fixture_support import Fixture, all_fixtures, reveal_matches, run_group

from runtime_shim.profiles import PROFILE_NAMES

FIXTURES = all_fixtures()
# PyTorch programs run under the torch observer instead (tests/runtime/test_torch_observer.py)
RUNTIME_FIXTURES = [f for f in FIXTURES if not f.torch]


def _analyze(fixture: Fixture):
    settings = Settings(profile=fixture.profile,
                        backends=parse_backends(fixture.backends) if fixture.backends else None)
    report = check([str(fixture.path.resolve())], settings)
    errors, warnings, reveals = set(), set(), {}
    inner = {(str(Path(d.inner.file).resolve()), d.inner.row, d.code) for d in report.diagnostics if d.inner}
    for d in report.diagnostics:
        key = str(Path(d.file).resolve())
        if d.code == "":
            reveals[(key, d.row)] = d.message.removeprefix("reveal_device: ")
        elif d.severity.value == "error":
            errors.add((key, d.row, d.code))
        else:
            warnings.add((key, d.row, d.code))
    return errors, warnings, inner, reveals, report


def _show(items) -> str:
    return "\n".join(f"  {Path(f).name}:{line}: {what}" for f, line, what in sorted(items)) or "  (none)"


@pytest.mark.parametrize("fixture", [f for f in RUNTIME_FIXTURES if not f.profile_pinned], ids=str)
def test_outcome_without_a_profile_header_is_the_same_in_every_profile(fixture: Fixture) -> None:
    """A fixture whose outcome depends on the profile says so: its header names the profile."""
    findings = _analyze(fixture)[:4]
    for profile in PROFILE_NAMES:
        if profile != fixture.profile:
            other = _analyze(dataclasses.replace(fixture, profile=profile))[:4]
            assert other == findings, (f"{fixture} analyses differently under {profile} than under "
                                       f"{fixture.profile}: name its profile in a `# fixture: profile=` header")


@pytest.mark.parametrize("fixture", FIXTURES, ids=str)
def test_analysis_matches_markers(fixture: Fixture) -> None:
    errors, warnings, inner, reveals, report = _analyze(fixture)
    problems = []
    if errors != fixture.errors:
        problems.append(f"errors: missing\n{_show(fixture.errors - errors)}\n"
                        f"unexpected\n{_show(errors - fixture.errors)}")
    if warnings != fixture.warnings:
        problems.append(f"warnings: missing\n{_show(fixture.warnings - warnings)}\n"
                        f"unexpected\n{_show(warnings - fixture.warnings)}")
    if inner != fixture.inner:
        problems.append(f"inner locations: missing\n{_show(fixture.inner - inner)}\n"
                        f"unexpected\n{_show(inner - fixture.inner)}")
    if reveals != fixture.reveals:
        expected = {(f, line, text) for (f, line), text in fixture.reveals.items()}
        got = {(f, line, text) for (f, line), text in reveals.items()}
        problems.append(f"reveals: expected\n{_show(expected - got)}\ngot\n{_show(got - expected)}")
    if problems:
        details = "\n".join(f"  {d.file}:{d.row}:{d.column} {d.code} {d.severity} {d.message}"
                            for d in report.diagnostics)
        pytest.fail("\n".join(problems) + "\nall diagnostics:\n" + details)


@pytest.fixture(scope="session")
def runtime_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[dict]]]:
    groups: dict[tuple[str, str], list[Fixture]] = defaultdict(list)
    for fixture in RUNTIME_FIXTURES:
        groups[(fixture.profile, fixture.mode)].append(fixture)
    out: dict[str, tuple[str, list[dict]]] = {}
    for (profile, mode), members in groups.items():
        record = tmp_path_factory.mktemp("record") / "record.jsonl"
        result = run_group(members, profile, mode, record)
        for fixture in members:
            files = {str(f.resolve()) for f in fixture.files}
            records = [r for r in result.records if r.get("file") in files]
            out[fixture.name] = (result.status.get(fixture.name, "not run:\n" + result.output[-2000:]), records)
    return out


Line = tuple[str, int, str]  # file, line, code


def failure_lines(record: dict) -> tuple[Line, frozenset[Line]]:
    """A recorded failure's call, and the lines that may report it: the call's and those of the user's calls
    that led there (a failure caused by an argument is reported at the call that passed it)."""
    code = record["outcome"]["code"]
    here = (record["file"], record["line"], code)
    return here, frozenset([here, *((file, line, code) for file, line, _col in record.get("callers", ()))])


@pytest.mark.parametrize("fixture", RUNTIME_FIXTURES, ids=str)
def test_runtime_confirms_markers(fixture: Fixture, runtime_runs: dict) -> None:
    status, records = runtime_runs[fixture.name]
    assert status == "ok", f"{fixture.name} did not run to its end under runtime_shim:\n{status}"
    failures = [failure_lines(r) for r in records if r["outcome"] != "ok"]
    # a failure is reported where it happens or, caused by an argument, at a call that led there
    missing = {e for e in fixture.errors if not any(e in lines for _call, lines in failures)}
    assert not missing, f"expected errors the runtime did not raise:\n{_show(missing)}"
    marked = fixture.errors | fixture.warnings
    unmarked = {call for call, lines in failures if not lines & marked}
    assert not unmarked, f"runtime failures without a marker (the analyzer missed them):\n{_show(unmarked)}"
    for (file, line), expected in fixture.reveals.items():
        texts = [r["reveal"] for r in records if r["op"] == "reveal_device" and r["line"] == line and r["file"] == file]
        assert texts, f"{Path(file).name}:{line}: reveal_device was never reached at run time"
        for text in texts:
            assert reveal_matches(expected, text), f"{Path(file).name}:{line}: runtime reveals {text!r}, " \
                                                   f"the marker says {expected!r}"


def test_fixture_corpus_covers_every_rule() -> None:
    assert len(FIXTURES) >= 120
    marked = {code for f in FIXTURES for _file, _line, code in f.errors | f.warnings}
    # MV9xx are the analyzer's own findings (a broken file, an unused suppression): tested in test_cli
    codes = {rule.code for rule in all_rules() if not rule.code.startswith("MV9")}
    assert codes <= marked, f"rules without a fixture: {sorted(codes - marked)}"
    assert any(f.profile == "burn-0.21" for f in FIXTURES)
    assert any(f.path.is_dir() for f in FIXTURES)
