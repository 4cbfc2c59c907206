"""Every rule's autofix, end to end: each case is a program that fails (or, for MV150, goes wrong)
with the rule's code. ``devicelint check --fix`` must turn it into exactly the expected text
(formatting and comments kept), the fixed program must analyse clean of that code and run
under runtime_shim without that failure, and a second ``--fix`` must change nothing.
"""

from __future__ import annotations

import contextlib
import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from devicelint.cli import main

from runtime_shim.launcher import PRELOAD as LAUNCHER_PRELOAD
from runtime_shim.launcher import Launcher, preloaded
from runtime_shim.runner import run_program


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    applicability: str
    before: str
    after: str
    runtime_code: str | None = None  # the failure the original program hits at run time (default: ``code``)
    torch: bool = False  # a PyTorch program: run under the torch observer (fake CUDA) instead of runtime_shim
    profile: str | None = None  # the semantics profile where the code fires (default: the default profile)

    @property
    def failure(self) -> str:
        return self.runtime_code or self.code


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# MV150: `Tensor` is imported only inside a function, so the fix imports it at the top.
_MV150_BEFORE = _dedent('''
    """Feed a batch to a model on an autodiff device."""
    from __future__ import annotations

    from runtime_shim import Device


    def load(tracked: bool):
        from runtime_shim import Tensor

        if tracked:
            return Tensor.ones([2], Device.flex().autodiff()).require_grad()
        return Tensor.ones([2], Device.flex())


    device = Device.flex().autodiff()
    batch = load(False).to_device(device)  # inputs
    batch = batch.with_gradient_checkpointing_strategy(device.gradient_checkpointing_strategy())
    loss = (batch * load(True)).sum()
    batch_grad = batch.grad(loss.backward())  # the saliency of the inputs
    ''')
_MV150_AFTER = _dedent('''
    """Feed a batch to a model on an autodiff device."""
    from __future__ import annotations

    from runtime_shim import Tensor
    from runtime_shim import Device


    def load(tracked: bool):
        from runtime_shim import Tensor

        if tracked:
            return Tensor.ones([2], Device.flex().autodiff()).require_grad()
        return Tensor.ones([2], Device.flex())


    device = Device.flex().autodiff()
    batch = Tensor.from_inner(load(False).to_device(device.inner()))  # inputs
    batch = batch.with_gradient_checkpointing_strategy(device.gradient_checkpointing_strategy())
    loss = (batch * load(True)).sum()
    batch_grad = batch.grad(loss.backward())  # the saliency of the inputs
    ''')

CASES = [
    Case("mv102-comment-inside", "MV102", "safe", _dedent("""
        from runtime_shim import Device, Tensor

        weights = Tensor.random([4, 4], Device.flex().autodiff())  # trained elsewhere
        exported = (weights  # keep this comment
                    ).to_device(Device.ndarray())
        print(exported.shape)
        """), _dedent("""
        from runtime_shim import Device, Tensor

        weights = Tensor.random([4, 4], Device.flex().autodiff())  # trained elsewhere
        exported = (weights  # keep this comment
                    ).inner().to_device(Device.ndarray())
        print(exported.shape)
        """)),
    Case("mv101-aliased-module", "MV101", "unsafe", _dedent("""
        import runtime_shim as rs

        weights = rs.Tensor.random([2, 2], rs.Device.flex().autodiff()).require_grad()
        fast, ad = True, rs.Device.ndarray().autodiff()
        moved = weights.to_device(ad if fast else ad)
        loss = (moved * 2.0).sum()
        """), _dedent("""
        import runtime_shim as rs

        weights = rs.Tensor.random([2, 2], rs.Device.flex().autodiff()).require_grad()
        fast, ad = True, rs.Device.ndarray().autodiff()
        moved = rs.Tensor.from_inner(weights.inner().to_device((ad if fast else ad).inner()))
        loss = (moved * 2.0).sum()
        """)),
    Case("mv108-inner-of-plain", "MV108", "safe", _dedent("""
        from runtime_shim import Device, Tensor

        batch = Tensor.ones([2, 3], Device.flex())
        values = batch.inner()  # off the tape
        total = values.sum()
        """), _dedent("""
        from runtime_shim import Device, Tensor

        batch = Tensor.ones([2, 3], Device.flex())
        values = batch  # off the tape
        total = values.sum()
        """), profile="burn-2026-08"),  # at d16f7ba2ed `inner()` of a plain tensor returns it
    Case("mv109-device", "MV109", "safe", _dedent("""
        from runtime_shim import Device, Tensor

        device = Device.flex().autodiff().gradient_checkpointing()
        training = device.autodiff()
        weights = Tensor.ones([2], training)
        """), _dedent("""
        from runtime_shim import Device, Tensor

        device = Device.flex().autodiff().gradient_checkpointing()
        training = device
        weights = Tensor.ones([2], training)
        """), profile="burn-2026-08"),  # at d16f7ba2ed `Device::autodiff` is idempotent
    Case("mv109-from-inner", "MV109", "safe", _dedent("""
        from runtime_shim import Device, Tensor as T

        weights = T.random([2], Device.ndarray().autodiff())
        again = T.from_inner(
            weights,
        )
        """), _dedent("""
        from runtime_shim import Device, Tensor as T

        weights = T.random([2], Device.ndarray().autodiff())
        again = weights
        """), profile="burn-2026-08"),  # at d16f7ba2ed `Tensor::from_inner` is idempotent
    # MV150 does not fail where it is reported: at d16f7ba2ed the plain batch stays plain, and tagging it
    # with the device's strategy (`with_gradient_checkpointing_strategy` needs autodiff) is what fails (MV108)
    Case("mv150-adds-import", "MV150", "unsafe", _MV150_BEFORE, _MV150_AFTER, runtime_code="MV108"),
    Case("mv201-move-the-cpu-argument", "MV201", "unsafe", _dedent("""
        import torch
        import torch.nn.functional as F

        logits = torch.randn(8, 4, device="cuda")
        loss = F.cross_entropy(logits, torch.randint(0, 4, (8,)) + 1)  # shifted labels
        """), _dedent("""
        import torch
        import torch.nn.functional as F

        logits = torch.randn(8, 4, device="cuda")
        loss = F.cross_entropy(logits, (torch.randint(0, 4, (8,)) + 1).to(logits.device))  # shifted labels
        """), torch=True),
    Case("mv207-move-the-index", "MV207", "unsafe", _dedent("""
        import torch

        table = torch.randn(100, 16, device="cuda")
        rows = table.index_select(0, torch.tensor([3, 14, 15]))
        """), _dedent("""
        import torch

        table = torch.randn(100, 16, device="cuda")
        rows = table.index_select(0, torch.tensor([3, 14, 15]).to(table.device))
        """), torch=True),
    Case("mv203-method-chain", "MV203", "safe", _dedent("""
        import torch

        logits = torch.randn(32, 10, device="cuda")
        predicted = logits.argmax(dim=1).numpy()  # class ids
        """), _dedent("""
        import torch

        logits = torch.randn(32, 10, device="cuda")
        predicted = logits.argmax(dim=1).cpu().numpy()  # class ids
        """), torch=True),
    Case("mv204-numpy-function", "MV204", "safe", _dedent("""
        import numpy as np
        import torch

        weights = torch.randn(3, requires_grad=True)
        scores = np.asarray(weights * 2)
        """), _dedent("""
        import numpy as np
        import torch

        weights = torch.randn(3, requires_grad=True)
        scores = np.asarray((weights * 2).detach())
        """), torch=True),
    Case("mv205-create-on-device", "MV205", "safe", _dedent("""
        import torch

        device = torch.device("cuda:0")
        temperature = torch.ones(1, requires_grad=True).to(device)  # learnable
        optimizer = torch.optim.Adam([temperature], lr=0.01)
        """), _dedent("""
        import torch

        device = torch.device("cuda:0")
        temperature = torch.ones(1, requires_grad=True, device=device)  # learnable
        optimizer = torch.optim.Adam([temperature], lr=0.01)
        """), torch=True),
    Case("mv206-assign", "MV206", "unsafe", _dedent("""
        import torch

        inputs = torch.randn(3, 4)
        inputs.cuda()
        print(inputs.device)
        """), _dedent("""
        import torch

        inputs = torch.randn(3, 4)
        inputs = inputs.cuda()
        print(inputs.device)
        """), torch=True),
]


class TorchLauncher:
    """One preloaded launcher for the module's PyTorch programs, started at the first (importing torch and what
    the observer imports once, as the observer's command line does for several programs), closed at the end."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._launcher: Launcher | None = None
        self._started = False

    def get(self) -> Launcher | None:
        if not self._started:
            from runtime_shim.torch_observer.session import PRELOAD as OBSERVER_PRELOAD

            self._launcher = self._stack.enter_context(preloaded((*LAUNCHER_PRELOAD, *OBSERVER_PRELOAD)))
            self._started = True
        return self._launcher

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def torch_launcher() -> Iterator[TorchLauncher]:
    launcher = TorchLauncher()
    yield launcher
    launcher.close()


def _run(case: Case, program: Path, torch_launcher: TorchLauncher):
    """How the program ends: (the failure codes recorded, the outcome)."""
    if case.torch:
        from runtime_shim.torch_observer.cli import run_program as run_torch

        outcome = run_torch(program, timeout=180, launcher=torch_launcher.get())
    else:
        outcome = run_program(program, **({"profile": case.profile} if case.profile else {}))
    return {r["outcome"]["code"] for r in outcome.records if isinstance(r.get("outcome"), dict)}, outcome



def _check_json(capsys: pytest.CaptureFixture, path: Path, *flags: str) -> list[dict]:
    main(["check", "--no-cache", "--isolated", "--output-format", "json", *flags, str(path)])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fix_end_to_end(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture,
                        torch_launcher: TorchLauncher) -> None:
    program = tmp_path / f"{case.name.replace('-', '_')}.py"
    program.write_text(case.before, encoding="utf-8")
    profile = ["--profile", case.profile] if case.profile else []

    # the original is reported with a fix of the documented safety, and fails at run time
    found = [d for d in _check_json(capsys, program, *profile) if d["code"] == case.code]
    assert found and found[0]["fix"] is not None and found[0]["fix"]["applicability"] == case.applicability
    codes, before = _run(case, program, torch_launcher)
    assert case.failure in codes and before.status in ("dispatch", "ok"), before.detail or before.stderr
    assert before.status == "ok" or before.code == case.failure, before.detail or before.stderr

    # a safe fix is applied by --fix; an unsafe one only with --unsafe-fixes
    flags = ["--fix"] if case.applicability == "safe" else ["--fix", "--unsafe-fixes"]
    if case.applicability == "unsafe":
        main(["check", "--no-cache", "--isolated", *profile, "--fix", str(program)])
        capsys.readouterr()
        assert program.read_text(encoding="utf-8") == case.before
    main(["check", "--no-cache", "--isolated", *profile, "-q", *flags, str(program)])
    capsys.readouterr()
    assert program.read_text(encoding="utf-8") == case.after

    # clean of that code, runs without that failure, and a second --fix changes nothing
    assert not [d for d in _check_json(capsys, program, *profile) if d["code"] in (case.code, case.failure)]
    codes, after = _run(case, program, torch_launcher)
    assert after.status == "ok" and case.failure not in codes, after.detail or after.stderr or after.message
    main(["check", "--no-cache", "--isolated", *profile, "-q", *flags, str(program)])
    capsys.readouterr()
    assert program.read_text(encoding="utf-8") == case.after


def test_no_fix_where_another_context_passes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`.inner()` would break the context that moves a plain float: a warning, without a fix."""
    program = tmp_path / "contexts.py"
    program.write_text(_dedent("""
        from runtime_shim import Device, Tensor


        def export(t):
            return t.to_device(Device.ndarray())


        export(Tensor.ones([2], Device.flex()))
        export(Tensor.ones([2], Device.flex().autodiff()))
        """), encoding="utf-8")
    [finding] = _check_json(capsys, program)
    assert finding["code"] == "MV102" and finding["severity"] == "warning" and finding["fix"] is None


def test_documented_examples_are_fixed_clean(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each fixable rule's documented example: --fix --unsafe-fixes leaves nothing of its code (MV108's
    example calls `backward()` and MV109's moves an int to an autodiff device wrapping a capture device (the
    case the default profile reports), which have no automatic fix: they must stay)."""
    from devicelint.rules import all_rules

    for rule in all_rules():
        if not rule.fixable():
            continue
        example = rule.doc().split("## Example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
        program = tmp_path / f"{rule.code.lower()}_example.py"
        program.write_text(textwrap.dedent(example), encoding="utf-8")
        main(["check", "--no-cache", "--isolated", "-q", "--fix", "--unsafe-fixes", str(program)])
        capsys.readouterr()
        left = [d["code"] for d in _check_json(capsys, program)]
        assert (rule.code in left) == (rule.code in ("MV108", "MV109")), (rule.code, left)


def test_each_fixable_rule_documents_its_fix_safety(capsys: pytest.CaptureFixture) -> None:
    """`devicelint explain` prints a "## Fix safety" section whose first word matches what the fix is."""
    from devicelint.rules import all_rules

    applicability = {case.code: case.applicability for case in CASES}
    fixable = [rule for rule in all_rules() if rule.fixable()]
    assert sorted(r.code for r in fixable) == sorted(applicability)  # every fixable rule has a case here
    for rule in fixable:
        assert main(["explain", rule.code]) == 0
        safety = capsys.readouterr().out.split("## Fix safety\n", 1)[1].split("\n## ", 1)[0]
        assert safety.split()[0].rstrip(":,") == applicability[rule.code].capitalize(), (rule.code, safety)
    assert main(["rules"]) == 0
    marked = {line.split()[0] for line in capsys.readouterr().out.splitlines() if "[*]" in line.split(maxsplit=2)[2]}
    assert marked == set(applicability)
