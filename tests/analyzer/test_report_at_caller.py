"""A failure caused by an argument is reported at the call that passed it (rules/anchors.py), with the failing
call inside as the inner location; a failure the function causes itself stays where it fails."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from devicelint.cli import main
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


def test_a_metric_over_values_derived_from_its_arguments_is_reported_at_the_call() -> None:
    # ``pred == c`` and ``target == c`` are new tensors made inside, on the arguments' devices: the fix is where
    # the CPU target is passed; both failing ops inside are one finding
    assert located("""
        import torch

        def iou(pred, target, n):
            scores = []
            for c in range(n):
                p = pred == c
                t = target == c
                inter = (p & t).sum()
                union = (p | t).sum()
                scores.append(inter / union)
            return scores

        def evaluate(logits, labels):
            return iou(logits.argmax(1), labels, 3)

        evaluate(torch.randn(8, 3, device="cuda"), torch.randint(0, 3, (8,)))
    """) == [(17, "MV201", "error", 9)]


def test_casts_views_and_scalar_arithmetic_keep_the_argument_as_the_cause() -> None:
    assert located("""
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(16, 2)

            def forward(self, x):
                x = x.view(x.shape[0], -1).contiguous()
                return self.fc(x)

        def regression(out, y):
            diff = out - y.float() * 0.5 + 1
            return (diff ** 2).mean()

        def gathered(out, labels):
            labels = labels.long().unsqueeze(1)
            return out.gather(1, labels).mean()

        def joined(a, b):
            return torch.cat([a.flatten(), b.detach().flatten()]).sum()

        head = Head().cuda()
        gpu = torch.randn(4, 2, device="cuda")
        cpu = torch.randn(4, 2)
        head(torch.randn(4, 4, 4))
        regression(gpu, cpu)
        gathered(gpu, torch.zeros(4, dtype=torch.long))
        joined(gpu, cpu[0])
    """) == [(28, "MV202", "error", 12), (29, "MV201", "error", 15), (30, "MV207", "error", 20),
             (31, "MV201", "error", 23)]


def test_a_chain_of_helpers_reports_at_the_outermost_call() -> None:
    assert located("""
        import torch

        def focal_loss(logits, target, gamma=2.0):
            t = target.float() * 0.9 + 0.05
            p = torch.sigmoid(logits)
            pt = p * t + (1 - p) * (1 - t)
            return ((1 - pt) ** gamma).mean()

        def compute_loss(logits, target):
            return focal_loss(logits, target[:, 0])

        def train_step(logits, target):
            return compute_loss(logits * 2, target.unsqueeze(1))

        def main():
            logits = torch.randn(8, device="cuda")
            target = torch.randint(0, 2, (8,))
            return train_step(logits, target)

        main()
    """) == [(19, "MV201", "error", 7)]


def test_two_callers_passing_wrong_devices_are_two_findings() -> None:
    assert located("""
        import torch

        def mse(pred, target):
            diff = pred - target.float()
            return (diff ** 2).mean()

        gpu = torch.randn(4, device="cuda")
        print(mse(gpu, torch.ones(4, device="cuda")))
        print(mse(gpu, torch.ones(4)))
        print(mse(gpu, torch.zeros(4, dtype=torch.long)))
    """) == [(10, "MV201", "error", 5), (11, "MV201", "error", 5)]


def test_a_value_made_inside_or_moved_inside_stays_there() -> None:
    # a tensor made inside, cast and scaled, and an argument moved to the CPU inside: the helper's own doing
    assert located("""
        import torch

        def balance(logits):
            prior = torch.linspace(0.5, 1.5, 3).float() * 2
            return (logits * prior).sum()

        def on_host(a, b):
            return a + b.cpu() * 2

        gpu = torch.randn(4, 3, device="cuda")
        balance(gpu)
        on_host(gpu, gpu)
    """) == [(6, "MV201", "error", None), (9, "MV201", "error", None)]


DERIVED = """\
import torch


def mse(pred, target):
    diff = pred - target.float()
    return (diff ** 2).mean()


print(mse(torch.randn(4, device="cuda"), torch.ones(4)))
"""


def test_the_output_formats_name_the_inner_call(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    program = tmp_path / "prog.py"
    program.write_text(DERIVED, encoding="utf-8")
    assert main(["check", "--no-cache", "--output-format", "full", str(program)]) == 1
    full = capsys.readouterr().out
    assert f"{program}:9:7: MV201" in full
    assert f"= related: {program}:5:12: the call that fails, inside `mse`" in full
    assert main(["check", "--no-cache", "--output-format", "sarif", str(program)]) == 1
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    inner = [r for r in result["relatedLocations"] if "the call that fails" in r["message"]["text"]]
    assert [r["physicalLocation"]["region"]["startLine"] for r in inner] == [5]


def test_failures_after_the_first_inside_are_the_same_finding() -> None:
    # ``diff`` is what ``pred - target`` meant to give (on ``pred``'s GPU): ``diff * mask`` fails on the CPU mask
    # passed by the same call, which is one finding naming the first failing call and its own operands
    [finding] = [d for d in diagnostics("""
        import torch

        def masked_error(pred, target, mask):
            diff = pred - target
            weighted = diff * mask
            return weighted.sum()

        masked_error(torch.ones(4, device="cuda"), torch.ones(4), torch.ones(4))
    """) if d.code]
    assert (finding.row, finding.inner.row if finding.inner else None) == (9, 5)
    assert "Tensor.__sub__ in `masked_error` at prog.py:5" in finding.message
    assert "(and fails at 1 more call inside)" in finding.message
    assert [r.row for r in finding.related if r.message == "fails here too"] == [6]


def test_a_derived_operand_names_the_tensor_it_came_from() -> None:
    [finding] = [d for d in diagnostics("""
        import torch

        def hits(pred, target):
            return ((pred > 0.5) & (target == 1)).sum()

        scores = torch.rand(4, device="cuda")
        labels = torch.ones(4)
        hits(scores, labels)
    """) if d.code]
    assert finding.row == 9
    derived = sorted((r.row, r.message) for r in finding.related if "is derived from" in r.message)
    assert derived == [(7, "left is derived from: created on cuda:0 by torch.rand"),
                       (8, "right is derived from: created on cpu by torch.ones")]


def test_a_dict_batch_read_inside_is_reported_where_it_is_passed() -> None:
    # ``batch["labels"]`` and ``model(**batch)`` inside: the dict's tensors are the caller's
    assert located("""
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)

            def forward(self, input_ids, labels=None):
                return self.embed(input_ids).mean(1)

        def criterion(logits, batch):
            return nn.functional.cross_entropy(logits, batch["labels"])

        def step(model, batch):
            return model(**batch)

        model = Net().cuda()
        criterion(torch.randn(8, 4, device="cuda"), {"labels": torch.randint(0, 4, (8,))})
        step(model, {"input_ids": torch.randint(0, 10, (8, 5))})
    """) == [(20, "MV201", "error", 14), (21, "MV202", "error", 11)]


def test_an_unpacked_tuple_and_a_record_are_the_callers_tensors() -> None:
    assert located("""
        from dataclasses import dataclass
        from typing import NamedTuple

        import torch
        from torch import nn

        @dataclass
        class Batch:
            x: torch.Tensor
            y: torch.Tensor

        class Pair(NamedTuple):
            x: torch.Tensor
            y: torch.Tensor

        def step(model, batch):
            x, y = batch
            return nn.functional.cross_entropy(model(x), y)

        def record_step(model, batch):
            return nn.functional.cross_entropy(model(batch.x), batch.y)

        def messages(h, edge_index):
            src, dst = edge_index
            return torch.zeros_like(h).index_add_(0, dst, h[src])

        model = nn.Linear(4, 3).cuda()
        x = torch.randn(8, 4, device="cuda")
        step(model, (x, torch.randint(0, 3, (8,))))
        record_step(model, Batch(x, torch.randint(0, 3, (8,))))
        record_step(model, Pair(x, torch.randint(0, 3, (8,))))
        messages(x, torch.tensor([[0, 1, 2], [1, 2, 3]]))
    """) == [(30, "MV201", "error", 19), (31, "MV201", "error", 22), (32, "MV201", "error", 22),
             (33, "MV207", "error", 26)]


def test_a_loader_iterated_inside_is_the_helpers_own_doing() -> None:
    # a collection of batches is iterated, not handed over: the loop that forgets to move them is the mistake
    assert located("""
        import torch
        from torch import nn
        from torch.utils.data import DataLoader, TensorDataset

        def evaluate(model, loader):
            for x, y in loader:
                model(x)

        model = nn.Linear(4, 3).cuda()
        evaluate(model, DataLoader(TensorDataset(torch.randn(8, 4), torch.zeros(8)), batch_size=4))
    """) == [(8, "MV202", "error", None)]


def test_a_plain_object_passed_keeps_its_attributes_own() -> None:
    # a trainer with behaviour of its own is not a record of data: its CPU class weights are its own mistake
    assert located("""
        import torch
        from torch import nn

        class Trainer:
            def __init__(self):
                self.class_weights = torch.ones(3)

            def describe(self):
                return "trainer"

        def weighted(logits, trainer):
            return logits * trainer.class_weights

        weighted(torch.randn(8, 3, device="cuda"), Trainer())
    """) == [(13, "MV201", "error", None)]


def test_a_collated_batch_unpacked_inside_is_the_callers() -> None:
    # a DataLoader collates a dataset's tuples into lists: ``[inputs, targets]`` is one batch, handed over (two
    # tensors, each a bug of its own, both fixed where the batch is passed)
    assert located("""
        import torch
        from torch import nn
        from torch.utils.data import DataLoader, TensorDataset

        def step(model, data):
            inputs, targets = data
            return nn.functional.cross_entropy(model(inputs), targets)

        model = nn.Linear(4, 3).cuda()
        loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,))), batch_size=4)
        for data in loader:
            step(model, data)
    """) == [(13, "MV201", "error", 8), (13, "MV202", "error", 8)]


def test_a_model_output_is_derived_from_its_input() -> None:
    # the logits a layer or a pretrained model gives are on its input's device: next to labels from the same caller,
    # the failure is the caller's, at the outermost call that passes the batch
    assert located("""
        import torch
        from transformers import AutoModelForSequenceClassification

        def forward_pass(model, encoded):
            return model(**encoded).logits

        def loss_of(model, batch):
            return torch.nn.functional.cross_entropy(forward_pass(model, batch), batch["labels"])

        def train(model, batch):
            return loss_of(model, batch).item()

        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased").to("cuda")
        batch = {"input_ids": torch.ones(2, 5, dtype=torch.long, device="cuda"), "labels": torch.tensor([1, 0])}
        train(model, batch)
    """) == [(16, "MV201", "error", 9)]


def test_a_batch_made_in_the_function_that_passes_it_is_reported_at_that_call() -> None:
    # the CPU labels are made in ``make_and_score``: its call of ``score`` passes them, not the outermost call
    assert located("""
        import torch
        from torch import nn

        def score(logits, batch):
            return nn.functional.cross_entropy(logits, batch["labels"])

        def make_and_score(logits):
            batch = {"labels": torch.zeros(4, dtype=torch.long)}
            return score(logits, batch)

        make_and_score(torch.randn(4, 3, device="cuda"))
    """) == [(10, "MV201", "error", 6)]


def test_a_tensor_made_on_an_arguments_device_comes_from_that_argument() -> None:
    # ``positions`` is on the CPU because the ids are: one finding at the call that passes them, both embeddings
    # inside its failing calls
    [finding] = [d for d in diagnostics("""
        import torch
        from torch import nn

        class PosEmbed(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(10, 4)
                self.pos = nn.Embedding(8, 4)

            def forward(self, idx):
                positions = torch.arange(idx.shape[1], device=idx.device)
                return self.tok(idx) + self.pos(positions)

        model = PosEmbed().cuda()
        model(torch.zeros(1, 5, dtype=torch.long))
    """) if d.code]
    assert (finding.row, finding.code, finding.severity.value) == (16, "MV202", "error")
    assert finding.inner is not None and (finding.inner.row, finding.inner.column) == (13, 16)
    assert [(r.row, r.column) for r in finding.related if r.message == "fails here too"] == [(13, 32)]
