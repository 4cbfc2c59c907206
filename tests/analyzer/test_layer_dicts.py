"""``nn.ModuleDict``, ``nn.ParameterDict`` and ``nn.ParameterList`` move with their module; a plain dict of layers
or parameters does not (:mod:`analyzer.models.layer_dicts`)."""

from __future__ import annotations

import textwrap

from devicelint.domain import TOP, V, const
from devicelint.models.layer_dicts import build, lookup, with_entries
from devicelint.runner import check_source
from devicelint.settings import Settings
from devicelint.torch_domain import CPU, TorchDev, TorchLayerAtom

GPU = TorchDev("cuda", 0)


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def linear(dev: TorchDev, name: str = "Linear") -> TorchLayerAtom:
    return TorchLayerAtom(name, dev, True, ())


def test_a_module_dict_reads_by_key_and_adds_under_unknown_keys_once() -> None:
    heads = build("ModuleDict", [("a", V(linear(GPU))), (None, V(linear(CPU, "Conv1d")))], None)  # type: ignore[arg-type]
    assert heads is not None and heads.keys == ("a", None) and heads.dev is None
    assert lookup(heads, V(const("a")), TOP) == V(linear(GPU))
    assert lookup(heads, V(const("b")), TOP) == V(linear(CPU, "Conv1d"))  # only a loop's key can be "b"
    again = with_entries(heads, [(None, V(linear(CPU, "Conv1d")))])  # a loop stores the same layer again
    assert again == heads
    replaced = with_entries(heads, [("a", V(linear(CPU)))])
    assert replaced is not None and replaced.children[0] == linear(CPU) and replaced.keys == heads.keys
    assert with_entries(heads, [("c", TOP)]) is None  # something unknown stored: the dict is unknown


MODEL = """
    import torch
    from torch import nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"a": nn.Linear(8, 2)})
            self.heads["b"] = nn.Linear(8, 3)
            self.scale = nn.ParameterDict({"a": nn.Parameter(torch.ones(8))})
            self.bias = nn.ParameterList([nn.Parameter(torch.zeros(8))])
            self.plain = {"a": nn.Linear(8, 2)}

        def forward(self, x, task):
            x = x * self.scale["a"] + self.bias[0]
            for name, head in self.heads.items():
                head(x)
            return self.heads[task](x), self.plain[task](x)

    model = Model().cuda()
    model(torch.randn(2, 8, device="cuda"), "a")
    """


def test_registered_containers_move_with_the_module_a_plain_dict_does_not() -> None:
    assert findings(MODEL) == [(18, "MV202", "error")]  # ``self.plain[task](x)`` only


def test_a_module_dict_with_a_layer_added_after_the_move_fails_on_its_key() -> None:
    source = """
        import torch
        from torch import nn

        heads = nn.ModuleDict({"a": nn.Linear(8, 2)}).cuda()
        heads.update({"b": nn.Linear(8, 2)})
        x = torch.randn(2, 8, device="cuda")
        heads["a"](x)
        heads["b"](x)
        """
    assert findings(source) == [(9, "MV202", "error")]


def test_the_items_of_a_parameter_list_on_the_cpu_meet_a_gpu_batch() -> None:
    source = """
        import torch
        from torch import nn

        weights = nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(3)])
        x = torch.randn(4, device="cuda")
        for w in weights:
            x = x * w
        """
    assert findings(source) == [(8, "MV201", "error")]
