"""Command-line option branches in training scripts: an early ``return`` in an option's branch, an in-place move on
one way of an option, an option read through a config object filled from the namespace, a test of a three-valued
option true on two of them. Each correct program gets no finding; each buggy twin keeps its finding."""

from __future__ import annotations

import ast
import textwrap

from devicelint.choices import consistent, tags_of
from devicelint.domain import const
from devicelint.engine.control_flow import leaves_function
from devicelint.engine.relational import fewest_ways
from devicelint.models.option_values import OptionValues, option_value, option_values
from devicelint.runner import check_source
from devicelint.settings import Settings


def _findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "train.py", Settings(jobs=1, select=("MV2",)))
    return sorted((d.row, d.code, d.message) for d in report.diagnostics)


EARLY_RETURN = """
    import argparse
    import torch
    from torch import nn


    def setup(args, model):
        if args.cpu:
            return model, "cpu"
        return model.cuda(), "cuda"


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--cpu", action="store_true")
        args = parser.parse_args()
        model, device = setup(args, nn.Linear(8, 2))
        x = torch.randn(4, 8).to(device)
        y = TARGETS
        print(nn.functional.cross_entropy(model(x), y))


    main()
"""


def test_what_an_option_branch_returns_early_is_that_ways() -> None:
    assert _findings(EARLY_RETURN.replace("TARGETS", "torch.randint(0, 2, (4,)).to(device)")) == []
    # targets left on the CPU meet the GPU output with no options (and the model itself is never paired wrongly)
    found = _findings(EARLY_RETURN.replace("TARGETS", "torch.randint(0, 2, (4,))"))
    assert [(row, code) for row, code, _m in found] == [(20, "MV201")], found


CONFIG_TRAINER = """
    import argparse
    import torch
    from torch import nn


    class Config:
        def __init__(self, **options):
            for key, value in options.items():
                setattr(self, key, value)


    class Trainer:
        def __init__(self, cfg):
            self.cfg = cfg
            self.model = nn.Linear(8, 2)
            if cfg.cpu:
                self.device = torch.device("cpu")
            else:
                self.device = torch.device("cuda")
                self.model.cuda()

        def step(self):
            x = torch.randn(4, 8)
            if TEST:
                x = x.cuda()
            return self.model(x)


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--cpu", action="store_true")
        args = parser.parse_args()
        print(Trainer(Config(**vars(args))).step())


    main()
"""


def test_a_config_attribute_named_as_an_option_is_that_option_in_every_method() -> None:
    # ``cfg.cpu`` in the constructor and ``self.cfg.cpu`` in ``step``: one command line, one answer; the layer moved
    # in place on one way of ``--cpu`` is on the CPU on the other
    assert _findings(CONFIG_TRAINER.replace("TEST", "not self.cfg.cpu")) == []
    found = _findings(CONFIG_TRAINER.replace("TEST", "self.cfg.cpu"))
    assert [(row, code) for row, code, _m in found] == [(27, "MV202")], found


def test_a_dataclass_filled_from_unknown_keywords_holds_no_field_default() -> None:
    source = """
        import argparse
        from dataclasses import dataclass
        import torch
        from torch import nn


        @dataclass
        class TrainConfig:
            device: str = "cuda"


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--device", default="cuda", choices=["cuda", "cpu", "mps"])
            args = parser.parse_args()
            cfg = TrainConfig(**vars(args))
            model = nn.Linear(8, 2)
            if cfg.device == "cuda":
                model = model.cuda()
            x = torch.randn(2, 8)
            if args.device == "cuda":
                x = x.cuda()
            print(model(x))


        main()
    """
    assert _findings(source) == []


def test_a_test_true_on_two_of_three_values_is_decided_by_them() -> None:
    source = """
        import argparse
        import torch
        from torch import nn


        class Trainer:
            def __init__(self, args):
                self.args = args
                self.model = nn.Linear(8, 2)
                if args.device == "cuda":
                    self.device = torch.device("cuda")
                    self.model.cuda()
                else:
                    self.device = torch.device("cpu")

            def step(self):
                x = torch.randn(4, 8)
                if self.args.device != "cpu":
                    x = x.to(self.device)
                return self.model(x)


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--device", default="cuda", choices=["cuda", "mps", "cpu"])
            args = parser.parse_args()
            print(Trainer(args).step())


        main()
    """
    assert _findings(source) == []


def test_option_values_are_read_by_syntax() -> None:
    tree = ast.parse("""
p.add_argument("--cpu", action="store_true")
p.add_argument("--no-amp", action="store_false", dest="amp")
p.add_argument("--device", default="cuda", choices=["cuda", "cpu", "mps"])
p.add_argument("--fp16", type=str2bool, default=False)
p.add_argument("--gpus", type=int, default=1)
p.add_argument("--name", default="run")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--seed", type=int, default=1)
p.add_argument("data")
p.add_argument("--ids", nargs="+")
""")
    found = option_values([tree])
    assert found == {
        "cpu": OptionValues(False, (True, False)),
        "amp": OptionValues(True, (True, False)),
        "device": OptionValues("cuda", ("cuda", "cpu", "mps")),
        "fp16": OptionValues(False, (True, False)),
        "gpus": OptionValues(1, None, "int"),
        "name": OptionValues("run", None),
    }  # (``--seed`` added twice differently, a positional and an ``nargs`` option: left out)
    assert found["cpu"].value("cpu", False).consts() == [False]  # type: ignore[union-attr]
    assert found["name"].value("name", True) is None  # (a free string with options given: its tests say more)


def test_three_values_are_tests_of_one_value() -> None:
    value = option_value("device_test", (const("cuda"), const("cpu"), const("mps")))
    assert value is not None and len(value.atoms) == 3
    # (the choices as the value's tags carry them: each with the test of the value it is)
    first, second = sorted({choice for atom in value.atoms for choice, _way in tags_of(atom)})
    assert (first.test, second.test) == ("--device_test=0", "--device_test=1")
    assert not consistent(frozenset({(first, True)}), frozenset({(second, True)}))  # (no value is both)
    assert fewest_ways(frozenset({(first, False), (second, True)})) == frozenset({(second, True)})
    assert fewest_ways(frozenset({(first, False), (second, False)})) == frozenset({(first, False), (second, False)})


def test_a_branch_leaves_the_function_where_it_returns_or_raises() -> None:
    tree = ast.parse("""
if a:
    return 1
if b:
    x = 1
else:
    raise ValueError
if c:
    def f():
        return 2
""")
    first, second, third = tree.body
    assert leaves_function(first) and leaves_function(second)  # type: ignore[arg-type]
    assert not leaves_function(third)  # type: ignore[arg-type]  (a nested definition's return is its own)


def test_a_test_joined_by_and_carries_the_options_way_it_implies() -> None:
    # ``not args.cpu and len(...) > 1`` makes no choice of its own (it calls ``len``), but its true branch is on
    # ``--cpu``'s false way: the wrapper made there is never moved to the CPU device of the other way
    source = """
        import argparse
        import torch
        from torch import nn


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--gpu-ids", default="0")
            parser.add_argument("--cpu", action="store_true")
            args = parser.parse_args()
            device = torch.device("cpu") if args.cpu else torch.device("cuda")
            model = nn.Linear(8, 2)
            if not args.cpu and len(args.gpu_ids.split(",")) > 1:
                model = nn.DataParallel(model)
            model = model.to(device)
            print(model(torch.randn(4, 8).to(device)))


        main()
    """
    assert _findings(source) == []


THREE_WAYS = """
    import argparse
    import torch
    from torch import nn


    def step(model, x):
        return model(x)


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda", choices=["cuda", "mps", "cpu"])
        parser.add_argument("--cuda", action="store_true")
        args = parser.parse_args()
        model = nn.Linear(8, 2)
        if args.device == "cuda":
            model.cuda()
        elif args.device == "mps":
            MPS_WAY
        else:
            model.float()
        x = torch.randn(4, 8).to(args.device)
        print(model(x))
        CALLER
        head = nn.Linear(8, 2).cuda()
        batch = [torch.randn(4, 8), torch.randn(4, 8)]
        batch = [t.cuda() if args.cuda else t for t in batch]
        print([head(t) for t in batch])


    main()
"""


def test_an_in_place_move_on_one_way_of_three_and_a_comprehension_test() -> None:
    correct = THREE_WAYS.replace("MPS_WAY", 'model.to("mps")').replace("CALLER", "").replace(
        "head = nn.Linear(8, 2).cuda()", "head = nn.Linear(8, 2).cuda() if args.cuda else nn.Linear(8, 2)")
    assert _findings(correct) == []
    found = _findings(THREE_WAYS.replace("MPS_WAY", "model.float()").replace("CALLER", ""))
    # each names the option value it needs: the mps way forgot the model, and no --cuda leaves the batch behind
    assert [(row, code) for row, code, _m in found] == [(24, "MV202"), (29, "MV202")], found
    assert "; fails only where `--device` is 'mps'" in found[0][2]
    assert "; fails only where `--cuda` is False" in found[1][2]


def test_a_failure_reported_at_the_caller_names_the_values_that_fail() -> None:
    source = THREE_WAYS.replace("MPS_WAY", 'model.to("mps")').replace(
        "CALLER", 'print(step(nn.Linear(8, 2).to("cuda"), x))')
    found = [f for f in _findings(source) if f[0] == 25]
    assert [(row, code) for row, code, _m in found] == [(25, "MV202")], found
    message = found[0][2]
    assert "this call passes the failing operand" in message
    assert "fails only where `--device` is 'cpu' or 'mps'" in message
    # every value fails: an error, with no value named
    every = source.replace('choices=["cuda", "mps", "cpu"]', 'choices=["mps", "cpu"]').replace(
        'default="cuda"', 'default="cpu"')
    report = check_source(textwrap.dedent(every), "train.py", Settings(jobs=1, select=("MV2",)))
    [caller] = [d for d in report.diagnostics if d.row == 25]
    assert caller.severity.value == "error" and "fails only where" not in caller.message
