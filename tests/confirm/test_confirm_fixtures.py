"""``devicelint confirm`` over every fixture, virtual devices: the analysis and the runtime agree.

One confirm run for the whole module (one analysis per profile/backends group, programs in
parallel). Besides the zero counts, the agreements are checked against the fixtures' own
markers, so a confirm that judged nothing could not pass. ``fixtures/torch/`` (PyTorch programs,
confirmed under the torch observer) is left out here: ``test_confirm_torch.py`` confirms it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from devicelint.cli import main

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "analyzer"))
from fixture_support import all_fixtures  # noqa: E402

TORCH_DIR = REPO / "fixtures" / "torch"
# the runtime_shim fixtures (the PyTorch ones are test_confirm_torch.py's)
FIXTURES = [f for f in all_fixtures() if TORCH_DIR not in (f.path, *f.path.parents)]
# everything in fixtures/ but the PyTorch programs (what `devicelint confirm fixtures` runs, less those)
PATHS = sorted(str(p.relative_to(REPO)) for p in (REPO / "fixtures").iterdir()
               if p != TORCH_DIR and (p.suffix == ".py" or p.is_dir()))


@pytest.fixture(scope="module")
def confirmed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("confirm") / "confirm.json"
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        started = time.monotonic()
        status = main(["confirm", "--no-cache", "--output-format", "json", "-o", str(out), *PATHS])
        seconds = time.monotonic() - started
    finally:
        os.chdir(cwd)
    document = json.loads(out.read_text())
    print(f"confirm over {len(FIXTURES)} fixtures: {seconds:.1f} s; {document['summary']}")
    return {"status": status, "doc": document}


def test_zero_misses_false_alarms_and_reveal_mismatches(confirmed: dict) -> None:
    summary = confirmed["doc"]["summary"]
    problems = [f"{s['filename']}:{s['location']['row']}:{s['location']['column']}: {v['kind']} {v['code']}: "
                f"{v['detail']}" for s in confirmed["doc"]["sites"] for v in s["verdicts"]
                if v["kind"] in ("miss", "false alarm", "reveal mismatch")]
    assert not problems, "\n".join(problems)
    assert (summary["misses"], summary["false_alarms"], summary["reveal_mismatches"]) == (0, 0, 0)
    failed = [p for p in confirmed["doc"]["programs"] if p["status"] not in ("ok", "expected")]
    assert not failed, failed
    assert summary["confirmed"] is True
    assert confirmed["status"] == 0


def test_every_fixture_ran_once_in_its_mode(confirmed: dict) -> None:
    programs = {p["program"]: p for p in confirmed["doc"]["programs"]}
    assert set(programs) == {os.path.relpath(f.path, REPO) for f in FIXTURES}
    for fixture in FIXTURES:
        run = programs[os.path.relpath(fixture.path, REPO)]
        assert (run["mode"], run["profile"]) == (fixture.mode, fixture.profile), fixture.name
        assert run["records"] > 0, fixture.name
        expected_command = "python -m" if fixture.is_package else "python"
        assert run["command"].startswith(expected_command + " "), run["command"]


def test_agreements_cover_every_marker(confirmed: dict) -> None:
    """Every ``# expect:`` failure and every ``# reveal:`` is an agreement at its line."""
    agreed: set[tuple[str, int, str]] = set()
    for site in confirmed["doc"]["sites"]:
        path = str((REPO / site["filename"]).resolve())
        for verdict in site["verdicts"]:
            if verdict["kind"] == "agree":
                agreed.add((path, site["location"]["row"], verdict["code"] or "reveal"))
    missing = []
    for fixture in FIXTURES:
        for file, line, code in fixture.errors:
            if (file, line, code) not in agreed:
                missing.append(f"{Path(file).name}:{line}: {code}")
        for file, line in fixture.reveals:
            if (file, line, "reveal") not in agreed:
                missing.append(f"{Path(file).name}:{line}: reveal")
    assert not missing, "markers confirm did not agree on:\n" + "\n".join(missing)
    summary = confirmed["doc"]["summary"]
    assert summary["sites_executed"] > summary["agreements"] > 0
