"""The argparse model: options read as their defaults only in the world of a command line without options."""

from __future__ import annotations

import ast

from devicelint.choices import consistent
from devicelint.domain import TOP, BuiltinRef, V, const, seq
from devicelint.models.argparse_model import option_alternatives, option_default
from devicelint.models.option_tests import OptionDomain, Predicate, StringOption, predicates_by_name, string_options
from devicelint.runner import check_source
from devicelint.settings import Settings


def s(text: str):
    return V(const(text))


def test_destinations_and_defaults_follow_argparse() -> None:
    assert option_default([s("--batch-size"), s("-b")], {"type": V(BuiltinRef("int")), "default": s("8")}) \
        == ("batch_size", V(const(8)))
    assert option_default([s("-d")], {}) == ("d", V(const(None)))
    assert option_default([s("--cpu")], {"action": s("store_true")}) == ("cpu", V(const(False)))
    assert option_default([s("--no-amp")], {"action": s("store_false"), "dest": s("amp")}) == ("amp", V(const(True)))
    assert option_default([s("out")], {"nargs": s("?"), "default": s("cpu")}) == ("out", s("cpu"))


def test_options_no_run_can_leave_out_have_no_default() -> None:
    assert option_default([s("data")], {}) == ("data", None)  # a positional argument is required
    assert option_default([s("--device")], {"required": V(const(True)), "default": s("cuda")}) == ("device", None)
    assert option_default([s("--gpu")], {"type": TOP, "default": s("0")}) == ("gpu", None)  # an unknown converter
    assert option_default([TOP], {}) is None


SCRIPT = """import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
args = parser.parse_args({line})
model = nn.Linear(3, 3).to(args.device)
print(model(torch.randn(2, 3)))
{extra}"""


def findings(line: str = "", extra: str = "") -> list[tuple[str, str]]:
    report = check_source(SCRIPT.format(line=line, extra=extra), "script.py", Settings(jobs=1))
    return [(d.code, d.severity.value) for d in report.findings]


def test_a_failure_with_the_defaults_only_is_a_warning() -> None:
    assert findings() == [("MV202", "warning")]
    report = check_source(SCRIPT.format(line="", extra=""), "script.py", Settings(jobs=1))
    assert "when the command line gives no options" in report.findings[0].message


def test_an_empty_command_line_is_the_defaults_on_every_path() -> None:
    assert findings("[]") == [("MV202", "error")]


def test_an_option_stored_on_the_namespace_is_read_as_stored_from_there_on() -> None:
    before_use = SCRIPT.replace("model = nn", "args.device = 'cpu'\nmodel = nn")
    assert check_source(before_use.format(line="", extra=""), "script.py", Settings(jobs=1)).findings == []
    # stored after the use: the use still reads the default
    assert findings(extra="args.device = 'cpu'\n") == [("MV202", "warning")]
    assert findings("['--device', 'cpu']") == []  # a command line written into the program: the CPU it gives


def test_a_command_line_written_into_the_program_is_parsed() -> None:
    assert findings("['--device', 'cuda']") == [("MV202", "error")]
    assert findings("['--device=cuda']") == [("MV202", "error")]
    assert findings("args=('--device', 'cuda')") == [("MV202", "error")]
    # an option the parser does not record (argparse's abbreviations are not followed): the namespace is unknown
    assert findings("['--dev', 'cuda']") == []
    assert findings("['--device']") == []  # (argparse exits: no value)


def test_stored_attributes_travel_with_the_namespace_into_functions() -> None:
    script = SCRIPT.replace("model = nn.Linear(3, 3).to(args.device)\nprint(model(torch.randn(2, 3)))",
                            "args.device = 'cpu'\n\ndef run(opts):\n    model = nn.Linear(3, 3).to(opts.device)\n"
                            "    print(model(torch.randn(2, 3)))\n\nrun(args)")
    assert check_source(script.format(line="", extra=""), "script.py", Settings(jobs=1)).findings == []


def test_a_store_the_analysis_does_not_follow_drops_the_default() -> None:
    # through a parameter or an attribute: other variables holding the namespace would not see it
    assert findings(extra="def fix(opts):\n    opts.device = 'cpu'\n") == []
    assert findings(extra="class Run:\n    def __init__(self, a):\n        self.args = a\n"
                          "        self.args.device = 'cpu'\n") == []
    # ``self.device = ...`` in a method stores on an instance: the option keeps its default
    assert findings(extra="class Log:\n    def __init__(self):\n        self.device = 'cpu'\n") \
        == [("MV202", "warning")]
    # so does ``setattr(self, name, ...)``, whatever the name; on anything else a computed name may be the option
    assert findings(extra="class Stats:\n    def __init__(self, names):\n        for n in names:\n"
                          "            setattr(self, n, 0)\n") == [("MV202", "warning")]
    assert findings(extra="def load(opts, names):\n    for n in names:\n        setattr(opts, n, 'cpu')\n") == []


def test_simple_namespaces_hold_their_keywords() -> None:
    script = ("import types\nimport torch\nfrom torch import nn\n"
              "cfg = types.SimpleNamespace(device='cuda', width=3)\n"
              "model = nn.Linear(3, cfg.width).to(cfg.device)\nprint(model(torch.randn(2, 3)))\n")
    report = check_source(script, "script.py", Settings(jobs=1))
    assert [d.code for d in report.findings] == ["MV202"]
    spliced = script.replace("cfg.device)", "vars(cfg)['device'])")
    assert [d.code for d in check_source(spliced, "script.py", Settings(jobs=1)).findings] == ["MV202"]


def test_a_parser_with_positional_parents_reads_every_option_as_unknown() -> None:
    script = SCRIPT.replace("argparse.ArgumentParser()", "argparse.ArgumentParser('p', None, None, None, [])")
    report = check_source(script.format(line="[]", extra=""), "script.py", Settings(jobs=1))
    assert report.findings == []


def _messages(source: str) -> list[str]:
    return [d.message for d in check_source(source, "script.py", Settings(jobs=1)).findings]


CHOICES = """import argparse
import torch
from torch import nn


def evaluate(args, model):
    return model(torch.randn(4, 8).to(args.device))


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
args = parser.parse_args()
model = nn.Linear(8, 2).to(args.device)
print(evaluate(args, model), model(torch.zeros(3, 8, device=args.device)) + torch.ones(2, device=args.device))
{extra}"""


def test_an_option_with_choices_takes_one_of_them_on_every_line_that_reads_it() -> None:
    # one command line, one value: the model and the batches follow the same one, here and in a helper
    assert _messages(CHOICES.format(extra="")) == []
    assert option_alternatives({"choices": V(seq("list", (s("cpu"), s("cuda"))))}, s("cpu")) \
        == (const("cpu"), const("cuda"))
    assert option_alternatives({"action": s("store_true")}, V(const(False))) == (const(True), const(False))
    assert option_alternatives({"choices": TOP}, s("cpu")) is None


def test_an_option_with_choices_fails_with_the_choice_that_fails() -> None:
    # the default (cpu) runs; ``--device cuda`` leaves the second batch on the CPU
    found = _messages(CHOICES.format(extra="print(model(torch.zeros(3, 8)))"))
    assert len(found) == 1
    assert "fails on some paths at the top level of script.py when the command line gives options; ok when the " \
           "command line gives no options" in found[0]


def test_a_flag_tested_in_main_and_in_a_helper_is_one_answer() -> None:
    source = """import argparse
import torch
from torch import nn


def train(args, model, x):
    if args.cuda:
        x = x.cuda()
    return model(x)


parser = argparse.ArgumentParser()
parser.add_argument("--no-cuda", action="store_true", default=False)
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
model = nn.Linear(8, 2)
if args.cuda:
    model.cuda()
print(train(args, model, torch.randn(4, 8)))
"""
    assert _messages(source) == []


def test_a_failing_world_is_named_by_what_tells_it_from_the_passing_ones() -> None:
    source = """import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--cpu-eval", action="store_true")
args = parser.parse_args()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2).to(device)
x = torch.randn(4, 8) if args.cpu_eval else torch.randn(4, 8).to(device)
print(model(x))
"""
    found = _messages(source)
    assert len(found) == 1
    assert "when CUDA is available and the command line gives options; ok when CUDA is not available and " \
           "when the command line gives no options" in found[0]


def test_banner_comments_are_scanned_in_linear_time() -> None:
    # a store of an option through a parameter is looked for in the text first; rows of ``#`` after a dot
    # (a comment's last sentence, then a banner) once made that scan try every split of the rows. The program runs in a
    # subprocess so that a regression hangs one test, bounded, rather than the suite.
    import subprocess
    import sys
    import textwrap

    banner = "#" * 79
    program = textwrap.dedent(f"""
        import argparse
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda")
        args = parser.parse_args()
        # Build the model.
        {banner}
        {banner}
        model = torch.nn.Linear(2, 2).to(args.device).eval()
        print(model(torch.zeros(2)), args.seed)
    """)
    code = ("import sys; from devicelint.runner import check_source; from devicelint.settings import Settings; "
            "print(sorted(d.code for d in check_source(sys.stdin.read(), 'prog.py', Settings()).diagnostics))")
    done = subprocess.run([sys.executable, "-c", code], input=program, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "['MV202']"


def test_only_the_worlds_that_fail_on_some_paths_say_so() -> None:
    # with no options the weight fails on every path; with options, only where ``--cpu`` is not given
    source = """import argparse
import torch
import torch.nn.functional as F


class Config:
    def __init__(self):
        self.device = "cuda"


def train(config):
    weight = torch.tensor([1.0, 2.0])
    logits = torch.randn(4, 2, device=config.device)
    labels = torch.zeros(4, dtype=torch.long, device=config.device)
    return F.cross_entropy(logits, labels, weight=weight)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    config = Config()
    if args.cpu:
        config.device = "cpu"
    train(config)


main()
"""
    found = _messages(source)
    assert len(found) == 1
    assert "; fails when `train` is called from script.py:25 (inside `main` called from script.py:28) when the " \
        "command line gives no options; on some paths when `train` is called from script.py:25 (inside `main` " \
        "called from script.py:28) when the command line gives options;" in found[0], found[0]


def test_a_namespace_two_paths_left_apart_merges_back_into_one_in_any_order() -> None:
    """Each branch of ``if args.flag:`` narrows the flag; a store on one path only: the join holds one namespace
    (the flag's values joined, the store joined with unknown), whichever order the paths and atoms come in."""
    from devicelint.domain import Value, merge_alike
    from devicelint.models.argparse_model import NamespaceAtom

    options = (("flag", V(const(False))), ("lr", V(const(0.1))))
    on = NamespaceAtom(options, False, (), (("flag", V(const(True))),))
    off = NamespaceAtom(options, False, (("lr", V(const(0.4))),), (("flag", V(const(False))),))
    stored = NamespaceAtom(options, False, (("lr", V(const(0.2))),), (("flag", V(const(True))),))
    joined = [a.join(b) for a, b in (merge_alike(V(on), Value(frozenset({off, stored}))),
                                     merge_alike(Value(frozenset({stored, off})), V(on)))]
    assert joined[0] == joined[1] and len(joined[0].atoms) == 1
    (merged,) = joined[0].atoms
    assert dict(merged.given)["flag"] == V(const(True)).join(V(const(False)))
    assert dict(merged.assigned)["lr"] == V(const(0.4)).join(V(const(0.2))).join(TOP)
    other_parse = NamespaceAtom((("flag", V(const(False))),), False)  # another parser's: kept apart
    assert len(V(on).join(V(other_parse)).atoms) == 2
    assert merge_alike(V(on), V(other_parse)) == (V(on), V(other_parse))


def test_a_free_string_option_compared_with_a_constant_is_one_answer_everywhere() -> None:
    # ``-use_gpu gpu`` takes any string: its comparison with "gpu" is still one answer per run, in the flag given
    # to a constructor, in ``if`` tests and in a conditional expression
    source = """import argparse
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, use_gpu):
        super().__init__()
        self.body = nn.Linear(3, 2)
        if use_gpu:
            self.scale = torch.ones(2, device="cuda")
        else:
            self.scale = torch.ones(2)

    def forward(self, frames):
        for frame in frames:
            out = self.body(frame) * self.scale
        return out


parser = argparse.ArgumentParser()
parser.add_argument("-use_gpu", default="gpu")
args = parser.parse_args()
model = Model(args.use_gpu == "gpu")
if args.use_gpu != "gpu":
    pass
else:
    model = model.cuda()
device = "cuda" if args.use_gpu == "gpu" else "cpu"
print(model([torch.rand(1, 3).to(device) for _ in range(2)]))
"""
    assert _messages(source) == []
    (found,) = _messages(source.replace('device = "cuda" if', 'device = "cpu" if'))  # the frames stay on the CPU
    assert "[nn.Linear: input: cpu tensor" in found, found


def test_tests_of_one_string_option_contradict_by_its_values() -> None:
    tests = [Predicate("eq", ("gpu",)), Predicate("eq", ("cpu",)), Predicate("in", ("cuda", "gpu")),
             Predicate("prefix", ("cuda",))]
    domain = OptionDomain.of("device", tests, ("gpu",), None)
    gpu, cpu = domain.outcome(Predicate("eq", ("gpu",)), True), domain.outcome(Predicate("eq", ("cpu",)), True)
    not_cpu = domain.outcome(Predicate("eq", ("cpu",)), False)
    in_gpus, not_in_gpus = (domain.outcome(Predicate("in", ("cuda", "gpu")), way) for way in (True, False))
    cuda_prefix = domain.outcome(Predicate("prefix", ("cuda",)), True)
    assert gpu and cpu and not_cpu and in_gpus and not_in_gpus and cuda_prefix
    assert not consistent(gpu, cpu)  # one value is not "gpu" and "cpu"
    assert consistent(gpu, not_cpu) and consistent(gpu, in_gpus) and not consistent(gpu, not_in_gpus)
    assert not consistent(cuda_prefix, gpu) and consistent(cuda_prefix, in_gpus)
    assert consistent(not_cpu, not_in_gpus)  # any other value ("mps")
    # ``choices=`` leave no other value: not "cpu" and not one of ("cuda", "gpu") is impossible
    bounded = OptionDomain.of("device", [Predicate("eq", ("cpu",)), Predicate("in", ("cuda", "gpu"))], (),
                              ("cpu", "cuda", "gpu"))
    assert not consistent(bounded.outcome(Predicate("eq", ("cpu",)), False),  # type: ignore[arg-type]
                          bounded.outcome(Predicate("in", ("cuda", "gpu")), False))
    assert bounded.outcome(Predicate("eq", ("tpu",)), True) is None  # not one of its values


def test_string_options_and_their_tests_are_found_by_syntax() -> None:
    tree = ast.parse("""
p.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
p.add_argument("--run-name", type=str)
p.add_argument("--cpu", action="store_true")
p.add_argument("--gpus", type=int, default=1)
if cfg.device.lower() == "cuda" or opt["device"] in ("mps", "cpu") or args.device.startswith("cu"): pass
""")
    options = string_options([tree])
    assert options == {"device": StringOption(("cuda",), ("cpu", "cuda")), "run_name": StringOption((), None)}
    assert predicates_by_name([tree])["device"] == {Predicate("eq", ("cuda",)), Predicate("in", ("mps", "cpu")),
                                                    Predicate("prefix", ("cu",))}


OPTION_TESTS = """import argparse
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Config:
    device: str


def build(args):
    model = nn.Linear(8, 2)
    if args.device in ("cuda", "gpu"):
        model = model.cuda()
    return model


def batch(options):
    x = torch.rand(4, 8)
    if BATCH_TEST:
        x = x.cuda()
    return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="gpu"CHOICES)
    args = parser.parse_args()
    model = build(args)
    x = batch(OPTIONS)
    print(model(x))


main()
"""


def _option_program(test: str, options: str = "args", choices: str = "") -> list[str]:
    return _messages(OPTION_TESTS.replace("BATCH_TEST", test).replace("OPTIONS", options).replace("CHOICES", choices))


def test_every_test_of_one_string_option_is_one_choice_over_its_values() -> None:
    bounded = ', choices=["cpu", "cuda", "gpu", "mps"]'
    # the same values told apart by other tests, in another function, through other holders
    assert _option_program('options.device not in ("cpu", "mps")', choices=bounded) == []
    assert _option_program('options.device.lower() in ("gpu", "cuda")', "Config(device=args.device)") == []
    assert _option_program('options["device"] in ("cuda", "gpu")', "vars(args)") == []
    assert _option_program('options.get("device") in ("cuda", "gpu")', "vars(args)") == []
    assert _option_program('options.device == "cuda" or options.device.lower() == "gpu"') == []
    assert _option_program('options.device.startswith("cuda") or options.device == "gpu"', choices=bounded) == []
    # unbounded, ``--device cuda:1`` starts with "cuda" but is not in ("cuda", "gpu"): the CPU model meets the GPU
    # batch (the observer fails there with that command line)
    (found,) = _option_program('options.device.startswith("cuda") or options.device == "gpu"')
    assert "when the command line gives options" in found, found
    # tests that some value answers differently: a run that pairs the GPU model with the CPU batch
    (found,) = _option_program('options.device == "cuda"')  # ``--device gpu`` (the default)
    assert "cpu" in found, found
    (found,) = _option_program('options.device.lower() == "gpu"')  # ``--device cuda``
    assert "when the command line gives options" in found, found
    (found,) = _option_program('options.device.startswith("cuda")', "Config(device=args.device)")
    assert "cpu" in found, found


def test_classes_whose_fields_a_loop_makes_options_are_found() -> None:
    from devicelint.models.option_values import generated_option_classes

    tree = ast.parse("""
for name, value in asdict(Train()).items():
    parser.add_argument("--" + name, type=type(value), default=value)
for f in dataclasses.fields(Eval):
    parser.add_argument(f"--{f.name}", default=f.default)
for key, val in vars(cfg.Other()).items():
    parser.add_argument("--" + key, default=None)  # (not the field's default: not generated from it)
for key in Plain().__dict__:
    parser.add_argument("--" + key)
""")
    assert generated_option_classes([tree]) == frozenset({"Train", "Eval"})


def test_a_config_filled_from_options_made_of_its_fields_reads_its_defaults_without_options() -> None:
    source = """
import argparse
from dataclasses import asdict, dataclass
import torch
from devicelint import reveal_device

@dataclass
class Config:
    device: str = "cuda"
    other: str = "cpu"

class Loose:
    device = "cuda"

parser = argparse.ArgumentParser()
for name, value in asdict(Config()).items():
    parser.add_argument("--" + name, default=value)
args = parser.parse_args()
cfg = Config(**vars(args))
reveal_device(torch.ones(1, device=cfg.device))
cfg.other = "cuda"
reveal_device(torch.ones(1, device=cfg.other))
"""
    report = check_source(source, "script.py", Settings(jobs=1))
    reveals = [d.message.removeprefix("reveal_device: ") for d in sorted(report.diagnostics, key=lambda d: d.row)
               if not d.code]
    # with options given the field is any string; stored later, it is what was stored
    assert reveals == ["Unknown | cuda:0 tensor", "cuda:0 tensor"]
