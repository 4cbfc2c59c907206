"""Profile burn-next lifts MV101: the fixtures that panic across backends under their profile, analysed and
run under burn-next, agree site by site with no MV101 on either side, and the moved tensors stay autodiff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from devicelint import lift
from devicelint.cli import main
from devicelint.domain import DeviceAtom, Origin, PlainDev, TensorAtom, V
from fixture_support import REPO, all_fixtures

from runtime_shim.semantics import AF, DEFAULT_PROFILE, CheckpointingStrategy, Role

PROFILE = "burn-next"
# The fixtures that expect MV101 (written against another profile; their headers name it).
CROSS_BACKEND = [f for f in all_fixtures() if not f.torch
                 and any(code == "MV101" for _file, _line, code in f.errors | f.warnings)]
_PROFILE_HEADER = re.compile(r"#\s*fixture\s*:.*\bprofile=")


def _copy_without_profile_headers(fixture_path: Path, root: Path) -> Path:
    """A copy of the fixture under ``root`` whose profile headers are blank comments (lines keep their numbers)."""
    target = root / fixture_path.relative_to(REPO / "fixtures")
    sources = sorted(fixture_path.rglob("*.py")) if fixture_path.is_dir() else [fixture_path]
    for source in sources:
        copy = target / source.relative_to(fixture_path) if fixture_path.is_dir() else target
        copy.parent.mkdir(parents=True, exist_ok=True)
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        copy.write_text("".join("#\n" if _PROFILE_HEADER.match(line) else line for line in lines), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def confirmed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``devicelint confirm --profile burn-next`` over copies of the fixtures (so no header overrides it)."""
    root = tmp_path_factory.mktemp("next")
    programs = [str(_copy_without_profile_headers(f.path, root).relative_to(root)) for f in CROSS_BACKEND]
    out = root / "confirm.json"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        status = main(["confirm", "--no-cache", "--profile", PROFILE, "--output-format", "json", "-o", str(out),
                       *programs])
    finally:
        os.chdir(cwd)
    return {"status": status, "doc": json.loads(out.read_text()), "root": root}


def test_there_are_cross_backend_fixtures_to_lift() -> None:
    assert len(CROSS_BACKEND) >= 5, [f.name for f in CROSS_BACKEND]


def test_analysis_and_runtime_agree_without_mv101(confirmed: dict) -> None:
    doc = confirmed["doc"]
    verdicts = [(s["filename"], s["location"]["row"], v) for s in doc["sites"] for v in s["verdicts"]]
    problems = [f"{name}:{row}: {v['kind']} {v['code']}: {v['detail']}" for name, row, v in verdicts
                if v["kind"] in ("miss", "false alarm", "reveal mismatch")]
    assert not problems, "\n".join(problems)
    assert not [(name, row) for name, row, v in verdicts if v["code"] == "MV101"]
    assert all(p["profile"] == PROFILE and p["status"] in ("ok", "expected") for p in doc["programs"]), doc["programs"]
    assert doc["summary"]["confirmed"] is True and confirmed["status"] == 0


def test_former_mv101_sites_now_run(confirmed: dict) -> None:
    """The lines that panicked with MV101 run clean under burn-next (each fixture reaches some of them; a
    fallback in an ``except DispatchError`` handler is no longer reached once the move works)."""
    executed: dict[tuple[str, int], list[dict]] = {}
    for site in confirmed["doc"]["sites"]:
        original = REPO / "fixtures" / (confirmed["root"] / site["filename"]).resolve().relative_to(
            confirmed["root"].resolve())
        executed.setdefault((str(original), site["location"]["row"]), []).extend(site["verdicts"])
    for fixture in CROSS_BACKEND:
        former = [(file, line) for file, line, code in fixture.errors | fixture.warnings if code == "MV101"]
        reached = [site for site in former if site in executed]
        assert reached, f"{fixture.name}: no former MV101 site ran"
        for site in reached:
            assert not [v for v in executed[site] if v["code"]], (site, executed[site])


@pytest.mark.parametrize(("role", "moved_role"), [(Role.TRACKED, Role.NON_LEAF), (Role.NON_LEAF, Role.NON_LEAF),
                                                  (Role.UNTRACKED, Role.UNTRACKED)])
def test_the_lift_keeps_the_autodiff_state_across_backends(role: Role, moved_role: Role) -> None:
    balanced = CheckpointingStrategy.BALANCED
    tensor = TensorAtom("float", PlainDev("Flex"), AF, balanced, role)
    target = DeviceAtom(PlainDev("Cuda", None, 0), True, CheckpointingStrategy.DISABLED)
    lifted = lift.move(PROFILE, V(tensor), V(target), frozenset(), Origin("m.py", 3, 0, "x"))
    assert [(p.code, p.row) for p in lifted.possibilities] == [(None, "move.5")]
    (moved,) = lifted.results.atoms
    assert (moved.dev, moved.cls, moved.strategy, moved.role) == (PlainDev("Cuda", None, 0), AF, balanced, moved_role)
    default = lift.move(DEFAULT_PROFILE, V(tensor), V(target), frozenset(), Origin("m.py", 3, 0, "x"))
    assert [p.code for p in default.possibilities] == ["MV101"]
