"""The example programs, run by ``python -m runtime_shim``, and unit tests of the runner.

The examples always run on virtual devices (``RUNTIME_SHIM_VIRTUAL=1``), so
this file needs no GPU whichever mode the test session runs in.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runtime_shim import runner

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

HEADER = "runtime_shim runner: mode: virtual, profile: burn-d16f7ba"

EXPECTED_EXAMPLE_LINES = [
    "examples/burn/capture_graph.py: ok",
    "examples/burn/checkpointing_mismatch.py:50:14: MV107 Gradient checkpointing strategy mismatch: Balanced vs "
    "Disabled. Tensors in the same operation must share a strategy. [as expected]",
    "examples/burn/cross_backend_autodiff.py:47:14: MV101 Autodiff tensor cannot be moved between backends. "
    "[as expected]",
    "examples/burn/export_weights.py: ok",
    "examples/burn/export_weights_broken.py:41:26: MV102 Cannot move between autodiff and non-autodiff instances. "
    "[as expected]",
    "examples/burn/gradient_on_other_gpu.py: ok",
    "examples/burn/multi_backend_eval.py: ok",
    "examples/burn/train_mlp.py: ok",
]
EXPECTED_EXAMPLE_SUMMARY = ("programs: 8, ok: 5, dispatch failures: 3, expected failures matched: 3, crashes: 0, "
                            "timeouts: 0 -> all as expected")


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_SHIM_")}
    env.update(extra)
    return env


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runtime_shim", *args], cwd=REPO, capture_output=True, text=True,
                          env=child_env(RUNTIME_SHIM_VIRTUAL="1"), timeout=timeout)


def dedent(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(dedent(source), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_inherited_settings(monkeypatch):
    """In-process runs pass the environment on: start from the defaults whatever the shell set."""
    for name in ("RUNTIME_SHIM_PROFILE", "RUNTIME_SHIM_RECORD", "RUNTIME_SHIM_VIRTUAL"):
        monkeypatch.delenv(name, raising=False)


def run_main(*args: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    status = runner.main(list(args), out=out)
    return status, out.getvalue().splitlines()


# --- the examples ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def examples_run() -> subprocess.CompletedProcess:
    return run_cli("examples/burn/")


def test_examples_exit_zero(examples_run):
    assert examples_run.returncode == 0, examples_run.stdout + examples_run.stderr
    assert "Traceback" not in examples_run.stdout + examples_run.stderr


def test_examples_report(examples_run):
    lines = examples_run.stdout.splitlines()
    assert lines[0].startswith(HEADER + ", timeout: ")
    assert lines[1:-1] == EXPECTED_EXAMPLE_LINES  # every example, sorted, with its verdict
    assert lines[-1] == EXPECTED_EXAMPLE_SUMMARY


def test_every_failing_example_declares_it():
    """An example that is meant to fail says so (and where) in its top comment."""
    for line in EXPECTED_EXAMPLE_LINES:
        match = re.match(r"(examples/\S+\.py):(\d+):\d+: (MV\d{3}) ", line)
        if match:
            declared = runner.read_expectation(REPO / match[1])
            assert declared == runner.Expectation(match[3], int(match[2])), match[1]
        else:
            assert runner.read_expectation(REPO / line.split(":")[0]) is None


# --- the PyTorch examples, under the observer (fake CUDA) ---------------------------------------

EXPECTED_TORCH_LINES = [
    "examples/torch/calibrate_temperature.py:24:17: MV205 can't optimize a non-leaf Tensor [as expected]",
    "examples/torch/evaluate_checkpoint.py:36:32: MV203 can't convert cuda:0 device type tensor to numpy. "
    "Use Tensor.cpu() to copy the tensor to host memory first. [as expected]",
    "examples/torch/train_regression.py: ok",
    "examples/torch/train_text_classifier.py:42:18: MV202 Expected all tensors to be on the same device, but "
    "found at least two devices, cuda:0 and cpu! [as expected]",
]
EXPECTED_TORCH_SUMMARY = ("programs: 4, ok: 1, dispatch failures: 3, expected failures matched: 3, crashes: 0, "
                          "timeouts: 0 -> all as expected")


@pytest.fixture(scope="module")
def torch_examples_run() -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runtime_shim.torch_observer", "examples/torch/"], cwd=REPO,
                          capture_output=True, text=True, env=child_env(), timeout=600)


def test_torch_examples_fail_where_they_declare(torch_examples_run):
    assert torch_examples_run.returncode == 0, torch_examples_run.stdout + torch_examples_run.stderr
    lines = torch_examples_run.stdout.splitlines()
    assert lines[0].startswith("torch observer: mode: fake, ")
    assert lines[1:-1] == EXPECTED_TORCH_LINES
    assert lines[-1] == EXPECTED_TORCH_SUMMARY


def test_the_analyzer_names_each_examples_failure_and_nothing_else():
    """The quick start's promise: each example's declared failure is the one finding the analyzer reports
    in it (an error, or a warning naming the CUDA case where the script picks its device with
    ``torch.cuda.is_available()``), and a clean example has none."""
    from devicelint.runner import check
    from devicelint.settings import Settings

    report = check([str(EXAMPLES)], Settings(jobs=1))
    found: dict[str, set[tuple[str, int]]] = {}
    for finding in report.findings:
        found.setdefault(Path(finding.file).resolve().relative_to(REPO).as_posix(), set()).add(
            (finding.code, finding.row))
    declared = {}
    for program in sorted(EXAMPLES.rglob("*.py")):
        expectation = runner.read_expectation(program)
        if expectation is not None:
            declared[program.relative_to(REPO).as_posix()] = {(expectation.code, expectation.line)}
    assert found == declared
    assert any(name.startswith("examples/torch/") for name in declared)
    assert any(name.startswith("examples/burn/") for name in declared)


# --- the runner on tiny programs ---------------------------------------------------------------

OK_PROGRAM = """
    from runtime_shim import Device, Tensor

    t = Tensor.ones((2, 2), Device.flex()) * 3.0
    print(t.sum().into_scalar())
"""

# The failing call, `weights.to_device(...)`, is on line 4 and starts at column 12 (1-based).
FAILING_PROGRAM = """
    from runtime_shim import Device, Tensor

    weights = Tensor.ones((2, 2), Device.flex().autodiff()).require_grad()
    exported = weights.to_device(Device.ndarray())
    print("not reached")
"""


def test_success(tmp_path):
    program = write(tmp_path, "fine.py", OK_PROGRAM)
    outcome = runner.run_program(program)
    assert outcome.status == "ok" and outcome.passed
    assert outcome.stdout.strip() == "12.0"
    assert outcome.records and all(r["outcome"] == "ok" and r["mode"] == "virtual" for r in outcome.records)

    status, lines = run_main(str(program))
    assert status == 0
    assert lines[1] == f"{program}: ok"
    assert lines[-1].startswith("programs: 1, ok: 1, dispatch failures: 0, expected failures matched: 0, crashes: 0")


def test_dispatch_failure_line_and_column(tmp_path):
    program = write(tmp_path, "export.py", FAILING_PROGRAM)
    outcome = runner.run_program(program)
    assert outcome.status == "dispatch"
    assert (outcome.code, outcome.line, outcome.col) == ("MV102", 4, 11)  # recorded col: 0-based
    assert Path(outcome.file) == program.resolve()
    assert "not reached" not in outcome.stdout

    status, lines = run_main(str(program))
    assert status == 1  # an undeclared failure
    assert lines[1] == f"{program}:4:12: MV102 Cannot move between autodiff and non-autodiff instances."
    assert "dispatch failures: 1" in lines[-1]


def test_declared_failure_matches(tmp_path):
    program = write(tmp_path, "declared.py", "# expect-failure: MV102 at line 5\n" + dedent(FAILING_PROGRAM))
    status, lines = run_main(str(program))
    assert status == 0
    assert lines[1] == f"{program}:5:12: MV102 Cannot move between autodiff and non-autodiff instances. [as expected]"
    assert "expected failures matched: 1" in lines[-1]


@pytest.mark.parametrize("declaration, why", [
    ("# expect-failure: MV102 at line 3", "declared MV102 at line 3, got MV102 at line 5"),
    ("# expect-failure: MV101 at line 5", "declared MV101 at line 5, got MV102 at line 5"),
])
def test_declared_failure_mismatch(tmp_path, declaration, why):
    program = write(tmp_path, "declared.py", declaration + "\n" + dedent(FAILING_PROGRAM))
    status, lines = run_main(str(program))
    assert status == 1
    assert lines[1].endswith(f"[UNEXPECTED: {why}]")


def test_declared_failure_that_does_not_happen(tmp_path):
    program = write(tmp_path, "fine.py", "# expect-failure: MV105 at line 4\n" + dedent(OK_PROGRAM))
    status, lines = run_main(str(program))
    assert status == 1
    assert lines[1] == f"{program}: ok [UNEXPECTED: declared MV105 at line 4, but the program completed]"


def test_malformed_declaration(tmp_path):
    program = write(tmp_path, "fine.py", "# expect-failure: line 4\n" + dedent(OK_PROGRAM))
    status, lines = run_main(str(program))
    assert status == 1
    assert "UNEXPECTED: malformed declaration" in lines[1]


def test_crash_is_not_a_dispatch_failure(tmp_path):
    program = write(tmp_path, "crash.py", """
        from runtime_shim import Device, Tensor

        total = Tensor.ones((3,), Device.flex()).sum().into_scalar()
        mean = total / 0
    """)
    outcome = runner.run_program(program)
    assert outcome.status == "crashed" and outcome.code is None
    assert outcome.detail == "ZeroDivisionError: float division by zero"

    result = run_cli(str(program))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[1] == f"{program}: crashed: ZeroDivisionError: float division by zero (at {program}:4)"
    assert lines[-1].startswith("programs: 1, ok: 0, dispatch failures: 0, expected failures matched: 0, crashes: 1")


def test_timeout(tmp_path):
    pid_file = tmp_path / "pid"
    program = write(tmp_path, "sleepy.py", f"""
        import os
        import time

        with open({str(pid_file)!r}, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(30)
    """)
    started = time.monotonic()
    status, lines = run_main("--timeout", "1", str(program))
    assert time.monotonic() - started < 15
    assert status == 1
    assert lines[0].endswith("timeout: 1 s, 1 program")
    assert lines[1] == f"{program}: timed out after 1 s"
    assert lines[-1].endswith("crashes: 0, timeouts: 1 -> 1 not as expected")
    assert _gone(int(pid_file.read_text()))


def _gone(pid: int) -> bool:
    """The process no longer runs (it may linger as a zombie until its reaper collects it)."""
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def test_missing_path_is_a_usage_error(tmp_path):
    result = run_cli(str(tmp_path / "nope.py"))
    assert result.returncode == 2
    assert "no such file or directory" in result.stderr and "nope.py" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("args, message", [
    (["--profile", "burn-9.9"], "unknown profile 'burn-9.9'"),
    (["--timeout", "0"], "--timeout must be positive"),
    ([], "the following arguments are required"),
])
def test_other_usage_errors(tmp_path, args, message):
    program = write(tmp_path, "fine.py", OK_PROGRAM)
    result = run_cli(*args, *([str(program)] if args else []))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_directory_is_expanded_sorted(tmp_path):
    write(tmp_path, "b.py", OK_PROGRAM)
    write(tmp_path, "a.py", OK_PROGRAM)
    (tmp_path / "sub").mkdir()
    write(tmp_path, "sub/c.py", OK_PROGRAM)
    (tmp_path / "__pycache__").mkdir()
    write(tmp_path, "__pycache__/junk.py", "raise SystemExit(1)\n")
    assert runner.collect_programs([str(tmp_path)]) == [tmp_path / "a.py", tmp_path / "b.py", tmp_path / "sub/c.py"]


def test_profile_reaches_the_program(tmp_path):
    """A plain float moved to an autodiff device: ok at burn-d16f7ba and burn-2026-08, MV102 at burn-0.21."""
    program = write(tmp_path, "legacy.py", """
        from runtime_shim import Device, Tensor

        x = Tensor.ones((2,), Device.flex()).to_device(Device.flex().autodiff())
    """)
    status, lines = run_main(str(program))
    assert status == 0 and lines[1] == f"{program}: ok"
    status, lines = run_main("--profile", "burn-0.21", str(program))
    assert status == 1
    assert lines[0].startswith("runtime_shim runner: mode: virtual, profile: burn-0.21")
    assert lines[1] == f"{program}:3:5: MV102 Cannot move between autodiff and non-autodiff instances."


def test_real_mode_header(tmp_path):
    program = write(tmp_path, "fine.py", OK_PROGRAM)  # Flex runs everywhere, real or virtual
    status, lines = run_main("--real", str(program))
    assert status == 0
    assert lines[0].startswith("runtime_shim runner: mode: real, profile: burn-d16f7ba")
    assert runner.run_program(program, real=True).records[0]["mode"] == "real"


def test_caught_dispatch_failure_is_ok(tmp_path):
    program = write(tmp_path, "careful.py", """
        from runtime_shim import Device, DispatchError

        try:
            Device.flex().gradient_checkpointing()
        except DispatchError as error:
            print("caught", error.code)
    """)
    status, lines = run_main(str(program))
    assert status == 0
    assert lines[1] == f"{program}: ok (1 other dispatch failure caught by the program)"
