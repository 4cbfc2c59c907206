"""The observer's stand-in for ``transformers``' models, tokenizers and pipelines (loaded into the ``transformers``
stand-in, :mod:`.stand_in_transformers`): a tiny model whose device placement is the library's, after
``modeling_utils.py``, ``tokenization_utils_base.py``, ``generation/utils.py`` and ``pipelines/base.py``.

* ``<Class>.from_pretrained(name, device_map=None, ...)``: the weights are built on the default device (as
  ``torch.set_default_device`` / ``with torch.device`` set it), then moved to the ``device_map``'s one device
  (``"cuda"``: ``cuda:<LOCAL_RANK>``; ``"cuda:1"``, an int, a ``torch.device``, ``{"": d}``); ``"auto"`` (and the
  other strategies) put this one-device model on ``cuda:0`` where CUDA is available, else the CPU.
* a model is an embedding (the token ids index its weight), a token-type and a position embedding, a dense layer and
  a head chosen by the class name (``...ForSequenceClassification``: ``logits`` from the first token;
  ``...ForCausalLM``/``LMHeadModel``/``ForMaskedLM``: per-token logits over the vocabulary;
  ``...ForTokenClassification``; ``...ForQuestionAnswering``: start and end logits; otherwise a base model:
  ``last_hidden_state``, ``pooler_output``); ``labels`` are moved to the logits' device (``loss_function``), except
  by the heads of ``LABELS_STAY``. The attention mask multiplies the hidden states: on another device than the
  weights it fails, as in the library. ``model.device`` is the first parameter's device.
* ``generate``: the inputs are moved to the model's device before each forward, the sequences grow on the
  inputs' device (``prepare_inputs_for_generation``).
* tokenizers: word ids from a hash (deterministic), padded to the longest text; ``return_tensors="pt"`` makes
  int64 tensors with ``torch.tensor`` (the default device), ``"np"`` numpy arrays, none lists.
  ``BatchEncoding.to(device)`` moves every tensor in place and returns the encoding.
* ``pipeline(task, model=..., device=...)`` places the model there and moves each input there itself.
"""

from __future__ import annotations

import os
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["AutoConfig", "BatchEncoding", "DataCollatorForLanguageModeling", "DataCollatorWithPadding",
           "ModelOutput", "PreTrainedModel", "PreTrainedTokenizerBase", "PretrainedConfig", "class_named",
           "default_data_collator", "pipeline", "set_seed"]

VOCAB = 128
HIDDEN = 16
_SHARDED = ("auto", "balanced", "balanced_low_0", "sequential")
#: heads whose loss takes the labels where they are (``loss_fct(logits, labels)`` in their ``forward``)
LABELS_STAY = frozenset({"BertForSequenceClassification", "DistilBertForSequenceClassification",
                         "AlbertForSequenceClassification", "DebertaV2ForSequenceClassification",
                         "ElectraForSequenceClassification", "ModernBertForSequenceClassification"})


class PretrainedConfig:
    def __init__(self, num_labels: int = 2, vocab_size: int = VOCAB, hidden_size: int = HIDDEN,
                 **kwargs: Any) -> None:
        self.num_labels = num_labels
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.pad_token_id = 0
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def from_pretrained(cls, name: str, **kwargs: Any) -> PretrainedConfig:
        return cls(**kwargs)


class AutoConfig(PretrainedConfig):
    pass


class ModelOutput(OrderedDict):  # type: ignore[type-arg]
    """Fields by name and as attributes; ``outputs[i]`` is the i-th field that is set."""

    def __init__(self, **fields: Any) -> None:
        super().__init__((k, v) for k, v in fields.items() if v is not None)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            return None

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, slice)):
            return self.to_tuple()[key]
        return super().__getitem__(key)

    def to_tuple(self) -> tuple[Any, ...]:
        return tuple(self.values())


def _device(device_map: Any) -> torch.device | None:
    """Where ``from_pretrained`` puts the weights (None: where they were built)."""
    if device_map is None:
        return None
    if isinstance(device_map, dict):
        devices = set(map(str, device_map.values()))
        device_map = next(iter(device_map.values())) if len(devices) == 1 else "auto"
    if isinstance(device_map, str) and device_map in _SHARDED:
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if device_map == "cuda":
        return torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}")
    if isinstance(device_map, int) and not isinstance(device_map, bool):
        if device_map < 0:
            raise ValueError("You can't pass device_map as a negative int.")
        return torch.device("cuda", device_map)
    return torch.device(device_map)


class PreTrainedModel(nn.Module):
    """A tiny transformer stand-in: what it computes is the library's shape, its devices are the library's."""

    def __init__(self, config: PretrainedConfig | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.config = config if config is not None else PretrainedConfig(**kwargs)
        vocab, hidden = self.config.vocab_size, self.config.hidden_size
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.position_embeddings = nn.Embedding(512, hidden)
        self.dense = nn.Linear(hidden, hidden)
        name = type(self).__name__
        self.head_kind = _head_kind(name)
        outputs = {"causal": vocab, "sequence": self.config.num_labels, "token": self.config.num_labels,
                   "qa": 2, "base": hidden}[self.head_kind]
        self.head = nn.Linear(hidden, outputs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any = None, *model_args: Any, device_map: Any = None,
                        dtype: Any = None, torch_dtype: Any = None, **kwargs: Any) -> PreTrainedModel:
        config = kwargs.pop("config", None)
        known = {k: kwargs.pop(k) for k in ("num_labels", "vocab_size") if k in kwargs}
        model = cls(config if config is not None else PretrainedConfig(**known))
        target = _device(device_map)
        if target is not None:
            model.to(target)
        model.eval()  # from_pretrained returns the model in evaluation mode
        return model

    @classmethod
    def from_config(cls, config: PretrainedConfig, **kwargs: Any) -> PreTrainedModel:
        return cls(config)

    @property
    def device(self) -> torch.device:
        return next(param.device for param in self.parameters())

    @property
    def dtype(self) -> torch.dtype:
        return next(param.dtype for param in self.parameters())

    def forward(self, input_ids: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, position_ids: torch.Tensor | None = None,
                head_mask: Any = None, inputs_embeds: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                output_hidden_states: bool | None = None, return_dict: bool | None = None,
                **kwargs: Any) -> ModelOutput:
        h = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        if token_type_ids is not None:
            h = h + self.token_type_embeddings(token_type_ids)
        if position_ids is not None:
            h = h + self.position_embeddings(position_ids)
        if attention_mask is not None:
            h = h * attention_mask.unsqueeze(-1).to(h.dtype)
        h = torch.tanh(self.dense(h))
        hidden = (h,) if output_hidden_states else None
        if self.head_kind == "base":
            return ModelOutput(last_hidden_state=h, pooler_output=torch.tanh(self.head(h[:, 0])),
                               hidden_states=hidden)
        if self.head_kind == "qa":
            start, end = self.head(h).unbind(-1)
            return ModelOutput(start_logits=start, end_logits=end, hidden_states=hidden)
        logits = self.head(h[:, 0]) if self.head_kind == "sequence" else self.head(h)
        loss = None
        if labels is not None:
            if type(self).__name__ not in LABELS_STAY:  # (``loss_function``: the labels moved to the logits' device)
                labels = labels.to(logits.device)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                               ignore_index=-100)
        return ModelOutput(loss=loss, logits=logits, hidden_states=hidden)

    def generate(self, inputs: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                 max_new_tokens: int = 4, **kwargs: Any) -> torch.Tensor:
        ids = inputs if inputs is not None else kwargs.pop("input_ids")
        for _ in range(max_new_tokens):
            # (``prepare_inputs_for_generation``: moved to the model's device right before the forward)
            step = {"input_ids": ids.to(self.device)}
            if attention_mask is not None:
                step["attention_mask"] = attention_mask.to(self.device)
            with torch.no_grad():
                logits = self(**step).logits
            next_tokens = logits[:, -1].to(device=ids.device).argmax(dim=-1)
            ids = torch.cat([ids, next_tokens[:, None]], dim=-1)
            if attention_mask is not None:
                attention_mask = torch.cat([attention_mask, attention_mask.new_ones((ids.shape[0], 1))], dim=-1)
        return ids

    def resize_token_embeddings(self, new_num_tokens: int | None = None, **kwargs: Any) -> nn.Embedding:
        if new_num_tokens is not None:
            old = self.embed_tokens
            self.embed_tokens = nn.Embedding(new_num_tokens, old.embedding_dim, device=old.weight.device)
        return self.embed_tokens

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embed_tokens

    def save_pretrained(self, save_directory: str, **kwargs: Any) -> None:
        pass

    def gradient_checkpointing_enable(self, **kwargs: Any) -> None:
        pass


def _head_kind(name: str) -> str:
    if "QuestionAnswering" in name:
        return "qa"
    if "SequenceClassification" in name:
        return "sequence"
    if "TokenClassification" in name:
        return "token"
    if "CausalLM" in name or "LMHead" in name or "MaskedLM" in name or "Seq2SeqLM" in name:
        return "causal"
    return "base"


class BatchEncoding(dict):  # type: ignore[type-arg]
    """The tokenizer's output: a dict whose fields are attributes too."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as missing:
            raise AttributeError(name) from missing

    @property
    def data(self) -> dict[str, Any]:
        return dict(self)

    def to(self, device: Any, *, non_blocking: bool = False) -> BatchEncoding:
        for key, value in self.items():
            if hasattr(value, "to") and callable(value.to):
                self[key] = value.to(device=device, non_blocking=non_blocking)
        return self


def _word_id(word: str) -> int:
    return 3 + zlib.crc32(word.encode()) % (VOCAB - 3)


class PreTrainedTokenizerBase:
    pad_token_id = 0
    bos_token_id = 1
    eos_token_id = 2
    pad_token: str | None = "[PAD]"
    eos_token = "[EOS]"
    padding_side = "right"
    model_max_length = 512
    model_input_names = ("input_ids", "attention_mask")

    @classmethod
    def from_pretrained(cls, name: str, *args: Any, **kwargs: Any) -> PreTrainedTokenizerBase:
        return cls()

    def __len__(self) -> int:
        return VOCAB

    def _ids(self, text: Any) -> list[int]:
        if isinstance(text, str):
            return [self.bos_token_id, *(_word_id(w) for w in text.split())]
        return [int(t) for t in text]  # already ids

    def __call__(self, text: Any = None, text_pair: Any = None, *, padding: Any = False, truncation: Any = None,
                 max_length: int | None = None, return_tensors: Any = None, return_attention_mask: bool | None = None,
                 return_token_type_ids: bool | None = None, **kwargs: Any) -> BatchEncoding:
        batched = isinstance(text, (list, tuple)) and not (text and isinstance(text[0], int))
        rows = [self._ids(t) for t in (text if batched else [text])]
        if truncation and max_length:
            rows = [row[:max_length] for row in rows]
        features = [{"input_ids": row} for row in rows]
        return self._batch(features, batched, return_tensors, return_attention_mask, return_token_type_ids)

    encode_plus = __call__
    batch_encode_plus = __call__

    def _batch(self, features: list[Mapping[str, Any]], batched: bool, return_tensors: Any,
               return_attention_mask: bool | None = None, return_token_type_ids: bool | None = None) -> BatchEncoding:
        longest = max((len(f["input_ids"]) for f in features), default=0)
        out: dict[str, list[Any]] = {"input_ids": []}
        if return_attention_mask is not False:
            out["attention_mask"] = []
        if return_token_type_ids:
            out["token_type_ids"] = []
        for feature in features:
            ids = [int(i) for i in feature["input_ids"]]
            pad = longest - len(ids)
            out["input_ids"].append(ids + [self.pad_token_id] * pad)
            if "attention_mask" in out:
                out["attention_mask"].append([1] * len(ids) + [0] * pad)
            if "token_type_ids" in out:
                out["token_type_ids"].append([0] * longest)
            for key, value in feature.items():
                if key not in ("input_ids", "attention_mask", "token_type_ids"):
                    out.setdefault("labels" if key in ("label", "label_ids") else key, []).append(
                        value.tolist() if hasattr(value, "tolist") else value)
        if not batched and return_tensors is None:  # (tensors of one text get a batch axis)
            out = {k: v[0] for k, v in out.items()}
        return BatchEncoding({k: _as(v, return_tensors) for k, v in out.items()})

    def encode(self, text: Any, text_pair: Any = None, *, return_tensors: Any = None, **kwargs: Any) -> Any:
        ids = self._ids(text)
        return _as([ids], return_tensors) if return_tensors else ids

    def pad(self, encoded_inputs: Any, padding: Any = True, max_length: int | None = None,
            return_attention_mask: bool | None = None, return_tensors: Any = None, **kwargs: Any) -> BatchEncoding:
        if isinstance(encoded_inputs, Mapping):
            keys = list(encoded_inputs)
            encoded_inputs = [dict(zip(keys, row, strict=True)) for row in zip(*encoded_inputs.values(), strict=True)]
        return self._batch(list(encoded_inputs), True, return_tensors, return_attention_mask)

    def apply_chat_template(self, conversation: Any, tools: Any = None, *, add_generation_prompt: bool = False,
                            tokenize: bool = True, return_tensors: Any = None, return_dict: bool = True,
                            **kwargs: Any) -> Any:
        text = " ".join(f"<{m['role']}> {m['content']}" for m in conversation)
        if add_generation_prompt:
            text += " <assistant>"
        if not tokenize:
            return text
        encoded = self(text if return_tensors is None else [text], return_tensors=return_tensors)
        return encoded if return_dict else encoded["input_ids"]

    def decode(self, token_ids: Any, skip_special_tokens: bool = False, **kwargs: Any) -> str:
        ids = token_ids.tolist() if hasattr(token_ids, "tolist") else list(token_ids)
        return " ".join(f"t{i}" for i in ids if not (skip_special_tokens and i < 3))

    def batch_decode(self, sequences: Iterable[Any], **kwargs: Any) -> list[str]:
        return [self.decode(s, **kwargs) for s in sequences]

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        return [f"t{i}" for i in ids] if isinstance(ids, list) else f"t{ids}"

    def save_pretrained(self, save_directory: str, **kwargs: Any) -> None:
        pass


def _as(value: list[Any], return_tensors: Any) -> Any:
    if return_tensors == "pt":
        return torch.tensor(value, dtype=torch.int64)  # (``torch.tensor``: the default device)
    if return_tensors == "np":
        return np.array(value)
    return value


class DataCollatorWithPadding:
    def __init__(self, tokenizer: PreTrainedTokenizerBase, padding: Any = True, return_tensors: str = "pt",
                 **kwargs: Any) -> None:
        self.tokenizer = tokenizer
        self.return_tensors = return_tensors

    def __call__(self, features: list[Mapping[str, Any]]) -> BatchEncoding:
        return self.tokenizer.pad(features, return_tensors=self.return_tensors)


class DataCollatorForLanguageModeling(DataCollatorWithPadding):
    def __init__(self, tokenizer: PreTrainedTokenizerBase, mlm: bool = True, return_tensors: str = "pt",
                 **kwargs: Any) -> None:
        super().__init__(tokenizer, return_tensors=return_tensors)

    def __call__(self, features: list[Mapping[str, Any]]) -> BatchEncoding:
        batch = super().__call__(features)
        labels = batch["input_ids"].clone()
        labels[labels == self.tokenizer.pad_token_id] = -100
        batch["labels"] = labels
        return batch


def default_data_collator(features: list[Mapping[str, Any]], return_tensors: str = "pt") -> BatchEncoding:
    return PreTrainedTokenizerBase().pad(features, return_tensors=return_tensors)


class Pipeline:
    """``pipeline(...)``: the model on ``device``; each call tokenizes, moves the inputs there and runs it."""

    def __init__(self, task: str, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, device: Any) -> None:
        self.task = task
        self.tokenizer = tokenizer
        self.model = model
        if device is not None:
            self.model.to(torch.device("cpu") if device == -1 else _device(device))
        self.device = self.model.device

    def __call__(self, inputs: Any, **kwargs: Any) -> Any:
        batched = isinstance(inputs, list)
        encoded = self.tokenizer(inputs if batched else [inputs], return_tensors="pt").to(self.device)
        with torch.no_grad():
            if self.task == "text-generation":
                ids = self.model.generate(**encoded)
                results: list[Any] = [[{"generated_text": self.tokenizer.decode(row)}] for row in ids]
            else:
                logits = self.model(**encoded).logits.float()
                probs = logits.softmax(-1).cpu()
                results = [{"label": f"LABEL_{int(p.argmax())}", "score": float(p.max())} for p in probs]
        return results if batched else results[0]


def pipeline(task: str | None = None, model: Any = None, tokenizer: Any = None, device: Any = None,
             device_map: Any = None, **kwargs: Any) -> Pipeline:
    head = "AutoModelForCausalLM" if task == "text-generation" else "AutoModelForSequenceClassification"
    if not isinstance(model, PreTrainedModel):
        model = class_named(head).from_pretrained(model, device_map=device_map)
    if not isinstance(tokenizer, PreTrainedTokenizerBase):
        tokenizer = PreTrainedTokenizerBase()
    return Pipeline(task or "text-classification", model, tokenizer, device)


def set_seed(seed: int, deterministic: bool = False) -> None:
    torch.manual_seed(seed)


_MADE: dict[str, type] = {}


def class_named(name: str) -> type | None:
    """A model or tokenizer class of any name the library has (``AutoModelForCausalLM``, ``BertModel``,
    ``DistilBertTokenizerFast``); None for another name."""
    if name in _MADE:
        return _MADE[name]
    if name.startswith("AutoModel") or (name[:1].isupper() and ("For" in name or name.endswith("Model"))
                                        and "Tokenizer" not in name):
        base: type = PreTrainedModel
    elif name in ("AutoTokenizer", "AutoProcessor") or name.endswith(("Tokenizer", "TokenizerFast")):
        base = PreTrainedTokenizerBase
    else:
        return None
    made = _MADE[name] = type(name, (base,), {})
    return made
