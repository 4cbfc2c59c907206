"""The observer's stand-ins for Hugging Face transformers and accelerate (runtime_shim/torch_observer/stand_ins.py):
found only where nothing else finds the library, and placing the model and the batches as the library does."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from runtime_shim.torch_observer import stand_ins


def test_the_finder_answers_for_the_two_frameworks_only() -> None:
    finder = stand_ins.StandInFinder()
    spec = finder.find_spec("transformers")
    assert spec is not None and Path(str(spec.origin)).name == "stand_in_transformers.py"
    assert Path(str(finder.find_spec("accelerate").origin)).name == "stand_in_accelerate.py"  # type: ignore[union-attr]
    assert finder.find_spec("numpy") is None and finder.find_spec("transformers.trainer") is None


def test_install_puts_the_finder_last_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    stand_ins.install()
    stand_ins.install()
    assert isinstance(sys.meta_path[-1], stand_ins.StandInFinder)
    assert sum(isinstance(f, stand_ins.StandInFinder) for f in sys.meta_path) == 1


def _load(name: str) -> ModuleType:
    spec = stand_ins.StandInFinder().find_spec(name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_trainer_moves_the_model_and_each_batch_to_args_device() -> None:
    torch = pytest.importorskip("torch")
    transformers = _load("transformers")
    seen: list[str] = []

    class Recording(transformers.Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            seen.append(str(inputs["x"].device))
            loss = model(inputs["x"]).sum()
            return (loss, {"logits": loss}) if return_outputs else loss

    model = torch.nn.Linear(2, 1)
    args = transformers.TrainingArguments("out", use_cpu=True, per_device_train_batch_size=2)
    trainer = Recording(model=model, args=args, train_dataset=[{"x": torch.ones(2)}] * 4)
    trainer.train()
    assert args.device == torch.device("cpu") and seen == ["cpu", "cpu"]


def test_the_accelerator_prepares_modules_and_loaders() -> None:
    torch = pytest.importorskip("torch")
    accelerate = _load("accelerate")
    accelerator = accelerate.Accelerator(cpu=True)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(4, 2)), batch_size=2)
    model, optimizer, prepared = accelerator.prepare(torch.nn.Linear(2, 1), "optimizer", loader)
    assert optimizer == "optimizer" and len(prepared) == 2
    assert [batch[0].device.type for batch in prepared] == ["cpu", "cpu"]
    assert accelerator.prepare(model) is model
    with pytest.raises(ValueError, match="should be a list with 2 elements"):
        accelerator.prepare(model, loader, device_placement=[True])
