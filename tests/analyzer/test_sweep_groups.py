"""The sweep of uncalled methods never analyses instances of one class as one object where their states differ:
it runs per instance, or per group of instances placed alike."""

from __future__ import annotations

import textwrap

from devicelint.domain import Const, Instance, V, Value
from devicelint.engine.limits import MAX_SWEPT_INSTANCES
from devicelint.engine.sweep_groups import SIGNATURE_DEPTH, signature, sweep_receivers
from devicelint.runner import check_source
from devicelint.torch_domain import TorchDev, TorchLayerAtom, TorchTensorAtom

CPU = TorchDev("cpu")
CUDA = TorchDev("cuda", 0)


class Cls:
    """A stand-in for a class of the analysed code (instances only need one that hashes)."""


def make(cls: object, n: int, start: int = 0) -> list[Instance]:
    return [Instance(cls, "m.py", 10, 4, start + i) for i in range(n)]


def tensor(dev: TorchDev) -> Value:
    return V(TorchTensorAtom(dev, owned=True))


def attributes_of(table: dict[Instance, dict[str, Value]]):
    return lambda instance: list(table.get(instance, {}).items())


def order(instance: Instance) -> tuple:
    return (instance.line, instance.ctx)


def test_few_instances_each_get_a_receiver() -> None:
    found = make(Cls, 3)
    receivers = sweep_receivers(found, attributes_of({}), order)
    assert receivers == [V(i) for i in found]


def test_no_instance_is_an_unknown_receiver() -> None:
    assert sweep_receivers([], attributes_of({}), order) == [Value(frozenset(), top=True)]


def test_many_instances_are_grouped_by_where_their_attributes_are() -> None:
    cpu, cuda = make(Cls, 6), make(Cls, 6, start=100)
    table = {i: {"running_mean": tensor(CPU), "splits": V(Const(i.ctx, "int"))} for i in cpu}
    table.update({i: {"running_mean": tensor(CUDA), "splits": V(Const(2, "int"))} for i in cuda})
    receivers = sweep_receivers([*cpu, *cuda], attributes_of(table), order)
    assert sorted(receivers, key=lambda v: min(a.ctx for a in v.atoms)) == [
        Value(frozenset(cpu)), Value(frozenset(cuda))]  # constants do not split a group


def test_a_sub_module_on_another_device_splits_its_owners() -> None:
    inner = make(Cls, 2, start=50)
    owners = make(Cls, MAX_SWEPT_INSTANCES + 1)
    table = {inner[0]: {"weight": tensor(CPU)}, inner[1]: {"weight": tensor(CUDA)}}
    for i, owner in enumerate(owners):
        table[owner] = {"block": V(TorchLayerAtom("Sequential", None, True, (inner[i % 2],)))}
    receivers = sweep_receivers(owners, attributes_of(table), order)
    assert len(receivers) == 2
    assert {len(r.atoms) for r in receivers} == {len(owners[0::2]), len(owners[1::2])}


def test_too_many_groups_fall_back_to_one_join() -> None:
    found = make(Cls, MAX_SWEPT_INSTANCES + 2)
    table = {i: {"w": tensor(TorchDev("cuda", i.ctx))} for i in found}
    assert sweep_receivers(found, attributes_of(table), order) == [Value(frozenset(found))]


def test_a_cycle_of_instances_has_a_signature() -> None:
    a, b = make(Cls, 2)
    table = {a: {"peer": V(b), "w": tensor(CPU)}, b: {"peer": V(a), "w": tensor(CUDA)}}
    assert signature(a, attributes_of(table), SIGNATURE_DEPTH) != \
        signature(b, attributes_of(table), SIGNATURE_DEPTH)


def test_uncalled_method_on_cpu_copies_and_moved_copies_is_silent() -> None:
    """More instances than are swept one by one: a method that rebuilds two buffers from each other, swept on
    a join of the CPU copies and the moved ones, would leave CPU buffers on the moved ones."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F
        from torch import nn


        class Norm(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("running_mean", torch.zeros(n))
                self.register_buffer("running_var", torch.ones(n))

            def reset(self):
                self.running_mean = torch.zeros_like(self.running_var)
                self.running_var = torch.ones_like(self.running_mean)

            def forward(self, x):
                return F.batch_norm(x, self.running_mean, self.running_var)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.c = Norm(4), Norm(4), Norm(4)

            def forward(self, x):
                return self.c(self.b(self.a(x)))


        reference = Net()
        print(sum(p.numel() for p in reference.parameters()))


        def run():
            model = Net().to("cuda")
            return model(torch.randn(2, 4, device="cuda"))


        run()
        run()
        """)
    assert not check_source(source, "instances.py").findings


def test_a_half_moved_instance_is_still_reported() -> None:
    source = textwrap.dedent("""\
        import torch
        from torch import nn


        class Norm(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("mean", torch.zeros(n))
                self.scale = torch.ones(n)

            def forward(self, x):
                return (x - self.mean) * self.scale


        reference = [Norm(4) for _ in range(3)]
        model = nn.Sequential(Norm(4), Norm(4), Norm(4), Norm(4), Norm(4)).to("cuda")
        model(torch.randn(2, 4, device="cuda"))
        """)
    assert "MV201" in {d.code for d in check_source(source, "half.py").findings}
