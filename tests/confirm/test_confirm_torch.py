"""``devicelint confirm`` on PyTorch programs: run under the torch observer, judged like Burn programs.

* which programs are PyTorch programs (they import torch and never mention runtime_shim);
* a program written here, run by confirm's own launcher (fresh and preloaded), whose recorded
  failures (a caught one and a non-raising one) are judged against hand-built diagnostics through
  the matching API, so this does not depend on the analyzer's MV2xx rules;
* an uncaught failure, a declared one, and the real-mode fallback to fake CUDA;
* ``devicelint confirm fixtures/torch`` end to end: every program runs under the observer to its end
  and every ``# expect:`` marker is judged at its line; misses and false alarms must be zero for the
  codes that have a registered rule (all of them once the MV2xx rules land; none before).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from devicelint.cli import main  # noqa: E402
from devicelint.confirm.launch import Run, missing_cuda, run_programs  # noqa: E402
from devicelint.confirm.match import AGREE, MISS, NOT_REACHED, compare  # noqa: E402
from devicelint.confirm.programs import (  # noqa: E402
    SHIM_RUNTIME,
    TORCH_RUNTIME,
    Program,
    find_programs,
    imports_torch,
    runtime_of,
)
from devicelint.confirm.session import Options, collect  # noqa: E402
from devicelint.confirm.sites import Lines, observe, predict  # noqa: E402
from devicelint.diagnostics import Diagnostic, Severity  # noqa: E402
from devicelint.rules import all_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TORCH_FIXTURES = REPO / "fixtures" / "torch"
sys.path.insert(0, str(REPO / "tests" / "analyzer"))
from fixture_support import load_fixture  # noqa: E402


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


# --- which programs are PyTorch programs ------------------------------------------------------------

KINDS = {
    "plain_torch.py": "import torch\nprint(torch.ones(2))\n",
    "from_torch.py": "from torch import nn\nprint(nn.Linear(2, 2))\n",
    "dotted.py": "def f():\n    import torch.nn.functional as F\n    return F\n",
    "shim_and_torch.py": "import torch\nfrom runtime_shim import Device\n",
    "shim.py": "from runtime_shim import Device\n",
    "mentions_only.py": "# import torch\nprint('import torch')\n",
    "relative.py": "from .torch import thing\n",
    "torchvision_only.py": "import torchvision\n",
    "app/__main__.py": "from app import model\nmodel.run()\n",
    "app/__init__.py": "",
    "app/model.py": "import torch\n\ndef run():\n    print(torch.zeros(1))\n",
}


def test_program_kind_detection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, KINDS)
    monkeypatch.chdir(tmp_path)
    files = [str(p) for p in tmp_path.rglob("*.py")]
    programs = find_programs([str(tmp_path)], files)
    sources = {f: Path(f).read_bytes() for f in files}
    kinds = {p.name: runtime_of(p, sources) for p in programs}
    assert kinds == {
        "plain_torch.py": TORCH_RUNTIME, "from_torch.py": TORCH_RUNTIME, "dotted.py": TORCH_RUNTIME,
        "shim_and_torch.py": SHIM_RUNTIME, "shim.py": SHIM_RUNTIME, "app": TORCH_RUNTIME,
        "mentions_only.py": None, "relative.py": None, "torchvision_only.py": None,
    }
    assert not imports_torch(b"x = (\n")  # unparsable: no import seen
    # confirm runs the first two kinds and leaves the rest out
    collected, _files = collect(Options(paths=[str(tmp_path)]))
    assert {p.name: p.runtime for p in collected} == {k: v for k, v in kinds.items() if v is not None}


# --- one program: run by confirm, matched through the API --------------------------------------------

PROGRAM = """\
    import torch

    x = torch.ones(3, device="cuda")
    y = torch.ones(3)
    try:
        z = x + y
    except RuntimeError:
        z = x + y.to(x.device)
    z.to("cpu")
    print(z.device)
    """
# (line, column, end line, end column) of `x + y` on line 6 and of `z.to("cpu")` on line 9, 1-based characters
ADD = (6, 9, 6, 14)
DISCARD = (9, 1, 9, 12)


def _diagnostic(path: str, code: str, severity: Severity, span: tuple[int, int, int, int]) -> Diagnostic:
    return Diagnostic(code, "hand-built", severity, f"{code} predicted by hand", path, *span)


@pytest.mark.parametrize("preload", [False, True], ids=["fresh", "preloaded"])
def test_torch_program_runs_under_the_observer_and_matches(tmp_path: Path, preload: bool) -> None:
    _write(tmp_path, {"mismatch.py": PROGRAM})
    path = os.path.realpath(tmp_path / "mismatch.py")
    programs, _files = collect(Options(paths=[path]))
    assert [p.runtime for p in programs] == [TORCH_RUNTIME]
    (run,) = run_programs(programs, profile_of=lambda p: "burn-2026-08", real_of=lambda p: False, timeout=120,
                          jobs=1, preload=preload)
    assert (run.status, run.mode) == ("ok", "virtual"), f"{run.detail}\n{run.stderr}"
    assert "cuda:0" in run.stdout  # fake CUDA by default
    failures = sorted((r["line"], r["outcome"]["code"], r["mode"]) for r in run.records)
    # every failure is recorded: the one the program caught and the one that raises nothing
    assert failures == [(6, "MV201", "fake"), (9, "MV206", "fake")]
    assert all(r["profile"].startswith("torch-") and os.path.realpath(r["file"]) == path for r in run.records)

    lines = Lines()
    observed: dict = {}
    observe(run.records, run.program.name, {path}, lines, observed)
    assert set(observed[path]) == {ADD, DISCARD}

    def judged(*diagnostics: Diagnostic) -> set[tuple[int, int, str, str]]:
        predicted: dict = {}
        predict(diagnostics, predicted)
        return {(site.span[0], site.span[1], v.kind, v.code)
                for site in compare(observed, predicted, {path}, lines, "burn-2026-08") for v in site.verdicts}

    # an error at the same span; a warning ("some paths") for the same code on the same line, where the
    # analyzer names another part of the statement (`.to` itself): both agree, shown where predicted
    assert judged(_diagnostic(path, "MV201", Severity.ERROR, ADD),
                  _diagnostic(path, "MV206", Severity.WARNING, (9, 3, 9, 12))) == {
        (6, 9, AGREE, "MV201"), (9, 3, AGREE, "MV206")}
    # nothing predicted: both recorded failures are misses
    assert judged() == {(6, 9, MISS, "MV201"), (9, 1, MISS, "MV206")}
    # another code on the same line does not pair by line (the call it names may never have run): not reached
    assert judged(_diagnostic(path, "MV203", Severity.ERROR, (6, 13, 6, 14))) == {
        (6, 9, MISS, "MV201"), (9, 1, MISS, "MV206"), (6, 13, NOT_REACHED, "MV203")}
    # an error at the failing call with another code: the call ran and did not fail with it
    assert ("false alarm", "MV207") in {(kind, code) for _r, _c, kind, code in
                                        judged(_diagnostic(path, "MV207", Severity.ERROR, ADD))}


def _confirm(root: Path, *args: str) -> tuple[int, dict]:
    out = root.parent / f"{root.name}-confirm.json"
    status = main(["confirm", "--no-cache", "--timeout", "120", "--output-format", "json", "-o", str(out),
                   *args, str(root)])
    return status, json.loads(out.read_text())


def test_uncaught_and_declared_failures(tmp_path: Path) -> None:
    root = tmp_path / "ends"
    body = """\
        import torch

        logits = torch.randn(4, 3, device="cuda")
        print(logits.argmax(dim=1).numpy())
        """
    _write(root, {"uncaught.py": body, "declared.py": "# expect-failure: MV203 at line 5\n" + textwrap.dedent(body)})
    status, doc = _confirm(root)
    programs = {Path(p["program"]).name: p for p in doc["programs"]}
    assert {name: (p["runtime"], p["status"]) for name, p in programs.items()} == {
        "uncaught.py": ("torch", "dispatch"), "declared.py": ("torch", "expected")}
    # the failing call's line in the program, not the torch frame the exception came out of
    assert programs["uncaught.py"]["detail"].endswith("uncaught.py:4)"), programs["uncaught.py"]["detail"]
    assert "MV203" in programs["uncaught.py"]["detail"]
    sites = {(Path(s["filename"]).name, s["location"]["row"]): s for s in doc["sites"]}
    assert sites[("uncaught.py", 4)]["runtime"]["failures"] == {"MV203": 1}
    assert sites[("declared.py", 5)]["runtime"]["failures"] == {"MV203": 1}
    assert status == 1  # the undeclared uncaught failure (and, until MV203 has a rule, the misses)


def _cuda_devices() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def test_real_mode_without_cuda_falls_back_to_fake_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if _cuda_devices():
        pytest.skip("this machine has a CUDA device: nothing to fall back from")
    root = tmp_path / "real"
    _write(root, {"needs_cuda.py": PROGRAM,
                  "host_only.py": """\
                      import torch

                      device = "cuda" if torch.cuda.is_available() else "cpu"
                      print((torch.ones(2, device=device) + torch.ones(2)).device)
                      """})
    _status, doc = _confirm(root, "--real")
    programs = {Path(p["program"]).name: p for p in doc["programs"]}
    needs = programs["needs_cuda.py"]
    assert (needs["mode"], needs["status"]) == ("virtual", "ok")
    assert needs["fallback"].startswith("needs CUDA, which this machine does not provide ("), needs["fallback"]
    assert (programs["host_only.py"]["mode"], programs["host_only.py"]["fallback"]) == ("real", None)
    rows = {(Path(s["filename"]).name, s["location"]["row"]) for s in doc["sites"] if s["runtime"]}
    assert rows == {("needs_cuda.py", 6), ("needs_cuda.py", 9)}  # the fake-CUDA rerun's records
    main(["confirm", "--no-cache", "--timeout", "120", "--real", str(root)])
    assert "needs_cuda.py: ran with virtual devices (fake CUDA): needs CUDA" in capsys.readouterr().out


def test_which_real_runs_need_cuda() -> None:
    """PyTorch's refusals of a CUDA device, whichever build or machine; not other crashes (on any machine)."""
    program = Program("p.py", "path", "/p.py", "/", ["/p.py"], runtime=TORCH_RUNTIME)

    def run(status: str, detail: str = "", stderr: str = "") -> Run:
        return Run(program, "real", "burn-2026-08", status, detail=detail, stderr=stderr)

    assert missing_cuda(run("crashed", "AssertionError: Torch not compiled with CUDA enabled")) == (
        "needs CUDA, which this machine does not provide (Torch not compiled with CUDA enabled)")
    assert "invalid device ordinal" in missing_cuda(run("crashed", "torch.AcceleratorError: CUDA error: invalid "
                                                                   "device ordinal"))
    assert missing_cuda(run("crashed", "killed by signal 6 (no result from the program)",
                            "RuntimeError: Found no NVIDIA driver on your system.\n")) is not None
    # DataParallel(device_ids=[0, 1]) on a one-GPU machine
    assert "Invalid device id" in missing_cuda(run("crashed", "AssertionError: Invalid device id"))
    assert missing_cuda(run("crashed", "ZeroDivisionError: division by zero")) is None
    assert missing_cuda(run("ok")) is None
    assert missing_cuda(run("timeout", "Torch not compiled with CUDA enabled")) is None


# --- devicelint confirm fixtures/torch ---------------------------------------------------------------

PROGRAMS = sorted(TORCH_FIXTURES.glob("*.py"))
#: MV2xx codes the analyzer has a rule for: only these can be judged strictly (the rules are landing)
RULED = {rule.code for rule in all_rules() if rule.code.startswith("MV2")}


@pytest.fixture(scope="module")
def torch_confirmed(torch_fixtures_confirmed: dict) -> dict:
    """``devicelint confirm --no-cache --timeout 180 --output-format json fixtures/torch`` from the repository's
    root, run once per test session (tests/torch_fixture_runs.py; the observer's tests read its runs too)."""
    doc = torch_fixtures_confirmed["doc"]
    return {"status": torch_fixtures_confirmed["status"], "doc": doc, "unrunnable": _needs_a_second_gpu(doc)}


def _needs_a_second_gpu(doc: dict) -> set[str]:
    """Programs fake mode cannot run here: a CUDA build of torch with one GPU rejects a fake ``cuda:1`` (fake
    CUDA devices are for CPU builds, as in CI; a real second GPU needs a two-GPU machine)."""
    import torch

    if not (torch.cuda.is_available() and torch.cuda.device_count() < 2):
        return set()
    return {p["program"] for p in doc["programs"]
            if p["status"] == "crashed" and "invalid device ordinal" in (p.get("detail") or "")}


def test_every_torch_fixture_ran_under_the_observer(torch_confirmed: dict) -> None:
    doc = torch_confirmed["doc"]
    programs = {p["program"]: p for p in doc["programs"]}
    assert set(programs) == {os.path.relpath(p, REPO) for p in PROGRAMS}
    unrunnable = torch_confirmed["unrunnable"]
    for program in PROGRAMS:
        run = programs[os.path.relpath(program, REPO)]
        if run["program"] in unrunnable:
            continue
        assert (run["runtime"], run["mode"], run["status"]) == ("torch", "virtual", "ok"), run
        assert run["fallback"] is None and run["command"].startswith("python fixtures/torch/")
        fixture = load_fixture(program)
        # the observer records failures only: one at least per error marker, none in a correct program
        if fixture.errors or fixture.warnings:
            assert run["records"] >= len(fixture.errors), run
        else:
            assert run["records"] == 0, run
    assert doc["summary"]["programs_not_run_to_end"] == len(unrunnable)


def test_every_marker_is_judged_at_its_line(torch_confirmed: dict) -> None:
    """Each ``# expect:`` failure was recorded and judged there: an agreement once its rule exists,
    a miss before; so was each ``# expect-warning:`` ("some paths") the run took; every recorded failure
    is at a marker (the observer's own test says so too)."""
    judged: dict[tuple[str, int, str], str] = {}
    for site in torch_confirmed["doc"]["sites"]:
        path = str((REPO / site["filename"]).resolve())
        for verdict in site["verdicts"]:
            if verdict["code"]:
                judged[(path, site["location"]["row"], verdict["code"])] = verdict["kind"]
    fixtures = [load_fixture(program) for program in PROGRAMS
                if os.path.relpath(program, REPO) not in torch_confirmed["unrunnable"]]
    errors = {marker for fixture in fixtures for marker in fixture.errors}
    warnings = {marker for fixture in fixtures for marker in fixture.warnings}
    failed = {(str((REPO / s["filename"]).resolve()), s["location"]["row"], code)
              for s in torch_confirmed["doc"]["sites"] if s["runtime"] for code in s["runtime"]["failures"]}
    assert errors <= failed, sorted(errors - failed)
    assert failed <= errors | warnings, sorted(failed - errors - warnings)
    for marker in sorted(failed):
        assert judged.get(marker) in (AGREE, MISS), (Path(marker[0]).name, *marker[1:], judged.get(marker))
        if marker[2] in RULED:
            assert judged[marker] == AGREE, (Path(marker[0]).name, *marker[1:], judged[marker])


def test_zero_misses_and_false_alarms_for_ruled_codes(torch_confirmed: dict) -> None:
    """Strict for every MV2xx code with a registered rule; the rest wait for their rule (see RULED)."""
    doc = torch_confirmed["doc"]
    problems = [f"{s['filename']}:{s['location']['row']}:{s['location']['column']}: {v['kind']} {v['code']}: "
                f"{v['detail']}" for s in doc["sites"] for v in s["verdicts"]
                if v["kind"] in ("miss", "false alarm", "reveal mismatch") and (v["code"] in RULED or not v["code"])]
    assert not problems, "\n".join(problems)
    marked = {code for program in PROGRAMS for _f, _l, code in
              load_fixture(program).errors | load_fixture(program).warnings}
    if marked <= RULED and not torch_confirmed["unrunnable"]:  # every rule landed: the whole run confirms
        assert doc["summary"]["confirmed"] is True and torch_confirmed["status"] == 0
