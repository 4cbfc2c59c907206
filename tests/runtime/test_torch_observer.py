"""The PyTorch observer (runtime_shim.torch_observer): every fixtures/torch program runs under it in
fake mode and fails exactly at its ``# expect:`` markers; unit tests of the classifier, the
discarded-result check and the command line.

The programs' runs are those of ``devicelint confirm fixtures/torch``, made once per test session and read by
confirm's tests too (tests/torch_fixture_runs.py): one process each under the observer, two at a time, forked
from one launcher that imported torch and torch._dynamo once (FakeTensorMode's start-up: seconds per fresh
interpreter). The observer's own command line and ``run_program`` are tested below.
"""

from __future__ import annotations

import importlib.util
import io
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import real_cuda_count  # noqa: E402

from runtime_shim import torch_semantics  # noqa: E402
from runtime_shim.torch_observer import cli, sites  # noqa: E402
from runtime_shim.torch_observer.classify import (  # noqa: E402
    RULES,
    Operand,
    classify,
    code_for_message,
    mismatch_code,
)

REPO = Path(__file__).resolve().parents[2]
TORCH_FIXTURES = REPO / "fixtures" / "torch"


def _fixture_support():
    """The analyzer tests' marker reader (one marker syntax for every fixture)."""
    spec = importlib.util.spec_from_file_location("fixture_support_for_torch",
                                                  REPO / "tests" / "analyzer" / "fixture_support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SUPPORT = _fixture_support()
PROGRAMS = sorted(TORCH_FIXTURES.glob("*.py"))


def _one_real_gpu() -> bool:
    """A CUDA build of torch on a machine with one GPU: its device guard rejects a fake ``cuda:1`` (fake CUDA
    devices are for CPU builds; a real second GPU needs a two-GPU machine)."""
    return real_cuda_count() == 1


def _needed_a_second_gpu(outcome: Observed) -> bool:
    return outcome.status != "ok" and "invalid device ordinal" in f"{outcome.detail}\n{outcome.stderr}"


NO_FAKE_SECOND_GPU = "fake cuda:1 needs a CPU build of torch; this CUDA build has one GPU"


@dataclass
class Observed:
    """One program's run under the observer, as confirm's launcher returned it."""

    status: str  # "ok" when it ran to its end (see devicelint.confirm.launch.Run)
    detail: str
    stderr: str
    records: list[dict]


@pytest.fixture(scope="module")
def outcomes(torch_fixtures_confirmed: dict) -> dict[str, Observed]:
    runs = torch_fixtures_confirmed["runs"]
    assert set(runs) == {os.path.realpath(p) for p in PROGRAMS}
    observed = {}
    for program in PROGRAMS:
        run = runs[os.path.realpath(program)]
        assert (run["runtime"], run["mode"]) == ("torch", "virtual"), run  # virtual: fake CUDA
        observed[program.name] = Observed(run["status"], run["detail"], run["stderr"], run["records"])
    return observed


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_fixture_fails_exactly_at_its_markers(program: Path, outcomes: dict[str, Observed]) -> None:
    outcome = outcomes[program.name]
    if _one_real_gpu() and _needed_a_second_gpu(outcome):
        pytest.skip(NO_FAKE_SECOND_GPU)
    if real_cuda_count() and outcome.status in ("crashed", "exit"):
        # fake mode is built for CPU builds (CI); a GPU machine runs these programs for real instead
        # (`devicelint confirm --real fixtures/torch`, docs/gpu-runs.md)
        pytest.skip(f"fake mode on a CUDA build of torch: {outcome.detail}")
    assert outcome.status == "ok", f"{outcome.status}: {outcome.detail}\n{outcome.stderr[-3000:]}"
    fixture = SUPPORT.load_fixture(program)
    errors = {(line, code) for _file, line, code in fixture.errors}
    marked = errors | {(line, code) for _file, line, code in fixture.warnings}
    failures = [r for r in outcome.records if isinstance(r.get("outcome"), dict)]
    assert all(Path(r["file"]) == program.resolve() for r in failures), failures
    assert all(r["mode"] == "fake" and r["profile"].startswith("torch-") for r in failures)
    # a failure is marked where it happens or, caused by an argument, at a call of the program that led there
    reported = [((r["line"], r["outcome"]["code"]),
                 {(r["line"], r["outcome"]["code"]),
                  *((line, r["outcome"]["code"]) for file, line, _col in r.get("callers", ())
                    if Path(file) == program.resolve())})
                for r in failures]
    # every error the analyzer predicts happens; every failure that happens is predicted (error or warning: fake
    # CUDA answers torch.cuda.is_available() with True, so warnings of that world happen too)
    happened = set().union(*(lines for _call, lines in reported))
    assert errors <= happened, f"predicted errors that did not happen: {sorted(errors - happened)}"
    unmarked = sorted({call for call, lines in reported if not lines & marked})
    assert not unmarked, f"failures nothing predicted: {unmarked}"


def test_fixture_set_covers_every_rule() -> None:
    assert len(PROGRAMS) >= 16
    fixtures = [SUPPORT.load_fixture(p) for p in PROGRAMS]
    marked = {code for f in fixtures for _file, _line, code in f.errors | f.warnings}
    assert marked == set(RULES)
    assert sum(not f.errors for f in fixtures) >= 5  # correct programs that must stay quiet


def test_torch_programs_are_analyzer_fixtures_marked_as_torch() -> None:
    torch_fixtures = [f for f in SUPPORT.all_fixtures() if TORCH_FIXTURES in f.path.parents]
    assert len(torch_fixtures) == len(PROGRAMS) and all(f.torch for f in torch_fixtures)


# --- the classifier -------------------------------------------------------------------------------

FAKE_MISMATCH = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
CUDA_MISMATCH = ("Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
                 "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)")


@pytest.mark.parametrize(("message", "code"), [
    ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
     "MV203"),
    ("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.", "MV204"),
    ("can't optimize a non-leaf Tensor", "MV205"),
    ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
     "populated during autograd.backward().", "MV205"),
    ("you can only change requires_grad flags of leaf variables.", "MV205"),
    ("you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
     "subgraph that doesn't require differentiation use var_no_grad = var.detach().", "MV205"),
    ("indices should be either on cpu or on the same device as the indexed tensor (cpu)", "MV207"),
    ("Can't export tensors that require gradient, use tensor.detach()", "MV208"),
    ("mat1 and mat2 shapes cannot be multiplied (4x3 and 4x2)", None),
    (FAKE_MISMATCH, None),  # the mismatch family needs the operands
])
def test_code_for_message(message: str, code: str | None) -> None:
    assert code_for_message(message) == code


CPU, CUDA0, CUDA1 = "cpu", "cuda:0", "cuda:1"


@pytest.mark.parametrize(("operands", "code"), [
    ([Operand(CUDA0, 2), Operand(CPU, 2)], "MV201"),
    ([Operand(CUDA0, 2), Operand(CUDA1, 2)], "MV201"),
    ([Operand(CUDA0, 2), Operand(CPU, 0)], None),  # a 0-dim CPU tensor is a scalar
    ([Operand(CPU, 2), Operand(CUDA0, 0)], "MV201"),  # the exemption is for CPU scalars only
    ([Operand(CUDA0, 1), Operand(CUDA0, 2)], None),
    ([Operand(CPU, 2), Operand(CUDA0, 2, in_module=True), Operand(CUDA0, 1, in_module=True)], "MV202"),
    ([Operand(CUDA1, 2), Operand(CUDA0, 2, in_module=True)], "MV202"),
    ([Operand(CUDA0, 2, in_module=True), Operand(CPU, 1, in_module=True)], "MV202"),  # half-moved module
    ([Operand(CUDA0, 2), Operand(CUDA0, 2, in_module=True), Operand(CPU, 2)], "MV202"),  # an input elsewhere
    ([Operand(CUDA0, 2), Operand(CPU, 1, is_index=True)], "MV207"),
    ([Operand(CPU, 2), Operand(CUDA0, 1, is_index=True)], "MV207"),
    ([Operand(CUDA0, 2), Operand(CUDA0, 2, is_index=True), Operand(CPU, 2)], "MV201"),  # scatter's src elsewhere
    ([Operand(CPU, 1, is_index=True), Operand(CUDA0, 2, in_module=True)], "MV202"),  # nn.Embedding: module first
])
def test_mismatch_code(operands: list[Operand], code: str | None) -> None:
    assert mismatch_code(operands) == code


@pytest.mark.parametrize(("operands", "op", "message"), [
    ([Operand(CPU, 2), Operand(CUDA0, 1, is_index=True)], "__getitem__",
     "indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
    ([Operand(CUDA0, 2), Operand(CUDA1, 1, is_index=True)], "__setitem__",
     "indices should be either on cpu or on the same device as the indexed tensor (cuda:0)"),
    # values on another device than the indexed tensor (a CPU index): index_put_'s common message
    ([Operand(CPU, 2), Operand(CPU, 1, is_index=True), Operand(CUDA0, 1)], "__setitem__",
     "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!"),
    ([Operand(CPU, 2), Operand(CUDA0, 1, is_index=True)], "gather",
     "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!"),
])
def test_failure_message_names_the_indexed_device_for_indexing(operands: list[Operand], op: str,
                                                               message: str) -> None:
    assert torch_semantics.failure_message(operands, op) == message
    assert classify(message, operands) == mismatch_code(operands, op)  # the observer reads it back as the same rule


def test_classify_mismatch_texts_need_a_device_split() -> None:
    operands = [Operand(CUDA0, 2), Operand(CPU, 2)]
    assert classify(FAKE_MISMATCH, operands) == classify(CUDA_MISMATCH, operands) == "MV201"
    assert classify(FAKE_MISMATCH, []) == "MV201"  # operands unseen: the text is enough
    assert classify("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same",
                    [Operand(CPU, 4), Operand(CUDA0, 4, in_module=True)]) == "MV202"
    # an RNN's hidden state on another device than its input (PyTorch's own check, before any kernel)
    hidden = ("Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor "
              "at cpu")
    assert classify(hidden, [Operand(CUDA0, 3), Operand(CPU, 3), Operand(CUDA0, 2, in_module=True)]) == "MV202"
    # FakeTensorMode's own wording for index_put_ (``t[idx] = cpu_values``); real CUDA says MV201's text
    fake_put = "Mismatching aten.index_put_.default device between self (cuda:0) and values (cpu)"
    assert classify(fake_put, [Operand(CUDA0, 2), Operand(CUDA0, 1, is_index=True), Operand(CPU, 2)]) == "MV201"
    # ``torch.stft``'s own check of its window; FakeTensorMode's meta check of ``index_add_`` (an index operand)
    stft = "stft input and window must be on the same device but got self on cuda:0 and window on cpu"
    assert classify(stft, [Operand(CUDA0, 2), Operand(CPU, 1)]) == "MV201"
    index_add = ("index_add(): self, index and source expected to be in the same device, but got (self) cuda:0, "
                 "(index) cpu, and (source) cuda:0")
    assert classify(index_add, [Operand(CUDA0, 2), Operand(CPU, 1, is_index=True), Operand(CUDA0, 2)]) == "MV207"
    assert classify("something else entirely", operands) is None


def test_result_discarded_reads_the_call_site() -> None:
    # As for Tensor.to: a C function (here sorted) calls back into Python; the frame above the
    # callback is the one executing the call.
    seen: list[bool] = []

    def probe(value: int) -> int:
        seen.append(sites.result_discarded(sys._getframe(1)))
        return value

    def caller() -> list[int]:
        sorted([1], key=probe)
        kept = sorted([1], key=probe)
        return kept + sorted([2], key=probe)

    caller()
    assert seen == [True, False, False]


# --- the command line and real mode ------------------------------------------------------------------

def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


ENDING_PROGRAM = """
    # expect-failure: MV203 at line 5
    import torch

    logits = torch.randn(4, 3, device="cuda")
    scores = logits.softmax(dim=1).numpy()
    print("not reached")
"""

REAL_PROGRAM = """
    import numpy as np
    import torch

    w = torch.randn(3, requires_grad=True)
    try:
        w.numpy()
    except RuntimeError as error:
        print(type(error).__name__)
    w.to("cpu")
    try:
        torch.optim.SGD([w * 2], lr=0.1)
    except ValueError as error:
        print(type(error).__name__)
    try:
        np.from_dlpack(w)
    except BufferError as error:
        print(type(error).__name__)
    x = torch.randn(2, 2)
    print(x.sum().item() == x.numpy().sum().item())
"""


def test_cli_reports_the_failure_that_ended_a_program(tmp_path: Path) -> None:
    program = write(tmp_path, "ending.py", ENDING_PROGRAM)
    out = io.StringIO()
    status = cli.main([str(program)], out=out)
    lines = out.getvalue().splitlines()
    assert status == 0, lines
    assert lines[0].startswith("torch observer: mode: fake, torch-")
    assert lines[1] == (f"{program}:5:10: MV203 can't convert cuda:0 device type tensor to numpy. "
                        "Use Tensor.cpu() to copy the tensor to host memory first. [as expected]")
    assert lines[-1].startswith("programs: 1, ok: 0, dispatch failures: 1, expected failures matched: 1")


def test_real_mode_classifies_torchs_own_errors(tmp_path: Path) -> None:
    program = write(tmp_path, "real.py", REAL_PROGRAM)
    outcome = cli.run_program(program, real=True)
    assert outcome.status == "ok", outcome.stderr
    assert outcome.stdout.split() == ["RuntimeError", "ValueError", "BufferError", "True"]
    failures = [(r["line"], r["outcome"]["code"], r["mode"]) for r in outcome.records]
    assert failures == [(6, "MV204", "real"), (9, "MV206", "real"), (11, "MV205", "real"),
                        (15, "MV208", "real")]


def test_fake_mode_raises_what_torch_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if _one_real_gpu():
        pytest.skip(NO_FAKE_SECOND_GPU)
    program = write(tmp_path, "types.py", """
        import torch

        a, b = torch.ones(2, device="cuda:0"), torch.ones(2, device="cuda:1")
        try:
            a + b
        except Exception as error:
            print(type(error).__module__, type(error).__name__)
        print(torch.cuda.is_available(), torch.cuda.device_count(), torch.ones(1).cuda().device)
        torch.cuda.set_device(1)
        print(torch.zeros(1, device="cuda").device, f"{torch.tensor(2.5):.1f}", torch.tensor([2.5]).cuda().tolist())
        torch.save({"w": torch.nn.Linear(2, 2).cuda().weight, "epoch": 3}, "ckpt.pt")
        checkpoint = torch.load("ckpt.pt", map_location="cuda:1")
        print(checkpoint["epoch"], checkpoint["w"].device, torch.load("ckpt.pt")["w"].device)
        ids = torch.as_tensor([1, 2], device="cuda")  # as_tensor takes no requires_grad (it made the observer crash)
        print(ids.device, torch.as_tensor(ids, device="cuda") is ids)
    """)
    with monkeypatch.context() as patch:
        patch.chdir(tmp_path)
        outcome = cli.run_program(program)
    assert outcome.status == "ok", outcome.stderr
    # Values fake mode knows (CPU constants) read back as they are; CUDA values as zeros. Checkpoints
    # hold host zeros and load onto the device map_location names.
    assert outcome.stdout.splitlines() == ["builtins RuntimeError", "True 2 cuda:0", "cuda:1 2.5 [0.0]",
                                           "3 cuda:1 cpu", "cuda:1 True"]
