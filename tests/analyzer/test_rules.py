"""The rules: discovered automatically, documented, and every documented example is checked.

Each rule's docstring has an ``## Example`` that the analyzer must report with the
rule's code, and a ``## Use instead`` it must not; both also run under
runtime_shim (virtual devices): the example fails with the rule's code (for the
dispatch failures MV101-MV111) and the replacement runs cleanly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from devicelint import rules
from devicelint.diagnostics import Severity
from devicelint.domain import DeviceAtom, PlainDev
from devicelint.facts import Context, FactStore, Possibility, Site, SiteFact
from devicelint.rules import all_rules
from devicelint.rules.base import OutcomeRule
from devicelint.runner import check_source
from devicelint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
SECTIONS = ("## What it does", "## Example", "## Use instead", "## Fix safety")
RUNTIME_CHECKED = {f"MV{n}" for n in range(101, 112)}


def code_blocks(doc: str, section: str) -> list[str]:
    body = doc.split(section, 1)[1].split("\n## ", 1)[0]
    return [textwrap.dedent(block) for block in re.findall(r"```python\n(.*?)```", body, re.S)]


def settings_for(code: str, example: str) -> Settings:
    match = re.search(r"target backends: ([\w, ]+)", example)
    backends = frozenset(b.strip() for b in match.group(1).split(",")) if match else None
    return Settings(backends=backends)


def test_registry_discovers_every_rule_module() -> None:
    modules = sorted(p.stem for p in Path(rules.__file__).parent.glob("mv*.py"))
    found = all_rules()
    assert len(found) == len(modules)
    assert [r.code for r in found] == sorted(r.code for r in found)
    assert len({r.name for r in found}) == len(found)
    for rule in found:
        assert re.fullmatch(r"MV\d{3}", rule.code) and rule.name and rule.summary()
        assert type(rule).__module__.split(".")[-1].startswith(rule.code.lower())


def test_adding_a_rule_touches_only_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mv199_example_rule.py").write_text(
        "from devicelint.rules.base import OutcomeRule\n\n\nclass ExampleRule(OutcomeRule):\n"
        '    """An example."""\n\n    code = "MV199"\n    name = "example-rule"\n')
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(tmp_path)])
    all_rules.cache_clear()
    try:
        assert "MV199" in [r.code for r in all_rules()]
        assert "MV199" in rules.rule_codes()  # from the module's name, without importing it
    finally:
        monkeypatch.undo()
        all_rules.cache_clear()
        sys.modules.pop("devicelint.rules.mv199_example_rule", None)
    assert "MV199" not in [r.code for r in all_rules()]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_docstring_sections(rule) -> None:
    doc = rule.doc()
    for section in SECTIONS:
        assert section in doc, f"{rule.code}: missing {section}"
    assert code_blocks(doc, "## Example") and code_blocks(doc, "## Use instead")


# MV903 reports a bug of the analyzer itself: no valid program triggers it (tests/analyzer/test_bounded.py makes
# the engine fail to check it)
@pytest.mark.parametrize("rule", [r for r in all_rules() if r.code != "MV903"], ids=lambda r: r.code)
def test_documented_example_is_reported(rule) -> None:
    example = code_blocks(rule.doc(), "## Example")[0]
    report = check_source(example, "example.py", settings_for(rule.code, example))
    codes = {d.code for d in report.findings}
    assert rule.code in codes, f"{rule.code}: the documented example is not reported:\n{example}"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_documented_fix_is_clean(rule) -> None:
    fixed = code_blocks(rule.doc(), "## Use instead")[0]
    report = check_source(fixed, "fixed.py", settings_for(rule.code, fixed))
    assert not report.findings, f"{rule.code}: the documented fix is reported: {report.findings}"


_RUNNER = r'''
import json, sys, traceback
from runtime_shim import DispatchError
out = {}
for key, source in json.loads(sys.stdin.read()).items():
    try:
        exec(compile(source, key, "exec"), {"__name__": "__main__"})
        out[key] = None
    except DispatchError as error:
        out[key] = error.code
    except BaseException as error:
        out[key] = "crash: " + "".join(traceback.format_exception_only(error))
print(json.dumps(out))
'''


def test_documented_examples_run_as_documented() -> None:
    sources = {}
    for rule in all_rules():
        if rule.code in RUNTIME_CHECKED:
            sources[f"{rule.code}-example"] = code_blocks(rule.doc(), "## Example")[0]
            sources[f"{rule.code}-fixed"] = code_blocks(rule.doc(), "## Use instead")[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNTIME_SHIM_")}
    env.update(RUNTIME_SHIM_VIRTUAL="1", PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(sources), capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, outcome in results.items():
        code, kind = key.split("-")
        expected = code if kind == "example" else None
        assert outcome == expected, f"{key}: the runtime gives {outcome!r}, the docs say {expected!r}"


def _fact(site: Site, ctx: Context, *codes: str | None, unknown: bool = False) -> SiteFact:
    fact = SiteFact(site, ctx, unknown=unknown)
    for i, code in enumerate(codes):
        device = DeviceAtom(PlainDev("Cuda", None, i))
        fact.possibilities.add(Possibility((("device", device),), code, "boom" if code else "", f"row.{i}"))
    return fact


def test_verdicts_error_warning_and_silence() -> None:
    rule = OutcomeRule()
    rule.code, rule.name = "MV102", "test"
    site = Site("t.py", 3, 4, 3, 10, "Tensor.to_device")
    top, fn = Context(1, None, "t.py"), Context(2, "f", "t.py")
    facts = FactStore()
    facts.sites[(site, 1)] = _fact(site, top, "MV102", "MV102")
    [d] = rule.check(facts)
    assert d.severity is Severity.ERROR and (d.row, d.column, d.end_row, d.end_column) == (3, 5, 3, 11)
    facts.sites[(site, 2)] = _fact(site, fn, None)
    [d] = rule.check(facts)
    assert d.severity is Severity.WARNING and "fails at the top level of t.py" in d.message
    facts.sites.pop((site, 2))
    facts.sites[(site, 1)] = _fact(site, top, "MV102", unknown=True)
    [d] = rule.check(facts)
    assert d.severity is Severity.WARNING  # known to fail on some path, the rest unknown
    facts.sites[(site, 1)] = _fact(site, top, None, unknown=True)
    assert list(rule.check(facts)) == []  # unknown states: nothing
    facts.sites[(site, 1)] = _fact(site, top, "MV105")
    assert list(rule.check(facts)) == []  # another rule's code


# fixtures whose findings depend on the worlds (CUDA available or not, command-line options, GPU count)
WORLD_FIXTURES = ("gpu_flag_moves_one_operand.py", "namespace_flag_target_forgotten.py",
                  "script_device_flag_default.py", "recursive_refiner_stages.py", "examples_device_flags.py",
                  "dataloader_batch_not_moved.py", "model_cuda_input_cpu.py", "eval_helper_batch_not_moved.py")
# in `auto` the mismatch message quotes PyTorch's error and describes every operand with its origin, and a warning
# names the failing calling contexts: long, but bounded
MAX_MESSAGE = 800
# with a target device, a mismatch that fails on every path is one sentence (two devices, their origins) and a hint
MAX_TARGET_ERROR = 320
WORLD_WORDS = ("CUDA is available", "CUDA is not available", "one GPU is available", "several GPUs are available")


@pytest.mark.parametrize("target", ["auto", "cuda", "cpu"])
def test_world_messages_name_one_short_condition(target: str) -> None:
    for name in WORLD_FIXTURES:
        path = REPO / "fixtures" / "torch" / name
        report = check_source(path.read_text(), str(path), Settings(target_device=target))
        for d in report.diagnostics:
            assert len(d.message) <= MAX_MESSAGE, (name, d.message)
            assert "is_available()" not in d.message and "device_count()" not in d.message, d.message
            # the other conditions of a combined world go to a note, never into the message
            assert " and the command line" not in d.message, d.message
            if target != "auto":
                assert not any(world in d.message for world in WORLD_WORDS), d.message
            if target != "auto" and d.code in ("MV201", "MV202", "MV207"):
                assert "mixes devices: " in d.message, d.message
                if d.severity is Severity.ERROR:
                    assert len(d.message) <= MAX_TARGET_ERROR, d.message


def test_a_combined_world_is_named_in_a_few_words_and_in_full_in_a_note() -> None:
    source = textwrap.dedent("""\
        import argparse
        import torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
        args = parser.parse_args()
        model = torch.nn.Linear(4, 2).to(args.device)
        print(model(torch.randn(3, 4)))
        """)
    [finding] = check_source(source, "prog.py", Settings()).diagnostics
    assert "when CUDA is available; ok when CUDA is not available" in finding.message
    assert "command line" not in finding.message
    notes = [r.message for r in finding.related if r.row == finding.row and r.message.startswith("fails when")]
    assert notes == ["fails when CUDA is available and the command line gives no options"]
    [target] = check_source(source, "prog.py", Settings(target_device="cuda")).diagnostics
    # on the named machine the program runs as its defaults say: the model on CUDA, the input not, on every path
    assert target.severity is Severity.ERROR
    assert "command line" not in target.message and "CUDA is" not in target.message


def test_no_note_for_a_world_narrower_than_one_that_fails_too() -> None:
    """Failing when CUDA is available, with or without options: the note would say it fails with options only."""
    source = textwrap.dedent("""\
        import argparse
        import torch
        from torch import nn

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=2)
        parser.add_argument("--no-cuda", action="store_true", default=False)
        args = parser.parse_args()
        args.cuda = not args.no_cuda and torch.cuda.is_available()
        device = torch.device("cuda" if args.cuda else "cpu")


        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc3 = nn.Linear(20, 400)

            def decode(self, z):
                return torch.sigmoid(self.fc3(z))


        model = VAE().to(device)

        if __name__ == "__main__":
            for epoch in range(1, args.epochs + 1):
                with torch.no_grad():
                    sample = torch.randn(64, 20)
                    sample = model.decode(sample).cpu()
                    print(sample.shape)
        """)
    [finding] = check_source(source, "prog.py", Settings()).diagnostics
    assert "when CUDA is available" in finding.message
    assert not [r.message for r in finding.related if r.message.startswith("fails when")]
