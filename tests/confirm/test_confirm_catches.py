"""``devicelint confirm`` on programs written to be wrong: each disagreement is caught and named.

The programs use what the analyzer deliberately does not follow (``setattr`` with a string,
switching the profile at run time, a target-backends header that does not describe the
machine), so the analysis and the run disagree in a known way at a known call.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from devicelint.cli import main

WRONG = {
    # the analyzer believes Config.device is Flex; at run time it is NdArray
    "wrong_state.py": """\
        from runtime_shim import Device, DispatchError, Tensor, reveal_device


        class Config:
            device = Device.flex()


        exec("Config.device = Device.ndarray()")  # not followed by the analysis
        reveal_device(Config.device)
        try:
            Tensor.ones([2], Config.device) + Tensor.ones([2], Device.flex())
        except DispatchError as error:
            print(error)
        print(Tensor.ones([2], Config.device) + Tensor.ones([2], Device.ndarray()))
        """,
    # burn-0.21 at run time: the move the analyzer (burn-2026-08) only warns about (MV150) fails with MV102
    "profile_switch.py": """\
        import runtime_shim
        from runtime_shim import Device, DispatchError, Tensor

        runtime_shim.set_profile("burn-0.21")
        x = Tensor.ones([2], Device.flex())
        try:
            x.to_device(Device.flex().autodiff())
        except DispatchError:
            pass
        """,
    # a header that says the target has only Flex: NdArray is an error for the analyzer, fine at run time
    "wrong_target.py": """\
        # fixture: backends=Flex
        from runtime_shim import Device, Tensor

        print(Tensor.ones([2], Device.ndarray()).to_list())
        """,
    # a warning (MV150) whose call runs fine: listed, allowed
    "advisory.py": """\
        from runtime_shim import Device, Tensor

        x = Tensor.ones([2], Device.flex())
        print(x.to_device(Device.flex().autodiff()).to_list())
        """,
    "crash.py": """\
        from runtime_shim import Device, Tensor

        x = Tensor.ones([2], Device.flex())
        print(1 / 0)
        """,
    "slow.py": """\
        import time

        from runtime_shim import Device, Tensor

        x = Tensor.ones([2], Device.flex())
        time.sleep(3600)
        """,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


# Generous: a program's start (an interpreter, numpy, torch in real mode) can take seconds on a loaded machine, and
# only slow.py is meant to time out (every run here waits it out, twice in this file: no longer than it must).
PROGRAM_TIMEOUT = 15


def _confirm(root: Path, *extra: str) -> tuple[int, dict]:
    out = root.parent / f"{root.name}.json"
    status = main(["confirm", "--no-cache", "--timeout", str(PROGRAM_TIMEOUT), "--output-format", "json",
                   "-o", str(out), *extra, str(root)])
    return status, json.loads(out.read_text()) if out.exists() else {}


def _verdicts(doc: dict, name: str) -> set[tuple[int, int, str, str]]:
    return {(s["location"]["row"], s["location"]["column"], v["kind"], v["code"] or "")
            for s in doc["sites"] if Path(s["filename"]).name == name for v in s["verdicts"]}


@pytest.fixture(scope="module")
def wrong(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path]:
    root = tmp_path_factory.mktemp("wrong") / "programs"
    _write(root, WRONG)
    status, doc = _confirm(root, "--preload")  # the forking launcher (test_fresh_interpreters_...: without)
    return status, doc, root


def test_a_miss_is_caught(wrong: tuple[int, dict, Path]) -> None:
    status, doc, _root = wrong
    assert (7, 5, "miss", "MV102") in _verdicts(doc, "profile_switch.py")
    assert (11, 5, "miss", "MV105") in _verdicts(doc, "wrong_state.py")
    assert status == 1


def test_a_false_alarm_is_caught(wrong: tuple[int, dict, Path]) -> None:
    _status, doc, _root = wrong
    assert (14, 7, "false alarm", "MV105") in _verdicts(doc, "wrong_state.py")
    assert (4, 24, "false alarm", "MV112") in _verdicts(doc, "wrong_target.py")


def test_a_reveal_mismatch_is_caught(wrong: tuple[int, dict, Path]) -> None:
    _status, doc, _root = wrong
    assert (9, 1, "reveal mismatch", "") in _verdicts(doc, "wrong_state.py")
    # printing a tensor is not a reveal: nothing is judged at the print call
    assert not {v for v in _verdicts(doc, "wrong_state.py") if v[0] == 14 and v[1] == 1}


def test_an_unconfirmed_warning_is_listed_not_failed(wrong: tuple[int, dict, Path]) -> None:
    _status, doc, _root = wrong
    assert _verdicts(doc, "advisory.py") == {(4, 7, "unconfirmed", "MV150")}
    assert doc["summary"]["unconfirmed_warnings"] >= 1


def test_crash_and_timeout_are_reported(wrong: tuple[int, dict, Path]) -> None:
    _status, doc, _root = wrong
    programs = {Path(p["program"]).name: p for p in doc["programs"]}
    assert programs["crash.py"]["status"] == "crashed"
    assert "ZeroDivisionError" in programs["crash.py"]["detail"]
    assert programs["slow.py"]["status"] == "timeout"
    assert programs["advisory.py"]["status"] == "ok"
    assert doc["summary"]["programs_not_run_to_end"] == 2
    summary = doc["summary"]
    assert (summary["misses"], summary["false_alarms"], summary["reveal_mismatches"]) == (2, 2, 1)
    assert summary["confirmed"] is False


def test_text_output_has_the_table_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "p", {"crash.py": WRONG["crash.py"], "advisory.py": WRONG["advisory.py"]})
    status = main(["confirm", "--no-cache", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert status == 1
    assert "executed  agree  miss  false alarm  unconfirmed  reveal mismatch" in out
    assert "advisory.py:4:7: unconfirmed MV150" in out
    assert "crash.py: crashed: ZeroDivisionError: division by zero" in out
    assert out.rstrip().splitlines()[-1].startswith("sites executed: ")
    assert out.rstrip().endswith("NOT confirmed")


GOOD = {
    # columns: CPython counts UTF-8 bytes, the analyzer characters
    "unicode_columns.py": """\
        from runtime_shim import Device, DispatchError, Tensor

        w = Tensor.ones([2], Device.flex().autodiff())
        try:
            étiquette = "é"; w.to_device(Device.ndarray())  # noqa: E702
        except DispatchError:
            pass
        """,
    # a multi-line call, and two additions that start at the same column (only the outer one fails)
    "spans.py": """\
        from runtime_shim import Device, DispatchError, Tensor

        a = Tensor.ones([2], Device.flex())
        b = Tensor.ones([2], Device.ndarray())
        w = Tensor.ones([2], Device.flex().autodiff())
        try:
            a + a + b
        except DispatchError:
            pass
        try:
            w.to_device(
                Device.flex().autodiff(),
            ).to_device(Device.ndarray().autodiff())
        except DispatchError:
            pass
        """,
    # declared: the program is written to stop on this failure
    "declared.py": """\
        # expect-failure: MV108 at line 4
        from runtime_shim import Device, Tensor

        Tensor.ones([2], Device.flex()).backward()
        """,
    # a package run as python -m pkg, with a relative import
    "pkg/__init__.py": "",
    "pkg/__main__.py": """\
        from runtime_shim import reveal_device

        from .devices import TRAIN

        reveal_device(TRAIN)
        """,
    "pkg/devices.py": """\
        from runtime_shim import Device

        TRAIN = Device.ndarray().autodiff()
        """,
    "not_a_program.py": "print('never mentions the runtime')\n",
}


def test_agreement_on_columns_spans_packages_and_declared_failures(tmp_path: Path) -> None:
    root = tmp_path / "good"
    _write(root, GOOD)
    status, doc = _confirm(root)
    assert status == 0, json.dumps(doc, indent=1)[:3000]
    assert _verdicts(doc, "unicode_columns.py") == {(5, 22, "agree", "MV102")}
    spans = _verdicts(doc, "spans.py")
    assert spans == {(7, 5, "agree", "MV105"), (11, 5, "agree", "MV101")}
    programs = {p["program"]: p for p in doc["programs"]}
    names = {Path(name).name for name in programs}
    assert names == {"unicode_columns.py", "spans.py", "declared.py", "pkg"}
    pkg = next(p for p in programs.values() if p["program"].endswith("pkg"))
    assert pkg["command"] == "python -m pkg" and pkg["status"] == "ok"
    assert next(p for p in programs.values() if p["program"].endswith("declared.py"))["status"] == "expected"
    assert _verdicts(doc, "__main__.py") == {(5, 1, "agree", "")}


def _cuda_devices() -> int:
    """This machine's CUDA devices (not from conftest: several test directories have one)."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def test_real_mode_without_enough_gpus_falls_back_to_virtual(tmp_path: Path) -> None:
    if _cuda_devices() >= 2:
        pytest.skip("this machine has two GPUs: nothing to fall back from")
    root = tmp_path / "gpus"
    _write(root, {
        "two_gpus.py": """\
            from runtime_shim import Device, DispatchError, Tensor

            a = Tensor.ones([2], Device.cuda(0))
            try:
                a + Tensor.ones([2], Device.cuda(1))
            except DispatchError:
                pass
            """,
        "host_only.py": """\
            from runtime_shim import Device, DispatchError

            try:
                Device.metal()
            except DispatchError:
                pass
            """,
    })
    status, doc = _confirm(root, "--real")
    programs = {Path(p["program"]).name: p for p in doc["programs"]}
    two = programs["two_gpus.py"]
    gpus = _cuda_devices()
    assert two["mode"] == "virtual"
    assert re.fullmatch(rf"needs cuda:\d+, this machine has {gpus} CUDA devices?", two["fallback"]), two["fallback"]
    assert programs["host_only.py"]["mode"] == "real" and programs["host_only.py"]["fallback"] is None
    assert (5, 5, "agree", "MV105") in _verdicts(doc, "two_gpus.py")
    # on real devices the analysis targets this machine's backends: Metal is not among them
    assert _verdicts(doc, "host_only.py") == {(4, 5, "agree", "MV112")}
    assert status == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["confirm", "no/such/dir"], "no/such/dir: No such file or directory"),
    (["confirm", "--timeout", "0", "."], "--timeout must be positive"),
    (["confirm", "--entry", "not a module!", "."], "--entry not a module!"),
])
def test_bad_input_is_one_line(argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_no_programs_and_bad_headers_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "lib", {"lib/__init__.py": "import runtime_shim\n"})
    assert main(["confirm", "--no-cache", str(tmp_path / "lib")]) == 2
    assert "no programs to run" in capsys.readouterr().err
    _write(tmp_path / "bad", {"bad.py": "# fixture: profile=burn-1999\nimport runtime_shim\n"})
    assert main(["confirm", "--no-cache", str(tmp_path / "bad")]) == 2
    assert "unknown profile 'burn-1999'" in capsys.readouterr().err


def test_an_unparsable_program_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "broken", {"broken.py": "import runtime_shim\nx = (\n"})
    assert main(["confirm", "--no-cache", str(tmp_path / "broken")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("devicelint: error: ") and "broken.py:2:5: cannot parse file" in err
    assert len(err.splitlines()) == 1


def test_entries_choose_the_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "proj", {**{k: v for k, v in GOOD.items() if k.startswith("pkg/")},
                               "advisory.py": WRONG["advisory.py"], "crash.py": WRONG["crash.py"]})
    monkeypatch.chdir(tmp_path / "proj")
    status, doc = _confirm(tmp_path / "proj", "--entry", "pkg", "--entry", "advisory.py")
    assert status == 0
    assert sorted((p["program"], p["command"]) for p in doc["programs"]) == [
        ("advisory.py", "python advisory.py"), ("pkg", "python -m pkg")]


def test_fresh_interpreters_judge_the_same(tmp_path: Path, wrong: tuple[int, dict, Path]) -> None:
    """--no-preload (one fresh interpreter per program) gives the same verdicts and statuses."""
    _status, preloaded, _root = wrong
    names = ("wrong_state.py", "crash.py", "advisory.py")
    _write(tmp_path / "fresh", {name: WRONG[name] for name in names})
    status, fresh = _confirm(tmp_path / "fresh", "--no-preload")
    assert status == 1
    for name in names:
        assert _verdicts(fresh, name) == _verdicts(preloaded, name), name
    assert {Path(p["program"]).name: p["status"] for p in fresh["programs"]} == {
        "wrong_state.py": "ok", "crash.py": "crashed", "advisory.py": "ok"}


NOT_REACHED_PROGRAM = """\
    # expect-failure: MV102 at line 10
    from runtime_shim import Device, Tensor


    def export(t):
        return t.to_device(Device.ndarray().autodiff())


    weights = Tensor.random([2], Device.flex().autodiff()).require_grad()
    moved = weights.to_device(Device.ndarray())
    print(moved.backward())
    print((moved + Tensor.ones([2], Device.flex())).to_list())
    """


def test_findings_after_the_failure_that_ended_the_run_are_not_reached(tmp_path: Path) -> None:
    """The analysis goes on past the failure at line 10 and reports the two bugs after it (``backward()`` of the plain
    tensor the move was meant to give, then backends mixed); the run stops at line 10: they are "not reached",
    never false alarms."""
    _write(tmp_path / "p", {"stops.py": NOT_REACHED_PROGRAM})
    status, doc = _confirm(tmp_path / "p")
    assert status == 0, doc["summary"]
    verdicts = _verdicts(doc, "stops.py")
    assert (10, 9, "agree", "MV102") in verdicts
    assert {(row, code) for row, _c, kind, code in verdicts if kind == "not reached"} == {(11, "MV108"),
                                                                                         (12, "MV105")}
    summary = doc["summary"]
    assert (summary["false_alarms"], summary["misses"], summary["not_reached"]) == (0, 0, 2)
    [row] = doc["files"]
    assert row["not_reached"] == 2
