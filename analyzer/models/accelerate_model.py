"""Hugging Face ``accelerate``: ``Accelerator`` places the model and the batches itself.

``accelerator = Accelerator(...)`` picks its device once (``PartialState.set_device``: the CPU with
``cpu=True``, else ``default_device``: ``mps`` on a Mac, ``cuda`` where CUDA is available, the CPU
otherwise; one process of a distributed run gets ``cuda:<local rank>``). ``accelerator.prepare(*objects)``
(``Accelerator._prepare_one``) hands back each object prepared, in order (the object itself when it is
one): a module moved there in place (``prepare_model``: ``model.to(self.device)``), a ``DataLoader``
whose batches are sent there (``DataLoaderShard`` ... ``send_to_device(batch, self.device)``), an
optimizer or scheduler as it was (their devices are the parameters'). ``device_placement=False`` (the
constructor's, or a list per object to ``prepare``) leaves the devices as they were. Tensors the loop
creates without a device stay on the CPU and fail when mixed with the prepared batches.

What the analysis follows: ``Accelerator(cpu=..., device_placement=...)`` (a value the source does not fix:
unknown), ``accelerator.device`` (``torch.device("cuda")``: written without an index, as accelerate makes
it for one process; tensors sent there are on ``cuda:0``), ``prepare`` / ``prepare_model`` /
``prepare_data_loader`` (a loader of batches the analysis does not know yields a batch whose tensors are
on the device), ``backward`` and the collectives that give back what they get in one process
(``gather``, ``gather_for_metrics``, ``reduce``, ``pad_across_processes``; ``unwrap_model``), and
``PartialState().device`` / ``AcceleratorState().device``. Other methods and attributes are unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..domain import NONE, TOP, Atom, BoundShim, Instance, Origin, SeqAtom, V, Value, map_elements, seq
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, MODULE_TYPE, TorchDev, TorchDeviceAtom, TorchLayerAtom
from .base import UNHANDLED, AxisQuestions, LibraryModel, Unhandled
from .placement import batch_on, world_device
from .signatures import bind_call
from .torch_parallel import copied_to
from .torch_worlds import TORCH_WORLDS

ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
STATES = frozenset({"accelerate.PartialState", "accelerate.AcceleratorState", "accelerate.state.PartialState",
                    "accelerate.state.AcceleratorState"})
#: the source text of a program whose accelerator device depends on the CUDA world (:mod:`.torch_worlds`)
QUESTIONS = (b"Accelerator", b"PartialState")
#: methods that give back their first argument as it is, devices included (one process: nothing to gather)
_SAME = frozenset({"gather", "gather_for_metrics", "reduce", "pad_across_processes", "unwrap_model",
                   "prepare_optimizer", "prepare_scheduler"})
_PREPARE = frozenset({"prepare", "prepare_model", "prepare_data_loader"})


@dataclass(frozen=True, slots=True)
class AccelerateRef(Atom):
    """``accelerate`` or a name inside it."""

    path: str


@dataclass(frozen=True, slots=True)
class AcceleratorAtom(Atom):
    """An ``Accelerator`` (or a ``PartialState``: ``state``): its device (``None``: not known) and whether
    ``prepare`` moves what it is given (``None``: not known)."""

    dev: TorchDev | None
    placement: bool | None
    origin: Origin | None = None
    state: bool = False


class AccelerateModel(LibraryModel):
    """``accelerate.Accelerator`` and its state objects."""

    name = "accelerate"
    axis_questions = (AxisQuestions(TORCH_WORLDS.name, QUESTIONS),)  # the accelerator's device is the CUDA world's

    def import_ref(self, path: str) -> Value | None:
        return V(AccelerateRef(path)) if path == "accelerate" or path.startswith("accelerate.") else None

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, AccelerateRef):
            return V(AccelerateRef(f"{atom.path}.{attr}"))
        if isinstance(atom, AcceleratorAtom):
            if attr == "device":
                if atom.dev is None:
                    return None
                return V(TorchDeviceAtom(atom.dev, origin=atom.origin, bare=atom.dev.type != "cpu"))
            if not atom.state and (attr in _PREPARE or attr in _SAME or attr == "backward"):
                return V(BoundShim(atom, attr))
            return None
        return UNHANDLED

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, AccelerateRef):
            return UNHANDLED
        if star_unknown or node is None or atom.path not in ACCELERATORS | STATES:
            return TOP
        origin = self.origin(node, fr, "the accelerator's device")
        if atom.path in STATES:
            cpu = _constant(bind_call(atom.path.replace("state.", ""), args, kwargs).get("cpu"), False)
            return V(AcceleratorAtom(self._device(cpu), False, origin, state=True))
        bound = bind_call("accelerate.Accelerator", args, kwargs)  # (the module's path binds as the package's)
        cpu = _constant(bound.get("cpu"), False)
        placement = _constant(bound.get("device_placement"), True)
        return V(AcceleratorAtom(self._device(cpu), placement, origin))

    def _device(self, cpu: bool | None) -> TorchDev | None:
        if cpu is None:
            return None
        return CPU if cpu else world_device(self)

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "AcceleratorAtom":
            return UNHANDLED
        if len(receiver.atoms) != 1 or receiver.top:
            return TOP
        accelerator = next(iter(receiver.atoms))
        assert isinstance(accelerator, AcceleratorAtom)
        if name == "backward":
            return NONE
        if name in _SAME:
            return args[0] if args else TOP
        if accelerator.placement is None:
            return TOP  # ``device_placement`` not known: what it prepares is unknown
        if name == "prepare":
            given = kwargs.get("device_placement")
            placements = _placements(given, len(args))
            if placements is None or set(kwargs) - {"device_placement"}:
                return TOP
            sources = node.args if isinstance(node, ast.Call) and len(node.args) == len(args) \
                and not any(isinstance(a, ast.Starred) for a in node.args) else [None] * len(args)
            prepared = [self._prepare(accelerator, value, placement, source, node, st, fr)
                        for value, placement, source in zip(args, placements, sources, strict=True)]
            return prepared[0] if len(prepared) == 1 else V(seq("tuple", prepared))
        # prepare_model(model, device_placement=None, ...) / prepare_data_loader(data_loader, device_placement=None)
        if not args:
            return TOP
        given = kwargs.get("device_placement", args[1] if len(args) > 1 else None)
        placement = _constant(given, None)
        if placement is None and given is not None and given.consts() != [None]:
            return TOP
        source = node.args[0] if isinstance(node, ast.Call) and node.args \
            and not isinstance(node.args[0], ast.Starred) else None
        return self._prepare(accelerator, args[0], placement, source, node, st, fr)

    def _prepare(self, accelerator: AcceleratorAtom, value: Value, placement: bool | None,
                 source: ast.expr | None, node: ast.AST, st: State, fr: Frame) -> Value:
        """One object ``prepare`` was given, prepared (``placement``: its own ``device_placement``, ``None``:
        the accelerator's)."""
        place = accelerator.placement if placement is None else placement
        dev = accelerator.dev
        if value.top or not place:
            return value if place is False else TOP
        if dev is None:
            return TOP
        torch = self.model_named("torch")
        modules = [a for a in value.atoms if isinstance(a, TorchLayerAtom)
                   or (isinstance(a, Instance) and a.cls.has_library_base(MODULE_TYPE))]
        if modules:
            if torch is None or len(modules) != len(value.atoms):
                return TOP
            if source is not None:  # ``model.to(self.device)``: in place, as the program's own ``.to`` would be
                move = ast.copy_location(ast.Call(func=ast.Attribute(value=source, attr="to", ctx=ast.Load()),
                                                  args=[], keywords=[]), node)
                return torch.torch_module_method("to", value, [V(TorchDeviceAtom(dev))], {}, move, st, fr)
            return Value(frozenset(torch.move_module(a, dev) for a in modules))
        loaders = [a for a in value.atoms if isinstance(a, SeqAtom) and a.kind == "list"]
        if loaders and len(loaders) == len(value.atoms):  # a DataLoader: the list of its batches
            origin = self.origin(node, fr, f"batch sent to {dev.shown} by the prepared DataLoader")
            return Value(frozenset(map_elements(a, lambda batch: _placed_batch(self.engine, batch, dev, origin))
                                   for a in loaders))
        return value  # an optimizer, a scheduler, anything else: as it was


def _placed_batch(engine: Any, batch: Value, dev: TorchDev, origin: Origin) -> Value:
    """``send_to_device(batch, dev)``: its tensors moved there (a batch the analysis does not know: one there)."""
    if batch.top and not batch.atoms:
        return batch_on(dev, origin)
    return copied_to(engine, batch, dev, origin, 0)


def _constant(value: Value | None, default: bool | None) -> bool | None:
    """A bool argument: its constant (``default`` where it is not given, ``None`` where it is not known)."""
    if value is None:
        return default
    consts = value.consts() if not value.top else None
    if consts and len(consts) == 1 and isinstance(consts[0], bool):
        return consts[0]
    return None


def _placements(given: Value | None, count: int) -> list[bool | None] | None:
    """``prepare``'s ``device_placement=[...]``: one per object (``None``: the accelerator's); ``None``: not known."""
    if given is None or given.consts() == [None]:
        return [None] * count
    atom = next(iter(given.atoms)) if len(given.atoms) == 1 and not given.top else None
    if not isinstance(atom, SeqAtom) or atom.items is None or len(atom.items) != count:
        return None
    out: list[bool | None] = []
    for item in atom.items:
        flag = _constant(item, None)
        if flag is None and item.consts() != [None]:
            return None
        out.append(flag)
    return out

