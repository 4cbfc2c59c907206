"""A failure caused by an argument is reported at the call that passed it (rules/anchors.py), with the failing
call inside as the inner location; a failure the function causes itself stays where it fails."""

from __future__ import annotations

import textwrap

from devicelint.diagnostics import Diagnostic
from devicelint.runner import check_source
from devicelint.settings import Settings


def diagnostics(source: str) -> list[Diagnostic]:
    return check_source(textwrap.dedent(source), "prog.py", Settings(select=("ALL",))).diagnostics


def located(source: str) -> list[tuple[int, str, str, int | None]]:
    """(row, code, severity, row of the inner failing call) of each finding."""
    return sorted((d.row, d.code, d.severity.value, d.inner.row if d.inner else None)
                  for d in diagnostics(source) if d.code)


def test_a_helper_given_tensors_on_two_devices_is_reported_at_the_call() -> None:
    assert located("""
        import torch

        def blend(a, b):
            return a + b

        gpu = torch.ones(3, device="cuda")
        print(blend(gpu, gpu * 2))
        print(blend(gpu, torch.zeros(3)))
    """) == [(9, "MV201", "error", 5)]


def test_the_outermost_call_that_passes_the_tensor() -> None:
    assert located("""
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)

            def forward(self, ids):
                return self.embed(ids)

        def run(model, ids):
            return model(ids)

        def main():
            model = Net().cuda()
            ids = torch.tensor([1, 2, 3])
            return run(model, ids)

        main()
    """) == [(19, "MV202", "error", 11)]


def test_a_state_made_inside_the_function_stays_there() -> None:
    assert located("""
        import torch

        def shift(x):
            return x + torch.ones(3)

        shift(torch.zeros(3, device="cuda"))
    """) == [(5, "MV201", "error", None)]


def test_a_global_read_inside_the_function_stays_there() -> None:
    assert located("""
        import torch

        MEAN = torch.zeros(3)

        def centre(x):
            return x - MEAN

        centre(torch.ones(3, device="cuda"))
    """) == [(7, "MV201", "error", None)]


def test_a_weight_left_on_the_cpu_stays_in_the_module() -> None:
    # a layer in a plain list is not moved by .cuda(): the module's mistake, not the caller's
    assert located("""
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = [nn.Linear(4, 4)]

            def forward(self, x):
                return self.blocks[0](x)

        Net().cuda()(torch.randn(2, 4).cuda())
    """) == [(11, "MV202", "error", None)]


def test_a_call_that_fails_on_some_runs_is_a_warning() -> None:
    assert located("""
        import torch

        def scaled(weights, part):
            return weights * part

        weights = torch.rand(3, device="cuda")
        for part in (torch.ones(3, device="cuda"), torch.ones(3)):
            print(scaled(weights, part))
    """) == [(9, "MV201", "warning", 5)]


def test_the_inner_call_is_a_related_location() -> None:
    [finding] = [d for d in diagnostics("""
        import torch

        def blend(a, b):
            return a + b

        blend(torch.ones(3, device="cuda"), torch.zeros(3))
    """) if d.code]
    assert (finding.row, finding.column) == (7, 1)
    assert finding.inner is not None and (finding.inner.row, finding.inner.column) == (5, 12)
    assert finding.inner in finding.related
    assert "in `blend` at prog.py:5" in finding.message and "this call passes the failing operands" in finding.message


def test_a_command_line_program_reports_at_the_call_too() -> None:
    # with options given the device is unknown, so the failing context is partly unknown: the known failure still
    # moves to the call that passed the CPU labels, as a warning naming the world where it fails
    found = located("""
        import argparse
        import torch
        from torch import nn

        def accuracy(logits, labels):
            preds = logits.argmax(dim=-1)
            return (preds == labels).float().mean()

        def evaluate(model, device):
            tokens = torch.randn(8, 4).to(device)
            labels = torch.randint(0, 3, (8,))
            return accuracy(model(tokens), labels)

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="auto")
        args = parser.parse_args()
        auto = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        device = auto if args.device == "auto" else torch.device(args.device)
        evaluate(nn.Linear(4, 3).to(device), device)
    """)
    assert found == [(13, "MV201", "warning", 8)]
