"""The observer's stand-in for ``transformers`` (see :mod:`.stand_ins`): what ``Trainer`` and
``TrainingArguments`` do with devices, after ``transformers/trainer.py`` and ``training_args.py``.

``TrainingArguments.device``: the CPU with ``use_cpu=True`` (``no_cuda=True``), else ``mps`` where MPS is
available, else ``cuda:0`` where CUDA is, else the CPU. ``Trainer.__init__`` moves the model there
(``place_model_on_device``); ``train()`` / ``evaluate()`` batch the datasets (the data collator, else the
default collation) and call ``training_step`` / ``prediction_step``, which move each batch's tensors to the
device (``_prepare_inputs``) and call ``compute_loss(model, inputs, ...)``. The optimizer is AdamW over the
model's parameters; one pass over the data (``max_steps`` steps when given).

The models, tokenizers, collators and ``pipeline`` are :mod:`.stand_in_hf_models`'s (loaded beside this
module); any class name the library has for a model or a tokenizer (``BertForSequenceClassification``,
``AutoTokenizer``) is made on first use.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, default_collate

__version__ = "0.0.0+runtime-shim-stand-in"


def _load_models() -> Any:
    """The models' stand-in, a module of its own (this one is loaded from its file, not as a package)."""
    name = "transformers.stand_in_hf_models"
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__),
                                                                     "stand_in_hf_models.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_models = _load_models()
globals().update({name: getattr(_models, name) for name in _models.__all__})


def __getattr__(name: str) -> Any:
    found = _models.class_named(name)
    if found is None:
        raise AttributeError(f"module 'transformers' (the observer's stand-in) has no attribute {name!r}")
    return found


class TrainingArguments:
    def __init__(self, output_dir: str | None = None, *, use_cpu: bool = False, no_cuda: bool = False,
                 per_device_train_batch_size: int = 8, per_device_eval_batch_size: int = 8,
                 learning_rate: float = 5e-5, num_train_epochs: float = 1.0, max_steps: int = -1,
                 place_model_on_device: bool | None = None, **kwargs: Any) -> None:
        self.output_dir = output_dir or "trainer_output"
        self.use_cpu = use_cpu or no_cuda
        self.per_device_train_batch_size = per_device_train_batch_size
        self.per_device_eval_batch_size = per_device_eval_batch_size
        self.learning_rate = learning_rate
        self.num_train_epochs = num_train_epochs
        self.max_steps = max_steps
        self.place_model_on_device = place_model_on_device
        for name, value in kwargs.items():
            setattr(self, name, value)

    @property
    def device(self) -> torch.device:
        if self.use_cpu:
            return torch.device("cpu")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Seq2SeqTrainingArguments(TrainingArguments):
    pass


class Trainer:
    def __init__(self, model: nn.Module | None = None, args: TrainingArguments | None = None,
                 data_collator: Callable[[list[Any]], Any] | None = None, train_dataset: Any = None,
                 eval_dataset: Any = None, processing_class: Any = None, model_init: Any = None,
                 compute_loss_func: Any = None, compute_metrics: Any = None, callbacks: Any = None,
                 optimizers: tuple[Any, Any] = (None, None), **kwargs: Any) -> None:
        if model is None:
            raise RuntimeError("`Trainer` requires either a `model` or `model_init` argument")
        self.args = args if args is not None else TrainingArguments()
        self.model = model
        self.data_collator = data_collator or default_collate
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.compute_metrics = compute_metrics
        self.optimizer, self.lr_scheduler = optimizers
        place = self.args.place_model_on_device
        if place is None or place:
            model.to(self.args.device)  # _move_model_to_device

    def _prepare_input(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            return type(data)({k: self._prepare_input(v) for k, v in data.items()})
        if isinstance(data, (tuple, list)):
            return type(data)(self._prepare_input(v) for v in data)
        if isinstance(data, torch.Tensor):
            return data.to(device=self.args.device)
        return data

    def _prepare_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        inputs = self._prepare_input(inputs)
        if len(inputs) == 0:
            raise ValueError("The batch received was empty, your model won't be able to train on it.")
        return inputs

    def compute_loss(self, model: nn.Module, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        outputs = model(**inputs)
        loss = outputs["loss"] if isinstance(outputs, Mapping) else outputs[0]
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: Any = None) -> Any:
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        loss.backward()
        return loss.detach()

    def prediction_step(self, model: nn.Module, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple[Any, Any, Any]:
        inputs = self._prepare_inputs(inputs)
        labels = inputs.get("labels")
        with torch.no_grad():
            loss, outputs = self.compute_loss(model, inputs, return_outputs=True)
        logits = outputs["logits"] if isinstance(outputs, Mapping) else outputs[1]
        return loss.detach(), (None if prediction_loss_only else logits), labels

    def _loader(self, dataset: Any, batch_size: int) -> DataLoader:
        return DataLoader(dataset, batch_size=batch_size, collate_fn=self.data_collator)

    def train(self) -> dict[str, float]:
        if self.optimizer is None:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate)
        steps = 0
        for inputs in self._loader(self.train_dataset, self.args.per_device_train_batch_size):
            self.training_step(self.model, inputs)
            self.optimizer.step()
            self.optimizer.zero_grad()
            steps += 1
            if 0 < self.args.max_steps <= steps:
                break
        return {"global_step": float(steps)}

    def evaluate(self, eval_dataset: Any = None) -> dict[str, float]:
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        self.model.eval()
        batches = 0
        for inputs in self._loader(dataset, self.args.per_device_eval_batch_size):
            self.prediction_step(self.model, inputs, prediction_loss_only=self.compute_metrics is None)
            batches += 1
        return {"eval_batches": float(batches)}

    def compute_loss_context_manager(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


class Seq2SeqTrainer(Trainer):
    pass
