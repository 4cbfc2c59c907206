"""Choice tags: one value read several times is on one device, whichever way an undecided test went."""

from __future__ import annotations

import textwrap

from devicelint.choices import (
    MAX_TAGS,
    PROGRAM,
    Choice,
    alternatives,
    consistent,
    for_heap,
    lasting,
    restricted,
    stripped,
    tag_except,
    tagged,
    tags_of,
)
from devicelint.domain import Instance, V, Value, const, seq
from devicelint.runner import check_source
from devicelint.settings import Settings
from devicelint.torch_domain import CPU, TorchDev, TorchTensorAtom

CUDA = TorchDev("cuda", 0)
FLAG = Choice(1, "use_cuda#0")
OTHER = Choice(1, "move_b#0")


def findings(source: str, select: str = "MV2") -> list[tuple[int, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=(select,)))
    return sorted((d.row, d.code) for d in report.diagnostics)


# --- the domain -----------------------------------------------------------------------------------------


def test_contradicting_ways_are_inconsistent() -> None:
    assert consistent(frozenset({(FLAG, True)}), frozenset({(FLAG, True), (OTHER, False)}))
    assert not consistent(frozenset({(FLAG, True)}), frozenset({(FLAG, False)}))
    assert consistent(frozenset(), frozenset({(FLAG, False)}))  # untagged: every way


def test_restricting_keeps_one_way_and_untagged_possibilities() -> None:
    cpu, cuda = TorchTensorAtom(CPU), TorchTensorAtom(CUDA)
    value = V(*tagged(V(cpu), frozenset({(FLAG, False)})).atoms, *tagged(V(cuda), frozenset({(FLAG, True)})).atoms)
    assert alternatives([value]) == {FLAG: {True, False}}
    only_true = restricted(value, FLAG, True)
    assert [a.dev for a in only_true.atoms] == [CUDA]  # type: ignore[attr-defined]
    mixed = value.join(V(cpu))
    assert {a.dev for a in restricted(mixed, FLAG, True).atoms} == {CUDA, CPU}  # the untagged cpu stays
    # a tag the analysis got wrong never empties a value
    assert restricted(tagged(V(cpu), frozenset({(FLAG, False)})), FLAG, True).atoms


def test_tags_inside_sequences_are_restricted_and_stripped() -> None:
    a = tagged(V(TorchTensorAtom(CPU)), frozenset({(FLAG, False)}))
    b = tagged(V(TorchTensorAtom(CUDA)), frozenset({(FLAG, True)}))
    pair = V(seq("list", [a.join(b)]))
    assert alternatives([pair]) == {FLAG: {True, False}}
    (kept,) = restricted(pair, FLAG, False).atoms
    assert [t.dev for t in kept.items[0].atoms] == [CPU]  # type: ignore[attr-defined]
    assert not alternatives([stripped(pair)])


def test_a_container_made_on_the_other_way_is_left_out() -> None:
    # ``[x.to(device) for ...]`` with the device undecided: one list of CPU items, one of GPU items
    cpu_items = V(seq("list", [tagged(V(TorchTensorAtom(CPU)), frozenset({(FLAG, False)}))] * 2))
    gpu_items = V(seq("list", [tagged(V(TorchTensorAtom(CUDA)), frozenset({(FLAG, True)}))] * 2))
    lists = cpu_items.join(gpu_items)
    (kept,) = restricted(lists, FLAG, True).atoms
    assert {t.dev for item in kept.items for t in item.atoms} == {CUDA}  # type: ignore[attr-defined]
    # a value left with no container keeps them all, as any value does
    assert restricted(cpu_items, FLAG, True) == cpu_items


def test_the_cap_drops_a_tag_instead_of_growing() -> None:
    atom = TorchTensorAtom(CPU)
    for i in range(MAX_TAGS + 2):
        atom = next(iter(tagged(V(atom), frozenset({(Choice(1, f"c{i}#0"), True)})).atoms))
    assert len(tags_of(atom)) == MAX_TAGS


def test_instances_carry_their_ways_in_notes_and_a_join_with_an_untagged_one_drops_them() -> None:
    before = Instance(object(), "m.py", 1, 0, 0)
    moved = Instance(object(), "m.py", 1, 0, -1)
    model = tag_except(V(before), frozenset(), frozenset({(FLAG, False)})).join(
        tag_except(V(moved), frozenset(), frozenset({(FLAG, True)})))
    assert restricted(model, FLAG, True).atoms == {moved}
    assert restricted(model.join(V(moved)), FLAG, False).atoms == {before, moved}
    assert not stripped(model).notes


def test_flags_and_device_strings_take_tags_other_constants_do_not() -> None:
    tags = frozenset({(FLAG, True)})
    assert tags_of(next(iter(tagged(V(const("cuda")), tags).atoms))) == tags
    assert tags_of(next(iter(tagged(V(const(True)), tags).atoms))) == tags
    assert not tags_of(next(iter(tagged(V(const(3)), tags).atoms)))
    assert tagged(Value(), tags).is_bottom


# --- the engine ------------------------------------------------------------------------------------------


def test_one_flag_tested_per_tensor_pairs_the_same_way() -> None:
    assert findings("""
        import os
        import torch
        use_cuda = torch.cuda.is_available() and os.environ.get("GPU") == "1"
        a, b = torch.ones(3), torch.zeros(3)
        if use_cuda:
            a = a.cuda()
        if not use_cuda:
            pass
        else:
            b = b.cuda()
        print(a + b)
        """) == []


def test_a_device_string_and_a_device_read_twice() -> None:
    assert findings("""
        import os
        import torch
        dev = "cuda:0" if os.environ.get("GPU") == "1" else "cpu"
        a = torch.zeros(3, device=dev)
        b = torch.ones(3, device=dev)
        x = torch.randn(3)
        if os.environ.get("GPU"):
            x = x.cuda()
        m = torch.ones(3, device=x.device)
        n = torch.ones(3, device=x.device)
        print(a + b, x * m + n, x - x.clone())
        """) == []


def test_two_flags_and_an_unconditional_move_still_fail() -> None:
    assert findings("""
        import os
        import torch
        move_a = torch.cuda.is_available() and os.environ.get("A") == "1"
        move_b = torch.cuda.is_available() and os.environ.get("B") == "1"
        a, b, c = torch.ones(3), torch.zeros(3), torch.zeros(3)
        if move_a:
            a = a.cuda()
        if move_b:
            b = b.cuda()
        c = c.cpu()
        print(a + b)
        print(a + c)
        """) == [(12, "MV201"), (13, "MV201")]


def test_a_test_whose_names_a_loop_reassigns_is_no_choice() -> None:
    # each iteration tests a new value: the first and the last element may be on two devices
    assert findings("""
        import sys
        import torch
        moved = []
        for name in sys.argv[1:]:
            flag = name == "gpu" and torch.cuda.is_available()
            t = torch.ones(3)
            if flag:
                t = t.cuda()
            moved.append(t)
        print(moved[0] + moved[-1])
        """) == [(11, "MV201")]


def test_a_loop_invariant_flag_tested_for_every_batch() -> None:
    assert findings("""
        import os
        import torch
        from torch import nn
        use_cuda = torch.cuda.is_available() and os.environ.get("GPU") == "1"
        model = nn.Linear(4, 2)
        if use_cuda:
            model.cuda()
        for _ in range(3):
            batch = torch.randn(2, 4)
            if use_cuda:
                batch = batch.cuda()
            print(model(batch))
        """) == []


def test_runtime_shim_operands_follow_one_flag() -> None:
    assert findings("""
        import os
        from runtime_shim import Device, Tensor
        on_ndarray = os.environ.get("BACKEND") == "ndarray"
        a = Tensor.ones([2], Device.flex())
        b = Tensor.ones([2], Device.flex())
        if on_ndarray:
            a = a.to_device(Device.ndarray())
        if on_ndarray:
            b = b.to_device(Device.ndarray())
        print((a + b).to_list())
        c = Tensor.ones([2], Device.flex())
        print((a + c).to_list())
        """, select="MV1") == [(13, "MV105")]


def test_a_flag_handed_to_a_helper_is_one_answer_per_run() -> None:
    assert findings("""
        import os
        import torch
        def to_device(t, use_cuda):
            if use_cuda:
                return t.cuda()
            return t
        use_cuda = os.environ.get("GPU") == "1" and torch.cuda.is_available()
        a = to_device(torch.ones(3), use_cuda)
        b = to_device(torch.zeros(3), use_cuda)
        c = to_device(torch.zeros(3), not use_cuda)
        print(a + b)
        print(a + c)
        """) == [(13, "MV201")]


def test_a_value_on_one_of_two_devices_is_one_value() -> None:
    # the helper's answer and a parameter given either device: read twice, one device
    assert findings("""
        import sys
        import torch
        def get_device():
            return torch.device("cuda" if "--gpu" in sys.argv else "cpu")
        def add_bias(x):
            bias = torch.zeros(x.shape[-1], device=x.device)
            return x + bias
        device = get_device()
        a = torch.zeros(3, device=device)
        b = torch.ones(3, device=device)
        print(a + b, add_bias(a), a - a.clone())
        labels = torch.arange(3)
        print(a + labels)
        """) == [(14, "MV201")]


def test_a_name_a_loop_rebinds_is_a_new_value_each_time() -> None:
    assert findings("""
        import sys
        import torch
        def pick(i):
            return torch.ones(3, device="cuda" if f"--gpu{i}" in sys.argv else "cpu")
        kept = []
        for i in range(int(sys.argv[1])):
            t = pick(i)
            kept.append(t.clone())
        print(kept[0] + kept[1])
        """) == [(10, "MV201")]


def test_a_device_picked_among_three_is_one_value() -> None:
    assert findings("""
        import torch

        def pick(i):
            if i == 0:
                return torch.device("cuda")
            if i == 1:
                return torch.device("mps")
            return torch.device("cpu")

        def run(i):
            dev = pick(i)
            a = torch.zeros(3, device=dev)
            b = torch.ones(3).to(dev)
            return a + b

        print(run(int(input())))
        """) == []


# --- one value kept in an attribute or a global -----------------------------------------------------------


def test_the_heap_keeps_a_frames_tags_as_lasting_ones() -> None:
    cpu = tagged(V(TorchTensorAtom(CPU)), frozenset({(FLAG, False)}))
    cuda = tagged(V(TorchTensorAtom(CUDA)), frozenset({(FLAG, True)}))
    kept = for_heap(cpu.join(cuda))
    (choice,) = alternatives([kept])
    assert choice.ctx == PROGRAM and choice != FLAG and str(choice) == str(FLAG)
    assert stripped(kept) == kept  # it outlives the activation: into callees, out of them
    assert for_heap(kept) == kept  # (stored again: the same choice, no new one)
    assert {a.dev for a in restricted(kept, choice, True).atoms} == {CUDA}  # type: ignore[attr-defined]


RUNNER = """
    import os
    import torch
    from torch import nn

    def pick_device():
        wanted = os.environ.get("TRAIN_DEVICE", "auto")
        if wanted == "cpu":
            return torch.device("cpu")
        if wanted == "second" and torch.cuda.device_count() > 1:
            return torch.device("cuda:1")
        if torch.cuda.is_available():
            return torch.device("cuda:0")
        return torch.device("cpu")

    class Runner:
        def __init__(self):
            self.device = pick_device()
            self.model = nn.Linear(4, 2).to(self.device)

        def step(self, x):
            return self.model(x.to(self.device))

        def step_on_gpu(self, x):
            return self.model(x.cuda())
    """


def test_a_helpers_returns_stored_in_an_attribute_are_one_value_in_every_method() -> None:
    # the model moved to ``self.device`` in ``__init__``, the batch moved there in ``step``: the same device
    assert findings(RUNNER + """
    print(Runner().step(torch.randn(3, 4)))
    """) == []
    # a batch moved elsewhere still meets the model on another device
    assert findings(RUNNER + """
    print(Runner().step_on_gpu(torch.randn(3, 4)))
    """) == [(25, "MV202")]


def test_two_instances_keep_apart_the_devices_they_were_given() -> None:
    assert findings("""
        import os
        import torch
        from torch import nn

        class Runner:
            def __init__(self, device):
                self.device = device
                self.model = nn.Linear(4, 2).to(self.device)

        a = Runner(torch.device("cuda" if os.environ.get("A") == "1" else "cpu"))
        b = Runner(torch.device("cuda" if os.environ.get("B") == "1" else "cpu"))
        print(a.model(torch.randn(3, 4).to(a.device)))
        print(a.model(torch.randn(3, 4).to(b.device)))
        """) == [(14, "MV202")]


def test_a_module_level_elif_chain_read_as_a_global_is_one_value() -> None:
    source = """
        import os
        import torch
        from torch import nn

        backend = os.environ.get("BACKEND", "auto")
        if backend == "cpu":
            DEVICE = "cpu"
        elif backend == "gpu1" and torch.cuda.device_count() > 1:
            DEVICE = "cuda:1"
        elif torch.cuda.is_available():
            DEVICE = "cuda:0"
        else:
            DEVICE = "cpu"

        def build():
            return nn.Linear(4, 2).to(DEVICE)

        def run(model, n):
            return model(torch.randn(n, 4, device=DEVICE))

        print(run(build(), 3))
        """
    assert findings(source) == []
    assert findings(source.replace('device=DEVICE', 'device="cuda:1"')) == [(20, "MV202")]


def test_a_conditional_expression_stored_in_an_attribute_is_one_value() -> None:
    assert findings("""
        import os
        import torch
        from torch import nn

        class Runner:
            def __init__(self):
                self.device = "cuda" if os.environ.get("GPU") == "1" and torch.cuda.is_available() else "cpu"
                self.model = nn.Linear(4, 2).to(self.device)

            def step(self, x):
                return self.model(x.to(self.device))

        print(Runner().step(torch.randn(3, 4)))
        """) == []


def test_a_choice_and_its_lasting_form_are_one_choice() -> None:
    kept = lasting(FLAG)  # (a value stored in the heap and read back in the activation that chose it)
    assert not consistent(frozenset({(FLAG, True)}), frozenset({(kept, False)}))
    value = V(*tagged(V(TorchTensorAtom(CPU)), frozenset({(kept, False)})).atoms,
              *tagged(V(TorchTensorAtom(CUDA)), frozenset({(FLAG, True)})).atoms)
    assert [a.dev for a in restricted(value, FLAG, True).atoms] == [CUDA]  # type: ignore[attr-defined]
    assert len(alternatives([value])) == 1


def test_an_instance_noted_on_other_ways_only_is_not_a_possibility_on_this_one() -> None:
    cpu_model, cuda_model = Instance(object(), "m.py", 1, 0, -1), Instance(object(), "m.py", 1, 0, -2)
    both = tagged(V(cpu_model), frozenset({(FLAG, False)})).join(tagged(V(cuda_model), frozenset({(FLAG, True)})))
    on_gpu = tagged(both, frozenset({(FLAG, True)}))
    assert on_gpu.atoms == {cuda_model}
    assert on_gpu.notes == {cuda_model: frozenset({frozenset({(FLAG, True)})})}


def test_a_device_helper_called_twice_answers_the_same() -> None:
    helper = """
        import os
        import torch
        from torch import nn

        def get_device():
            return torch.device("cuda" if os.environ.get("USE_GPU") == "1" else "cpu")

        def evaluate(model):
            return model(torch.randn(4, 8).to(get_device()))

        model = nn.Linear(8, 2).to(get_device())
    """
    assert findings(helper + """
        print(model(torch.randn(4, 8).to(get_device())), evaluate(model))
        """) == []
    # a batch left on the CPU still meets the model on the GPU
    assert findings(helper + """
        print(model(torch.randn(4, 8)))
        """) == [(14, "MV202")]


def test_a_helper_whose_answer_follows_an_argument_is_not_one_value() -> None:
    assert findings("""
        import torch
        from torch import nn

        def pick(flag):
            return torch.device("cuda" if flag else "cpu")

        def run(a, b):
            model = nn.Linear(8, 2).to(pick(a))
            return model(torch.randn(4, 8).to(pick(b)))

        print(run(torch.randn(1).item() > 0, torch.randn(1).item() > 0))
        """) == [(10, "MV202")]


def test_a_device_test_on_a_partly_unknown_tensor_follows_its_known_device() -> None:
    assert findings("""
        import torch
        from torch import nn

        def sample(mu):
            Tensor = torch.cuda.FloatTensor if mu.is_cuda else torch.FloatTensor
            return Tensor(2, 4).normal_() + mu

        layer = nn.Linear(4, 4).cuda()
        mu = layer(torch.randn(2, 4).cuda()) if torch.randn(1).item() > 0 else torch.hub.load("a", "b")
        print(sample(mu))
        """) == []


def test_a_restriction_kept_on_the_value_gives_what_a_walk_gives() -> None:
    cpu = TorchTensorAtom(CPU, tags=frozenset({(FLAG, False)}))
    cuda = TorchTensorAtom(CUDA, tags=frozenset({(FLAG, True)}))
    value = Value(frozenset({cpu, cuda, seq("list", [V(cpu, cuda)])}))
    first, again = restricted(value, FLAG, True), restricted(value, FLAG, True)
    assert first == again == Value(frozenset({cuda, seq("list", [V(cuda)])}))
    assert first is not again  # a changed value is a new one each time, as a walk makes it
    untouched = V(const(3))
    assert restricted(untouched, FLAG, True) is untouched
    other = Value(frozenset({TorchTensorAtom(CPU, tags=frozenset({(OTHER, False)})), cuda}))
    assert restricted(other, OTHER, False) is other  # nothing of the other way: the value itself, each time
    assert restricted(other, OTHER, False) is other
    # what is kept on a value never refers back to it (the check runs without the cyclic collector)
    stripped(value)
    for_heap(value)
    assert all(kept is not value for kept in (value._mapped or {}).values())


def test_the_choices_a_value_names_are_kept_on_it() -> None:
    value = V(TorchTensorAtom(CPU, tags=frozenset({(FLAG, False)})),
              TorchTensorAtom(CUDA, tags=frozenset({(FLAG, True)})))
    assert alternatives([value]) == {FLAG: {False, True}}
    assert alternatives([value, V(TorchTensorAtom(CPU, tags=frozenset({(lasting(FLAG), True)})))]) \
        == {FLAG: {False, True}}  # a choice and its lasting form as one
    assert value._alternatives is not None


# --- numbers a branch test bounds, and a typed option's thresholds ---------------------------------------------

def test_a_number_keeps_the_bounds_a_test_proves() -> None:
    import ast
    import operator

    from devicelint.domain import NumberAtom
    from devicelint.engine.python_values import CMP_OPS, compare_atoms

    n = NumberAtom("int")
    positive = n.within(0, None, strict=True)
    assert positive is not None and (positive.low, positive.high) == (1, None)
    assert compare_atoms(operator.gt, positive, const(0)) is True
    assert compare_atoms(operator.gt, positive, const(1)) is None
    assert compare_atoms(CMP_OPS[ast.Lt], const(0), positive) is True  # 0 < n
    assert compare_atoms(operator.eq, positive, const(0)) is False
    assert positive.within(None, 0) is None  # no int is both > 0 and <= 0
    half = NumberAtom("float").within(0.5, None, strict=True)
    assert half is not None and compare_atoms(operator.gt, half, const(0.7)) is None  # a float above 0.5 may be 0.6
    assert NumberAtom("int").within(0, 0).truthy() is False and positive.truthy() is True


GPUS = """
import argparse
import torch
from torch import nn

def build(args):
    model = nn.Linear(8, 3)
    if args.gpus > 0:
        model = model.cuda()
    if args.gpus > 1:
        model = nn.DataParallel(model)
    return model

def evaluate(model, args):
    gpus = args.gpus
    x = torch.randn(4, 8)
    if gpus >= 1:
        x = x.cuda()
    out = model(x).detach()
    if gpus == 0:
        return out.numpy()
    return out.cpu().numpy()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    args = parser.parse_args()
    model = build(args)
    x = torch.randn(4, 8)
    if 0 < args.gpus:
        x = x.cuda()
    print(model(x), evaluate(model, args))
    {extra}

main()
"""


def test_one_typed_option_compared_with_several_thresholds_is_one_answer_per_run() -> None:
    """``> 0``, ``0 <``, ``>= 1`` and ``== 0`` of one ``type=int`` option, in several functions: a run that moves
    the model also moves the batches, and the evaluation's CPU branch never sees a CUDA output."""
    assert findings(GPUS.replace("{extra}", "")) == []


def test_thresholds_that_leave_a_gap_still_fail() -> None:
    """With exactly one GPU the weights stay on the CPU (``> 1``) while the batch is on the GPU (``> 0``)."""
    extra = """w = torch.ones(3)
    if args.gpus > 1:
        w = w.cuda()
    y = torch.randn(2, 8)
    if args.gpus > 0:
        y = y.cuda()
    print(y[:, :3] * w)"""
    assert findings(GPUS.replace("{extra}", extra)) == [(39, "MV201")]



def test_an_int_option_with_choices_is_a_number_within_them() -> None:
    source = GPUS.replace("{extra}", "").replace(
        'type=int, default=torch.cuda.device_count()', 'type=int, default=1, choices=[0, 1, 2]')
    assert findings(source) == []
    assert findings(source.replace("if gpus == 0:", "if gpus <= 1:")) == [(21, "MV203")]


OPTION_FLAGS = """import argparse

import torch
import torch.nn as nn


def build(args):
    use_gpu = args.device == "cuda" or args.device == "gpu"
    model = nn.Linear(8, 2)
    if use_gpu:
        model = model.cuda()
    return model


def batch(args):
    use_gpu = BATCH_TEST
    x = torch.rand(4, 8)
    if use_gpu:
        x = x.cuda()
    return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="gpu")
    args = parser.parse_args()
    model = build(args)
    x = batch(args)
    print(model(x))


main()
"""


def _option_flags(test: str) -> list[str]:
    source = OPTION_FLAGS.replace("BATCH_TEST", test)
    return [d.message for d in check_source(source, "script.py", Settings(jobs=1)).findings]


def test_two_flags_of_one_name_made_of_different_tests_of_an_option_are_two_choices() -> None:
    # ``use_gpu`` is true on cuda and gpu in ``build``, on gpu and mps in ``batch``: ``--device cuda`` pairs the
    # GPU model with the CPU batch, although both flags are named alike and test the same option
    (found,) = _option_flags('args.device == "gpu" or args.device == "mps"')
    assert "when the command line gives options" in found and "cpu" in found, found
    assert _option_flags('args.device == "cuda" or args.device == "gpu"') == []


def test_analyses_in_one_process_each_get_their_own_option_tests() -> None:
    # programs with the same option, the same flag names and different tests of it, analysed in turn (as the
    # editor's server does): each answer is the program's own, whatever was analysed before it
    alike = 'args.device == "cuda" or args.device == "gpu"'
    apart = 'args.device == "gpu" or args.device == "mps"'
    answers = [bool(_option_flags(test)) for test in (alike, apart, alike, apart, apart, alike)]
    assert answers == [False, True, False, True, True, False]
