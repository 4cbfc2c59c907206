"""Large components sweep uncalled functions on demand: only those that mention a device source (or belong
to a class the module level instantiated) run; what the others may assign becomes unknown."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from devicelint.engine import demand
from devicelint.engine.core import Engine
from devicelint.runner import check
from devicelint.settings import Settings
from engine_support import remember_engines

REPO = Path(__file__).resolve().parents[2]

# ``build`` is swept first and calls ``forward`` in context; ``reset`` mentions no device source, so on demand it
# is skipped: the CPU tensor ``__init__`` stored is then not all ``self.buf`` can hold.
MODEL = """\
import torch


def build():
    holder = Holder()
    return holder.forward().cpu()


class Holder:
    def __init__(self):
        self.buf = torch.zeros(3, device="cpu")

    def reset(self, t):
        self.buf = t

    def forward(self):
        y = torch.ones(3, device="cuda")
        return y + self.buf
"""

GLOBALS = """\
import torch

CACHE = [torch.zeros(3, device="cpu")]
LATEST = torch.zeros(3, device="cpu")


def remember(t):
    global LATEST
    LATEST = t
    CACHE.append(t)


def combine():
    y = torch.ones(3, device="cuda")
    return (y + LATEST).cpu(), (y + CACHE[0]).cpu()
"""


def library(tmp_path: Path, model: str, files: int = demand.DEMAND_SWEEP_MIN_FILES + 1) -> Path:
    """A package of ``files`` modules that import each other (one component), ``model`` one of them."""
    package = tmp_path / "lib"
    package.mkdir()
    (package / "__init__.py").write_text("from . import model\n", encoding="utf-8")
    (package / "model.py").write_text(model, encoding="utf-8")
    for n in range(files - 2):
        (package / f"part{n}.py").write_text(f"from . import model\n\nVALUE_{n} = {n}\n", encoding="utf-8")
    return tmp_path


def findings(path: Path) -> list[tuple[str, str, int]]:
    report = check([str(path)], Settings(jobs=1, select=("ALL",)))
    return [(data["code"], data["severity"], data["location"]["row"])
            for data in (d.to_json() for d in report.diagnostics)]


def severities(path: Path, monkeypatch: pytest.MonkeyPatch, *, havoc: bool = True) -> dict[str, list]:
    out = {}
    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 10**6)
    out["full"] = findings(path)
    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 0)
    out["demand"] = findings(path)
    if not havoc:
        monkeypatch.setattr(demand.DemandSweep, "skip_uncalled", lambda self, fn: None)
        out["forgotten"] = findings(path)
    return out


def test_what_a_skipped_method_assigns_on_self_becomes_unknown(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen = severities(library(tmp_path, MODEL), monkeypatch, havoc=False)
    assert seen["full"] == [("MV201", "warning", 18)]  # reset may store anything: some paths
    assert seen["demand"] == seen["full"]
    assert seen["forgotten"] == [("MV201", "error", 18)]  # what forgetting the skipped store would claim


def test_what_a_skipped_function_stores_in_globals_becomes_unknown(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seen = severities(library(tmp_path, GLOBALS), monkeypatch, havoc=False)
    assert seen["demand"] == seen["full"]
    assert {(code, severity) for code, severity, _ in seen["demand"]} == {("MV201", "warning")}
    assert {severity for _, severity, _ in seen["forgotten"]} == {"error"}


def _engine_of(path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    engines = remember_engines(monkeypatch)
    check([str(path)], Settings(jobs=1))
    (engine,) = engines
    return engine


@pytest.mark.parametrize(("files", "on_demand"), [(demand.DEMAND_SWEEP_MIN_FILES, False),
                                                   (demand.DEMAND_SWEEP_MIN_FILES + 1, True)])
def test_only_components_above_the_bound_sweep_on_demand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         files: int, on_demand: bool) -> None:
    engine = _engine_of(library(tmp_path, MODEL, files), monkeypatch)
    assert engine.demand_sweep is on_demand
    assert (engine.skipped_uncalled > 0) is on_demand


@pytest.mark.parametrize("folder", ["fixtures", "fixtures/torch", "examples"])
def test_sweeping_every_fixture_on_demand_changes_no_diagnostic(folder: str, monkeypatch: pytest.MonkeyPatch,
                                                                all_rules_findings: Callable[[str], list]) -> None:
    """The fixtures are programs (their code runs from module level): on demand they lose nothing, and no
    finding appears or gets stronger (the skipped functions' stores are unknown, not forgotten)."""
    settings = Settings(jobs=1, select=("ALL",))
    full = all_rules_findings(folder)  # the same check, made once per session
    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 0)
    on_demand = [d.to_json() for d in check([str(REPO / folder)], settings).diagnostics]
    assert on_demand == full
    assert full


def test_a_device_source_makes_a_function_worth_sweeping() -> None:
    import ast

    def worthy(text: str) -> bool:
        return demand.mentions_device(ast.parse(text).body[0], text.encode())

    assert worthy("def f(x):\n    return x.cuda()\n")
    assert worthy("def f(x):\n    return torch.zeros(3, device='cpu')\n")
    assert worthy("def f(x):\n    return torch.zeros(3, requires_grad=True)\n")
    assert worthy("def freeze(m):\n    for p in m.parameters():\n        p.requires_grad = False\n")
    # passing a device along gives a known state only where the caller's is (the caller calls in context)
    assert not worthy("def f(x, device=None):\n    return torch.zeros(3, device=device) + x[0] * x.device.index\n")
    assert worthy("def f(x):\n    return x + torch.ones(2, device='cuda:1')\n")
    assert worthy("def f(x):\n    return np.asarray(x)\n")
    assert worthy("def f(m):\n    m.register_buffer('mask', torch.ones(2))\n")
    assert not worthy("def f(x, w):\n    return torch.matmul(x, w).relu()\n")
    assert not worthy("def f(self, t):\n    self.buf = t\n")
    # a cast is not a move; a move to what a name or an attribute holds may be (``self`` may be a known instance)
    assert not worthy("def f(x, y, dtype):\n    return x.to(y.dtype) + x.to(torch.float16) + x.to(dtype)\n")
    assert not worthy("def f(x):\n    return x.to(dtype=torch.bfloat16, non_blocking=True)\n")
    assert worthy("def f(x, y):\n    return x.to(y)\n")
    assert worthy("def f(self, x):\n    return x.to(self.device, torch.float16)\n")
    assert worthy("def f(x, d):\n    return x.to(dtype=torch.float16, device=d)\n")


def test_reading_a_dict_attribute_is_not_a_write() -> None:
    import ast

    def writes(body: str) -> int:
        text = f"def f(m, k, v):\n    {body}\n"
        tree = ast.parse(text)
        return len(demand.scan_functions(tree, text.encode())[id(tree.body[0])].writes)

    assert writes("return 'w' in m.__dict__ or m.__dict__[k] or m.__dict__.get(k)") == 0
    assert writes("m.__dict__[k] = v") > 0
    assert writes("m.__dict__.update(v)") > 0
    assert writes("d = m.__dict__") > 0  # an alias may be written through later
    # a comprehension's target stores, though no word of the scan is in its own text
    assert writes("return [0 for m.k in v]") > 0
    assert writes("return {k: 0 for (k, m.k) in v}") > 0


def test_the_pass_trace_counts_skipped_functions(tmp_path: Path) -> None:
    library(tmp_path, MODEL)
    env = dict(os.environ, DEVICELINT_TRACE_PASSES="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "devicelint", "check", str(tmp_path), "--isolated", "--no-cache",
                           "--exit-zero", "-q"], capture_output=True, text=True, env=env, cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if " uncalled skipped" in line]
    assert lines and not any(", 0 uncalled skipped" in line for line in lines), done.stderr


def test_the_module_scan_finds_every_source_and_write_a_walk_of_each_function_finds() -> None:
    """The scan walks only the expressions whose lines hold a word it looks for; it must find what a walk of
    each whole function finds (``bench/scan_check.py`` runs the same comparison on the corpora)."""
    import ast

    from bench.scan_check import compare

    folders = ("analyzer", "rules", "runtime_shim", "fixtures", "bench", "tests")
    paths = [p for folder in folders for p in (REPO / folder).rglob("*.py") if ".cache" not in p.parts]
    files = [(path, ast.parse(data), data) for path in paths for data in [path.read_bytes()]]
    functions, sources, differences = compare(files)
    assert differences == []
    assert functions > 1000 and sources > 100


# ``configure`` mentions no device source (skipped on demand). Reading a module's ``__dict__`` and storing
# through modules that are not the project's (``os``, ``torch``) cannot change ``settings.DEVICE``;
# a store into the project module ``settings`` can.
CONFIGURED = """\
import os
import torch
from . import settings


def configure(name, value):
    os.environ["MODE"] = name
    setattr(torch.backends, name, value)
    if "DEVICE" in settings.__dict__ and settings.__dict__.get(name):
        return settings.__dict__[name]
    {store}


def combine():
    y = torch.ones(3, device="cuda")
    return (y + torch.zeros(3, device=settings.DEVICE)).cpu()
"""


@pytest.mark.parametrize(("store", "expected"), [("return None", [("MV201", "error", 16)]),
                                                 ("settings.DEVICE = value", [])])  # unknown: silent
def test_a_skipped_function_changes_a_module_attribute_only_through_the_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, expected: list) -> None:
    path = library(tmp_path, CONFIGURED.format(store=store))
    (path / "lib" / "settings.py").write_text('DEVICE = "cpu"\n', encoding="utf-8")
    seen = severities(path, monkeypatch)
    assert seen["full"] == expected
    assert seen["demand"] == seen["full"]


def test_the_module_scan_indexes_the_attribute_writes_the_engine_walk_finds() -> None:
    """Where the sweep is on demand, the engine's index of which functions assign each attribute comes from
    the scan of every module (one walk), or from the scans the cache keeps; it must be the one the engine's own
    walk of the statements builds."""
    import ast
    import json
    from types import SimpleNamespace

    from devicelint.engine import scan_summary

    paths = [p for folder in ("analyzer", "rules", "runtime_shim", "fixtures") for p in (REPO / folder).rglob("*.py")]
    files = [(str(path), ast.parse(data), data) for path in paths for data in [path.read_bytes()]]

    def indexed(modules: list[SimpleNamespace]) -> dict[str, set[tuple[str, int, int]]]:
        engine = Engine.__new__(Engine)
        engine.init_demand(len(modules))
        engine.attr_writers = {}
        engine.scan_modules(modules, engine.attr_writers)
        return engine.attr_writers

    modules = [SimpleNamespace(source=SimpleNamespace(tree=tree, data=data, scan=None), file=path)
               for path, tree, data in files]
    scanned = indexed(modules)
    walked = Engine.__new__(Engine)
    walked.attr_writers = {}
    walked.modules = modules
    walked._index_attribute_writes()
    assert scanned == walked.attr_writers
    assert len(scanned) > 100
    kept = [json.loads(json.dumps({k: v for k, v in m.source.scan.items() if k != scan_summary.CHANGED}))
            for m in modules]
    restored = [SimpleNamespace(source=SimpleNamespace(tree=tree, data=data, scan=summary), file=path)
                for (path, tree, data), summary in zip(files, kept, strict=True)]
    assert indexed(restored) == scanned


def _effects_of(text: str) -> demand.Effects:
    """The effects of the first function of ``text`` if it were skipped (a plain function, no project modules)."""
    import ast
    from types import SimpleNamespace

    tree = ast.parse(text)
    node = tree.body[0]
    scans = demand.scan_functions(tree, text.encode())
    positional = [*node.args.posonlyargs, *node.args.args]
    fn = SimpleNamespace(node=node, cls=None, kind="function",
                         param_names=[a.arg for a in (*positional, *node.args.kwonlyargs)])
    return demand.effects(fn, scans[id(node)].writes, frozenset())


def test_a_computed_setattr_through_unknown_arguments_changes_nothing_known() -> None:
    """``setattr(m, name, ...)`` counts as a store of every attribute name; through what only an unknown
    argument gives (a nested function's parameter fed from one, a loop over its children, ``getattr`` or a
    copy of it) it reaches nothing the analysis knows, as the full sweep would have run it."""
    fuse = (
        "def reparameterize(model, inplace=False):\n"
        "    model = deepcopy(model)\n"
        "    def _fuse(m):\n"
        "        for name, child in m.named_children():\n"
        "            setattr(m, name, child.fuse())\n"
        "            _fuse(child)\n"
        "    _fuse(model)\n"
        "    return model\n")
    assert demand.ALL_ATTRIBUTES not in _effects_of(fuse).any
    walk = (
        "def set_layer(model, path, value):\n"
        "    module = model\n"
        "    for part in path.split('.')[:-1]:\n"
        "        module = getattr(module, part)\n"
        "    setattr(module, path.split('.')[-1], value)\n")
    assert demand.ALL_ATTRIBUTES not in _effects_of(walk).any
    # fed from a global, or handed on as a callback (called with anything): every attribute, as before
    assert demand.ALL_ATTRIBUTES in _effects_of(fuse.replace("_fuse(model)\n", "_fuse(REGISTRY)\n")).any
    assert demand.ALL_ATTRIBUTES in _effects_of(fuse.replace("_fuse(model)\n", "model.apply(_fuse)\n")).any
    rebound = fuse.replace("        for name", "        m = CACHE\n        for name")
    assert demand.ALL_ATTRIBUTES in _effects_of(rebound).any


def test_a_setattr_over_a_local_dicts_constant_keys_stores_those_names() -> None:
    text = (
        "def attach(model, traits):\n"
        "    target = Wrapper(model)\n"
        "    meta = dict(_traits=traits)\n"
        "    if 'in_chans' in traits:\n"
        "        meta['in_chans'] = traits['in_chans']\n"
        "    for key, value in meta.items():\n"
        "        setattr(target, key, value)\n"
        "    return target\n")
    found = _effects_of(text)
    assert found.any == {"_traits", "in_chans"}
    # a key stored at a computed name, or the dict handed to a function: its keys are not known
    assert demand.ALL_ATTRIBUTES in _effects_of(text.replace("meta['in_chans']", "meta[traits.name]")).any
    assert demand.ALL_ATTRIBUTES in _effects_of(text.replace("    for key", "    fill(meta)\n    for key")).any


def test_a_method_that_sets_computed_attributes_on_known_objects_is_analyzed_instead_of_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Skipping ``fuse`` (``setattr(net, name, ...)`` on ``self`` and its children) would make every attribute
    of every instance partly unknown; analysing it makes unknown only those of the instances it reaches."""
    path = library(tmp_path, (
        "import torch\n"
        "from torch import nn\n\n\n"
        "class Fusable(nn.Module):\n"
        "    def fuse(self):\n"
        "        def fuse_children(net):\n"
        "            for name, child in net.named_children():\n"
        "                setattr(net, name, child)\n"
        "                fuse_children(child)\n"
        "        fuse_children(self)\n"
        "        return self\n\n\n"
        "class Holder:\n"
        "    def __init__(self):\n"
        "        self.t = torch.zeros(2, device='cpu')\n\n\n"
        "def combine():\n"
        "    return Holder().t + torch.ones(2, device='cuda')\n"))
    engine = _engine_of(path, monkeypatch)
    assert demand.ALL_ATTRIBUTES not in engine.havoc_attrs
    assert findings(path) == [("MV201", "error", 21)]
