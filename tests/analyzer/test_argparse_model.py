"""The argparse model: options read as their defaults only in the world of a command line without options."""

from __future__ import annotations

from analyzer.domain import TOP, BuiltinRef, V, const
from analyzer.engine.argparse_model import option_default
from analyzer.runner import check_source
from analyzer.settings import Settings


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


def test_an_option_assigned_anywhere_is_not_read_as_its_default() -> None:
    assert findings(extra="args.device = 'cpu'\n") == []
    assert findings("['--device', 'cpu']") == []  # a command line the model does not parse: unknown


def test_a_parser_with_positional_parents_reads_every_option_as_unknown() -> None:
    script = SCRIPT.replace("argparse.ArgumentParser()", "argparse.ArgumentParser('p', None, None, None, [])")
    report = check_source(script.format(line="[]", extra=""), "script.py", Settings(jobs=1))
    assert report.findings == []
