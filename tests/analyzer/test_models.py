"""The library models sit behind one boundary (analyzer/models/base.py): the engine runs with none loaded."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from devicelint import frontend
from devicelint.cli import main
from devicelint.domain import Atom, BoundShim, V, Value, const
from devicelint.engine.core import Engine
from devicelint.engine.flow_state import Frame, State
from devicelint.facts import FactStore
from devicelint.models.base import UNHANDLED, LibraryModel, Unhandled
from devicelint.models.registry import default_models
from devicelint.models.signatures import SIGNATURES, argument, bind, bind_call, parse_signature, signature_of

from runtime_shim.semantics import DEFAULT_PROFILE

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

PLAIN = """
import functools


class Counter:
    def __init__(self, start):
        self.count = start

    def bump(self, by=1):
        self.count += by
        return self


def total(items, *, scale=1):
    out = 0
    for item in items:
        out += item * scale
    return out


counter = Counter(0)
for step in range(3):
    counter.bump(step)
double = functools.partial(total, scale=2)
print(double([1, 2, 3]), {k: v for k, v in zip("ab", (1, 2))}, [x for x in range(4) if x % 2])
"""

TORCH = """
import copy
import argparse
import numpy as np
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
args = parser.parse_args()
model = nn.Linear(4, 2).to("cuda" if args.device else "cpu")
teacher = copy.deepcopy(model)
x = torch.ones(3, 4)
with torch.no_grad():
    y = model(x)
print(np.asarray(y), teacher(x.cuda()))
"""


def _analyze(tmp_path: Path, files: dict[str, str],
             models: tuple[type[LibraryModel], ...] | None) -> tuple[Engine, FactStore]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    sources = frontend.load(frontend.discover([str(tmp_path)]))
    sources = [s for s in sources if frontend.parse(s) is None]
    facts = FactStore()
    engine = Engine(sources, facts, DEFAULT_PROFILE, None, project_modules=frozenset(s.module for s in sources),
                    models=models)
    engine.run()
    return engine, facts


def test_the_engine_analyses_plain_python_with_no_model(tmp_path: Path) -> None:
    engine, facts = _analyze(tmp_path, {"plain.py": PLAIN}, models=())
    assert engine.models == []
    assert facts.file_failures == []
    ran = {fn.name for fn in engine.functions.values()}
    assert {"__init__", "bump", "total"} <= ran
    assert len(engine.contexts) > 1


def test_a_torch_program_yields_no_torch_facts_with_no_model(tmp_path: Path) -> None:
    _engine, facts = _analyze(tmp_path, {"train.py": TORCH}, models=())
    assert facts.file_failures == []
    assert facts.sites == {}  # nothing the analysis knows is called: torch, numpy, argparse values are unknown
    _engine, facts = _analyze(tmp_path, {"train.py": TORCH}, models=None)
    assert facts.file_failures == []
    assert any(site.api.startswith(("torch.", "Tensor.", "nn.")) for site, _ctx in facts.sites), \
        sorted({site.api for site, _ctx in facts.sites})


def test_the_runtime_shim_rules_need_no_library_model(tmp_path: Path) -> None:
    """MV1xx sites come from the engine and :mod:`analyzer.lift`: the same with or without the models."""
    text = (FIXTURES / "backend_mixing.py").read_text()
    _engine, bare = _analyze(tmp_path, {"backend_mixing.py": text}, models=())
    _engine, full = _analyze(tmp_path, {"backend_mixing.py": text}, models=None)
    assert bare.sites and bare.file_failures == []
    assert {(s.line, s.api) for s, _c in bare.sites} == {(s.line, s.api) for s, _c in full.sites}


def test_every_registered_model_is_a_library_model_with_a_name() -> None:
    models = default_models()
    names = [model.name for model in models]
    assert all(issubclass(model, LibraryModel) for model in models)
    assert all(names) and len(set(names)) == len(names)


def test_the_engine_names_no_library_model() -> None:
    """The engine imports the boundary and the registry (the worlds driver asks the models for their world
    axes through them); besides, the runtime_shim tensors take numpy arrays' kinds (``Tensor.from_data``)."""
    engine_dir = Path(__file__).resolve().parents[2] / "analyzer" / "engine"
    allowed = {"models.base": None, "models.registry": None, "models.numpy_model": {"dispatch_helpers.py"}}
    for path in engine_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").startswith("models"):
                assert node.module in allowed, (path.name, node.module)
                users = allowed[node.module]
                assert users is None or path.name in users, (path.name, node.module)
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module == "torch_domain":
                assert path.name in ("demand.py", "relational.py"), path.name  # device-type words (a text scan)


def test_devicelint_models_lists_the_signature_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    listed: dict[str, set[str]] = {}
    model = ""
    for line in out.splitlines():
        if line.startswith("  "):
            listed[model].add(line.strip())
        else:
            model = line.split(" (")[0]
            listed[model] = set()
    assert set(listed) == {m.name for m in default_models()}
    assert sum(len(names) for names in listed.values()) > 20
    for name, table in SIGNATURES.items():
        assert name in listed, name  # every table belongs to a registered model
        assert listed[name] == set(table)
        for text in table.values():
            parse_signature(text)  # every declared signature parses


def test_bind_maps_arguments_as_python_does() -> None:
    sig = signature_of("torch.zeros_like")
    assert sig is not None
    bound = bind(sig, ["t"], {"device": "cuda"})
    assert bound is not None and bound.arguments == {"input": "t", "device": "cuda"}
    assert bind(sig, ["t", "u"], {}) is None  # too many positionals: TypeError in Python
    assert bind(sig, [], {"input": "t", "colour": 1}) is None  # an unknown keyword
    lenient = bind(sig, ["t", "u"], {"colour": 1}, lenient=True)
    assert lenient is not None and lenient.rest == ["u"] and lenient.extra == {"colour": 1}
    star = bind("*size, out=None, device=None", [2, 3], {"device": "cpu"})
    assert star is not None and star.rest == [2, 3] and star.arguments == {"device": "cpu"}
    assert bind("x, /, y=1", [1], {"x": 2}) is None  # positional-only by keyword
    with pytest.raises(ValueError):
        parse_signature("x,, y")


def test_signatures_resolve_by_name_then_by_prefix() -> None:
    adamw = signature_of("torch.optim.AdamW")  # ``torch.optim.*``
    assert adamw is not None and adamw.names()[0] == "params"
    assert signature_of("torch.zeros_like") is not None and signature_of("torch.zeros_like").names()[0] == "input"
    assert signature_of("numpy.random.normal") == signature_of("numpy.random.uniform")  # ``numpy.random.*``
    assert signature_of("requests.get") is None  # not modelled
    loader = bind_call("torch.utils.data.DataLoader", ["ds", 8], {"collate_fn": "f"})
    assert loader.arguments == {"dataset": "ds", "batch_size": 8, "collate_fn": "f"}
    assert argument("torch.nn.Module.cuda", [], {}, "device", None) is None
    assert argument("torch.nn.Module.cuda", [1], {}, "device") == 1


def test_the_torch_call_table_and_the_signatures_agree() -> None:
    """Every name the torch call table routes has its parameters declared, and every declared torch function
    (not a method or a family) is routed to a handler."""
    from devicelint.models.torch_calls import TORCH_CALLS, modelled_names, torch_handlers

    for rule in TORCH_CALLS:
        for name in rule.listed():
            if not name.endswith(".*"):
                assert name in SIGNATURES["torch"], name
    methods = ("torch.Tensor.", "torch.nn.Module.", "torch.optim.Optimizer.", "torch.distributions.Distribution.",
               "torch.nn.Sequential.", "torch.nn.modules.loss.")
    for name in SIGNATURES["torch"]:
        if name.endswith(".*") or name.startswith(methods):
            continue
        assert torch_handlers(name), name
    assert "torch.nn.*" in modelled_names() or "torch.nn.modules.*" in modelled_names()


def test_the_torch_call_rules_keep_their_order() -> None:
    from devicelint.models.torch_calls import torch_handlers

    assert torch_handlers("torch.zeros") == ("_call_create", "_call_function_op")
    assert torch_handlers("torch.cuda.is_available") == ("_call_is_available", "_call_unknown_bool")
    assert torch_handlers("torch.nn.Linear") == ("_call_layer",)
    assert torch_handlers("torch.nn.Parameter")[0] == "_call_parameter"
    assert torch_handlers("torch.optim.lr_scheduler.StepLR") == ()
    assert torch_handlers("torch.optim.AdamW") == ("_call_optimizer",)
    assert torch_handlers("torch.nn.modules.sparse.Embedding.from_pretrained")[0] == "_call_from_pretrained"
    assert torch_handlers("torch.utils.data.DataLoader") == ("_call_data",)
    assert torch_handlers("numpy.zeros") == ()


class _Answer(Atom):
    """The toy library's object."""

    def reveal(self) -> str:
        return "answer"


@dataclass(frozen=True)
class _ToyRef(Atom):
    path: str

    def reveal(self) -> str:
        return self.path


class _ToyModel(LibraryModel):
    """A library model written the way a new one is: its names, calls, methods and attributes, no engine
    change (``toylib.answer()`` is an object whose ``.value`` is 42 and whose ``.double()`` is 84)."""

    name = "toylib"

    def import_ref(self, path: str) -> Value | None:
        return V(_ToyRef(path)) if path.split(".")[0] == "toylib" else None

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, _ToyRef) and atom.path == "toylib.answer":
            return V(_Answer())
        return UNHANDLED

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, _ToyRef):
            return V(_ToyRef(f"{atom.path}.{attr}"))
        if isinstance(atom, _Answer):
            return V(const(42)) if attr == "value" else V(BoundShim(atom, attr))
        return UNHANDLED

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind == "_Answer" and name == "double":
            return V(const(84))
        return UNHANDLED


TOY = """
import toylib
from toylib import answer

a = toylib.answer()
value = a.value
doubled = answer().double()
"""


def test_a_new_model_plugs_in_with_no_engine_change(tmp_path: Path) -> None:
    engine, facts = _analyze(tmp_path, {"toy.py": TOY}, models=(*default_models(), _ToyModel))
    namespace = engine.modules[0].namespace
    assert facts.file_failures == []
    assert namespace["value"] == V(const(42))
    assert namespace["doubled"] == V(const(84))
    engine, _facts = _analyze(tmp_path, {"toy.py": TOY}, models=default_models())
    assert engine.modules[0].namespace["value"].top  # without it: unknown


def test_every_fixture_runs_with_no_model() -> None:
    """The engine alone over every fixture (torch, numpy, argparse, frameworks): library values unknown, no
    failure, and no site but runtime_shim's."""
    sources = frontend.load(frontend.discover([str(FIXTURES)]))
    sources = [s for s in sources if frontend.parse(s) is None]
    facts = FactStore()
    Engine(sources, facts, DEFAULT_PROFILE, None, project_modules=frozenset(s.module for s in sources),
           models=()).run()
    assert facts.sites
    library = ("torch.", "nn.", "numpy.", "F.", "Optimizer.")  # the prefixes of the models' sites
    assert not [site.api for site, _ctx in facts.sites if site.api.startswith(library)]
