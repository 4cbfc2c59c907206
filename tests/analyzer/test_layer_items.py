"""Layers put into a container after it moved: item assignment, the containers' adding methods, setattr and
torchvision classifiers' replaced layers (:mod:`analyzer.models.layer_items`)."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.domain import TOP, V, Value, const
from devicelint.models.layer_items import added, is_part, replaced_item, with_part
from devicelint.runner import check_source
from devicelint.settings import Settings
from devicelint.torch_domain import CPU, TorchDev, TorchLayerAtom

GPU = TorchDev("cuda", 0)


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def linear(dev: TorchDev, tag: str) -> TorchLayerAtom:
    return TorchLayerAtom("Linear", dev, True, (), None, frozenset({tag}))


RELU = TorchLayerAtom("ReLU", None, False)


def sequential(*children: TorchLayerAtom) -> TorchLayerAtom:
    return TorchLayerAtom("Sequential", GPU, True, children)


def test_an_item_replaced_puts_the_container_on_two_devices() -> None:
    seq = sequential(linear(GPU, "a"), RELU, linear(GPU, "b"))
    new = linear(CPU, "c")
    for key in (2, -1):
        replaced = replaced_item(seq, V(const(key)), V(new))
        assert replaced is not None and replaced.children == (seq.children[0], RELU, new)
        assert replaced.dev is None and replaced.weights  # layers on two devices
    same = replaced_item(seq, V(const(0)), V(linear(GPU, "d")))
    assert same is not None and same.dev == GPU
    assert replaced_item(seq, V(const(3)), V(new)) is None  # out of range: not known
    assert replaced_item(seq, TOP, V(new)) is None
    assert replaced_item(seq, V(const(0)), TOP) is None


def test_adding_methods_keep_a_sequentials_order() -> None:
    seq = sequential(linear(GPU, "a"))
    new = linear(CPU, "n")
    appended = added(seq, "append", [V(new)], None)
    assert appended is not None and appended.children == (seq.children[0], new) and appended.dev is None
    inserted = added(seq, "insert", [V(const(0)), V(new)], None)
    assert inserted is not None and inserted.children == (new, seq.children[0])
    named = added(seq, "add_module", [V(const("head")), V(new)], None)
    assert named is not None and named.children[-1] == new
    assert added(seq, "extend", [TOP], None) is None  # what it extends with is not known
    assert added(seq, "append", [Value(frozenset({new, linear(GPU, "x")}))], None) is None
    module_list = TorchLayerAtom("ModuleList", GPU, True, (linear(GPU, "a"),))
    assert added(module_list, "add_module", [V(const("x")), V(new)], None) is None  # not a ModuleList method


def test_a_classifier_keeps_its_replaced_layers_when_its_head_is_replaced() -> None:
    from devicelint.models.torchvision_model import with_head

    model = TorchLayerAtom("torchvision.models.resnet18", GPU, True)
    stem = TorchLayerAtom("Conv2d", CPU, True, (), None)
    grown = with_part(model, V(stem))
    assert grown is not None
    (atom,) = grown.atoms
    assert isinstance(atom, TorchLayerAtom) and len(atom.children) == 1 and is_part(atom.children[0])
    headed = with_head(grown, V(linear(GPU, "h")))
    headed_again = with_head(headed, V(linear(CPU, "h2"))) if headed is not None else None
    assert headed_again is not None
    (atom,) = headed_again.atoms
    assert isinstance(atom, TorchLayerAtom) and len(atom.children) == 2
    assert is_part(atom.children[0]) and atom.children[1] == linear(CPU, "h2")  # the old head is gone
    assert with_part(model, TOP) is None


@pytest.mark.parametrize("change", [
    "model.classifier[6] = nn.Linear(4096, 10)",
    "model.classifier[-1] = nn.Linear(4096, 10)",
    "model.features[0] = nn.Conv2d(1, 64, 3)",
    "model.conv1 = nn.Conv2d(1, 64, 7)",
    'setattr(model, "fc", nn.Linear(512, 10))',
    'model.add_module("extra", nn.Linear(10, 10))',
])
def test_a_layer_replaced_in_a_moved_torchvision_model_is_reported_where_it_runs(change: str) -> None:
    source = f"""
        import torch
        from torch import nn
        from torchvision import models
        model = models.vgg16(weights="IMAGENET1K_V1").to("cuda")
        {change}
        out = model(torch.randn(2, 3, 32, 32, device="cuda"))
    """
    assert findings(source) == [(7, "MV202", "error")]
    moved_after = source.replace("\n        out =", "\n        model.to('cuda')\n        out =")
    assert findings(moved_after) == []
    never_run = source.replace("out = model(", "out = (")
    assert findings(never_run) == []


@pytest.mark.parametrize("change", [
    "seq[-1] = nn.Linear(8, 3)",
    "seq[0] = nn.Linear(4, 8)",
    "seq.append(nn.Linear(8, 8))",
    "seq.insert(1, nn.LayerNorm(8))",
    'seq.add_module("out", nn.Linear(8, 8))',
    "seq.extend([nn.Linear(8, 8)])",
])
def test_a_layer_put_into_a_moved_sequential(change: str) -> None:
    source = f"""
        import torch
        from torch import nn
        seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8)).to("cuda")
        {change}
        out = seq(torch.randn(2, 4, device="cuda"))
    """
    assert findings(source) == [(6, "MV202", "error")]
    moved_after = source.replace("\n        out =", "\n        seq.to('cuda')\n        out =")
    assert findings(moved_after) == []


def test_a_layer_replaced_in_a_project_modules_sequential() -> None:
    source = """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2))
            def forward(self, x):
                return self.head(x)
        net = Net().to("cuda")
        net.head[1] = nn.Linear(8, 3)
        out = net(torch.randn(2, 4, device="cuda"))
    """
    assert findings(source) == [(9, "MV202", "error")]
    assert findings(source.replace("nn.Linear(8, 3)", "nn.Linear(8, 3).to('cuda')")) == []


def test_unknown_positions_and_layers_stay_silent() -> None:
    source = """
        import sys
        import torch
        from torch import nn
        seq = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 8)).to("cuda")
        seq[int(sys.argv[1])] = nn.Linear(8, 8)
        layer = make_layer()
        seq2 = nn.Sequential(nn.Linear(4, 8)).to("cuda")
        seq2.append(layer)
        x = torch.randn(2, 4, device="cuda")
        out = seq(x), seq2(x)
    """
    assert findings(source) == []
