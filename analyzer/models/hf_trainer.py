"""Hugging Face ``transformers.Trainer``: the hooks a project subclass overrides, called as the Trainer calls them.

The Trainer (``transformers/trainer.py``) moves its model to ``args.device`` in ``__init__``
(``self._move_model_to_device(model, args.device)`` unless the model is parallel, DeepSpeed or FSDP runs
it, or ``args.place_model_on_device`` says not to) and hands every batch to the program on that device:
its data loaders are prepared by accelerate (batches placed on the device) and ``training_step`` /
``prediction_step`` call ``self._prepare_inputs(inputs)`` (each tensor ``.to(device=self.args.device)``)
before ``self.compute_loss(model, inputs, ...)``. A subclass's override of ``compute_loss``,
``training_step`` or ``prediction_step`` therefore gets ``inputs`` on the Trainer's device: a tensor it
builds on the CPU (class weights from ``torch.tensor(...)``, a mask) and mixes with them fails where the
device is a GPU, while ``.to(logits.device)`` / ``.to(self.args.device)`` is right.

``args.device`` (``TrainingArguments._setup_devices``) is ``cuda:0`` where CUDA is available (one process),
``mps`` on a Mac, the CPU otherwise or with ``use_cpu=True`` (``no_cuda=True`` before transformers 5): the
world's device (:func:`.placement.world_device`) unless every ``TrainingArguments(...)`` /
``Seq2SeqTrainingArguments(...)`` of the program says ``use_cpu=True`` (a value the source does not fix, or
programs that differ: unknown).

What the analysis follows, for the classes derived from ``Trainer`` / ``Seq2SeqTrainer`` (a class whose base
is one of them by value: ``transformers.Trainer``, ``tf.Trainer`` after ``import transformers as tf``, a name a
project module re-exports; :meth:`..hf_models.HFModels.class_base`):

* each hook is called once per instance of the class the program builds: ``(self, model, inputs)`` (and an
  unknown ``prediction_loss_only``), ``inputs`` a dict of tensors on the device;
* ``super().__init__(model=..., args=...)`` (or the inherited constructor) stores ``self.model``, the model
  moved to the device (a project ``nn.Module``; a library model stays unknown, as do its outputs) and
  ``self.args``, whose ``.device`` is the device;
* ``self._prepare_inputs(x)`` / ``self._prepare_input(x)``: ``x`` with its tensors moved there;
* ``Trainer(model=model, args=...)`` of the library class itself (:meth:`HFTrainer.construct_library_trainer`):
  ``model`` moved there in place, and the trainer's ``.model`` that moved module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..domain import NONE, TOP, Atom, Instance, Origin, V, Value, const, join_all
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, TorchDev, TorchDeviceAtom, TorchLayerAtom
from .base import UNHANDLED, AxisQuestions, LibraryModel, Unhandled
from .placement import batch_on, world_device
from .signatures import bind_call
from .torch_model import access
from .torch_parallel import copied_to
from .torch_worlds import TORCH_WORLDS

TRAINER_TYPE = "transformers.Trainer"
#: how the Trainer classes are spelled (a class statement deriving from one is the program's Trainer)
TRAINERS = frozenset({"transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer",
                      "transformers.trainer_seq2seq.Seq2SeqTrainer"})
TRAINING_ARGUMENTS = frozenset({"transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments",
                                "transformers.training_args.TrainingArguments",
                                "transformers.training_args_seq2seq.Seq2SeqTrainingArguments"})
#: the source text of a program whose Trainer device depends on the CUDA world (:mod:`.torch_worlds`)
QUESTIONS = (b"Trainer",)
#: the hooks the Trainer calls with ``(model, inputs, ...)``, inputs on its device
HOOKS = frozenset({"compute_loss", "training_step", "prediction_step"})
_PREPARE = frozenset({"_prepare_inputs", "_prepare_input"})
_MAX_INSTANCES = 4


@dataclass(frozen=True, slots=True)
class TrainerInit(Atom):
    """``Trainer.__init__`` bound to a project subclass's instance (``super().__init__(...)``)."""

    instance: Atom


@dataclass(frozen=True, slots=True)
class PrepareInputs(Atom):
    """``self._prepare_inputs`` of a Trainer whose device is ``dev``."""

    dev: TorchDev


@dataclass(frozen=True, slots=True)
class TrainerObject(Atom):
    """A ``Trainer(model=..., args=...)`` built from the library class itself: ``.model`` is the model it moved
    to ``dev`` (the program's own reference moved with it: ``nn.Module.to`` moves in place)."""

    dev: TorchDev
    model: Value


@dataclass(frozen=True, slots=True)
class TrainerArgs(Atom):
    """A Trainer's ``self.args`` (``TrainingArguments``): its ``.device`` is where the Trainer places things."""

    dev: TorchDev


class HFTrainer(LibraryModel):
    """``transformers.Trainer`` subclasses: their hooks, constructor and ``self.args.device``."""

    name = "transformers"
    axis_questions = (AxisQuestions(TORCH_WORLDS.name, QUESTIONS),)  # args.device is the CUDA world's

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self.placements: set[bool | None] = set()  # each ``TrainingArguments(...)``'s use_cpu, as the run builds them
        self.placement_read = False

    @property
    def placement(self) -> str:
        """Every TrainingArguments on the CPU: ``"cpu"``; none asks for it (or none is built): the machine's choice,
        ``"auto"``; arguments that disagree or a value the source does not fix: ``"other"``."""
        return "cpu" if self.placements == {True} else "auto" if self.placements <= {False} else "other"

    def note_arguments(self, use_cpu: bool | None) -> None:
        """A ``TrainingArguments(...)`` the run built, with its ``use_cpu`` (``None``: not known). One that changes
        the device after a pass read it makes that pass stale (the next one starts with it)."""
        if use_cpu in self.placements:
            return
        before = self.placement
        self.placements.add(use_cpu)
        if self.placement_read and self.placement != before:
            self.changes.read_went_stale()

    def device(self) -> TorchDev | None:
        """``args.device``: the CPU where the program asks for it, else the world's (unknown outside one)."""
        self.placement_read = True
        if self.placement == "cpu":
            return CPU
        return world_device(self) if self.placement == "auto" else None

    def is_trainer(self, cls: Any) -> bool:
        return any(TRAINER_TYPE in c.library_bases for c in cls.mro())

    # -- classes and their instances ---------------------------------------------------------------------
    def library_init(self, cls: Any, instance: Value, args: list[Value], kwargs: dict[str, Value], st: State,
                     fr: Frame) -> None:
        if self.is_trainer(cls):
            for atom in instance.atoms:
                self._construct(atom, args, kwargs, False, fr)

    def instance_attribute(self, instance: Atom, attr: str, node: ast.expr | None, st: State,
                           fr: Frame) -> Value | None:
        if not isinstance(instance, Instance) or not self.is_trainer(instance.cls):
            return None
        if attr == "__init__":
            return V(TrainerInit(instance))
        dev = self.device()
        if dev is None:
            return None
        if attr in _PREPARE:
            return V(PrepareInputs(dev))
        if attr == "args":
            return V(TrainerArgs(dev))
        return None

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, TrainerObject):
            if attr in ("model", "model_wrapped"):
                return atom.model
            return V(TrainerArgs(atom.dev)) if attr == "args" else None
        if isinstance(atom, TrainerArgs):
            return V(TorchDeviceAtom(atom.dev)) if attr == "device" else None
        if isinstance(atom, (TrainerInit, PrepareInputs)):
            return None
        return UNHANDLED

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, TrainerInit):
            self._construct(atom.instance, args, kwargs, star_unknown, fr)
            return NONE
        if isinstance(atom, PrepareInputs):
            if star_unknown or len(args) != 1:
                return TOP
            origin = self.origin(node, fr, f"moved to {atom.dev.shown} by Trainer._prepare_inputs")
            return copied_to(self.engine, args[0], atom.dev, origin, 0)
        return UNHANDLED

    def _construct(self, instance: Atom, args: list[Value], kwargs: dict[str, Value], star_unknown: bool,
                   fr: Frame) -> None:
        """``Trainer.__init__``: ``self.model`` (moved to the device) and ``self.args``."""
        dev = self.device()
        model: Value = TOP
        if not star_unknown:
            given = bind_call("transformers.Trainer", args, kwargs).get("model")
            model = TOP if given is None else given
        if dev is not None and not model.top:
            model = self._placed(model, dev)
        self.store_attribute(V(instance), "model", model, fr)
        self.store_attribute(V(instance), "args", V(TrainerArgs(dev)) if dev is not None else TOP, fr)

    def construct_library_trainer(self, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                                  fr: Frame) -> Value:
        """``Trainer(model=model, args=...)`` of the library class: the model moves to ``args.device`` in place
        (the name passed is rebound to the moved module, other references see it moved); the Trainer's
        ``.model`` is that module. Where the device is unknown, the references are on a device the analysis
        cannot place (calls through them: silent)."""
        torch = self.model_named("torch")
        model = bind_call("transformers.Trainer", args, kwargs).get("model")
        if torch is None or model is None:
            return TOP
        dev = self.device()
        if dev is None or model.top or not model.atoms:
            torch._note_moved_in_place(model, TOP, None)
            return TOP
        moved = self._placed(model, dev)
        expr = _model_argument(node)
        torch._note_moved_in_place(model, V(const(dev.text)), access(expr, fr))
        if isinstance(expr, ast.Name) and expr.id in st.vars:
            st.vars[expr.id] = moved
            st.kill_aliases(expr.id)
            st.drop_overlays(expr.id)
        return V(TrainerObject(dev, moved))

    def _placed(self, model: Value, dev: TorchDev) -> Value:
        """The Trainer's ``model.to(args.device)`` of a module the analysis follows (anything else: unknown)."""
        torch = self.model_named("torch")
        if torch is None:
            return TOP
        out: list[Value] = []
        for atom in model.atoms:
            if isinstance(atom, (Instance, TorchLayerAtom)):
                out.append(V(torch.move_module(atom, dev)))
            else:
                out.append(TOP)
        return join_all(out) if out else TOP

    # -- the hooks the Trainer calls -----------------------------------------------------------------------
    def entry(self, fn: Any) -> Any:
        if fn.cls is not None and fn.name in HOOKS and self.is_trainer(fn.cls):
            return "Trainer"
        return None

    def entry_caller(self, fn: Any) -> str:
        return "the Trainer"

    def entry_calls(self, fn: Any, receivers: list[list[Value]],
                    frame: Frame) -> list[tuple[list[Value], dict[str, Value]]] | None:
        if self.entry(fn) is None:
            return None
        dev = self.device()
        if dev is None:
            return None  # swept with unknown arguments
        engine = self.engine
        instances = sorted((i for cls, made in engine.instances.items() if fn.cls in cls.mro() for i in made),
                           key=_order)
        origin = Origin(fn.module.file or "", fn.node.lineno, fn.node.col_offset,
                        f"batch the Trainer moved to {dev.shown}")
        inputs = batch_on(dev, origin)  # a collator's batch: a dict of tensors, each moved to the device
        pairs: list[tuple[Value, Value]] = []
        if not instances or len(instances) > _MAX_INSTANCES:
            pairs.append((Value(frozenset(instances), top=not instances), TOP))
        else:
            for instance in instances:
                model = engine.heap_get((instance, "model"))
                pairs.append((V(instance), TOP if model is None else model))
        calls: list[tuple[list[Value], dict[str, Value]]] = []
        for receiver, model in pairs:
            args = [receiver, model, inputs]
            if fn.name == "prediction_step":
                args.append(TOP)  # prediction_loss_only
            calls.append((args if fn.vararg else args[:len(fn.positional)], {}))
        return calls


def _model_argument(node: ast.AST) -> ast.expr | None:
    """The expression a ``Trainer(...)`` call passes as its model (first positional or ``model=``)."""
    if not isinstance(node, ast.Call):
        return None
    for keyword in node.keywords:
        if keyword.arg == "model":
            return keyword.value
    return node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None


def _order(instance: object) -> tuple:
    return (getattr(instance, "file", ""), getattr(instance, "line", 0), getattr(instance, "col", 0),
            getattr(instance, "ctx", 0))
