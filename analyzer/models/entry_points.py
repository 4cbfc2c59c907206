"""Entry points: functions a framework calls, analysed as it calls them.

A function no analysed code calls is swept with unknown arguments. When a framework calls it, the
framework fixes some of them, and where they live decides whether the code fails:

* command lines: ``fire.Fire(fn)`` / ``fire.Fire({...})`` / ``fire.Fire(Class)`` / ``fire.Fire()``,
  click commands (``@click.command()``, ``@group.command()``, their ``@click.option``/``@click.argument``
  defaults), typer commands (``@app.command()``, ``typer.run(fn)``, ``typer.Option(default)``): in the
  world where the command line gives no options (:data:`.argparse_model.COMMAND_LINE_WORLDS`) each is called
  with its options' defaults; with options given, unknown. ``@hydra.main`` functions get an unknown
  config (as the sweep gives them);
* PyTorch Lightning: the hooks of a ``LightningModule`` subclass (``training_step``, ``forward``, ...)
  get ``self`` moved to the Trainer's device and batches on it (Lightning moves both). The device is
  the accelerator every ``Trainer(accelerator=...)`` of the program names (``"gpu"``/``"cuda"`` or
  ``"cpu"``), else the CUDA world's (``"auto"`` picks CUDA when it is available); the moved module's
  ``self.device`` and ``self.on_gpu`` say where it is (:meth:`TorchModel.torch_module_attribute`);
* pytest: ``test_*`` functions (and ``Test*`` methods) of ``test_*.py``/``*_test.py`` files and their
  fixtures get the values of the fixtures they name (fixtures of the file and of ``conftest.py``
  files; ``@pytest.mark.parametrize`` over literal values: one call per value);
* ``torch.multiprocessing.spawn(fn, args=(...), nprocs=N)`` calls ``fn(rank, *args)`` for each rank (an
  unknown one where ``N`` is not a small constant), and
  ``torch.multiprocessing.Process(target=fn, args=(...), kwargs={...})`` calls ``fn(*args, **kwargs)``,
  at the call (:func:`spawn_call`).

What this module knows is syntax: which functions are entry points, which defaults their command
lines give; the engine calls :meth:`EntryPoints.calls` for a function nothing else called.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..domain import TOP, DictAtom, SeqAtom, V, Value, const
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, MODULE_TYPE, NO_GRAD, TorchDev, TorchTensorAtom
from .argparse_model import COMMAND_LINE_WORLDS, NO_OPTIONS
from .base import AxisQuestions, LibraryModel
from .library_names import aliases, dotted, statements
from .signatures import bind_call
from .torch_worlds import CUDA_AVAILABLE, TORCH_WORLDS

if TYPE_CHECKING:
    from ..engine.program import FunctionInfo, ModuleInfo

#: what a ``from X import`` / ``import X`` of these binds is followed (other names are not entry points)
_FRAMEWORKS = ("fire", "click", "typer", "hydra", "pytest", "pytorch_lightning", "lightning")
#: the source text that makes a small program a command line (analysed with and without options)
CLI_QUESTIONS = (b"import fire", b"from fire", b"import click", b"from click", b"import typer", b"from typer")
#: the source text of a program whose Lightning device depends on the CUDA world
LIGHTNING_QUESTIONS = (b"LightningModule",)
_LIGHTNING_BASES = frozenset({"pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
                              "pytorch_lightning.core.module.LightningModule", "lightning.pytorch.LightningModule",
                              "lightning.LightningModule", "lightning.pytorch.core.LightningModule",
                              "lightning.pytorch.core.module.LightningModule"})
_TRAINERS = frozenset({"pytorch_lightning.Trainer", "lightning.pytorch.Trainer", "lightning.Trainer",
                       "pytorch_lightning.trainer.Trainer", "lightning.pytorch.trainer.Trainer"})
#: hooks Lightning calls with a batch (then its index, and a dataloader index)
_BATCH_HOOKS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
#: hooks Lightning calls with the module on its device and nothing else known
_MODULE_HOOKS = frozenset({"forward", "configure_optimizers", "on_train_start", "on_validation_start",
                           "on_train_epoch_end", "on_validation_epoch_end", "on_test_epoch_end"})
_ACCELERATORS = {"gpu": "cuda", "cuda": "cuda", "cpu": "cpu", "auto": "auto"}
_CLI_DECORATORS = frozenset({"command", "group", "callback"})
_MAX_PARAMETRIZED = 4  # calls of one test per ``parametrize`` value (more: one call with unknown arguments)
_MAX_FIXTURE_DEPTH = 4
_MAX_RANKS = 4  # ``spawn(..., nprocs=N)``: one call per rank up to this many (more: one call, rank unknown)
SPAWN_PATHS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes",
                         "torch.multiprocessing.Process", "torch.multiprocessing.spawn.spawn"})


@dataclass
class Entry:
    """How a framework calls one function."""

    framework: str  # "cli", "hydra", "lightning", "pytest", "fixture"
    defaults: dict[str, ast.expr | None] = field(default_factory=dict)  # command-line defaults (None: unknown)
    cases: list[dict[str, ast.expr]] = field(default_factory=list)  # pytest parametrize: one dict a call
    # the decorator replaces the function with an object that runs it as the framework does (a click command,
    # a hydra main): calling the name runs the entry point, not the function with the caller's arguments
    wrapped: bool = False
    caller: str = ""  # who calls it, for messages ("pytest", "fire.Fire")


@dataclass
class ModuleEntries:
    entries: dict[int, Entry] = field(default_factory=dict)  # id(def node) -> how it is called
    fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    accelerators: set[str] = field(default_factory=set)  # what each Trainer(...) of the module runs on
    lightning_classes: set[int] = field(default_factory=set)  # id(class node)


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the framework path it is bound to (``pl`` -> ``pytorch_lightning``)."""
    return aliases(tree, _FRAMEWORKS)


def _framework(path: str | None) -> str | None:
    return path.split(".")[0] if path else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _click_parameter(call: ast.Call, kind: str) -> tuple[str, ast.expr | None] | None:
    """A ``click.option``/``click.argument``'s (parameter name, default: ``None`` when no run can leave it out)."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names:
        return None
    plain = [n for n in names if not n.startswith("-")]
    longs = [n for n in names if n.startswith("--")]
    name = (plain or longs or names)[0].lstrip("-").replace("-", "_").lower()
    default = _keyword(call, "default")
    required = _keyword(call, "required")
    if (isinstance(required, ast.Constant) and required.value) or (kind == "argument" and default is None):
        return name, None
    if default is None:
        flag = _keyword(call, "is_flag")
        multiple = _keyword(call, "multiple")
        if isinstance(multiple, ast.Constant) and multiple.value:
            return name, ast.Tuple(elts=[], ctx=ast.Load())
        flag_option = isinstance(flag, ast.Constant) and flag.value is True
        return name, ast.Constant(value=False if flag_option else None)
    if isinstance(default, ast.Lambda):
        return name, None  # a callable default is called by click: not followed
    return name, default


def _typer_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef, aliases: dict[str, str]) -> dict[str, ast.expr | None]:
    """``typer.Option(default, ...)``/``typer.Argument(default)`` as a parameter's default: the default."""
    found: dict[str, ast.expr | None] = {}
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)]
    for arg, default in pairs:
        if isinstance(default, ast.Call) and dotted(default.func, aliases) in ("typer.Option", "typer.Argument"):
            value = default.args[0] if default.args else _keyword(default, "default")
            required = value is None or (isinstance(value, ast.Constant) and value.value is Ellipsis)
            found[arg.arg] = None if required else value
    return found


def _parametrize(deco: ast.expr, aliases: dict[str, str]) -> list[dict[str, ast.expr]] | None:
    """``@pytest.mark.parametrize("a", [1, 2])`` / ``("a,b", [(1, 2), ...])``: one dict a case."""
    if not (isinstance(deco, ast.Call) and dotted(deco.func, aliases) == "pytest.mark.parametrize"
            and len(deco.args) >= 2 and isinstance(deco.args[0], ast.Constant)
            and isinstance(deco.args[0].value, str) and isinstance(deco.args[1], (ast.List, ast.Tuple))):
        return None
    names = [n.strip() for n in deco.args[0].value.split(",") if n.strip()]
    cases: list[dict[str, ast.expr]] = []
    for element in deco.args[1].elts:
        if isinstance(element, ast.Call) and dotted(element.func, aliases) == "pytest.param" and element.args:
            values = element.args if len(names) > 1 else element.args[:1]
        elif len(names) > 1 and isinstance(element, (ast.Tuple, ast.List)):
            values = element.elts
        else:
            values = [element]
        if len(values) != len(names):
            return []
        cases.append(dict(zip(names, values, strict=True)))
    return cases if len(cases) <= _MAX_PARAMETRIZED else []


def _is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    return name == "conftest.py" or (name.startswith("test_") or name.endswith("_test.py")) and name.endswith(".py")


def scan_module(tree: ast.Module, file: str) -> ModuleEntries:
    """The entry points one module declares (syntax only)."""
    out = ModuleEntries()
    aliases = _aliases(tree)
    frameworks = {_framework(p) for p in aliases.values()}
    test_file = _is_test_file(file) or "pytest" in frameworks  # a module of tests: named so, or importing pytest
    if not aliases and not test_file:
        return out  # every rule below needs a framework's name or a test module (a word like "fired" got here)
    top = {node.name: node for node in tree.body
           if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    command_objects: set[str] = set()  # names bound to ``typer.Typer()`` / ``click.Group()`` / a click group
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                and _framework(dotted(stmt.value.func, aliases)) in ("typer", "click"):
            command_objects.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                (dotted(d.func if isinstance(d, ast.Call) else d, aliases) or "").endswith(".group")
                for d in stmt.decorator_list):
            command_objects.add(stmt.name)  # ``@click.group()`` ``def cli()``: ``@cli.command()`` adds commands
    fire_targets: list[tuple[ast.expr, str]] = []  # (what is run, by what)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        path = dotted(node.func, aliases)
        if path in ("fire.Fire", "typer.run"):
            target = node.args[0] if node.args else _keyword(node, "component")
            if target is None and path == "fire.Fire":
                fire_targets.extend((ast.Name(id=name), path) for name, d in top.items()
                                    if not name.startswith("_") and not isinstance(d, ast.ClassDef))
            elif isinstance(target, ast.Dict):
                fire_targets.extend((v, path) for v in target.values if v is not None)
            elif target is not None:
                fire_targets.append((target, path))
        elif path in _TRAINERS:
            out.accelerators.add(_accelerator(node))
    for target, runner in fire_targets:
        defined = top.get(target.id) if isinstance(target, ast.Name) else None
        if isinstance(defined, ast.ClassDef):
            for item in defined.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and (item.name == "__init__" or not item.name.startswith("_")):
                    out.entries[id(item)] = Entry("cli", caller=runner)
        elif defined is not None:
            out.entries[id(defined)] = Entry("cli", caller=runner)
    for node in statements(tree):  # (classes and functions: statements)
        if isinstance(node, ast.ClassDef):
            bases = {dotted(b, aliases) for b in node.bases}
            if bases & _LIGHTNING_BASES:
                out.lightning_classes.add(id(node))
            if test_file and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                        out.entries.setdefault(id(item), Entry("pytest", cases=_cases(item, aliases), caller="pytest"))
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        deco_paths = [dotted(d.func if isinstance(d, ast.Call) else d, aliases) for d in node.decorator_list]
        if "hydra.main" in deco_paths:
            out.entries[id(node)] = Entry("hydra", wrapped=True, caller="hydra")
        if "pytest.fixture" in deco_paths:
            out.fixtures[node.name] = node
            out.entries[id(node)] = Entry("fixture", caller="pytest")
        elif test_file and node.name.startswith("test") and node in tree.body:
            out.entries.setdefault(id(node), Entry("pytest", cases=_cases(node, aliases), caller="pytest"))
        if _is_command(node, deco_paths, command_objects):
            click_group = [d for d in node.decorator_list if isinstance(d, ast.Call)
                           and isinstance(d.func, ast.Attribute) and isinstance(d.func.value, ast.Name)
                           and isinstance(top.get(d.func.value.id), (ast.FunctionDef, ast.AsyncFunctionDef))]
            wrapped = bool(click_group) or any(_framework(p) == "click" for p in deco_paths)
            entry = Entry("cli", _typer_defaults(node, aliases), wrapped=wrapped,
                          caller="click" if wrapped else "typer")
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call):
                    kind = (dotted(deco.func, aliases) or "").rpartition(".")[2]
                    if kind in ("option", "argument") and _framework(dotted(deco.func, aliases)) == "click":
                        found = _click_parameter(deco, kind)
                        if found is not None:
                            entry.defaults[found[0]] = found[1]
            out.entries[id(node)] = entry
    return out


def _cases(fn: ast.FunctionDef | ast.AsyncFunctionDef, aliases: dict[str, str]) -> list[dict[str, ast.expr]]:
    cases: list[dict[str, ast.expr]] = [{}]
    for deco in fn.decorator_list:
        found = _parametrize(deco, aliases)
        if found is None:
            continue
        if not found:
            return []  # cases not followed: unknown arguments
        cases = [{**a, **b} for a in cases for b in found][:_MAX_PARAMETRIZED]
    return cases


def _accelerator(trainer: ast.Call) -> str:
    """What a ``Trainer(...)`` runs on: ``"cuda"``, ``"cpu"``, ``"auto"`` (CUDA where it is available) or
    ``"other"`` (another accelerator, or one the source does not fix)."""
    accelerator = _keyword(trainer, "accelerator")
    gpus = _keyword(trainer, "gpus")  # the older spelling: a count or a list of GPUs
    if accelerator is None and gpus is not None:
        none = isinstance(gpus, ast.Constant) and gpus.value in (0, None)
        return "auto" if none else "cuda"
    if accelerator is None:
        return "auto"
    text = accelerator.value if isinstance(accelerator, ast.Constant) else None
    return _ACCELERATORS.get(text, "other") if isinstance(text, str) else "other"


def _is_command(fn: ast.FunctionDef | ast.AsyncFunctionDef, deco_paths: list[str | None],
                command_objects: set[str]) -> bool:
    for deco, path in zip(fn.decorator_list, deco_paths, strict=True):
        if path is not None and _framework(path) in ("click", "typer") and path.rpartition(".")[2] in _CLI_DECORATORS:
            return True
        func = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(func, ast.Attribute) and func.attr in _CLI_DECORATORS and isinstance(func.value, ast.Name) \
                and func.value.id in command_objects:
            return True
    return False


def fixture_links(paths: list[str]) -> list[tuple[int, int]]:
    """(test module, ``conftest.py``) index pairs: pytest gives a test module the fixtures of the ``conftest.py``
    files of its folder and the folders above it, so they are analysed together (nothing imports them)."""
    conftests: dict[str, int] = {os.path.dirname(os.path.abspath(p)): i for i, p in enumerate(paths)
                                 if p and os.path.basename(p) == "conftest.py"}
    links: list[tuple[int, int]] = []
    if not conftests:
        return links
    for i, path in enumerate(paths):
        if not path or not _is_test_file(path) or os.path.basename(path) == "conftest.py":
            continue
        folder = os.path.dirname(os.path.abspath(path))
        while True:
            if folder in conftests:
                links.append((i, conftests[folder]))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return links


class EntryPoints(LibraryModel):
    """The engine's entry points: what a framework passes to a function nothing in the program calls."""

    name = "entry_points"
    # a fire/click/typer program is a command line; a Lightning module's device is the CUDA world's
    axis_questions = (AxisQuestions(COMMAND_LINE_WORLDS.name, CLI_QUESTIONS),
                      AxisQuestions(TORCH_WORLDS.name, LIGHTNING_QUESTIONS))

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        modules: list[ModuleInfo] = engine.modules
        self.scans: dict[str, ModuleEntries] = {}
        for module in modules:
            tree, file = module.source.tree, module.file or ""
            if tree is not None and (any(f.encode() in module.source.data for f in _FRAMEWORKS) or _is_test_file(file)):
                self.scans[file] = scan_module(tree, file)
        self.conftest_fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for file, scan in self.scans.items():
            if os.path.basename(file) == "conftest.py":
                self.conftest_fixtures.update(scan.fixtures)
        accelerators = {a for scan in self.scans.values() for a in scan.accelerators}
        # one accelerator for every Trainer (none built here: Lightning's default, "auto"); several: unknown
        self.accelerator = accelerators.pop() if len(accelerators) == 1 else "auto" if not accelerators else "other"

    def entry(self, fn: FunctionInfo) -> Entry | None:
        scan = self.scans.get(fn.module.file or "")
        found = scan.entries.get(id(fn.node)) if scan is not None else None
        if found is None and fn.cls is not None and fn.name in _BATCH_HOOKS | _MODULE_HOOKS \
                and any(self.is_lightning_class(c) for c in fn.cls.mro()):
            found = Entry("lightning", caller="Lightning")
        return found

    def caller(self, fn: FunctionInfo) -> str:
        entry = self.entry(fn)
        return entry.caller if entry is not None else ""

    def wrapped(self, node: ast.AST, module: ModuleInfo) -> bool:
        """Does a decorator of the ``def`` at ``node`` replace the function by a framework's command object?"""
        scan = self.scans.get(module.file or "")
        entry = scan.entries.get(id(node)) if scan is not None else None
        return entry is not None and entry.wrapped

    def is_lightning_class(self, cls: object) -> bool:
        node = getattr(cls, "node", None)
        module = getattr(cls, "module", None)
        scan = self.scans.get(getattr(module, "file", None) or "")
        return scan is not None and id(node) in scan.lightning_classes

    def entry_caller(self, fn: FunctionInfo) -> str:
        return self.caller(fn)

    def framework_class(self, cls: object) -> tuple[str, ...]:
        return (MODULE_TYPE,) if self.is_lightning_class(cls) else ()

    def entry_calls(self, fn: FunctionInfo, receivers: list[list[Value]], frame: Frame,
                    ) -> list[tuple[list[Value], dict[str, Value]]] | None:
        return self.calls(fn, receivers, frame)

    def calls(self, fn: FunctionInfo, receivers: list[list[Value]], frame: Frame,
              ) -> list[tuple[list[Value], dict[str, Value]]] | None:
        """The calls a framework makes of ``fn`` (receiver first for a method), or ``None`` where it is not an
        entry point (the sweep's unknown arguments)."""
        entry = self.entry(fn)
        if entry is None:
            return None
        if entry.framework == "cli":
            if not self.assumption(NO_OPTIONS):
                return None  # options given: unknown
            kwargs = {name: self._value(expr, frame) for name, expr in entry.defaults.items()}
            return [(args, kwargs) for args in receivers]
        if entry.framework == "lightning":
            return self._lightning(fn, frame)
        if entry.framework in ("pytest", "fixture"):
            cases = entry.cases if entry.framework == "pytest" else [{}]
            if not cases:
                return None
            calls: list[tuple[list[Value], dict[str, Value]]] = []
            for case in cases:
                kwargs = self._fixture_values(fn, frame, set(case), 0)
                kwargs.update({name: self._value(expr, frame) for name, expr in case.items()})
                calls.extend((args, kwargs) for args in receivers)
            return calls
        return None  # hydra: an unknown config, as swept

    def device(self) -> TorchDev | None:
        """The Lightning Trainer's device: its accelerator's, else the CUDA world's (unknown outside one)."""
        if self.accelerator == "cpu":
            return CPU
        if self.accelerator == "cuda":
            return TorchDev("cuda", 0)
        world = self.assumption(CUDA_AVAILABLE)
        if self.accelerator != "auto" or world is None:
            return None
        return TorchDev("cuda", 0) if world else CPU

    def _lightning(self, fn: FunctionInfo, frame: Frame) -> list[tuple[list[Value], dict[str, Value]]] | None:
        dev = self.device()
        if dev is None:
            return None
        engine = self.engine
        instances = sorted(engine.instances.get(fn.cls) or (), key=_order)
        torch = engine.model_named("torch")
        if torch is None:
            return None  # modules are not followed without the torch model
        moved_from = torch.__dict__.get("_moved_to", {})
        own = [i for i in instances if i not in moved_from]  # constructed by the program, not a moved copy
        receiver = V(*(torch.move_module(i, dev) for i in own)) if own else TOP
        if fn.name not in _BATCH_HOOKS:
            return [([receiver], {})]
        batch = V(TorchTensorAtom(dev, NO_GRAD, None))  # its elements and fields: tensors on the device
        # (self, batch, batch_idx): a dataloader index only where the hook takes one (its default otherwise)
        args: list[Value] = [receiver, batch, TOP]
        return [(args if fn.vararg else args[:len(fn.positional)], {})]

    def _fixture_values(self, fn: FunctionInfo, frame: Frame, given: set[str], depth: int) -> dict[str, Value]:
        """The values of the fixtures ``fn``'s parameters name (unknown for those not found or not followed)."""
        values: dict[str, Value] = {}
        if depth >= _MAX_FIXTURE_DEPTH:
            return values
        scan = self.scans.get(fn.module.file or "")
        for name in fn.positional:
            if name in ("self", "cls", "request") or name in given:
                continue
            node = (scan.fixtures.get(name) if scan else None) or self.conftest_fixtures.get(name)
            if node is None or node is fn.node:
                continue  # a builtin fixture: unknown
            values[name] = self._fixture(node, frame, depth)
        return values

    def _fixture(self, node: ast.FunctionDef | ast.AsyncFunctionDef, frame: Frame, depth: int) -> Value:
        engine = self.engine
        functions = engine.functions
        info = functions.get(id(node))
        fref = engine.defined.get(info) if info is not None else None
        if fref is None:
            return TOP
        kwargs = self._fixture_values(info, frame, set(), depth + 1)
        value = engine.call_function(fref, [], kwargs, None, frame)
        return engine.iter_element(value) if _yields(node) else value  # a yield fixture: what it yields

    def _value(self, expr: ast.expr | None, frame: Frame) -> Value:
        if expr is None:
            return TOP
        if isinstance(expr, ast.Constant):
            return V(const(expr.value))
        # (a default naming a module constant: read from the module's namespace, as the decorator ran there)
        return self.engine.eval(expr, State(dict(frame.module.namespace)), frame, quiet=True)


def spawn_call(engine: Any, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
               fr: Frame) -> Value:
    """``torch.multiprocessing.spawn(fn, args=(...), nprocs=N)``: ``fn(rank, *args)`` in each process (each rank
    when ``N`` is a small constant, 1 by default; else an unknown rank); ``Process(target=fn, args=(...),
    kwargs={...})``: ``fn(*args, **kwargs)``."""
    process = path.endswith("Process")
    bound = bind_call(path, args, kwargs)
    fn = bound.get("target" if process else "fn")
    if fn is None or fn.top:
        return TOP
    given = bound.get("args")
    items: list[Value] | None = []
    if given is not None:
        seqs = [a for a in given.atoms if isinstance(a, SeqAtom)]
        items = list(seqs[0].items) if not given.top and len(seqs) == 1 and seqs[0].items is not None else None
    named: dict[str, Value] | None = {}
    given_kwargs = bound.get("kwargs") if process else None
    if given_kwargs is not None:
        dicts = [a for a in given_kwargs.atoms if isinstance(a, DictAtom)]
        named = dict(dicts[0].items) if not given_kwargs.top and len(dicts) == 1 \
            and dicts[0].rest is None and all(isinstance(k, str) for k, _v in dicts[0].items) else None
    if items is None or named is None:
        engine.call(fn, [], {}, node, st.copy(), fr, True)  # arguments not known: as the sweep calls it
        return TOP
    if process:
        engine.call(fn, items, named, node, st.copy(), fr)
        return TOP
    count = bound.get("nprocs", V(const(1)))
    counts = count.consts() if not count.top else None
    ranks = [V(const(r)) for r in range(counts[0])] \
        if counts and len(counts) == 1 and isinstance(counts[0], int) and 0 < counts[0] <= _MAX_RANKS else [TOP]
    for rank in ranks:
        engine.call(fn, [rank, *items], {}, node, st.copy(), fr)
    return TOP


def _yields(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def _order(instance: object) -> tuple:
    return (getattr(instance, "file", ""), getattr(instance, "line", 0), getattr(instance, "col", 0),
            getattr(instance, "ctx", 0))
