"""Hugging Face ``transformers`` used directly: pretrained models, tokenizers, their encodings and outputs.

What the library does with devices (read from transformers 5's source):

* ``<Class>.from_pretrained(name, device_map=...)`` (``modeling_utils``; ``check_and_set_device_map``): without
  a ``device_map`` the weights are loaded on the default device (the one ``torch.set_default_device`` or a
  ``with torch.device(...)`` block sets, else the CPU); ``"cuda"`` is ``cuda:<LOCAL_RANK>`` (``cuda:0`` in one
  process), ``"cuda:1"``/``"cpu"``/``torch.device(...)`` that device, an int ``i`` ``cuda:i``, ``{"": d}`` the
  device ``d``. A map onto one device loads there with no hooks (inputs are not moved); ``"auto"``,
  ``"balanced"``, ``"sequential"`` or a map over several devices dispatch the model with accelerate's hooks
  across the machine: its device is not known; so is the device a quantizer (``quantization_config``,
  ``load_in_8bit``: the current CUDA device where there is one) or a tensor-parallel plan picks.
  ``dtype``/``torch_dtype`` change no device. ``<Class>(config)`` and ``AutoModel*.from_config(config)``
  build the weights on the default device. The model is an
  ``nn.Module`` (a :class:`TorchLayerAtom` named ``hf:<Class>``): ``.to()``/``.cuda()``/``.cpu()``, ``eval()``,
  ``train()``, ``parameters()``, optimizers and the frameworks that place modules treat it as any module.
* ``model.device`` (``PreTrainedModel.device``): the first parameter's device.
* ``model(input_ids, attention_mask=..., ...)``: the token ids, token types and positions are looked up in the
  embeddings (indexes into the weights), ``inputs_embeds``/``pixel_values`` meet the first layer's weights: each on
  another device than the weights fails (MV202); the attention mask then meets the hidden states, on the weights'
  device (MV201). The causal and masked LM losses (``loss_function``) move ``labels`` to the logits' device; the
  classification heads of :data:`LABELS_STAY` (BERT, DistilBERT ...) do not, so labels on another device fail there
  (MV201); through ``AutoModel*`` the checkpoint decides: not checked. The output (``ModelOutput``) holds tensors on
  the model's device: ``loss`` (with ``labels``), ``logits`` (a model with a head) or
  ``last_hidden_state``/``pooler_output`` (a base model), ``hidden_states``/``attentions`` (tuples); ``outputs[0]``
  is the first field that is not ``None``.
* ``model.generate(input_ids, ...)``: inputs on another device are moved to the model's before each forward
  (``prepare_inputs_for_generation``: "Inputs on CPU are supported"); the sequences it returns are on the
  inputs' device.
* tokenizers (``AutoTokenizer.from_pretrained``, any ``*Tokenizer``/``*TokenizerFast``): ``tok(text,
  return_tensors="pt")``, ``encode_plus``, ``batch_encode_plus``, ``pad`` and ``apply_chat_template`` (with
  ``tokenize``/``return_dict`` left True) give a ``BatchEncoding`` whose tensors are int64 tensors made by
  ``torch.tensor``: on the default device; ``encode(..., return_tensors="pt")`` and ``apply_chat_template(...,
  return_dict=False)`` the ids tensor itself; ``return_tensors="np"``/absent gives no tensors.
  ``BatchEncoding.to(device)`` moves every tensor and returns the encoding itself (in place: a discarded
  ``inputs.to(device)`` moves ``inputs``); items, attributes (``inputs.input_ids``), ``**inputs`` and
  ``.items()`` read its tensors. The data collators (``DataCollatorWithPadding`` ...) pad a list of features
  into an encoding on the default device.
* processors (``AutoProcessor``, ``AutoImageProcessor``, feature extractors) make tensors on the default device
  too, under fields the checkpoint picks (``**inputs`` of one: unknown).
* ``pipeline(..., device=...)`` places its inputs itself: its results are unknown (never a finding).

Anything else from ``transformers`` is unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..domain import (
    BOTTOM,
    NONE,
    TOP,
    Atom,
    BoundShim,
    Const,
    DictAtom,
    Origin,
    SeqAtom,
    V,
    Value,
    const,
    join_all,
    seq,
    seq_of,
)
from ..engine.flow_state import Frame, State
from ..torch_domain import (
    LEAF,
    NO_GRAD,
    NON_LEAF,
    TorchDev,
    TorchDeviceAtom,
    TorchLayerAtom,
    TorchTensorAtom,
    derived_from,
)
from .base import UNHANDLED, LibraryModel, Unhandled
from .hf_trainer import TRAINER_TYPE, TRAINERS, TRAINING_ARGUMENTS, HFTrainer
from .keyed_moves import hold_in_place, moved_fields
from .signatures import Bound, bind_call

#: the name prefix of a transformers model's :class:`TorchLayerAtom`
PREFIX = "hf:"
_SHARDED = frozenset({"auto", "balanced", "balanced_low_0", "sequential"})
#: ``from_pretrained`` arguments that pick the device without a ``device_map`` (bitsandbytes' quantizers: the
#: current CUDA device where there is one; tensor parallelism: the process's)
_PLACERS = ("quantization_config", "load_in_8bit", "load_in_4bit", "tp_plan", "tp_size", "device_mesh",
            "distributed_config")
#: the inputs a model's forward mixes with its weights: (name, an index into the embeddings)
_INPUTS = (("input_ids", True), ("token_type_ids", True), ("position_ids", True), ("inputs_embeds", False),
           ("pixel_values", False), ("decoder_input_ids", True))
#: heads whose loss takes the labels where they are (read from their ``forward``: ``loss_fct(logits, labels)``
#: with no ``labels.to(logits.device)``, unlike the LM losses' ``loss_function`` and RoBERTa's heads); through an
#: ``AutoModel*`` class the checkpoint decides, and the labels are not checked
LABELS_STAY = frozenset({"BertForSequenceClassification", "DistilBertForSequenceClassification",
                         "AlbertForSequenceClassification", "DebertaV2ForSequenceClassification",
                         "ElectraForSequenceClassification", "ModernBertForSequenceClassification"})
#: the masks a forward applies to the hidden states
_MASKS = ("attention_mask", "decoder_attention_mask")
_MODEL_METHODS = frozenset({"generate", "resize_token_embeddings", "get_input_embeddings", "get_output_embeddings",
                            "save_pretrained", "push_to_hub", "gradient_checkpointing_enable", "tie_weights"})
_TOKENIZER_CALLS = frozenset({"__call__", "encode_plus", "batch_encode_plus", "pad", "apply_chat_template",
                              "encode", "prepare_for_model"})
_COLLATORS = frozenset({"DataCollatorWithPadding", "DataCollatorForLanguageModeling", "DataCollatorForSeq2Seq",
                        "DataCollatorForTokenClassification", "DataCollatorForWholeWordMask",
                        "DefaultDataCollator", "default_data_collator"})
_DICT_METHODS = frozenset({"items", "keys", "values", "get", "copy"})
_TUPLES = frozenset({"hidden_states", "attentions"})  # an output's fields that are tuples of tensors
_PROCESSOR = "processor"  # a :class:`TokenizerAtom` that is a processor (its fields: the checkpoint's)


@dataclass(frozen=True, slots=True)
class HFRef(Atom):
    """``transformers`` or a name inside it."""

    path: str


@dataclass(frozen=True, slots=True)
class TokenizerAtom(Atom):
    """A tokenizer (or a data collator: ``collator``, which pads features into an encoding; or a processor)."""

    loose = True

    origin: Origin | None = field(default=None, compare=False)
    collator: str = ""


@dataclass(frozen=True, slots=True)
class EncodingAtom(DictAtom):
    """A ``BatchEncoding``: a dict of its fields (``**inputs``, ``inputs["input_ids"]``, ``.items()`` read it as
    one) that also answers ``inputs.input_ids`` and ``inputs.to(device)``."""

    loose = True

    origin: Origin | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class OutputAtom(Atom):
    """A ``ModelOutput``: its fields in order (``outputs[0]`` is the first that is not ``None``)."""

    fields: tuple[tuple[str, Value], ...]

    def held(self) -> tuple[Value, ...]:
        return tuple(value for _name, value in self.fields)


@dataclass(frozen=True, slots=True)
class HFMethod(Atom):
    """A method of an encoding bound to it (``inputs.to``): the engine's dict methods answer the others."""

    receiver: Atom
    name: str


def is_hf_model(atom: Atom) -> bool:
    return isinstance(atom, TorchLayerAtom) and atom.name.startswith(PREFIX)


def _leaf(path: str) -> str:
    return path.rpartition(".")[2]


def _is_model_class(name: str) -> bool:
    if name.startswith("AutoModel"):
        return True
    return name[:1].isupper() and ("For" in name or name.endswith(("Model", "LMHeadModel"))) \
        and not any(part in name for part in ("Tokenizer", "Config", "Collator", "Trainer", "Processor")) \
        and not name.startswith(("TF", "Flax"))


def _is_tokenizer_class(name: str) -> bool:
    return name == "AutoTokenizer" or name.endswith(("Tokenizer", "TokenizerFast"))


def _is_processor_class(name: str) -> bool:
    """A processor, image processor or feature extractor: its encoding's fields depend on the checkpoint."""
    return name.endswith(("Processor", "ProcessorFast", "FeatureExtractor"))


def _constant(value: Value | None) -> object:
    """The one constant of ``value`` (``...`` where it is not one constant; ``None`` where it is absent)."""
    if value is None:
        return None
    consts = value.consts() if not value.top else None
    return consts[0] if consts and len(consts) == 1 else ...


class HFModels(LibraryModel):
    """``transformers``' pretrained models, tokenizers, encodings and model outputs."""

    name = "transformers-models"

    # -- names -------------------------------------------------------------------------------------------
    def import_ref(self, path: str) -> Value | None:
        return V(HFRef(path)) if path == "transformers" or path.startswith("transformers.") else None

    def class_base(self, value: Value) -> tuple[str, ...]:
        # a ``Trainer`` subclass (its hooks are :mod:`.hf_trainer`'s, which finds the class from its statement)
        return (TRAINER_TYPE,) if any(isinstance(a, HFRef) and a.path in TRAINERS for a in value.atoms) else ()

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, HFRef):
            return V(HFRef(f"{atom.path}.{attr}"))
        if isinstance(atom, TorchLayerAtom) and is_hf_model(atom):
            if attr == "device":
                return None if atom.dev is None else V(TorchDeviceAtom(atom.dev, atom.origin))
            if attr in _MODEL_METHODS:
                return V(BoundShim(atom, attr))
            if attr == "forward":
                return V(atom)
            return UNHANDLED  # nn.Module's API: the torch model's
        if isinstance(atom, TokenizerAtom):
            return V(BoundShim(atom, attr)) if attr in _TOKENIZER_CALLS else None
        if isinstance(atom, EncodingAtom):
            if attr == "to":
                return V(HFMethod(atom, attr))
            if attr in _DICT_METHODS:
                return V(BoundShim(atom, attr))
            if attr == "data":
                return V(DictAtom(atom.items, atom.rest))
            found = atom.get(attr)
            return found if found is not None else atom.rest
        if isinstance(atom, OutputAtom):
            if attr in ("to_tuple", "keys", "values", "items"):
                return V(BoundShim(atom, attr))
            return dict(atom.fields).get(attr)
        if isinstance(atom, HFMethod):
            return None
        return UNHANDLED

    # -- calls ---------------------------------------------------------------------------------------------
    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, HFRef):
            if star_unknown or node is None:
                if atom.path in TRAINING_ARGUMENTS:  # ``TrainingArguments(**options)``: any of them may be in there
                    self._note_arguments(None)
                return TOP
            return self._call_name(atom.path, args, kwargs, node, st, fr)
        if isinstance(atom, TorchLayerAtom) and is_hf_model(atom):
            torch = self.model_named("torch")
            if star_unknown or node is None or torch is None \
                    or torch.moved_elsewhere(atom, getattr(node, "func", None), fr):
                return TOP
            return self._forward(atom, args, kwargs, node, st, fr)
        if isinstance(atom, TokenizerAtom):
            if star_unknown or node is None:
                return TOP
            if atom.collator == _PROCESSOR:
                return self._processed("__call__", kwargs, node, st, fr)
            if atom.collator:
                return self._collate(atom, args, node, st, fr)
            return self._encode("__call__", args, kwargs, node, st, fr)
        if isinstance(atom, HFMethod):
            if star_unknown or node is None:
                return TOP
            return self._encoding_to(atom, args, kwargs, node, st, fr)
        return UNHANDLED

    def _call_name(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                   fr: Frame) -> Value:
        leaf = _leaf(path)
        owner = _leaf(path.rpartition(".")[0]) if "." in path else ""
        if leaf in ("from_pretrained", "from_config") and _is_model_class(owner):
            dev: TorchDev | None | list[TorchDev]
            if leaf == "from_pretrained":
                bound = _all(bind_call("transformers.PreTrainedModel.from_pretrained", args, kwargs))
                placed = bound.get("device_map")
                if placed is None and any(_constant(bound.get(name)) not in (None, False) for name in _PLACERS):
                    return self._model(owner, None, node, fr)  # a quantizer or tensor-parallel plan places it
                dev = self._device_map(placed, st)
            else:
                dev = self._default_devices(st)
            return self._model(owner, dev, node, fr)
        if leaf == "from_pretrained" and _is_tokenizer_class(owner):
            return V(TokenizerAtom(self.origin(node, fr, f"{owner}.from_pretrained")))
        if leaf == "from_pretrained" and _is_processor_class(owner):
            return V(TokenizerAtom(self.origin(node, fr, f"{owner}.from_pretrained"), _PROCESSOR))
        if _is_model_class(leaf) and len(args) + len(kwargs) >= 1 and "." not in leaf:
            return self._model(leaf, self._default_devices(st), node, fr)  # ``BertModel(config)``
        if path in TRAINERS:
            # ``Trainer(model=model, ...)`` moves the model to ``args.device`` in place (:mod:`.hf_trainer`)
            trainer = self.model_named("transformers")
            return TOP if trainer is None else trainer.construct_library_trainer(args, kwargs, node, st, fr)
        if path in TRAINING_ARGUMENTS:  # (its ``device``: the Trainer model's, from every one the run builds)
            self._note_arguments(_use_cpu(bind_call("transformers.TrainingArguments", args, kwargs)))
            return TOP
        if leaf in _COLLATORS:
            if leaf == "default_data_collator":
                return self._collate(TokenizerAtom(None, leaf), args, node, st, fr)
            return V(TokenizerAtom(self.origin(node, fr, leaf), leaf))
        return TOP  # ``pipeline(...)`` (it places its inputs itself), configs, ``set_seed`` ...

    def _note_arguments(self, use_cpu: bool | None) -> None:
        trainer = self.model_named(HFTrainer.name)
        if isinstance(trainer, HFTrainer):
            trainer.note_arguments(use_cpu)

    def _model(self, cls: str, devs: TorchDev | None | list[TorchDev], node: ast.AST, fr: Frame) -> Value:
        origin = self.origin(node, fr, f"{cls} weights")
        if isinstance(devs, list):
            return Value(frozenset(TorchLayerAtom(PREFIX + cls, d, True, (), origin) for d in devs))
        return V(TorchLayerAtom(PREFIX + cls, devs, True, (), origin))

    def _default_devices(self, st: State) -> list[TorchDev] | None:
        torch = self.model_named("torch")
        found = torch.default_devices(st) if torch is not None else None
        return None if found is None else sorted({d for d, _s in found}, key=lambda d: d.text)

    def _device_map(self, given: Value | None, st: State) -> TorchDev | None | list[TorchDev]:
        """Where ``from_pretrained(device_map=given)`` loads the weights (``None``: not known)."""
        if given is None or given.consts() == [None]:
            return self._default_devices(st)
        if given.top or len(given.atoms) != 1:
            return None
        atom = next(iter(given.atoms))
        if isinstance(atom, DictAtom):  # ``{"": 0}``: one device for the whole model
            if atom.rest is not None or not atom.items:
                return None
            devices = {self._device_map(value, st) if not isinstance(value, list) else None
                       for _k, value in atom.items}
            one = devices.pop() if len(devices) == 1 else None
            return one if isinstance(one, TorchDev) else None
        if isinstance(atom, Const) and isinstance(atom.value, str):
            if atom.value in _SHARDED:
                return None
            if atom.value == "cuda":
                return TorchDev("cuda", 0)  # ``cuda:<LOCAL_RANK>``: one process
        if isinstance(atom, Const) and type(atom.value) is int and atom.value < 0:
            return None  # (from_pretrained raises)
        torch = self.model_named("torch")
        found = torch.devices_of(given, st) if torch is not None else None
        return found[0][0] if found and len(found) == 1 else None

    # -- the model's forward -------------------------------------------------------------------------------
    def _forward(self, model: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                 st: State, fr: Frame) -> Value:
        bound = _all(bind_call("transformers.PreTrainedModel.forward", args, kwargs))
        cls = model.name[len(PREFIX):]
        api = cls
        if model.dev is None:
            return V(self._output(cls, None, bound.get("labels"), node, st, fr))
        torch = self.model_named("torch")
        if torch is None:
            return TOP
        weight = TorchTensorAtom(model.dev, LEAF, False, owned=True, origin=model.origin)
        given = {name: value for name in (*(n for n, _i in _INPUTS), *_MASKS)
                 if (value := bound.get(name)) is not None and value.consts() != [None]}
        # the ids index the embeddings, embeddings and pixels meet the first layer's weights (MV202)
        operands = [(name, given[name], index, False) for name, index in _INPUTS if name in given]
        if operands:
            torch.checked_op(api, [*operands, ("weight", V(weight), False, True)], node, st, fr,
                             op="forward")
        # a mask meets the hidden states, on the weights' device (MV201)
        masks = [(name, given[name], False, False) for name in _MASKS if name in given]
        # (reached only where the embeddings ran: every known tensor of those inputs on the weights' device)
        embedded = all(a.dev == model.dev for _n, value, _i, _o in operands for a in value.atoms
                       if isinstance(a, TorchTensorAtom))
        if masks and embedded and not st.dead:
            states = TorchTensorAtom(model.dev, NON_LEAF, False, origin=model.origin)
            torch.checked_op(f"{api} attention", [("hidden states", V(states), False, False), *masks], node, st,
                             fr)
        labels = bound.get("labels")
        masked = all(a.dev == model.dev for _n, value, _i, _o in masks for a in value.atoms
                     if isinstance(a, TorchTensorAtom))
        if cls in LABELS_STAY and labels is not None and embedded and masked and not st.dead:
            # its loss meets the labels with the logits as they are (no ``labels.to(logits.device)``)
            logits = TorchTensorAtom(model.dev, NON_LEAF, False, origin=self.origin(node, fr, f"{cls} logits"))
            torch.checked_op(f"{api} loss", [("logits", V(logits), False, False), ("labels", labels, False, False)],
                             node, st, fr)
        if st.dead:
            return BOTTOM
        # its outputs' device is its inputs' (the batch a caller passed: a later failure over them comes from there)
        inputs = [a for _n, value, _i, _o in operands for a in value.atoms if isinstance(a, TorchTensorAtom)]
        source = derived_from(inputs, model.dev) if inputs else None
        return V(self._output(cls, model.dev, labels, node, st, fr, source))

    def _output(self, cls: str, dev: TorchDev | None, labels: Value | None, node: ast.AST, st: State,
                fr: Frame, source: Origin | None = None) -> OutputAtom:
        def tensor(zero_dim: bool, what: str) -> Value:
            if dev is None:
                return TOP
            torch = self.model_named("torch")
            modes = torch.grad_modes(st) if torch is not None else {True}
            origin = self.origin(node, fr, f"{cls} {what}")
            return Value(frozenset(TorchTensorAtom(dev, NON_LEAF if enabled else NO_GRAD, zero_dim, origin=origin,
                                                   source=source) for enabled in modes))

        hidden = V(seq_of("tuple", tensor(False, "hidden state")))
        given = labels is not None and labels.consts() != [None]
        loss = tensor(True, "loss") if given else NONE if labels is None or labels.consts() == [None] else TOP
        if "QuestionAnswering" in cls:
            heads = [("start_logits", tensor(False, "start_logits")), ("end_logits", tensor(False, "end_logits"))]
        elif "For" in cls or "LMHead" in cls:
            heads = [("logits", tensor(False, "logits"))]
        else:  # a base model: its last layer's states
            return OutputAtom((("last_hidden_state", tensor(False, "last_hidden_state")),
                               ("pooler_output", tensor(False, "pooler_output")),
                               ("hidden_states", hidden), ("attentions", hidden)))
        return OutputAtom((("loss", loss), *heads, ("hidden_states", hidden), ("attentions", hidden)))

    # -- methods -------------------------------------------------------------------------------------------
    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind == "TorchLayerAtom" and name in _MODEL_METHODS and receiver.atoms \
                and all(is_hf_model(a) for a in receiver.atoms):
            return join_all(self._model_method(a, name, args, kwargs, node, st, fr)  # type: ignore[arg-type]
                            for a in receiver.atoms).join(TOP if receiver.top else V())
        if kind == "TokenizerAtom":
            if any(isinstance(a, TokenizerAtom) and a.collator == _PROCESSOR for a in receiver.atoms):
                return self._processed(name, kwargs, node, st, fr)
            return self._encode(name, args, kwargs, node, st, fr)
        if kind == "OutputAtom":
            return join_all(self._output_method(a, name) for a in receiver.atoms if isinstance(a, OutputAtom))
        return UNHANDLED

    def _model_method(self, model: TorchLayerAtom, name: str, args: list[Value], kwargs: dict[str, Value],
                      node: ast.AST, st: State, fr: Frame) -> Value:
        if name == "generate":
            return self._generate(model, args, kwargs, node, fr)
        if name in ("resize_token_embeddings", "get_input_embeddings"):
            return V(TorchLayerAtom("Embedding", model.dev, True, (), model.origin))
        if name == "get_output_embeddings":
            return V(TorchLayerAtom("Linear", model.dev, True, (), model.origin))
        return NONE

    def _generate(self, model: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                  fr: Frame) -> Value:
        """The sequences: on the inputs' device (each forward gets them moved to the model's)."""
        bound = _all(bind_call("transformers.GenerationMixin.generate", args, kwargs))
        ids = bound.get("inputs")
        if ids is None or ids.consts() == [None]:
            ids = bound.get("input_ids")
        devices: set[TorchDev | None]
        if ids is None or ids.consts() == [None]:
            devices = {model.dev}  # from ``inputs_embeds`` or the start token: the model's device
        else:
            devices = {a.dev for a in ids.atoms if isinstance(a, TorchTensorAtom)}
            if ids.top or not ids.only(TorchTensorAtom):
                devices.add(None)
        origin = self.origin(node, fr, "generated sequences")
        out = Value(frozenset(TorchTensorAtom(d, NO_GRAD, False, origin=origin) for d in devices if d is not None),
                    None in devices)
        flag = _constant(bound.get("return_dict_in_generate"))
        if flag is True:
            return V(OutputAtom((("sequences", out),)))
        return out if flag in (None, False) else TOP

    @staticmethod
    def _output_method(atom: OutputAtom, name: str) -> Value:
        present = [(k, v) for k, v in atom.fields if v.consts() != [None]]
        if name == "to_tuple" or name == "values":
            return V(seq("tuple" if name == "to_tuple" else "list", [v for _k, v in present]))
        if name == "keys":
            return V(seq("list", [V(const(k)) for k, _v in present]))
        if name == "items":
            return V(seq("list", [V(seq("tuple", (V(const(k)), v))) for k, v in present]))
        return TOP

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if not isinstance(atom, OutputAtom):
            return None
        wanted = _constant(key)
        present = [(k, v) for k, v in atom.fields if v.consts() != [None]]
        if isinstance(wanted, str):
            return dict(present).get(wanted, TOP)
        if type(wanted) is int and -len(present) <= wanted < len(present):
            return present[wanted][1]
        return TOP

    def element(self, atom: Atom, how: str) -> Value | None:
        if isinstance(atom, OutputAtom) and how == "slice":
            # ``loss, logits = outputs[:2]``: a tuple of its leading fields (which ones, the bounds say)
            fields = [v for k, v in atom.fields if v.consts() != [None] and k not in _TUPLES]
            return V(seq_of("tuple", join_all(fields))) if fields else TOP
        return TOP if isinstance(atom, (OutputAtom, TokenizerAtom)) else None

    # -- tokenizers and encodings ----------------------------------------------------------------------------
    def _encode(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                fr: Frame) -> Value:
        if name not in _TOKENIZER_CALLS:
            return TOP  # ``decode``, ``convert_ids_to_tokens`` ...: strings and lists
        bound = bind_call(f"transformers.PreTrainedTokenizerBase.{name}", args, kwargs)
        kind = _constant(bound.get("return_tensors"))
        if name == "apply_chat_template":
            tokenize, as_dict = _constant(bound.get("tokenize")), _constant(bound.get("return_dict"))
            if tokenize is not True and tokenize is not None or as_dict is ...:
                return TOP  # text, or not known
            if as_dict is False:
                return self._ids(kind, node, st, fr)
        if name == "encode":
            return self._ids(kind, node, st, fr)
        keys = ["input_ids"]
        if _constant(bound.get("return_attention_mask")) is not False:
            keys.append("attention_mask")
        if _constant(bound.get("return_token_type_ids")) is True:
            keys.append("token_type_ids")
        if name == "pad":
            keys = _feature_keys(bound.get("encoded_inputs"), keys)
        return self._encoding(keys, kind, node, st, fr)

    def _processed(self, name: str, kwargs: dict[str, Value], node: ast.AST, st: State, fr: Frame) -> Value:
        """A processor's encoding: its tensors made on the default device, under keys the checkpoint picks
        (``inputs["pixel_values"]`` reads one; ``**inputs`` passes keys the analysis does not know)."""
        if name not in _TOKENIZER_CALLS or _constant(kwargs.get("return_tensors")) != "pt":
            return TOP
        return V(EncodingAtom((), self._tensors(node, st, fr, "processor output"),
                              self.origin(node, fr, "processor output")))

    def _ids(self, kind: object, node: ast.AST, st: State, fr: Frame) -> Value:
        if kind != "pt":
            return TOP  # a list of ids, a numpy array, or not known
        return self._tensors(node, st, fr, "token ids")

    def _tensors(self, node: ast.AST, st: State, fr: Frame, what: str) -> Value:
        """Int64 tensors from ``torch.tensor(ids)``: on the default device."""
        devs = self._default_devices(st)
        if devs is None:
            return TOP
        origin = self.origin(node, fr, what)
        return Value(frozenset(TorchTensorAtom(d, NO_GRAD, False, origin=origin) for d in devs))

    def _encoding(self, keys: list[str], kind: object, node: ast.AST, st: State, fr: Frame) -> Value:
        if kind is ...:
            return TOP
        value = self._tensors(node, st, fr, "tokenizer output") if kind == "pt" else TOP
        origin = self.origin(node, fr, "tokenizer output")
        return V(EncodingAtom(tuple((key, value) for key in keys), None, origin))

    def _collate(self, collator: TokenizerAtom, args: list[Value], node: ast.AST, st: State, fr: Frame) -> Value:
        """A collator called with a list of features: their fields padded into tensors (``label`` -> ``labels``;
        features the analysis does not know: ids, mask and labels)."""
        default = ["input_ids", "attention_mask", "labels"]
        keys = _feature_keys(args[0] if args else None, default)
        keys = ["labels" if k in ("label", "label_ids") else k for k in keys]
        if collator.collator == "DataCollatorForLanguageModeling" and "labels" not in keys:
            keys.append("labels")
        return self._encoding(list(dict.fromkeys(keys)), "pt", node, st, fr)

    def _encoding_to(self, method: HFMethod, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                     st: State, fr: Frame) -> Value:
        """``inputs.to(device)``: every tensor moved, the encoding itself returned (moved in place)."""
        encoding = method.receiver
        assert isinstance(encoding, EncodingAtom)
        target = bind_call("transformers.BatchEncoding.to", args, kwargs).get("device")
        torch = self.model_named("torch")
        found = torch.devices_of(target, st) if torch is not None and target is not None else None
        origin = self.origin(node, fr, "BatchEncoding.to")
        moved = moved_fields(self.engine, lambda fields, rest: EncodingAtom(fields, rest, encoding.origin),
                             encoding.items, encoding.rest, found, origin)
        return hold_in_place(self.engine, node, moved, st, fr)


def _use_cpu(bound: Bound[Value]) -> bool | None:
    """``TrainingArguments(use_cpu=...)`` (``no_cuda=`` before transformers 5): the constant given (absent: False;
    ``None`` where the source does not fix it)."""
    given = bound.get("use_cpu")
    if given is None:
        given = bound.get("no_cuda")
    if given is None:
        return False
    consts = given.consts()
    return consts[0] if not given.top and consts and len(consts) == 1 and isinstance(consts[0], bool) else None


def _all(bound: Bound[Value]) -> dict[str, Value]:
    """A call's arguments by name, those its ``**kwargs`` took included (``generate(input_ids=...)``)."""
    return {**bound.extra, **bound.arguments}


def _feature_keys(features: Value | None, default: list[str]) -> list[str]:
    """The keys of the features a collator or ``pad`` is given (a dict, or a list of dicts, with known keys)."""
    if features is None or features.top or len(features.atoms) != 1:
        return default
    atom = next(iter(features.atoms))
    if isinstance(atom, SeqAtom):
        inner = atom.elem
        if inner.top or len(inner.atoms) != 1:
            return default
        atom = next(iter(inner.atoms))
    if isinstance(atom, DictAtom) and atom.rest is None and atom.items \
            and all(isinstance(k, str) for k, _v in atom.items):
        return [k for k, _v in atom.items]
    return default


__all__ = ["PREFIX", "EncodingAtom", "HFModels", "HFRef", "OutputAtom", "TokenizerAtom", "is_hf_model"]
